// Decoder-only GPT transformer (GPT-2/3 layout as trained by Megatron-LM; Narayanan et al. 2021,
// Korthikanti et al. 2022): token + learned position embedding, l pre-layernorm blocks, final
// layernorm, logits tied to the token embedding, cross-entropy. Dropout (if on) on the
// attention probabilities as its own kernel (a 1-byte mask per probability) and on the hidden
// states fused into the residual adds (bias-dropout-add, a 1-byte mask per element).
//
// Partitioned (GptPartition): Megatron tensor parallelism over t devices splits QKV and FFN1 by
// columns and the projection and FFN2 by rows (heads and FFN width divided by t), the
// embedding and logits by vocabulary rows; layernorms, residuals and their parameters are
// replicated. Per layer and micro-batch the tensor group then all-reduces the T·h activations
// twice forward (after the projection and FFN2) and twice backward (after the QKV and FFN1
// data gradients). With sequence parallelism each all-reduce becomes an all-gather before the
// column-parallel GEMM and a reduce-scatter after the row-parallel one, and the replicated
// element-wise work shrinks to T/t rows; backward also re-gathers the layernorm outputs for the
// weight gradients (Korthikanti et al. 2022, §4.2.2): on the compute stream unless the
// partition overlaps them with the data-gradient GEMMs (GptPartition::overlap_sp_regather), as
// it may the column-parallel layers' input-gradient collectives with their weight-gradient
// GEMMs (GptPartition::overlap_tp_backward).
// Recomputation re-runs a layer's forward (full) or its attention core (selective: scores,
// softmax, context) at the start of its backward. The unfused attention is Megatron's: its
// softmax one fused kernel where FusedScaleMaskSoftmax takes the shape, else PyTorch's five
// ops in fp32; the context copied back to [s, b, h] (a permute); the q, k and v gradients
// concatenated into the fused QKV output's.
//
// Notation: b micro-batch, s sequence, T = b·s tokens, h hidden, a heads, h/a head size, f FFN,
// V vocabulary, p bytes per element. GEMMs are (batch; m, n, k) with C[m×n] = A[m×k]·B[k×n].
//
// Forward GEMMs per layer: QKV (T, 3h, h), scores (b·a; s, s, h/a), context (b·a; s, h/a, s),
// projection (T, h, h), FFN1 (T, f, h), FFN2 (T, h, f): with f = 4h, 24·T·h² + 4·T·s·h FLOPs.
// Logits (T, V, h): 2·T·h·V. Each forward GEMM has two backward GEMMs of the same FLOPs
// (a linear: data gradient (T, k, n) and weight gradient (k, n, T); attention: one per operand),
// so forward + backward = 3 × forward = 72·T·l·h²·(1 + s/(6h) + V/(12·l·h)), Megatron's F.
//
// Non-GEMM FLOP counts per element (approximate by nature; with f = 4h they add about
// 172/(72h) + 11·a·s/(72h²) to the GEMM FLOPs: 0.04% for GPT-3 175B, 0.09% for Megatron 22B):
//   layernorm fwd 8 (mean 1, variance 3, normalise 2, affine 2), bwd 13 (recompute x̂ 2,
//     dγ 2, dβ 1, dx̂ 1, two row sums 3, combine 4)
//   attention softmax fwd 6 (scale, max, subtract, exp, sum, divide), bwd 5 (dP·P, row sum,
//     subtract, ×P, scale)
//   bias + GeLU (tanh form) fwd 10 (bias 1, x², ×c1, +1, ×x, ×c0, tanh, +1, ×x, ×0.5),
//     bwd 18 (recompute the tanh argument 5, tanh 1, derivative 11, chain rule 1)
//   residual add with the fused bias 2; gradient merge at a residual 1
//   QKV bias: a GEMM epilogue, 1 per output; bias gradients: weight-gradient GEMM epilogues,
//     1 per element of the output gradient
//   cross-entropy fwd 4 per logit (max, subtract, exp, sum) + 2 per token (log, pick target),
//     bwd 1 per logit (scale) + 1 per token (subtract the one-hot)
// Layernorm keeps per-token mean and 1/σ in fp32 (8 bytes per token) for the backward pass.
//
// Llama-style variants (GptSpec, issue 13), same builder:
//   kv_heads g < a     grouped-query attention (Ainslie et al. 2023): the fused QKV GEMM's output
//                      shrinks to (a + 2g)·d columns; t ranks hold a/t query heads and g/t KV
//                      heads (one replicated KV head when t > g); the attention GEMMs are as MHA
//   swiglu             gate (T, f, h) and up (T, f, h) GEMMs, SiLU(gate)·up as one element-wise
//                      kernel (fwd 6 per element: negate, exp, add, divide, ×x, ×up; bwd 11:
//                      sigmoid again 3, SiLU 1, d_up 1, SiLU' = σ·(1 + x·(1 − σ)) 4, d_gate 2),
//                      down (T, h, f) (Shazeer 2020)
//   rmsnorm            fwd 4 per element (square, sum, scale, γ) and 1/rms in fp32 (4 bytes per
//                      token); bwd 9 (x̂ again 1, dγ 2, dx̂ 1, row sum of dx̂·x̂ 2, combine 3);
//                      γ only (Zhang & Sennrich 2019)
//   rotary             no position table; q and k rotated in place after the QKV GEMM, fwd and
//                      bwd 3 per element (two products and a sum per rotated pair; RoFormer,
//                      Su et al. 2021), reading the cos/sin tables, 2·s·d elements
//   flash              one kKernelFlashAttention kernel per pass instead of scores, softmax,
//                      dropout and context (Dao 2023, FlashAttention-2): matrix FLOPs 4·s²·d per
//                      (sequence, head) forward, half if causal, backward 2.5× forward; traffic
//                      Q, K, V, O and the fp32 logsumexp (b·a·s·4 bytes) forward, plus dO, dQ,
//                      dK, dV backward; dropout regenerated in the kernel (no mask); selective
//                      recomputation then recomputes nothing (the kernel already does)
//   bias false         no linear biases: no epilogue add or bias-gradient column sum
//   experts E          mixture of experts in place of the MLP (Fedus et al. 2022; Megatron-Core
//                      MoE): the router GEMM (T, E, h) in the activations' precision, softmax and
//                      top-k (5 per score; probabilities and indices kept, 8 bytes per choice);
//                      permutation of the T·k chosen rows; with ep > 1 an all-to-all over the
//                      expert group sends them to their experts' ranks (T·k·h·p bytes, NCCL's
//                      size); the E/ep local experts as grouped GEMMs of m = T·k·ep/E·imbalance
//                      rows each (the busiest rank sets the pace); their activation; the
//                      all-to-all back; un-permutation with the probability-weighted sum
//                      (2·T·k·h). Shared experts run beside them as one MLP of shared·f_e.
//                      Backward mirrors it (the router's dgrad/wgrad and softmax backward).
//                      The first dense_layers layers keep the dense MLP (DeepSeek-V3).
//   untied             the logits weight is its own V·h/t parameter on the last stage
//
// GptBuilder (gpt_builder.hpp) builds it, its members defined in files named for what they
// build; here the stage as a whole: its parameters, the embedding, the layers in order, the
// head, the optimizer step, and build_gpt_graph's checks of the spec and the partition.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/graph/gpt_builder.hpp"
#include "engine/graph/workload.hpp"

namespace pathfinder {

namespace gpt_detail {

Deps GptBuilder::head_fwd(const Deps& x, ParamId logits_weight) {
  const double vd = static_cast<double>(s_.vocabulary / tp_);
  const KernelId lnf = layernorm_fwd(-1, "final_ln", x);
  Kernel logits = gemm_kernel("logits.fwd", KernelKind::kGemm, Phase::kForward, dt_,
                              GemmShape{1, T_, s_.vocabulary / tp_, s_.hidden},
                              gather_in(-1, "final_ln.gather", Phase::kForward, {lnf}));
  logits.weight = logits_weight;  // tied to the token embedding
  const KernelId lg = add(std::move(logits), -1);
  // Reads the logits and T target ids; keeps the softmax for the backward pass, writes T fp32
  // losses. Vocabulary-parallel: the row max, the exp sum and the target logit are all-reduced
  // over the tensor group (3 fp32 per token).
  const bool fp32 = part_.fp32_cross_entropy;
  const KernelId ce = stream(-1, "cross_entropy.fwd", KernelKind::kCrossEntropy, Phase::kForward,
                             4.0 * t_ * vd + 2.0 * t_,
                             (fp32 ? t_ * vd * bytes(22) : t_ * vd * p_) + t_ * bytes(4),
                             (fp32 ? t_ * vd * bytes(16) : t_ * vd * p_) + t_ * bytes(4), {lg});
  // Training metrics (GptPartition::metric_losses): each casts the logits to fp32 (2 B read, 4
  // written) and takes their log_softmax (4 + 4), forward only; nothing waits for them.
  for (int k = 0; k < part_.metric_losses; ++k) {
    (void)stream(-1, "metric_loss" + std::to_string(k) + ".fwd", KernelKind::kCrossEntropy,
                 Phase::kForward, 4.0 * t_ * vd + 2.0 * t_, t_ * vd * bytes(6) + t_ * bytes(4),
                 t_ * vd * bytes(8) + t_ * bytes(4), {lg});
  }
  return tp_comm(-1, "cross_entropy.reduce", CommKind::kAllReduce, Phase::kForward, {ce}, false,
                 t_ * bytes(12));
}

Deps GptBuilder::head_bwd(const Deps& ce, ParamId logits_weight,
                          std::vector<KernelId>& head_grads) {
  const double vd = static_cast<double>(s_.vocabulary / tp_);
  const std::int64_t h = s_.hidden, Vt = s_.vocabulary / tp_;
  const bool fp32 = part_.fp32_cross_entropy;
  const KernelId ce_b = stream(-1, "cross_entropy.bwd", KernelKind::kCrossEntropy,
                               Phase::kBackwardData, t_ * vd + t_,
                               (fp32 ? t_ * vd * bytes(8) : t_ * vd * p_) + t_ * bytes(4),
                               fp32 ? t_ * vd * bytes(6) : t_ * vd * p_, ce);
  Kernel ldg = gemm_kernel("logits.dgrad", KernelKind::kGemm, Phase::kBackwardData, dt_,
                           GemmShape{1, T_, h, Vt}, {ce_b});
  ldg.weight = logits_weight;
  const Deps lg_d =
      reduce_out(-1, "logits.reduce.bwd", Phase::kBackwardData, {add(std::move(ldg), -1)});
  if (!s_.lora()) {  // a frozen head has no weight gradient
    Kernel lwg = gemm_kernel("logits.wgrad", KernelKind::kGemm, Phase::kBackwardWeight, dt_,
                             wgrad_shape(GemmShape{1, h, Vt, T_}), {ce_b});
    lwg.weight = logits_weight;
    head_grads.push_back(add(std::move(lwg), -1));
  }
  const KernelId lnf_b = layernorm_bwd(-1, "final_ln", lg_d);
  head_grads.push_back(lnf_b);
  return {lnf_b};
}

ComputeGraph GptBuilder::build() {
  const std::int64_t h = s_.hidden, V = s_.vocabulary, s = s_.sequence;
  const double hd = static_cast<double>(h);
  const double sd = static_cast<double>(s);
  const int L = static_cast<int>(part_.layers >= 0 ? part_.layers : s_.layers - part_.first_layer);
  const std::int64_t Vt = V / tp_;

  std::optional<ParamId> tok, pos, head_w;
  if (part_.embedding) {
    tok = param("embedding.token", -1, Vt * h);
    if (!rotary_) pos = param("embedding.position", -1, s * h);
  }
  const std::int64_t qkv_out = (s_.heads / tp_ + 2 * kv_local_) * s_.head_dim();
  for (int i = 0; i < L; ++i) {
    LayerParams w{};
    norm_params(i, "ln1", h);
    if (s_.mla()) {
      const std::int64_t a = s_.heads / tp_, d = s_.head_dim(), c = s_.kv_lora_rank;
      const std::int64_t qr = s_.q_lora_rank, r = s_.rope_head_dim;
      if (qr > 0) {
        w.q_down = linear(i, "q_down", h, qr);
        norm_params(i, "q_norm", qr);
      }
      w.q_up = linear(i, "q_up", qr > 0 ? qr : h, a * d);
      w.kv_down = linear(i, "kv_down", h, c + r);
      norm_params(i, "kv_norm", c);
      w.kv_up = linear(i, "kv_up", c, a * (d - r + s_.value_dim()));
    } else {
      w.qkv = linear(i, "qkv", h, qkv_out);
    }
    w.proj = linear(i, "proj", s_.value_width() / tp_, h, /*row_parallel=*/true);
    norm_params(i, "ln2", h);
    if (moe_at(i)) {
      const int global = i + part_.first_layer;
      const std::int64_t fe = s_.expert_width() / etp_, El = local_experts();
      const std::int64_t beta = s_.bias ? 1 : 0;
      w.router = b_.add_parameter({name(i, "router.weight"), global, h * s_.experts});
      w.e_fc1 = b_.add_parameter({name(i, "experts.fc1.weight"), global, El * (h * fe + beta * fe)});
      if (swiglu_) {
        w.e_up = b_.add_parameter({name(i, "experts.up.weight"), global, El * (h * fe + beta * fe)});
      }
      w.e_fc2 = b_.add_parameter({name(i, "experts.fc2.weight"), global, El * (fe * h + beta * h)});
      if (s_.shared_experts > 0) {
        const std::int64_t fs = s_.shared_experts * s_.expert_width() / tp_;
        w.fc1 = linear(i, "shared.fc1", h, fs);
        if (swiglu_) w.up = linear(i, "shared.up", h, fs);
        w.fc2 = linear(i, "shared.fc2", fs, h, /*row_parallel=*/true);
      }
    } else {
      w.fc1 = linear(i, "fc1", h, s_.ffn / tp_);
      if (swiglu_) w.up = linear(i, "up", h, s_.ffn / tp_);
      w.fc2 = linear(i, "fc2", s_.ffn / tp_, h, /*row_parallel=*/true);
    }
    params_.push_back(w);
  }
  if (part_.head) {
    norm_params(-1, "final_ln", h);
    // Without the embedding on this stage the tied logits weight is a copy (Megatron keeps
    // the word embedding on both the first and the last stage); untied, its own weight.
    head_w = tok && s_.tied_embeddings ? *tok : param("head.weight", -1, Vt * h);
  }
  grads_.assign(static_cast<std::size_t>(L), {});

  // Forward.
  Deps x;
  std::optional<KernelId> emb_id;
  if (part_.embedding) {
    // Gathers T rows of the token table and, with learned positions, adds s position rows.
    const double pos_rows = rotary_ ? 0.0 : sd / part_.context;  // this rank's positions
    Kernel emb = stream_kernel("embedding.fwd", KernelKind::kEmbedding, Phase::kForward, dt_,
                               flops(rotary_ ? 0.0 : t_ * hd),
                               t_ * bytes(4) + t_ * hd * p_ + pos_rows * hd * p_, t_ * hd * p_,
                               {});
    emb.weight = *tok;
    x = reduce_out(-1, "embedding.reduce", Phase::kForward, {add(std::move(emb), -1)});
  }
  const Deps stage_input = x;
  std::vector<LayerFwd> fwd;
  for (int i = 0; i < L; ++i) {
    fwd.push_back(layer_fwd(i, x, Pass::kForward));
    x = {fwd.back().res2};
  }
  Deps g;
  std::vector<KernelId> head_grads;
  if (part_.head) {
    g = head_bwd(head_fwd(x, *head_w), *head_w, head_grads);
    // The head's own weight and the final norm (a tied weight on this stage: the embedding's).
    if (adds_every_gradient() && !s_.lora()) {
      const double own = head_w == tok ? 0.0 : static_cast<double>(Vt * h);
      head_grads.push_back(
          gradient_add(-1, "head.grad.accumulate", own + (rms_ ? 1.0 : 2.0) * hd, head_grads));
    }
  }
  // Backward; full recomputation re-runs each layer's forward from its stored input first.
  for (int i = L - 1; i >= 0; --i) {
    const auto iu = static_cast<std::size_t>(i);
    if (part_.recompute == Recompute::kFull) {
      fwd[iu] = layer_fwd(i, i > 0 ? Deps{fwd[iu - 1].res2} : stage_input,
                          Pass::kRecomputeLayer);
      g.push_back(fwd[iu].res2);
    }
    g = layer_bwd(i, fwd[iu], g);
  }
  if (part_.embedding && !s_.lora()) {  // a frozen table has no gradient
    // The token table's gradient zeroed (PyTorch's dense embedding backward starts from
    // zeros of the table's shape), T gradient rows scatter-added into it (read-modify-write of
    // T rows) and summed over the batch into the s position rows: 2·T·h adds.
    Deps deps = gather_in(-1, "embedding.gather.bwd", Phase::kBackwardWeight, g);
    deps.insert(deps.end(), head_grads.begin(), head_grads.end());
    const double pos_rows = rotary_ ? 0.0 : sd / part_.context;  // this rank's positions
    Kernel eb = stream_kernel("embedding.bwd", KernelKind::kEmbedding, Phase::kBackwardWeight,
                              dt_, flops((rotary_ ? 1.0 : 2.0) * t_ * hd),
                              t_ * bytes(4) + 2.0 * t_ * hd * p_ + pos_rows * hd * p_,
                              static_cast<double>(Vt) * hd * p_ + t_ * hd * p_ + pos_rows * hd * p_,
                              std::move(deps));
    eb.weight = *tok;
    emb_id = add(std::move(eb), -1);
    // Its gradient into the main gradient: no GEMM makes it, so by an add whether or not the
    // GEMMs accumulate theirs (Megatron's hook, main_grad.add_(grad)).
    if (part_.gradient_add > 0) {
      const double elements = static_cast<double>(b_.parameter(*tok).elements +
                                                  (pos ? b_.parameter(*pos).elements : 0));
      emb_id = gradient_add(-1, "embedding.grad.accumulate", elements, {*emb_id});
    }
  }

  // Optimizer step, one kernel per parameter group (with LoRA the adapters only).
  if (part_.embedding && !s_.lora()) {
    (void)add(update_kernel("embedding.update", s_.optimizer, dt_,
                            b_.parameter(*tok).elements + (pos ? b_.parameter(*pos).elements : 0),
                            -1, {*emb_id}),
              -1);
  }
  std::vector<std::int64_t> layer_elements(static_cast<std::size_t>(L), 0);
  for (const auto& p : b_.parameters()) {
    const int li = p.layer - part_.first_layer;
    if (p.layer >= 0 && p.trainable) {
      PF_ASSERT(li >= 0 && li < L);
      layer_elements[static_cast<std::size_t>(li)] += p.elements;
    }
  }
  for (int i = 0; i < L; ++i) {
    const auto iu = static_cast<std::size_t>(i);
    const KernelId u = add(update_kernel(name(i, "update"), s_.optimizer, dt_, layer_elements[iu],
                                         i, grads_[iu]),
                           i);
    if (part_.quantized_linear) {  // the updated linear weights cast once for the next iteration
      const LayerParams& w = params_[iu];
      double e = 0.0;
      for (const Linear* l : {&w.qkv, &w.proj, &w.fc1, &w.fc2, &w.q_down, &w.q_up, &w.kv_down,
                              &w.kv_up}) {
        e += static_cast<double>(l->in * l->out);
      }
      if (swiglu_) e += static_cast<double>(w.up.in * w.up.out);
      if (moe_at(i)) {
        e += static_cast<double>(b_.parameter(w.e_fc1).elements + b_.parameter(w.e_fc2).elements +
                                 (swiglu_ ? b_.parameter(w.e_up).elements : 0));
      }
      (void)quantize(i, "weights.cast", Phase::kUpdate, e, {u});
    }
  }
  if (part_.head && !s_.lora()) {
    const std::int64_t n =
        (rms_ ? h : 2 * h) + (part_.embedding && s_.tied_embeddings ? 0 : Vt * h);
    (void)add(update_kernel("final_ln.update", s_.optimizer, dt_, n, -1, head_grads), -1);
  }
  return std::move(b_).build();
}

}  // namespace gpt_detail

ComputeGraph build_gpt_graph(const GptSpec& spec, const GptPartition& part) {
  PF_ASSERT(spec.layers > 0 && spec.hidden > 0 && spec.heads > 0 && spec.ffn > 0 &&
            spec.sequence > 0 && spec.vocabulary > 0 && spec.micro_batch > 0);
  PF_ASSERT(spec.head_size > 0 || spec.hidden % spec.heads == 0);
  PF_ASSERT(spec.kv() >= 1 && spec.heads % spec.kv() == 0);
  PF_ASSERT(part.tensor > 0 && spec.heads % part.tensor == 0 && spec.ffn % part.tensor == 0 &&
            (spec.kv() % part.tensor == 0 || part.tensor % spec.kv() == 0) &&
            spec.hidden % part.tensor == 0 && spec.vocabulary % part.tensor == 0);
  PF_ASSERT(part.first_layer >= 0 && part.first_layer + std::max(part.layers, 0) <= spec.layers);
  PF_ASSERT(part.expert >= 1 && (part.expert == 1 || (spec.moe() && spec.experts % part.expert == 0)));
  PF_ASSERT(!spec.moe() || (spec.top_k >= 1 && spec.top_k <= spec.experts &&
                            spec.expert_width() % part.expert_tp() == 0 &&
                            (spec.shared_experts * spec.expert_width()) % part.tensor == 0));
  PF_ASSERT(part.expert_tensor == 0 || part.expert_tensor == 1 ||
            part.expert_tensor == part.tensor);
  PF_ASSERT(part.context >= 1 && (spec.micro_batch * spec.sequence) % part.context == 0 &&
            (part.context == 1 || spec.attention == AttentionKind::kFlash));
  PF_ASSERT(!part.context_all_to_all || (spec.heads / part.tensor) % part.context == 0);
  PF_ASSERT(spec.document == 0 || (spec.document <= spec.sequence && part.context == 1 &&
                                   spec.attention == AttentionKind::kFlash));
  PF_ASSERT(!spec.lora() || (!spec.moe() && !spec.mla() && spec.lora_targets != 0));
  return gpt_detail::GptBuilder(spec, part).build();
}

}  // namespace pathfinder
