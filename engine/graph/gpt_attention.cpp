// GptBuilder's attention (gpt_builder.hpp): the unfused core (scores, softmax, dropout,
// context) or the fused flash kernel with context parallelism's ring or all-to-all, rotary
// embedding, grouped-query K/V copies, and multi-head latent attention's projections.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/graph/gpt_builder.hpp"

namespace pathfinder::gpt_detail {

// Whether the unfused attention's softmax runs as Megatron's fused kernel
// (FusedScaleMaskSoftmax.is_kernel_available): 16-bit scores, 16 < s <= 4096, s a multiple
// of 4, and b·a/t a multiple of 4 and of the kernel's batches per block (128 threads of
// min(32, 2^ceil(log2 s)) lanes, two rows a warp when s <= 128; for a causal mask the
// batches, else the query rows). Otherwise PyTorch's ops run one by one (unfused_softmax).
bool GptBuilder::fused_softmax() const {
  const std::int64_t s = s_.sequence;
  const std::int64_t batches = s_.micro_batch * (s_.heads / tp_);
  if (!(dt_ == DataType::kFp16 || dt_ == DataType::kBf16) || s <= 16 || s > 4096 ||
      s % 4 != 0 || batches % 4 != 0) {
    return false;
  }
  std::int64_t pow2 = 1;
  while (pow2 < s) pow2 *= 2;
  const std::int64_t warp = std::min<std::int64_t>(pow2, 32);
  const std::int64_t per_block = (128 / warp) * (pow2 <= 128 ? 2 : 1);
  return (s_.causal ? batches : s) % per_block == 0;
}

// Rotary embedding of q and k (the first a/t + g_t heads of the QKV output), in place.
// MLA: the rope_head_dim part of each local query head and of the one shared key part.
KernelId GptBuilder::rotary(int layer, const std::string& n, Phase ph, Deps in) {
  const std::int64_t d = s_.mla() ? s_.rope_head_dim : s_.head_dim();
  const double e = t_ * static_cast<double>((s_.heads / tp_ + (s_.mla() ? 1 : kv_local_)) * d);
  const double tables = 2.0 * static_cast<double>(s_.sequence * d);
  if (part_.eager.rotary) {
    // Eager rotary (EagerOps::rotary) on q and on k, per element, f = 4 bytes: .float()
    // (p, f), the complex product with freqs_cis (f, f; complex64 [s, d/2], 4·s·d bytes read
    // by each of the two), .type_as (f, p); backward the same passes in reverse (the
    // product by the conjugate). Reads and writes f, plus p + f for the casts.
    const Bytes f = bytes(4), c = casts() ? p_ + f : Bytes{};
    return stream(layer, n, KernelKind::kElementwise, ph, 3.0 * e,
                  e * (f + c) + tables * f, e * (f + c), std::move(in));
  }
  return stream(layer, n, KernelKind::kElementwise, ph, 3.0 * e, e * p_ + tables * p_, e * p_,
                std::move(in));
}

// Grouped-query K and V copied to each of the rank's query heads before the attention kernel
// (EagerOps::repeat_kv, torchtitan's repeat_kv: expand and reshape), and in backward the
// copies' gradients summed back (reads the copies, writes the kv_t heads). None when every
// query head has its own key/value head or the profile passes the groups to the kernel.
// The attention kernel's own traffic is counted for the kv_t heads either way.
Deps GptBuilder::repeat_kv(int layer, bool backward, Deps in) {
  const std::int64_t q_heads = s_.heads / tp_;
  if (!part_.eager.repeat_kv || s_.mla() || kv_local_ >= q_heads) return in;
  const double width = static_cast<double>(s_.head_dim() + s_.value_dim());
  const Bytes kv = t_ * static_cast<double>(kv_local_) * width * p_;
  const Bytes copies = t_ * static_cast<double>(q_heads) * width * p_;
  if (backward) {
    return {stream(layer, "attn.repeat_kv.bwd", KernelKind::kElementwise,
                   Phase::kBackwardData, copies / p_ - kv / p_, copies, kv, std::move(in))};
  }
  return {stream(layer, "attn.repeat_kv" + suffix_, KernelKind::kElementwise, phase_, 0.0, kv,
                 copies, std::move(in))};
}

// One fused attention kernel over the b·a/t (sequence, head) problems; with context
// parallelism first the ring that brings the other ranks' keys and values (and, backward,
// carries their gradients on), or, by all-to-all, the regrouping around the kernel.
KernelId GptBuilder::flash(int layer, const std::string& n, Phase ph, bool fwd, Deps in) {
  const double d = static_cast<double>(s_.head_dim()), dv = static_cast<double>(s_.value_dim());
  const double heads = static_cast<double>(s_.heads / tp_);
  const double q = t_ * heads * d * p_.si();   // Q, dQ
  const double o = t_ * heads * dv * p_.si();  // O, dO
  const double cp = static_cast<double>(part_.context);
  const double kv_local = t_ * static_cast<double>(kv_local_) * (d + dv) * p_.si();
  const bool a2a = part_.context > 1 && part_.context_all_to_all;
  // Key/value heads per rank after the regrouping: kv_local_/cp, or one replicated.
  const double kv_heads_a2a = std::max(static_cast<double>(kv_local_) / cp, 1.0);
  const double kv_a2a = t_ * cp * kv_heads_a2a * (d + dv) * p_.si();  // K, V it holds after
  // K and V of the whole sequence, read once: around the ring, or regrouped.
  const double kv = a2a ? kv_a2a : cp * kv_local;
  if (part_.context > 1 && !a2a) {
    const Communication c{CommKind::kSendRecv, CommGroup::kContext,
                          bytes((fwd ? 1.0 : 2.0) * (cp - 1.0) * kv_local), false,
                          part_.context - 1};
    in = {add(comm_kernel(name(layer, n + ".ring"), ph, dt_, c, std::move(in)), layer)};
  }
  if (a2a) {  // forward: Q, K, V; backward: dO (Q, K, V and O saved regrouped)
    const Communication c{CommKind::kAllToAll, CommGroup::kContext,
                          bytes(fwd ? q + kv_a2a : o), false};
    in = {add(comm_kernel(name(layer, n + ".a2a_in"), ph, dt_, c, std::move(in)), layer)};
  }
  const double lse = t_ * static_cast<double>(s_.heads / tp_) * 4.0;  // fp32 per row
  Kernel k;
  k.name = name(layer, n);
  k.kind = KernelKind::kFlashAttention;
  k.phase = ph;
  k.dtype = dt_;
  // Packed documents (GptSpec::document): each of the s queries of a sequence sees at most
  // its document's keys, as the variable-length kernel runs them.
  const bool packed = s_.attention_span() < s_.sequence;
  k.attention = AttentionShape{
      s_.micro_batch * (s_.heads / tp_) / (a2a ? part_.context : 1), s_.attention_span(),
      s_.head_dim(), s_.causal, !fwd, part_.attention_kernel,
      part_.context > 1 && !a2a ? s_.sequence / part_.context : packed ? s_.sequence : 0,
      s_.mla() ? s_.value_dim() : 0};
  const Flops f = k.attention->forward_flops();
  k.flops = fwd ? f : 2.5 * f;
  k.bytes_read = bytes(fwd ? q + kv : q + 2.0 * o + kv + lse);  // bwd: Q, O, dO, K, V, lse
  k.bytes_written = bytes(fwd ? o + lse : q + kv);  // bwd: dQ, dK, dV (accumulated)
  k.deps = std::move(in);
  const KernelId id = add(std::move(k), layer);
  if (part_.context > 1 && !a2a) {
    // The ring's cp steps each leave a partial result that is merged as it arrives
    // (Transformer Engine context_parallel.py): forward, flash_attn_fwd_out_correction adds
    // each step's output, scaled by exp(lse_step - lse), into the running output (the first
    // step's copied in), one fused pass per step over O; backward, each step's dQ is added
    // into dQ and its dK, dV into the gradients travelling around the ring. As one stream
    // over all steps: forward reads the cp partial outputs and the running output cp - 1
    // times and writes it cp times; backward reads and writes dQ, dK, dV once per step
    // besides each step's own. With the causal mask balanced over 2cp chunks, the steps after
    // a rank's own (on average half of the other cp - 1) cover only the second half of its
    // queries (flash_attn_fwd_second_half_out_correction): 1 + 3/4 (cp - 1) full steps.
    const double steps = s_.causal ? 1.0 + 0.75 * (cp - 1.0) : cp;
    const Bytes read = bytes(fwd ? (2.0 * steps - 1.0) * o + steps * lse
                                 : 2.0 * steps * (q + kv_local));
    const Bytes written = bytes(fwd ? steps * o : steps * (q + kv_local));
    const double work = fwd ? 3.0 * steps * o / p_.si() : steps * (q + kv_local) / p_.si();
    return stream(layer, n + ".cp_merge", KernelKind::kElementwise, ph, work, read, written,
                  {id});
  }
  if (!a2a) return id;
  // forward: O back to the token split; backward: dQ, dK, dV
  const Communication back{CommKind::kAllToAll, CommGroup::kContext,
                           bytes(fwd ? o : q + kv_a2a), false};
  return add(comm_kernel(name(layer, n + ".a2a_out"), ph, dt_, back, {id}), layer);
}

void GptBuilder::attention_fwd(int i, LayerFwd& r, const Deps& qkv) {
  if (flash_) {
    r.context = flash(i, "attn.flash" + suffix_, phase_, true, repeat_kv(i, false, qkv));
    r.scores = r.softmax = r.context;
    return;
  }
  const std::int64_t s = s_.sequence;
  const std::int64_t ba = s_.micro_batch * (s_.heads / tp_);
  const double probs = static_cast<double>(ba) * static_cast<double>(s * s);
  const std::int64_t head = s_.head_dim();
  r.scores = add(gemm_kernel(name(i, "attn.scores" + suffix_), KernelKind::kAttentionScores,
                             phase_, dt_, GemmShape{ba, s, s, head}, qkv),
                 i);
  if (fused_softmax()) {
    r.softmax = stream(i, "attn.softmax" + suffix_, KernelKind::kSoftmax, phase_, 6.0 * probs,
                       probs * p_, probs * p_, {r.scores});
  } else {
    // Megatron's forward_torch_softmax with softmax in fp32 (apply_query_key_layer_scaling):
    // .float(), * scale, masked_fill, Softmax, .half(): five kernels, fp32 in between.
    const Bytes f = probs * bytes(4);
    KernelId k = stream(i, "attn.softmax.to_fp32" + suffix_, KernelKind::kElementwise, phase_,
                        0.0, probs * p_, f, {r.scores});
    k = stream(i, "attn.softmax.scale" + suffix_, KernelKind::kElementwise, phase_, probs, f, f,
               {k});
    k = stream(i, "attn.softmax.mask" + suffix_, KernelKind::kElementwise, phase_, probs, f, f,
               {k});
    k = stream(i, "attn.softmax" + suffix_, KernelKind::kSoftmax, phase_, 4.0 * probs, f, f, {k});
    r.softmax = stream(i, "attn.softmax.to_16bit" + suffix_, KernelKind::kElementwise, phase_,
                       0.0, f, probs * p_, {k});
  }
  Deps ctx = qkv;
  ctx.push_back(r.softmax);
  if (s_.dropout) {  // draw, compare, scale: 3 per probability; writes the mask
    ctx.back() = stream(i, "attn.dropout" + suffix_, KernelKind::kElementwise, phase_,
                        3.0 * probs, probs * p_, probs * p_ + probs * bytes(1), {r.softmax});
  }
  const KernelId context =
      add(gemm_kernel(name(i, "attn.context" + suffix_), KernelKind::kAttentionContext, phase_,
                      dt_, GemmShape{ba, s, head, s}, std::move(ctx)),
          i);
  // The batched product's [b·a/t, s, d] output back to Megatron's [s, b, a/t·d] layout:
  // `context_layer.permute(2, 0, 1, 3).contiguous()`, a copy (Megatron-LM and Megatron-Core's
  // unfused attention); its backward is a view.
  const double e = t_ * static_cast<double>(s_.value_width() / tp_);
  r.context = stream(i, "attn.context.permute" + suffix_, KernelKind::kElementwise, phase_, 0.0,
                     e * p_, e * p_, {context});
}

// MLA forward (DeepSeek-V2 §2.1, Megatron-Core MultiLatentAttention): on every rank of the
// tensor group the T gathered rows' down projections h -> q_r and h -> c + d_r (replicated
// weights) and the latents' norms, then the local heads' up projections q_r -> (a/t)·d and
// c -> (a/t)·(d − d_r + d_v), and the rotary part of the queries and the shared key.
void GptBuilder::mla_fwd(int i, LayerFwd& r, const LayerParams& w, const Deps& x) {
  const double qr = static_cast<double>(s_.q_lora_rank), c = static_cast<double>(s_.kv_lora_rank);
  Deps q_in = x;
  if (s_.q_lora_rank > 0) {
    r.q_norm = norm_fwd(i, "q_norm", t_, qr, {linear_fwd(i, "q_down", w.q_down, false, x)});
    q_in = {r.q_norm};
  }
  const KernelId q = linear_fwd(i, "q_up", w.q_up, false, q_in);
  r.kv_down = linear_fwd(i, "kv_down", w.kv_down, false, x);
  r.kv_norm = norm_fwd(i, "kv_norm", t_, c, {r.kv_down});
  r.kv_up = linear_fwd(i, "kv_up", w.kv_up, false, {r.kv_norm});
  r.qkv = rotary_ ? rotary(i, "rotary" + suffix_, phase_, {q, r.kv_down}) : q;
}

// MLA backward: the up projections' data gradients are partial sums over the local heads, so
// the tensor group all-reduces the latents' gradients (T·(q_r + c + d_r) elements) before the
// latent norms and the replicated down projections run on every rank; their two input
// gradients add into the complete gradient of the attention input (no reduction after).
Deps GptBuilder::mla_bwd(int i, const LayerFwd& fw, const LayerParams& w, const Deps& dqkv,
                         const Deps& ln1_in, std::vector<KernelId>& grads) {
  const double qr = static_cast<double>(s_.q_lora_rank), c = static_cast<double>(s_.kv_lora_rank);
  const double h = static_cast<double>(s_.hidden);
  const Phase bd = Phase::kBackwardData;
  const auto [kv_d, kv_w] = linear_bwd(i, "kv_up", w.kv_up, dqkv, {fw.kv_norm});
  const Deps q_in = s_.q_lora_rank > 0 ? Deps{fw.q_norm} : ln1_in;
  const auto [q_d, q_w] = linear_bwd(i, "q_up", w.q_up, dqkv, q_in);
  grads.insert(grads.end(), {kv_w, q_w});
  // Without a query latent q_up reads the attention input itself: its h-wide gradient joins.
  const double q_width = s_.q_lora_rank > 0 ? qr : h;
  const Deps latents =
      tp_comm(i, "latent.reduce.bwd", CommKind::kAllReduce, bd, {q_d, kv_d}, false,
              t_ * (q_width + c + static_cast<double>(s_.rope_head_dim)) * p_);
  const KernelId kv_n = norm_bwd(i, "kv_norm", t_, c, latents);
  const auto [kvd_d, kvd_w] = linear_bwd(i, "kv_down", w.kv_down, {kv_n}, ln1_in);
  grads.insert(grads.end(), {kv_n, kvd_w});
  Deps sum{kvd_d};
  if (s_.q_lora_rank > 0) {
    const KernelId q_n = norm_bwd(i, "q_norm", t_, qr, latents);
    const auto [qd_d, qd_w] = linear_bwd(i, "q_down", w.q_down, {q_n}, ln1_in);
    grads.insert(grads.end(), {q_n, qd_w});
    sum.push_back(qd_d);
  } else {
    sum = latents;  // q_up's input gradient is the attention input's, reduced with the latent
    sum.push_back(kvd_d);
  }
  // The two branches' input gradients added; with sequence parallelism each rank keeps its
  // T/t rows of the sum.
  return {stream(i, "mla.input.grad", KernelKind::kElementwise, bd, rows_ * h,
                 2.0 * rows_ * h * p_, rows_ * h * p_, std::move(sum))};
}

}  // namespace pathfinder::gpt_detail
