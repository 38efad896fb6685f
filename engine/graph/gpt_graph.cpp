// Decoder-only GPT transformer (GPT-2/3 layout as trained by Megatron-LM; Narayanan et al. 2021,
// Korthikanti et al. 2022): token + learned position embedding, l pre-layernorm blocks, final
// layernorm, logits tied to the token embedding, cross-entropy. No recomputation, no dropout.
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
#include <string>
#include <utility>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/graph/workload.hpp"

namespace pathfinder {
namespace {

class GptBuilder {
 public:
  explicit GptBuilder(const GptSpec& s)
      : s_(s),
        T_(s.micro_batch * s.sequence),
        t_(static_cast<double>(T_)),
        p_(bytes_per_element(s.precision)),
        dt_(s.precision) {}

  ComputeGraph build();

 private:
  struct Linear {
    ParamId weight;
    ParamId bias;
    std::int64_t in;
    std::int64_t out;
  };
  struct LayerFwd {
    KernelId ln1, qkv, scores, softmax, context, proj, res1, ln2, fc1, gelu, fc2, res2;
  };

  [[nodiscard]] std::string name(int layer, const std::string& what) const {
    return (layer >= 0 ? "l" + std::to_string(layer) + "." : std::string()) + what;
  }
  KernelId add(Kernel k, int layer) {
    k.layer = layer;
    return b_.add(std::move(k));
  }
  Linear linear(int layer, const std::string& n, std::int64_t in, std::int64_t out) {
    const ParamId w = b_.add_parameter({name(layer, n + ".weight"), layer, in * out});
    const ParamId bias = b_.add_parameter({name(layer, n + ".bias"), layer, out});
    return {w, bias, in, out};
  }
  KernelId linear_fwd(int layer, const std::string& n, const Linear& lin, bool bias_epilogue,
                      std::vector<KernelId> deps) {
    Kernel k = gemm_kernel(name(layer, n + ".fwd"), KernelKind::kGemm, Phase::kForward, dt_,
                           GemmShape{1, T_, lin.out, lin.in}, std::move(deps));
    if (bias_epilogue) {
      k.flops += flops(t_ * static_cast<double>(lin.out));
      k.bytes_read += static_cast<double>(lin.out) * p_;
    }
    k.weight = lin.weight;
    return add(std::move(k), layer);
  }
  // Data gradient (T, in, out) and weight gradient (in, out, T) with the bias gradient, a
  // column sum of the output gradient, in the weight-gradient epilogue.
  std::pair<KernelId, KernelId> linear_bwd(int layer, const std::string& n, const Linear& lin,
                                           const std::vector<KernelId>& deps) {
    Kernel dg = gemm_kernel(name(layer, n + ".dgrad"), KernelKind::kGemm, Phase::kBackwardData,
                            dt_, GemmShape{1, T_, lin.in, lin.out}, deps);
    dg.weight = lin.weight;
    Kernel wg = gemm_kernel(name(layer, n + ".wgrad"), KernelKind::kGemm, Phase::kBackwardWeight,
                            dt_, GemmShape{1, lin.in, lin.out, T_}, deps);
    wg.flops += flops(t_ * static_cast<double>(lin.out));
    wg.bytes_written += static_cast<double>(lin.out) * p_;
    wg.weight = lin.weight;
    const KernelId d = add(std::move(dg), layer);
    return {d, add(std::move(wg), layer)};
  }
  KernelId stream(int layer, const std::string& n, KernelKind kind, Phase ph, double work,
                  Bytes read, Bytes written, std::vector<KernelId> deps) {
    return add(stream_kernel(name(layer, n), kind, ph, dt_, flops(work), read, written,
                             std::move(deps)),
               layer);
  }
  KernelId layernorm_fwd(int layer, const std::string& n, KernelId in) {
    const double h = static_cast<double>(s_.hidden);
    return stream(layer, n + ".fwd", KernelKind::kLayerNorm, Phase::kForward, 8.0 * t_ * h,
                  t_ * h * p_ + 2.0 * h * p_, t_ * h * p_ + t_ * bytes(8), {in});
  }
  KernelId layernorm_bwd(int layer, const std::string& n, KernelId grad) {
    const double h = static_cast<double>(s_.hidden);
    return stream(layer, n + ".bwd", KernelKind::kLayerNorm, Phase::kBackwardData, 13.0 * t_ * h,
                  2.0 * t_ * h * p_ + h * p_ + t_ * bytes(8), t_ * h * p_ + 2.0 * h * p_, {grad});
  }
  // Gradient flowing into a residual stream from its branch: g + branch.
  KernelId merge(int layer, const std::string& n, KernelId g, KernelId branch) {
    const double h = static_cast<double>(s_.hidden);
    return stream(layer, n, KernelKind::kElementwise, Phase::kBackwardData, t_ * h,
                  2.0 * t_ * h * p_, t_ * h * p_, {g, branch});
  }
  LayerFwd layer_fwd(int i, KernelId x);
  KernelId layer_bwd(int i, const LayerFwd& f, KernelId g);

  const GptSpec& s_;
  std::int64_t T_;
  double t_;
  Bytes p_;
  DataType dt_;
  ComputeGraphBuilder b_;
  struct LayerParams {
    ParamId ln1_g, ln1_b, ln2_g, ln2_b;
    Linear qkv, proj, fc1, fc2;
  };
  std::vector<LayerParams> params_;
  std::vector<std::vector<KernelId>> grads_;  // kernels producing each layer's gradients
};

GptBuilder::LayerFwd GptBuilder::layer_fwd(int i, KernelId x) {
  const std::int64_t h = s_.hidden, a = s_.heads, s = s_.sequence, f = s_.ffn;
  const double hd = static_cast<double>(h), fd = static_cast<double>(f);
  const double probs = static_cast<double>(s_.micro_batch * a) * static_cast<double>(s * s);
  const LayerParams& w = params_[static_cast<std::size_t>(i)];
  LayerFwd r{};
  r.ln1 = layernorm_fwd(i, "ln1", x);
  r.qkv = linear_fwd(i, "qkv", w.qkv, /*bias_epilogue=*/true, {r.ln1});
  r.scores = add(gemm_kernel(name(i, "attn.scores.fwd"), KernelKind::kAttentionScores,
                             Phase::kForward, dt_, GemmShape{s_.micro_batch * a, s, s, h / a},
                             {r.qkv}),
                 i);
  r.softmax = stream(i, "attn.softmax.fwd", KernelKind::kSoftmax, Phase::kForward, 6.0 * probs,
                     probs * p_, probs * p_, {r.scores});
  r.context = add(gemm_kernel(name(i, "attn.context.fwd"), KernelKind::kAttentionContext,
                              Phase::kForward, dt_, GemmShape{s_.micro_batch * a, s, h / a, s},
                              {r.softmax, r.qkv}),
                  i);
  r.proj = linear_fwd(i, "proj", w.proj, false, {r.context});
  r.res1 = stream(i, "residual1.fwd", KernelKind::kElementwise, Phase::kForward, 2.0 * t_ * hd,
                  2.0 * t_ * hd * p_ + hd * p_, t_ * hd * p_, {r.proj, x});
  r.ln2 = layernorm_fwd(i, "ln2", r.res1);
  r.fc1 = linear_fwd(i, "fc1", w.fc1, false, {r.ln2});
  r.gelu = stream(i, "gelu.fwd", KernelKind::kElementwise, Phase::kForward, 10.0 * t_ * fd,
                  t_ * fd * p_ + fd * p_, t_ * fd * p_, {r.fc1});
  r.fc2 = linear_fwd(i, "fc2", w.fc2, false, {r.gelu});
  r.res2 = stream(i, "residual2.fwd", KernelKind::kElementwise, Phase::kForward, 2.0 * t_ * hd,
                  2.0 * t_ * hd * p_ + hd * p_, t_ * hd * p_, {r.fc2, r.res1});
  return r;
}

KernelId GptBuilder::layer_bwd(int i, const LayerFwd& fw, KernelId g) {
  const std::int64_t h = s_.hidden, a = s_.heads, s = s_.sequence;
  const double fd = static_cast<double>(s_.ffn);
  const double probs = static_cast<double>(s_.micro_batch * a) * static_cast<double>(s * s);
  const LayerParams& w = params_[static_cast<std::size_t>(i)];
  auto& grads = grads_[static_cast<std::size_t>(i)];
  const std::int64_t ba = s_.micro_batch * a;

  const auto [fc2_d, fc2_w] = linear_bwd(i, "fc2", w.fc2, {g});
  const KernelId gelu_b =
      stream(i, "gelu.bwd", KernelKind::kElementwise, Phase::kBackwardData, 18.0 * t_ * fd,
             2.0 * t_ * fd * p_ + fd * p_, t_ * fd * p_, {fc2_d, fw.fc1});
  const auto [fc1_d, fc1_w] = linear_bwd(i, "fc1", w.fc1, {gelu_b});
  const KernelId ln2_b = layernorm_bwd(i, "ln2", fc1_d);
  const KernelId g1 = merge(i, "residual1.grad", g, ln2_b);
  const auto [proj_d, proj_w] = linear_bwd(i, "proj", w.proj, {g1});
  // Context C = P·V: dP = dC·Vᵀ (s, s, h/a) and dV = Pᵀ·dC (s, h/a, s) per (sequence, head).
  const KernelId dp = add(gemm_kernel(name(i, "attn.context.dgrad_probs"),
                                      KernelKind::kAttentionContext, Phase::kBackwardData, dt_,
                                      GemmShape{ba, s, s, h / a}, {proj_d}),
                          i);
  const KernelId dv = add(gemm_kernel(name(i, "attn.context.dgrad_values"),
                                      KernelKind::kAttentionContext, Phase::kBackwardData, dt_,
                                      GemmShape{ba, s, h / a, s}, {proj_d}),
                          i);
  const KernelId sm_b = stream(i, "attn.softmax.bwd", KernelKind::kSoftmax, Phase::kBackwardData,
                               5.0 * probs, 2.0 * probs * p_, probs * p_, {dp, fw.softmax});
  // Scores S = Q·Kᵀ: dQ = dS·K and dK = dSᵀ·Q, each (s, h/a, s) per (sequence, head).
  const KernelId dq = add(gemm_kernel(name(i, "attn.scores.dgrad_query"),
                                      KernelKind::kAttentionScores, Phase::kBackwardData, dt_,
                                      GemmShape{ba, s, h / a, s}, {sm_b}),
                          i);
  const KernelId dk = add(gemm_kernel(name(i, "attn.scores.dgrad_key"),
                                      KernelKind::kAttentionScores, Phase::kBackwardData, dt_,
                                      GemmShape{ba, s, h / a, s}, {sm_b}),
                          i);
  const auto [qkv_d, qkv_w] = linear_bwd(i, "qkv", w.qkv, {dq, dk, dv});
  const KernelId ln1_b = layernorm_bwd(i, "ln1", qkv_d);
  grads.insert(grads.end(), {fc2_w, fc1_w, ln2_b, proj_w, qkv_w, ln1_b});
  return merge(i, "residual0.grad", g1, ln1_b);
}

ComputeGraph GptBuilder::build() {
  const std::int64_t h = s_.hidden, V = s_.vocabulary, s = s_.sequence;
  const double hd = static_cast<double>(h), vd = static_cast<double>(V);
  const double sd = static_cast<double>(s);
  const int L = static_cast<int>(s_.layers);

  const ParamId tok = b_.add_parameter({"embedding.token", -1, V * h});
  const ParamId pos = b_.add_parameter({"embedding.position", -1, s * h});
  for (int i = 0; i < L; ++i) {
    LayerParams w{};
    w.ln1_g = b_.add_parameter({name(i, "ln1.gain"), i, h});
    w.ln1_b = b_.add_parameter({name(i, "ln1.bias"), i, h});
    w.qkv = linear(i, "qkv", h, 3 * h);
    w.proj = linear(i, "proj", h, h);
    w.ln2_g = b_.add_parameter({name(i, "ln2.gain"), i, h});
    w.ln2_b = b_.add_parameter({name(i, "ln2.bias"), i, h});
    w.fc1 = linear(i, "fc1", h, s_.ffn);
    w.fc2 = linear(i, "fc2", s_.ffn, h);
    params_.push_back(w);
  }
  (void)b_.add_parameter({"final_ln.gain", -1, h});
  (void)b_.add_parameter({"final_ln.bias", -1, h});
  grads_.assign(static_cast<std::size_t>(L), {});

  // Forward. Embedding: gather T token rows, read the s position rows, add (T·h FLOPs).
  Kernel emb = stream_kernel("embedding.fwd", KernelKind::kEmbedding, Phase::kForward, dt_,
                             flops(t_ * hd), t_ * bytes(4) + t_ * hd * p_ + sd * hd * p_,
                             t_ * hd * p_, {});
  emb.weight = tok;
  KernelId x = add(std::move(emb), -1);
  std::vector<LayerFwd> fwd;
  for (int i = 0; i < L; ++i) {
    fwd.push_back(layer_fwd(i, x));
    x = fwd.back().res2;
  }
  const KernelId lnf = layernorm_fwd(-1, "final_ln", x);
  Kernel logits = gemm_kernel("logits.fwd", KernelKind::kGemm, Phase::kForward, dt_,
                              GemmShape{1, T_, V, h}, {lnf});
  logits.weight = tok;  // tied to the token embedding
  const KernelId lg = add(std::move(logits), -1);
  // Reads the logits and T target ids; keeps the softmax for the backward pass, writes T fp32
  // losses.
  const KernelId ce = stream(-1, "cross_entropy.fwd", KernelKind::kCrossEntropy, Phase::kForward,
                             4.0 * t_ * vd + 2.0 * t_, t_ * vd * p_ + t_ * bytes(4),
                             t_ * vd * p_ + t_ * bytes(4), {lg});

  // Backward.
  const KernelId ce_b = stream(-1, "cross_entropy.bwd", KernelKind::kCrossEntropy,
                               Phase::kBackwardData, t_ * vd + t_, t_ * vd * p_ + t_ * bytes(4),
                               t_ * vd * p_, {ce});
  Kernel ldg = gemm_kernel("logits.dgrad", KernelKind::kGemm, Phase::kBackwardData, dt_,
                           GemmShape{1, T_, h, V}, {ce_b});
  ldg.weight = tok;
  const KernelId lg_d = add(std::move(ldg), -1);
  Kernel lwg = gemm_kernel("logits.wgrad", KernelKind::kGemm, Phase::kBackwardWeight, dt_,
                           GemmShape{1, h, V, T_}, {ce_b});
  lwg.weight = tok;
  const KernelId lg_w = add(std::move(lwg), -1);
  const KernelId lnf_b = layernorm_bwd(-1, "final_ln", lg_d);
  KernelId g = lnf_b;
  for (int i = L - 1; i >= 0; --i) g = layer_bwd(i, fwd[static_cast<std::size_t>(i)], g);
  // Scatter-add T gradient rows into the token table gradient (read-modify-write of T rows) and
  // sum them over the batch into the s position rows: 2·T·h adds.
  Kernel eb = stream_kernel("embedding.bwd", KernelKind::kEmbedding, Phase::kBackwardWeight, dt_,
                            flops(2.0 * t_ * hd),
                            t_ * bytes(4) + 2.0 * t_ * hd * p_ + sd * hd * p_,
                            t_ * hd * p_ + sd * hd * p_, {g, lg_w});
  eb.weight = tok;
  const KernelId emb_b = add(std::move(eb), -1);

  // Optimizer step, one kernel per parameter group.
  (void)add(update_kernel("embedding.update", s_.optimizer, dt_,
                          b_.parameter(tok).elements + b_.parameter(pos).elements, -1, {emb_b}),
            -1);
  std::vector<std::int64_t> layer_elements(static_cast<std::size_t>(L), 0);
  for (const auto& p : b_.parameters()) {
    if (p.layer >= 0) layer_elements[static_cast<std::size_t>(p.layer)] += p.elements;
  }
  for (int i = 0; i < L; ++i) {
    const auto iu = static_cast<std::size_t>(i);
    (void)add(update_kernel(name(i, "update"), s_.optimizer, dt_, layer_elements[iu], i,
                            grads_[iu]),
              i);
  }
  (void)add(update_kernel("final_ln.update", s_.optimizer, dt_, 2 * h, -1, {lnf_b}), -1);
  return std::move(b_).build();
}

}  // namespace

ComputeGraph build_gpt_graph(const GptSpec& spec) {
  PF_ASSERT(spec.layers > 0 && spec.hidden > 0 && spec.heads > 0 && spec.ffn > 0 &&
            spec.sequence > 0 && spec.vocabulary > 0 && spec.micro_batch > 0);
  PF_ASSERT(spec.hidden % spec.heads == 0);
  return GptBuilder(spec).build();
}

}  // namespace pathfinder
