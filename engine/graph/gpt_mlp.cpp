// GptBuilder's MLP (gpt_builder.hpp): the dense one (GeLU or SwiGLU) and the mixture of experts
// (router, permutation, expert-parallel all-to-alls, the local experts' grouped GEMMs, shared
// experts).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "engine/graph/gpt_builder.hpp"

namespace pathfinder::gpt_detail {

// SiLU(gate)·up over `e` elements: one fused kernel (reads gate and up, writes the product),
// or eagerly (EagerOps::swiglu) F.silu (p, p) then the product (2p, p).
KernelId GptBuilder::swiglu_fwd(int layer, const std::string& n, double e, Deps in) {
  const bool eager = part_.eager.swiglu;
  return stream(layer, n + suffix_, KernelKind::kElementwise, phase_, 6.0 * e,
                (eager ? 3.0 : 2.0) * e * p_, (eager ? 2.0 : 1.0) * e * p_, std::move(in));
}

// A dense MLP of width fd per rank (the layer's, or the shared experts' with prefix
// "shared."): fc1 (and up), the activation, fc2 and its reduction.
Deps GptBuilder::dense_mlp_fwd(int i, LayerFwd& r, const LayerParams& w, double fd,
                               const std::string& pre, const Deps& in, bool cast_input) {
  r.fc1 = linear_fwd(i, pre + "fc1", w.fc1, false, in, cast_input);
  if (swiglu_) {
    r.up = linear_fwd(i, pre + "up", w.up, false, in, /*cast_input=*/false);  // fc1's cast
    r.gelu = swiglu_fwd(i, pre + "swiglu", t_ * fd, {r.fc1, r.up});
  } else {
    r.gelu = stream(i, pre + "gelu" + suffix_, KernelKind::kElementwise, phase_,
                    (s_.bias ? 10.0 : 9.0) * t_ * fd,
                    t_ * fd * p_ + (s_.bias ? fd * p_ : Bytes{}), t_ * fd * p_, {r.fc1});
  }
  return reduce_out(i, pre + "fc2.reduce" + suffix_, phase_,
                    {linear_fwd(i, pre + "fc2", w.fc2, false, {r.gelu})});
}

// Its backward from the output gradient g (gathered); returns the input-gradient producers
// (reduced) and appends the weight-gradient kernels to wg.
Deps GptBuilder::dense_mlp_bwd(int i, const LayerFwd& fw, const LayerParams& w, double fd,
                               const std::string& pre, const Deps& g, const Deps& ln2_in,
                               Deps& wg, bool cast_grad) {
  const auto [fc2_d, fc2_w] = linear_bwd(i, pre + "fc2", w.fc2, g, {}, cast_grad);
  wg.push_back(fc2_w);
  Deps fc1_ds;
  if (swiglu_) {
    // Reads d(out), gate and up; writes d(gate) and d(up). Eagerly (EagerOps::swiglu) the
    // product's backward, g·up and g·SiLU(gate) (2p, p each), then SiLU's (2p, p).
    const double e = t_ * fd;
    const bool eager = part_.eager.swiglu;
    const KernelId act_b =
        stream(i, pre + "swiglu.bwd", KernelKind::kElementwise, Phase::kBackwardData,
               11.0 * e, (eager ? 6.0 : 3.0) * e * p_, (eager ? 3.0 : 2.0) * e * p_,
               {fc2_d, fw.fc1, fw.up});
    const auto [up_d, up_w] = linear_bwd(i, pre + "up", w.up, {act_b}, ln2_in);
    const auto [gate_d, gate_w] = linear_bwd(i, pre + "fc1", w.fc1, {act_b, up_d}, ln2_in);
    wg.insert(wg.end(), {gate_w, up_w});
    fc1_ds = {gate_d};
  } else {
    const KernelId gelu_b =
        stream(i, pre + "gelu.bwd", KernelKind::kElementwise, Phase::kBackwardData,
               (s_.bias ? 18.0 : 17.0) * t_ * fd,
               2.0 * t_ * fd * p_ + (s_.bias ? fd * p_ : Bytes{}), t_ * fd * p_,
               {fc2_d, fw.fc1});
    const auto [fc1_d, fc1_w] = linear_bwd(i, pre + "fc1", w.fc1, {gelu_b}, ln2_in);
    wg.push_back(fc1_w);
    fc1_ds = {fc1_d};
  }
  return reduce_out(i, pre + "fc1.reduce.bwd", Phase::kBackwardData, fc1_ds,
                    part_.overlap_tp_backward);
}

double GptBuilder::expert_rows() const {  // rows of each local expert's GEMMs
  // The tokens a tensor group's expert shards see: all T when the experts are split over it
  // (its ranks gather their rows), each rank's own T/t when they are whole.
  const double routed = t_ / static_cast<double>(tp_ / etp_);
  return std::ceil(routed * static_cast<double>(s_.top_k) * static_cast<double>(part_.expert) /
                   static_cast<double>(s_.experts) * s_.expert_imbalance);
}

// The local experts' activation on their rows (SwiGLU of gate and up, or GeLU), in the
// current pass.
KernelId GptBuilder::expert_activation(int i, Deps in) {
  const double rows = expert_rows() * static_cast<double>(local_experts());
  const double fe = static_cast<double>(s_.expert_width() / etp_);
  return swiglu_ ? stream(i, "experts.swiglu" + suffix_, KernelKind::kElementwise, phase_,
                          6.0 * rows * fe, 2.0 * rows * fe * p_, rows * fe * p_, std::move(in))
                 : stream(i, "experts.gelu" + suffix_, KernelKind::kElementwise, phase_,
                          9.0 * rows * fe, rows * fe * p_, rows * fe * p_, std::move(in));
}

// An expert GEMM of the E/ep local experts: (E/ep; m, n, k), FP8 when the linears are.
KernelId GptBuilder::expert_gemm(int layer, const std::string& n, Phase ph, const GemmShape& s,
                                 Deps deps, ParamId weight) {
  Kernel k = gemm_kernel(name(layer, n), s.batch > 1 ? KernelKind::kBatchedGemm : KernelKind::kGemm,
                         ph, linear_dtype(), ph == Phase::kBackwardWeight ? wgrad_shape(s) : s,
                         std::move(deps));
  k.weight = weight;
  k.promoted_accumulation = promoted(ph);
  return rescaled(layer, n, ph,
                  static_cast<double>(s.batch) * static_cast<double>(s.m) *
                      static_cast<double>(s.n),
                  add(std::move(k), layer));
}

// Expert-group all-to-all of `b` bytes each member holds; nothing with ep = 1.
// Overlapped (GptPartition::overlap_expert_comm): on the communication stream, and what
// follows does not wait for it (another micro-batch's compute covers it).
Deps GptBuilder::ep_comm(int layer, const std::string& n, Phase ph, Deps after, Bytes b) {
  if (part_.expert == 1) return after;
  const bool overlap = part_.overlap_expert_comm;
  const Communication c{CommKind::kAllToAll, CommGroup::kExpert, b, overlap};
  const KernelId a2a = add(comm_kernel(name(layer, n), ph, dt_, c, after), layer);
  return overlap ? after : Deps{a2a};
}

Deps GptBuilder::moe_fwd(int i, LayerFwd& r, const Deps& local, const Deps& gathered) {
  const LayerParams& w = params_[static_cast<std::size_t>(i)];
  const double h = static_cast<double>(s_.hidden), E = static_cast<double>(s_.experts);
  const double k = static_cast<double>(s_.top_k);
  const double fe = static_cast<double>(s_.expert_width() / etp_);
  const std::int64_t El = local_experts();
  const double m = expert_rows();
  const double rows = m * static_cast<double>(El);  // this rank's expert rows
  // The tokens this rank routes: its T/t rows under sequence parallelism (Megatron-Core runs
  // MoE with tp > 1 only with SP: the all-to-all carries T/t·k rows and the tensor group
  // all-gathers them before the experts), all T otherwise.
  const double tok = rows_;
  const Deps in = part_.sequence_parallel ? local : gathered;
  // Router: logits (T, E, h), then softmax and top-k per token.
  Kernel router = gemm_kernel(name(i, "router" + suffix_), KernelKind::kGemm, phase_, dt_,
                              GemmShape{1, static_cast<std::int64_t>(tok), s_.experts, s_.hidden},
                              in);
  router.weight = w.router;
  r.router = add(std::move(router), i);
  r.topk = stream(i, "router.topk" + suffix_, KernelKind::kSoftmax, phase_, 5.0 * tok * E,
                  tok * E * p_, tok * k * bytes(8), {r.router});
  // Each token's row copied once per chosen expert, grouped by expert; with an FP8 dispatch the
  // rows quantized first (the experts' input cast moved before the all-to-all) and copied and
  // sent as FP8 with their scales (row_bytes per element).
  Deps in_topk = in;
  in_topk.push_back(r.topk);
  const bool fp8_rows = part_.fp8_dispatch && part_.quantized_linear;
  if (fp8_rows) in_topk = {quantize(i, "moe.dispatch.cast" + suffix_, phase_, tok * h, in_topk)};
  const Bytes row = fp8_rows ? bytes(fp8_row_bytes()) : p_;
  r.permuted = stream(i, "moe.permute" + suffix_, KernelKind::kElementwise, phase_, 0.0,
                      tok * h * row + tok * k * bytes(8), tok * k * h * row, std::move(in_topk));
  // Dropless routing sizes the all-to-all (and the experts' GEMMs) on the host: Megatron-Core's
  // MoEAlltoAllTokenDispatcher copies the split sizes to the CPU and synchronizes the stream
  // "before expert parallel AlltoAll communication to get the input_splits and output_splits
  // CPU values" (cuda_sync_point before_ep_alltoall; before_finish without expert
  // parallelism): the next kernel is issued only once the device has caught up.
  host_sync_next_ = true;
  Deps x = ep_comm(i, "moe.dispatch" + suffix_, phase_, {r.permuted}, tok * k * h * row);
  if (part_.sequence_parallel && etp_ > 1) {  // every tensor rank's expert shards: all rows
    x = tp_comm(i, "experts.gather" + suffix_, CommKind::kAllGather, phase_, std::move(x), false,
                bytes(rows * h * row.si()));
  }
  if (part_.quantized_linear && !fp8_rows) {
    x = {quantize(i, "experts.fc1.cast" + suffix_, phase_, rows * h, std::move(x))};
  }
  const KernelId fc1 = expert_gemm(i, "experts.fc1" + suffix_, phase_,
                                   GemmShape{El, static_cast<std::int64_t>(m), s_.expert_width() / etp_,
                                             s_.hidden},
                                   x, w.e_fc1);
  Deps act_in = {fc1};
  if (swiglu_) {
    act_in.push_back(expert_gemm(i, "experts.up" + suffix_, phase_,
                                 GemmShape{El, static_cast<std::int64_t>(m),
                                           s_.expert_width() / etp_, s_.hidden},
                                 x, w.e_up));
  }
  Deps a = {expert_activation(i, std::move(act_in))};
  if (part_.quantized_linear) a = {quantize(i, "experts.fc2.cast" + suffix_, phase_, rows * fe, a)};
  const KernelId fc2 = expert_gemm(i, "experts.fc2" + suffix_, phase_,
                                   GemmShape{El, static_cast<std::int64_t>(m), s_.hidden,
                                             s_.expert_width() / etp_},
                                   std::move(a), w.e_fc2);
  // Expert partial sums over the tensor group (none for whole experts), then the rows back to
  // their tokens' ranks.
  Deps y = {fc2};
  if (etp_ > 1) {
    y = tp_comm(i, "experts.reduce" + suffix_,
                part_.sequence_parallel ? CommKind::kReduceScatter : CommKind::kAllReduce,
                phase_, std::move(y), false, bytes(rows * h * p_.si()));
  }
  y = ep_comm(i, "moe.combine" + suffix_, phase_, std::move(y), tok * k * h * p_);
  r.experts_out = y.front();
  y.push_back(r.topk);
  if (s_.shared_experts > 0) {
    LayerFwd shared{};
    r.shared = dense_mlp_fwd(i, shared, w,
                             static_cast<double>(s_.shared_experts * s_.expert_width() / tp_),
                             "shared.", gathered);
    r.fc1 = shared.fc1;
    r.up = shared.up;
    r.gelu = shared.gelu;
    y.insert(y.end(), r.shared.begin(), r.shared.end());
  }
  // Un-permute: each token's k rows weighted by their probabilities and summed (with the
  // shared experts' output).
  return {stream(i, "moe.unpermute" + suffix_, KernelKind::kElementwise, phase_, 2.0 * tok * k * h,
                 tok * k * h * p_ + tok * k * bytes(8), tok * h * p_, std::move(y))};
}

Deps GptBuilder::moe_bwd(int i, const LayerFwd& f, const Deps& g_local, const Deps& g,
                         const Deps& ln2_in, Deps& wg) {
  const LayerParams& w = params_[static_cast<std::size_t>(i)];
  const double h = static_cast<double>(s_.hidden), E = static_cast<double>(s_.experts);
  const double k = static_cast<double>(s_.top_k);
  const double fe = static_cast<double>(s_.expert_width() / etp_);
  const std::int64_t El = local_experts(), fe_i = s_.expert_width() / etp_;
  const auto m = static_cast<std::int64_t>(expert_rows());
  const double rows = static_cast<double>(m) * static_cast<double>(El);
  const Phase bd = Phase::kBackwardData, bw = Phase::kBackwardWeight;
  const double tok = rows_;  // as moe_fwd: T/t rows with sequence parallelism
  const Deps& g_in = part_.sequence_parallel ? g_local : g;
  // Un-permute backward: the output gradient to each chosen row (scaled by its probability),
  // and the probabilities' gradients (a dot product per row, with the expert outputs).
  Deps gi = g_in;
  gi.push_back(f.experts_out);
  const KernelId up_b = stream(i, "moe.unpermute.bwd", KernelKind::kElementwise, bd,
                               3.0 * tok * k * h, tok * h * p_ + tok * k * h * p_,
                               tok * k * h * p_ + tok * k * bytes(4), std::move(gi));
  // With an FP8 dispatch the rows' gradients are quantized before the backward combine, which
  // then carries FP8 (DeepSeek-V3 §3.3.2); the forward combine and the backward dispatch stay in
  // 16 bits.
  const bool fp8_rows = part_.fp8_dispatch && part_.quantized_linear;
  Deps x = {up_b};
  if (fp8_rows) x = {quantize(i, "experts.fc2.grad.cast", bd, tok * k * h, std::move(x))};
  const Bytes row = fp8_rows ? bytes(fp8_row_bytes()) : p_;
  x = ep_comm(i, "moe.combine.bwd", bd, std::move(x), tok * k * h * row);
  if (part_.sequence_parallel && etp_ > 1) {
    x = tp_comm(i, "experts.gather.bwd", CommKind::kAllGather, bd, std::move(x), false,
                bytes(rows * h * row.si()));
  }
  if (part_.quantized_linear && !fp8_rows) {
    x = {quantize(i, "experts.fc2.grad.cast", bd, rows * h, std::move(x))};
  }
  const KernelId fc2_d = expert_gemm(i, "experts.fc2.dgrad", bd, GemmShape{El, m, fe_i, s_.hidden},
                                     x, w.e_fc2);
  wg.push_back(expert_gemm(i, "experts.fc2.wgrad", bw, GemmShape{El, fe_i, s_.hidden, m}, x,
                           w.e_fc2));
  Deps d;
  if (swiglu_) {
    const KernelId act_b = stream(i, "experts.swiglu.bwd", KernelKind::kElementwise, bd,
                                  11.0 * rows * fe, 3.0 * rows * fe * p_, 2.0 * rows * fe * p_,
                                  {fc2_d});
    d = {act_b};
  } else {
    d = {stream(i, "experts.gelu.bwd", KernelKind::kElementwise, bd, 17.0 * rows * fe,
                2.0 * rows * fe * p_, rows * fe * p_, {fc2_d})};
  }
  if (part_.quantized_linear) d = {quantize(i, "experts.fc1.grad.cast", bd, rows * fe, d)};
  Deps in_d = {expert_gemm(i, "experts.fc1.dgrad", bd, GemmShape{El, m, s_.hidden, fe_i}, d,
                           w.e_fc1)};
  Deps wdeps = d;
  wdeps.push_back(f.permuted);
  wg.push_back(expert_gemm(i, "experts.fc1.wgrad", bw, GemmShape{El, s_.hidden, fe_i, m}, wdeps,
                           w.e_fc1));
  if (swiglu_) {
    in_d.push_back(expert_gemm(i, "experts.up.dgrad", bd, GemmShape{El, m, s_.hidden, fe_i}, d,
                               w.e_up));
    wg.push_back(expert_gemm(i, "experts.up.wgrad", bw, GemmShape{El, s_.hidden, fe_i, m}, wdeps,
                             w.e_up));
  }
  Deps back = std::move(in_d);
  if (etp_ > 1) {
    back = tp_comm(i, "experts.reduce.bwd",
                   part_.sequence_parallel ? CommKind::kReduceScatter : CommKind::kAllReduce, bd,
                   std::move(back), false, bytes(rows * h * p_.si()));
  }
  back = ep_comm(i, "moe.dispatch.bwd", bd, std::move(back), tok * k * h * p_);
  // Permute backward: each token's k row gradients summed into its row.
  const KernelId perm_b = stream(i, "moe.permute.bwd", KernelKind::kElementwise, bd,
                                 tok * k * h, tok * k * h * p_, tok * h * p_, std::move(back));
  // Router: top-k/softmax backward, then its data and weight gradients.
  const KernelId topk_b = stream(i, "router.topk.bwd", KernelKind::kSoftmax, bd, 4.0 * tok * E,
                                 tok * E * p_ + tok * k * bytes(4), tok * E * p_, {up_b, f.topk});
  const auto tokens = static_cast<std::int64_t>(tok);
  Kernel rd = gemm_kernel(name(i, "router.dgrad"), KernelKind::kGemm, bd, dt_,
                          GemmShape{1, tokens, s_.hidden, s_.experts}, {topk_b});
  rd.weight = w.router;
  Kernel rw = gemm_kernel(name(i, "router.wgrad"), KernelKind::kGemm, bw, dt_,
                          GemmShape{1, s_.hidden, s_.experts, tokens}, {topk_b});
  rw.weight = w.router;
  Deps out = {perm_b, add(std::move(rd), i)};
  wg.push_back(add(std::move(rw), i));
  if (s_.shared_experts > 0) {
    const Deps sh = dense_mlp_bwd(i, f, w,
                                  static_cast<double>(s_.shared_experts * s_.expert_width() / tp_),
                                  "shared.", g, ln2_in, wg);
    out.insert(out.end(), sh.begin(), sh.end());
  }
  // The input gradients (permutation, router, shared experts) summed into the norm's.
  const double terms = static_cast<double>(out.size());
  return {stream(i, "moe.input.grad", KernelKind::kElementwise, bd, (terms - 1.0) * tok * h,
                 terms * tok * h * p_, tok * h * p_, std::move(out))};
}

}  // namespace pathfinder::gpt_detail
