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
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/graph/workload.hpp"

namespace pathfinder {
namespace {

using Deps = std::vector<KernelId>;

class GptBuilder {
 public:
  GptBuilder(const GptSpec& s, const GptPartition& part)
      : s_(s),
        part_(part),
        tp_(part.tensor),
        etp_(part.expert_tensor > 0 ? part.expert_tensor : part.tensor),
        T_(s.micro_batch * s.sequence / part.context),
        t_(static_cast<double>(T_)),
        rows_(part.sequence_parallel ? t_ / part.tensor : t_),
        mask_(s.dropout ? bytes(1) : Bytes{}),
        p_(bytes_per_element(s.precision)),
        dt_(s.precision) {}

  ComputeGraph build();

 private:
  struct Linear {
    ParamId weight;
    std::optional<ParamId> bias;
    std::int64_t in;
    std::int64_t out;
    bool row_parallel = false;  // its output (and bias) on the T/t rows with sequence parallelism
    bool frozen = false;        // LoRA's base weight: no weight gradient
    std::int64_t rank = 0;      // a LoRA adapter's rank beside it (lora_fwd), 0: none
  };
  struct LayerFwd {
    KernelId ln1, qkv, scores, softmax, context, proj, res1, ln2, fc1, gelu, fc2, res2;
    KernelId q_norm, kv_down, kv_norm, kv_up;  // MLA: the latents' norms, the key/value path
    KernelId up;  // swiglu's up GEMM (fc1 is its gate)
    KernelId router, topk, permuted, experts_out;  // mixture of experts
    Deps shared;  // the shared experts' output producers
  };
  struct LayerParams {
    Linear qkv, proj, fc1, fc2;
    Linear q_down, q_up, kv_down, kv_up;  // multi-head latent attention in place of qkv
    Linear up;  // swiglu only (fc1 is the gate, fc2 the down projection)
    // Mixture of experts: router; the local experts' stacked fc1/up/fc2 weights; shared experts
    // as one MLP in fc1/up/fc2 (when any).
    ParamId router = 0, e_fc1 = 0, e_up = 0, e_fc2 = 0;
  };
  [[nodiscard]] std::int64_t local_experts() const { return s_.experts / part_.expert; }
  // Whether this partition's layer i (global i + first_layer) is a mixture of experts.
  [[nodiscard]] bool moe_at(int i) const { return s_.moe_layer(i + part_.first_layer); }
  [[nodiscard]] double expert_rows() const {  // rows of each local expert's GEMMs
    // The tokens a tensor group's expert shards see: all T when the experts are split over it
    // (its ranks gather their rows), each rank's own T/t when they are whole.
    const double routed = t_ / static_cast<double>(tp_ / etp_);
    return std::ceil(routed * static_cast<double>(s_.top_k) * static_cast<double>(part_.expert) /
                     static_cast<double>(s_.experts) * s_.expert_imbalance);
  }
  // Whether the unfused attention's softmax runs as Megatron's fused kernel
  // (FusedScaleMaskSoftmax.is_kernel_available): 16-bit scores, 16 < s <= 4096, s a multiple
  // of 4, and b·a/t a multiple of 4 and of the kernel's batches per block (128 threads of
  // min(32, 2^ceil(log2 s)) lanes, two rows a warp when s <= 128; for a causal mask the
  // batches, else the query rows). Otherwise PyTorch's ops run one by one (unfused_softmax).
  [[nodiscard]] bool fused_softmax() const {
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
  // Which forward kernels a pass emits: the forward itself, or a recomputation in backward.
  enum class Pass { kForward, kRecomputeLayer, kRecomputeAttention };

  [[nodiscard]] std::string name(int layer, const std::string& what) const {
    return (layer >= 0 ? "l" + std::to_string(layer + part_.first_layer) + "." : std::string()) +
           what;
  }
  KernelId add(Kernel k, int layer) {
    k.layer = layer < 0 ? layer : layer + part_.first_layer;
    k.host_sync = k.host_sync || std::exchange(host_sync_next_, false);
    return b_.add(std::move(k));
  }
  // A parameter of the model: trained, or frozen under LoRA (GptSpec::lora_rank).
  ParamId param(std::string n, int layer, std::int64_t elements) {
    return b_.add_parameter({std::move(n), layer, elements, !s_.lora()});
  }
  Linear linear(int layer, const std::string& n, std::int64_t in, std::int64_t out,
                bool row_parallel = false) {
    const int global = layer + part_.first_layer;
    const ParamId w = param(name(layer, n + ".weight"), global, in * out);
    std::optional<ParamId> bias;
    if (s_.bias) bias = param(name(layer, n + ".bias"), global, out);
    Linear l{w, bias, in, out, row_parallel, s_.lora(), 0};
    const unsigned target = n == "qkv"                 ? kLoraQkv
                            : n == "proj"              ? kLoraProj
                            : n == "fc1" || n == "up"  ? kLoraFc1
                            : n == "fc2"               ? kLoraFc2
                                                       : 0u;
    if (s_.lora_on(target)) {
      l.rank = s_.lora_rank;
      (void)b_.add_parameter({name(layer, n + ".lora_a"), global, in * lora_a_width(l), true});
      (void)b_.add_parameter({name(layer, n + ".lora_b"), global, l.rank * out, true});
    }
    return l;
  }
  // The outputs of an adapter's A on this rank: r/t (rounded up) beside a column-parallel layer,
  // all r beside a row-parallel one (gpt_layer_trainable_parameters).
  [[nodiscard]] std::int64_t lora_a_width(const Linear& l) const {
    return l.row_parallel ? l.rank : (l.rank + tp_ - 1) / tp_;
  }
  // LoRA (Hu et al. 2021) as NeMo's ParallelLinearAdapter runs it, in the activations'
  // precision beside the (possibly FP8) layer: A (T, r_a, in) from the layer's input x; beside a
  // column-parallel layer its r/t outputs all-gathered (ColumnParallelLinear with
  // gather_output), beside a row-parallel one its partial sums all-reduced (RowParallelLinear);
  // B (T, out, r); the product added into the layer's output (2 FLOPs an element: the scale
  // alpha/r and the add). Returns the add.
  KernelId lora_fwd(int layer, const std::string& n, const Linear& lin, Deps x, KernelId base) {
    const KernelId a = add(gemm_kernel(name(layer, n + ".lora_a" + suffix_), KernelKind::kGemm,
                                       phase_, dt_, GemmShape{1, T_, lora_a_width(lin), lin.in},
                                       std::move(x)),
                           layer);
    const Deps ar = tp_comm(layer, n + (lin.row_parallel ? ".lora_a.reduce" : ".lora_a.gather") +
                                       suffix_,
                            lin.row_parallel ? CommKind::kAllReduce : CommKind::kAllGather,
                            phase_, {a}, false, t_ * static_cast<double>(lin.rank) * p_);
    const KernelId b = add(gemm_kernel(name(layer, n + ".lora_b" + suffix_), KernelKind::kGemm,
                                       phase_, dt_, GemmShape{1, T_, lin.out, lin.rank}, ar),
                           layer);
    const double e = t_ * static_cast<double>(lin.out);
    return stream(layer, n + ".lora_add" + suffix_, KernelKind::kElementwise, phase_, 2.0 * e,
                  2.0 * e * p_, e * p_, {base, b});
  }
  // Its backward from the output gradient g: B's weight gradient (r, out, T) and input gradient
  // (T, r, out); beside a column-parallel layer the gather's backward, a reduce-scatter (a
  // row-parallel layer's all-reduce has the identity for one); A's weight gradient
  // (in, r_a, T) from the layer's input x and its input gradient (T, in, r_a), added into the
  // layer's data gradient `dgrad`. Returns the sum and A's weight gradient (after B's).
  std::pair<KernelId, KernelId> lora_bwd(int layer, const std::string& n, const Linear& lin,
                                         const Deps& g, const Deps& x, KernelId dgrad) {
    const std::int64_t ra = lora_a_width(lin);
    const KernelId bw = add(gemm_kernel(name(layer, n + ".lora_b.wgrad"), KernelKind::kGemm,
                                        Phase::kBackwardWeight, dt_,
                                        wgrad_shape(GemmShape{1, lin.rank, lin.out, T_}), g),
                            layer);
    const KernelId bd = add(gemm_kernel(name(layer, n + ".lora_b.dgrad"), KernelKind::kGemm,
                                        Phase::kBackwardData, dt_,
                                        GemmShape{1, T_, lin.rank, lin.out}, g),
                            layer);
    const Deps da =
        lin.row_parallel
            ? Deps{bd}
            : tp_comm(layer, n + ".lora_a.scatter.bwd", CommKind::kReduceScatter,
                      Phase::kBackwardData, {bd}, false, t_ * static_cast<double>(lin.rank) * p_);
    Deps wdeps = da;
    wdeps.insert(wdeps.end(), x.begin(), x.end());
    wdeps.push_back(bw);
    const KernelId aw = add(gemm_kernel(name(layer, n + ".lora_a.wgrad"), KernelKind::kGemm,
                                        Phase::kBackwardWeight, dt_,
                                        wgrad_shape(GemmShape{1, lin.in, ra, T_}), wdeps),
                            layer);
    const KernelId ad = add(gemm_kernel(name(layer, n + ".lora_a.dgrad"), KernelKind::kGemm,
                                        Phase::kBackwardData, dt_,
                                        GemmShape{1, T_, lin.in, ra}, da),
                            layer);
    const double e = t_ * static_cast<double>(lin.in);
    return {stream(layer, n + ".lora.dgrad_add", KernelKind::kElementwise, Phase::kBackwardData,
                   e, 2.0 * e * p_, e * p_, {dgrad, ad}),
            aw};
  }
  // The linear layers' quantization (GptPartition::quantized_linear, quant_recipe): `elements`
  // 16-bit values read once and written as the GEMMs' row-wise and column-wise (transposed)
  // operands, each with its scales, per element (bytes written; FLOPs):
  //   delayed    2 x 1 (cast_transpose; the amax for a later scale fused in)          2
  //   current    2 x 1, after a pass that reads the tensor for its amax               2 + 1
  //   rowwise    2 x 1, a scale per row each way (4 bytes per row, negligible): the
  //              row-wise copy's amax taken in its own cast kernel (a row per thread
  //              block), the column-wise copy's in a pass first; the two casts read the
  //              tensor once each                                                    2 + 1
  //   mxfp8      2 x (1 + 1/32): an E8M0 scale per 32 elements each way              3
  //   blockwise  2 x (1 + 4/128): an FP32 scale per 128                              3
  //   nvfp4      2 x (1/2 + 1/16): an E4M3 scale per 16, after an amax pass for the
  //              per-tensor scale; the column-wise copy (the weight gradient's operand)
  //              through a 16 x 16 random Hadamard transform first, as a fast
  //              Walsh-Hadamard transform (4 butterfly stages and a random sign)      8 + 1
  KernelId quantize(int layer, const std::string& n, Phase ph, double elements, Deps deps,
                    double copies = 2.0) {
    const QuantRecipe r = part_.quant_recipe;
    if (r == QuantRecipe::kCurrent || r == QuantRecipe::kRowwise || r == QuantRecipe::kNvfp4) {
      deps = {stream(layer, n + ".amax", KernelKind::kElementwise, ph, elements, elements * p_,
                     bytes(4), std::move(deps))};
    }
    const double written = 2.0 * quantized_element_bytes(r);
    double work = 2.0, read = 1.0;
    switch (r) {
      case QuantRecipe::kDelayed:
      case QuantRecipe::kCurrent: break;
      case QuantRecipe::kRowwise: read = 2.0; break;
      case QuantRecipe::kMxfp8:
      case QuantRecipe::kBlockwise: work = 3.0; break;
      case QuantRecipe::kNvfp4: work = 8.0; break;
    }
    return stream(layer, n, KernelKind::kElementwise, ph, work * elements * copies / 2.0,
                  read * elements * p_, elements * bytes(written * copies / 2.0), std::move(deps));
  }
  // Bytes per element of one quantized row-wise copy with its scales (quantize()'s `written`
  // is both copies): what an FP8 dispatch sends.
  [[nodiscard]] double fp8_row_bytes() const {
    // NVFP4 profiles refuse an FP8 dispatch.
    const QuantRecipe r = part_.quant_recipe;
    return r == QuantRecipe::kNvfp4 ? 1.0 : quantized_element_bytes(r);
  }
  [[nodiscard]] DataType linear_dtype() const {
    if (!part_.quantized_linear) return dt_;
    return part_.quant_recipe == QuantRecipe::kNvfp4 ? DataType::kFp4 : DataType::kFp8;
  }
  // An FP8 GEMM's accumulation promoted out of the tensor cores: the gradient GEMMs' unless
  // fast (GptPartition::fp8_fast_backward_accumulation), every one with block scales applied on
  // the CUDA cores (QuantRecipe::kBlockwise).
  [[nodiscard]] bool promoted(Phase ph) const {
    if (linear_dtype() != DataType::kFp8) return false;
    return part_.quant_recipe == QuantRecipe::kBlockwise ||
           (!part_.fp8_fast_backward_accumulation && ph != Phase::kForward);
  }
  KernelId linear_fwd(int layer, const std::string& n, const Linear& lin, bool bias_epilogue,
                      Deps deps, bool cast_input = true) {
    if (lin.rank > 0) {
      const Deps x = deps;
      return lora_fwd(layer, n, lin, x,
                      linear_fwd(layer, n, unadapted(lin), bias_epilogue, std::move(deps),
                                 cast_input));
    }
    if (part_.quantized_linear && cast_input) {
      deps = {quantize(layer, n + ".cast" + suffix_, phase_, t_ * static_cast<double>(lin.in),
                       std::move(deps))};
    }
    Kernel k = gemm_kernel(name(layer, n + suffix_), KernelKind::kGemm, phase_, linear_dtype(),
                           GemmShape{1, T_, lin.out, lin.in}, std::move(deps));
    const bool add_bias = bias_epilogue && lin.bias;
    if (add_bias && !part_.separate_bias) {
      k.flops += flops(t_ * static_cast<double>(lin.out));
      k.bytes_read += static_cast<double>(lin.out) * p_;
    }
    k.weight = lin.weight;
    k.promoted_accumulation = promoted(Phase::kForward);
    const KernelId g = add(std::move(k), layer);
    if (!add_bias || !part_.separate_bias) return g;
    // Megatron-LM's linear: `output = torch.matmul(...)`, then `output + bias` as its own
    // element-wise kernel over the T x out product.
    const double e = t_ * static_cast<double>(lin.out);
    return stream(layer, n + ".bias" + suffix_, KernelKind::kElementwise, phase_, e,
                  e * p_ + static_cast<double>(lin.out) * p_, e * p_, {g});
  }
  // A row-wise scaled FP8 GEMM with promoted accumulation runs as cuBLAS's tensor-wise GEMM
  // with unit scales, its `elements` outputs then multiplied by the row and column scales in a
  // kernel of their own (torchao's float8 ops: "The rowwise CUTLASS-based kernel is so slow
  // without fast-accum", pytorch/ao PR 1325; the extra rescaling kernel per GEMM, pytorch/ao
  // issue 2184). Others: the GEMM itself.
  KernelId rescaled(int layer, const std::string& n, Phase ph, double elements, KernelId gemm) {
    if (part_.quant_recipe != QuantRecipe::kRowwise || !promoted(ph)) return gemm;
    return stream(layer, n + ".rescale", KernelKind::kElementwise, ph, elements, elements * p_,
                  elements * p_, {gemm});
  }
  [[nodiscard]] static Linear unadapted(Linear l) {
    l.rank = 0;
    return l;
  }
  // Data gradient (T, in, out) and weight gradient (in, out, T) with the bias gradient, a
  // column sum of the output gradient, in the weight-gradient epilogue. A frozen layer has no
  // weight gradient: its data gradient stands in for it (or, with an adapter, the adapter's).
  std::pair<KernelId, KernelId> linear_bwd(int layer, const std::string& n, const Linear& lin,
                                           Deps deps, const Deps& wgrad_extra = {},
                                           bool cast_grad = true) {
    if (lin.rank > 0) {
      const Deps g = deps;
      const KernelId d =
          linear_bwd(layer, n, unadapted(lin), std::move(deps), wgrad_extra, cast_grad).first;
      return lora_bwd(layer, n, lin, g, wgrad_extra, d);
    }
    if (part_.quantized_linear && cast_grad) {  // the output gradient quantized (FP8: E5M2) with its transpose
      deps = {quantize(layer, n + ".grad.cast", Phase::kBackwardData,
                       t_ * static_cast<double>(lin.out), std::move(deps))};
    }
    Kernel dg = gemm_kernel(name(layer, n + ".dgrad"), KernelKind::kGemm, Phase::kBackwardData,
                            linear_dtype(), GemmShape{1, T_, lin.in, lin.out}, deps);
    dg.weight = lin.weight;
    dg.promoted_accumulation = promoted(Phase::kBackwardData);
    if (lin.frozen) {
      const KernelId d = add(std::move(dg), layer);
      return {d, d};
    }
    Deps wdeps = deps;
    wdeps.insert(wdeps.end(), wgrad_extra.begin(), wgrad_extra.end());
    Kernel wg = gemm_kernel(name(layer, n + ".wgrad"), KernelKind::kGemm, Phase::kBackwardWeight,
                            linear_dtype(), wgrad_shape(GemmShape{1, lin.in, lin.out, T_}), wdeps);
    if (lin.bias && !part_.separate_bias) {
      wg.flops += flops(t_ * static_cast<double>(lin.out));
      wg.bytes_written += static_cast<double>(lin.out) * p_;
    }
    wg.weight = lin.weight;
    wg.promoted_accumulation = promoted(Phase::kBackwardWeight);
    const KernelId d = rescaled(layer, n + ".dgrad", Phase::kBackwardData,
                                t_ * static_cast<double>(lin.in), add(std::move(dg), layer));
    if (lin.bias && part_.separate_bias) {
      // Megatron-LM: `grad_output.sum(dim=0)` (or autograd's reduction of a broadcast bias) as
      // its own kernel reading the output gradient's rows (T/t of them for a row-parallel
      // layer under sequence parallelism) and writing out elements.
      const double rows = lin.row_parallel ? rows_ : t_;
      const double e = rows * static_cast<double>(lin.out);
      (void)stream(layer, n + ".bias.grad", KernelKind::kElementwise, Phase::kBackwardWeight, e,
                   e * p_, static_cast<double>(lin.out) * p_, deps);
    }
    const KernelId w =
        rescaled(layer, n + ".wgrad", Phase::kBackwardWeight,
                 static_cast<double>(lin.in) * static_cast<double>(lin.out), add(std::move(wg), layer));
    return {d, w};
  }
  KernelId stream(int layer, const std::string& n, KernelKind kind, Phase ph, double work,
                  Bytes read, Bytes written, Deps deps) {
    return add(stream_kernel(name(layer, n), kind, ph, dt_, flops(work), read, written,
                             std::move(deps)),
               layer);
  }
  // A batched attention GEMM (one per sequence and head) in the backward pass.
  KernelId attention_bwd(int layer, const std::string& n, KernelKind kind, const GemmShape& shape,
                         KernelId dep) {
    return add(gemm_kernel(name(layer, n), kind, Phase::kBackwardData, dt_, shape, {dep}), layer);
  }
  // Tensor-group communication of the T·h activations (or `bytes`) after `after`; with t = 1
  // there is none and the dependencies pass through.
  Deps tp_comm(int layer, const std::string& n, CommKind kind, Phase ph, Deps after,
               bool overlapped = false, std::optional<Bytes> bytes = std::nullopt) {
    if (tp_ == 1) return after;
    const Communication c{kind, CommGroup::kTensor,
                          bytes ? *bytes : t_ * static_cast<double>(s_.hidden) * p_, overlapped};
    // The full tensor copied into the first dimension's order before a reduce-scatter, or out
    // of it after an all-gather (GptPartition::sp_layout_copy).
    const bool copy = part_.sp_layout_copy && part_.sequence_parallel &&
                      (kind == CommKind::kAllGather || kind == CommKind::kReduceScatter);
    if (copy && kind == CommKind::kReduceScatter) {
      after = {stream(layer, n + ".layout", KernelKind::kElementwise, ph, 0.0, c.bytes, c.bytes,
                      std::move(after))};
    }
    const KernelId k = add(comm_kernel(name(layer, n), ph, dt_, c, std::move(after)), layer);
    if (!copy || kind != CommKind::kAllGather) return {k};
    return {stream(layer, n + ".layout", KernelKind::kElementwise, ph, 0.0, c.bytes, c.bytes, {k})};
  }
  // Before a column-parallel GEMM: sequence parallelism gathers the sharded rows.
  Deps gather_in(int layer, const std::string& n, Phase ph, Deps x, bool overlapped = false) {
    return part_.sequence_parallel
               ? tp_comm(layer, n, CommKind::kAllGather, ph, std::move(x), overlapped)
               : x;
  }
  // Whether sequence parallelism's gathers carry quantized rows (GptPartition::fp8_tp_gather).
  [[nodiscard]] bool fp8_gathers() const {
    return part_.fp8_tp_gather && part_.quantized_linear && part_.sequence_parallel && tp_ > 1;
  }
  // The gather of `width`-wide rows for quantized GEMMs with fp8_gathers(): the local rows
  // quantized (the row-wise copy), gathered at the quantized row's size, and the gathered rows
  // transposed for the GEMM that takes them column-wise (Transformer Engine's fp8_transpose
  // after the gather; torchao's transposed copy). The GEMMs then take them without a cast.
  Deps quantized_gather(int layer, const std::string& gather, const std::string& cast, Phase ph,
                        double width, Deps x) {
    const double row = fp8_row_bytes();
    x = {quantize(layer, cast, ph, rows_ * width, std::move(x), 1.0)};
    x = tp_comm(layer, gather, CommKind::kAllGather, ph, std::move(x), false,
                t_ * width * bytes(row));
    const Bytes full = t_ * width * bytes(row);
    return {stream(layer, cast + ".transpose", KernelKind::kElementwise, ph, 0.0, full, full,
                   std::move(x))};
  }
  // A re-gather (backward) of rows the forward gathered quantized: at the quantized size.
  Deps regather(int layer, const std::string& n, bool quantized, Deps x) {
    if (!quantized || !part_.sequence_parallel) {
      return gather_in(layer, n, Phase::kBackwardData, std::move(x), part_.overlap_sp_regather);
    }
    return tp_comm(layer, n, CommKind::kAllGather, Phase::kBackwardData, std::move(x),
                   part_.overlap_sp_regather,
                   t_ * static_cast<double>(s_.hidden) * bytes(fp8_row_bytes()));
  }
  // After a row-parallel GEMM: partial sums all-reduced, or reduce-scattered with SP.
  Deps reduce_out(int layer, const std::string& n, Phase ph, Deps x, bool overlapped = false) {
    return tp_comm(layer, n,
                   part_.sequence_parallel ? CommKind::kReduceScatter : CommKind::kAllReduce, ph,
                   std::move(x), overlapped);
  }
  // A norm over `width` elements on `rows` rows (the hidden states: rows_ and h).
  KernelId layernorm_fwd(int layer, const std::string& n, Deps in) {
    return norm_fwd(layer, n, rows_, static_cast<double>(s_.hidden), std::move(in));
  }
  KernelId layernorm_bwd(int layer, const std::string& n, Deps grad) {
    return norm_bwd(layer, n, rows_, static_cast<double>(s_.hidden), std::move(grad));
  }
  KernelId norm_fwd(int layer, const std::string& n, double rows, double h, Deps in) {
    if (rms_ && part_.eager.rmsnorm) {
      // Eager RMSNorm (EagerOps::rmsnorm), per element, f = 4 bytes: x.float() (p read, f
      // written), pow(2) (f, f), mean(-1) (f), x * rsqrt(. + eps) (f, f), .type_as(x) (f, p),
      // * weight (p, p); the per-row mean, + eps and rsqrt are negligible. Reads 3f + p and
      // writes 2f + p, plus the casts' p + f each way when the activations are not fp32: with
      // bf16 36 bytes against the fused kernel's 4.
      const Bytes f = bytes(4), c = casts() ? p_ + f : Bytes{};
      const double e = rows * h;
      return stream(layer, n + suffix_, KernelKind::kLayerNorm, phase_, 4.0 * e,
                    e * (3.0 * f + p_ + c) + h * p_, e * (2.0 * f + p_ + c) + rows * f,
                    std::move(in));
    }
    if (rms_) {
      return stream(layer, n + suffix_, KernelKind::kLayerNorm, phase_, 4.0 * rows * h,
                    rows * h * p_ + h * p_, rows * h * p_ + rows * bytes(4), std::move(in));
    }
    return stream(layer, n + suffix_, KernelKind::kLayerNorm, phase_, 8.0 * rows * h,
                  rows * h * p_ + 2.0 * h * p_, rows * h * p_ + rows * bytes(8),
                  std::move(in));
  }
  KernelId norm_bwd(int layer, const std::string& n, double rows, double h, Deps grad) {
    if (rms_ && part_.eager.rmsnorm) {
      // Autograd through the eager RMSNorm (PyTorch's derivative formulas), per element, from
      // the output gradient g: * weight: g * w (p, p), g * y (2p, p) and its sum over the
      // tokens (p); .type_as: g to fp32 (p, f); x * r: g * r (f, f), g * x (2f, f) and its
      // row sum (f); mean: the row gradient expanded / h (written f); pow(2): x.pow(1)
      // (f, f), * 2 (f, f), * g (2f, f); the two gradients of x added (2f, f); .float():
      // back to p (f, p). Reads 4p + 10f, writes 2p + 7f, plus p + f each way for the casts:
      // with bf16 92 bytes against the fused kernel's 6.
      const Bytes f = bytes(4), c = casts() ? p_ + f : Bytes{};
      const double e = rows * h;
      return stream(layer, n + ".bwd", KernelKind::kLayerNorm, Phase::kBackwardData, 9.0 * e,
                    e * (4.0 * p_ + 10.0 * f + c) + h * p_, e * (2.0 * p_ + 7.0 * f + c) + h * p_,
                    std::move(grad));
    }
    if (rms_) {
      return stream(layer, n + ".bwd", KernelKind::kLayerNorm, Phase::kBackwardData,
                    9.0 * rows * h, 2.0 * rows * h * p_ + h * p_ + rows * bytes(4),
                    rows * h * p_ + h * p_, std::move(grad));
    }
    return stream(layer, n + ".bwd", KernelKind::kLayerNorm, Phase::kBackwardData,
                  13.0 * rows * h, 2.0 * rows * h * p_ + h * p_ + rows * bytes(8),
                  rows * h * p_ + 2.0 * h * p_, std::move(grad));
  }
  // The norm's parameters: γ, and β for layernorm.
  void norm_params(int layer, const std::string& n, std::int64_t h) {
    const int global = layer < 0 ? -1 : layer + part_.first_layer;
    (void)param(name(layer, n + ".gain"), global, h);
    if (!rms_) (void)param(name(layer, n + ".bias"), global, h);
  }
  // Rotary embedding of q and k (the first a/t + g_t heads of the QKV output), in place.
  // MLA: the rope_head_dim part of each local query head and of the one shared key part.
  KernelId rotary(int layer, const std::string& n, Phase ph, Deps in) {
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
  Deps repeat_kv(int layer, bool backward, Deps in) {
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
  // SiLU(gate)·up over `e` elements: one fused kernel (reads gate and up, writes the product),
  // or eagerly (EagerOps::swiglu) F.silu (p, p) then the product (2p, p).
  KernelId swiglu_fwd(int layer, const std::string& n, double e, Deps in) {
    const bool eager = part_.eager.swiglu;
    return stream(layer, n + suffix_, KernelKind::kElementwise, phase_, 6.0 * e,
                  (eager ? 3.0 : 2.0) * e * p_, (eager ? 2.0 : 1.0) * e * p_, std::move(in));
  }
  // A weight gradient's product, accumulated into the main gradient when the profile fuses the
  // accumulation (GptPartition::wgrad_accumulation).
  [[nodiscard]] GemmShape wgrad_shape(GemmShape s) const {
    s.accumulate = part_.wgrad_accumulation;
    return s;
  }
  // `elements` of one micro-batch's gradients added into the main gradient by their own kernel
  // (GptPartition::gradient_add): the gradient and the main gradient read, the main gradient
  // written.
  KernelId gradient_add(int layer, const std::string& n, double elements, Deps deps) {
    const Bytes main = bytes(part_.gradient_add);
    return stream(layer, n, KernelKind::kElementwise, Phase::kBackwardWeight,
                  elements, elements * (p_ + main), elements * main, std::move(deps));
  }
  // Whether every parameter's gradient is added (the GEMMs do not accumulate it themselves).
  [[nodiscard]] bool adds_every_gradient() const {
    return part_.gradient_add > 0 && part_.wgrad_accumulation == 0;
  }
  // Whether .float() and .type_as(x) copy: the activations are not already fp32.
  [[nodiscard]] bool casts() const { return p_ != bytes(4); }
  // One fused attention kernel over the b·a/t (sequence, head) problems; with context
  // parallelism first the ring that brings the other ranks' keys and values (and, backward,
  // carries their gradients on), or, by all-to-all, the regrouping around the kernel.
  KernelId flash(int layer, const std::string& n, Phase ph, bool fwd, Deps in) {
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
  // Gradient flowing into a residual stream from its branch: g + branch.
  KernelId merge(int layer, const std::string& n, Deps deps) {
    const double h = static_cast<double>(s_.hidden);
    return stream(layer, n, KernelKind::kElementwise, Phase::kBackwardData, rows_ * h,
                  2.0 * rows_ * h * p_ + rows_ * h * mask_, rows_ * h * p_, std::move(deps));
  }
  void set_pass(Pass pass) {
    phase_ = pass == Pass::kForward ? Phase::kForward : Phase::kBackwardData;
    suffix_ = pass == Pass::kForward ? ".fwd" : ".recompute";
  }
  void attention_fwd(int i, LayerFwd& r, const Deps& qkv);
  // Op-level selective checkpointing's recomputation at the start of layer i's backward
  // (GptPartition::selective_op): the kernels it re-runs, their ends appended to `g`.
  void recompute_ops(int i, const LayerFwd& stored, Deps& g);
  // Selective recomputation by module (GptPartition::recompute_modules): the discarded
  // modules' forward kernels again before the layer's backward, their outputs joining g.
  void recompute_modules(int i, const LayerFwd& stored, unsigned modules, Deps& g);
  // Multi-head latent attention's projections before the attention kernel (r.qkv: the rotated
  // queries, r.kv_up: keys and values) and their backward, which returns the input gradient
  // (complete on every rank: the down projections are replicated) and adds the weight
  // gradients to `grads`.
  void mla_fwd(int i, LayerFwd& r, const LayerParams& w, const Deps& x);
  Deps mla_bwd(int i, const LayerFwd& fw, const LayerParams& w, const Deps& dqkv,
               const Deps& ln1_in, std::vector<KernelId>& grads);
  // A dense MLP of width fd per rank (the layer's, or the shared experts' with prefix
  // "shared."): fc1 (and up), the activation, fc2 and its reduction.
  Deps dense_mlp_fwd(int i, LayerFwd& r, const LayerParams& w, double fd, const std::string& pre,
                     const Deps& in, bool cast_input = true) {
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
  Deps dense_mlp_bwd(int i, const LayerFwd& fw, const LayerParams& w, double fd,
                     const std::string& pre, const Deps& g, const Deps& ln2_in, Deps& wg,
                     bool cast_grad = true) {
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
  // Mixture-of-experts MLP: forward from the (gathered) norm output, returns the combined
  // output's producers (row-parallel partial sums reduced); backward from the output gradient,
  // returns the producers of the norm-input gradient, and the weight-gradient kernels in wg.
  Deps moe_fwd(int i, LayerFwd& r, const Deps& local, const Deps& gathered);
  // The local experts' activation on their rows (SwiGLU of gate and up, or GeLU), in the
  // current pass.
  KernelId expert_activation(int i, Deps in) {
    const double rows = expert_rows() * static_cast<double>(local_experts());
    const double fe = static_cast<double>(s_.expert_width() / etp_);
    return swiglu_ ? stream(i, "experts.swiglu" + suffix_, KernelKind::kElementwise, phase_,
                            6.0 * rows * fe, 2.0 * rows * fe * p_, rows * fe * p_, std::move(in))
                   : stream(i, "experts.gelu" + suffix_, KernelKind::kElementwise, phase_,
                            9.0 * rows * fe, rows * fe * p_, rows * fe * p_, std::move(in));
  }
  Deps moe_bwd(int i, const LayerFwd& f, const Deps& g_local, const Deps& g, const Deps& ln2_in,
               Deps& wg);
  // An expert GEMM of the E/ep local experts: (E/ep; m, n, k), FP8 when the linears are.
  KernelId expert_gemm(int layer, const std::string& n, Phase ph, const GemmShape& s, Deps deps,
                       ParamId weight) {
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
  Deps ep_comm(int layer, const std::string& n, Phase ph, Deps after, Bytes b) {
    if (part_.expert == 1) return after;
    const bool overlap = part_.overlap_expert_comm;
    const Communication c{CommKind::kAllToAll, CommGroup::kExpert, b, overlap};
    const KernelId a2a = add(comm_kernel(name(layer, n), ph, dt_, c, after), layer);
    return overlap ? after : Deps{a2a};
  }
  LayerFwd layer_fwd(int i, const Deps& x, Pass pass);
  Deps layer_bwd(int i, const LayerFwd& f, const Deps& g);
  Deps head_fwd(const Deps& x, ParamId logits_weight);
  Deps head_bwd(const Deps& ce, ParamId logits_weight, std::vector<KernelId>& head_grads);

  const GptSpec& s_;
  GptPartition part_;
  std::int64_t tp_;
  std::int64_t etp_;  // the routed experts' tensor-parallel degree: tp_, or 1 (whole experts)
  std::int64_t kv_local_ = local_kv_heads(s_, static_cast<int>(tp_));
  bool rms_ = s_.norm == NormKind::kRmsNorm;
  bool swiglu_ = s_.mlp == MlpKind::kSwiglu;
  bool flash_ = s_.attention == AttentionKind::kFlash;
  bool rotary_ = s_.position == PositionKind::kRotary;
  std::int64_t T_;
  double t_;
  double rows_;  // rows of the replicated element-wise work: T, or T/t with SP
  Bytes mask_;   // hidden-dropout mask per element: 1 byte, or none
  Bytes p_;
  DataType dt_;
  Phase phase_ = Phase::kForward;
  std::string suffix_ = ".fwd";
  bool host_sync_next_ = false;  // the next kernel added waits for the host (Kernel::host_sync)
  ComputeGraphBuilder b_;
  std::vector<LayerParams> params_;
  std::vector<std::vector<KernelId>> grads_;  // kernels producing each layer's gradients
};

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

void GptBuilder::recompute_modules(int i, const LayerFwd& stored, unsigned modules, Deps& g) {
  const auto on = [modules](unsigned m) { return (modules & m) != 0; };
  const LayerParams& w = params_[static_cast<std::size_t>(i)];
  set_pass(Pass::kRecomputeLayer);
  if (on(kRecomputeLayernorm)) {
    g.push_back(layernorm_fwd(i, "ln1", {stored.ln1}));
    g.push_back(layernorm_fwd(i, "ln2", {stored.ln2}));
  }
  if (on(kRecomputeMlaUpProj) && s_.mla()) {
    const KernelId q = linear_fwd(i, "q_up", w.q_up, false,
                                  {s_.q_lora_rank > 0 ? stored.q_norm : stored.ln1});
    g.push_back(linear_fwd(i, "kv_up", w.kv_up, false, {stored.kv_norm}));
    g.push_back(rotary_ ? rotary(i, "rotary" + suffix_, phase_, {q, stored.kv_down}) : q);
  }
  LayerFwd again{};
  if (!moe_at(i)) {
    if (on(kRecomputeMlp)) {
      const Deps out = dense_mlp_fwd(i, again, w, static_cast<double>(s_.ffn / tp_), "",
                                     gather_in(i, "ln2.gather" + suffix_, phase_, {stored.ln2}));
      g.insert(g.end(), out.begin(), out.end());
    }
  } else if (on(kRecomputeMoe)) {
    const Deps out = moe_fwd(i, again, {stored.ln2},
                             gather_in(i, "ln2.gather" + suffix_, phase_, {stored.ln2}));
    g.insert(g.end(), out.begin(), out.end());
  } else {
    if (on(kRecomputeMoeAct)) g.push_back(expert_activation(i, {stored.permuted}));
    if (on(kRecomputeSharedExperts) && s_.shared_experts > 0) {
      const Deps out = dense_mlp_fwd(
          i, again, w, static_cast<double>(s_.shared_experts * s_.expert_width() / tp_),
          "shared.", gather_in(i, "ln2.gather" + suffix_, phase_, {stored.ln2}));
      g.insert(g.end(), out.begin(), out.end());
    }
  }
  set_pass(Pass::kForward);
}

void GptBuilder::recompute_ops(int i, const LayerFwd& stored, Deps& g) {
  const LayerParams& w = params_[static_cast<std::size_t>(i)];
  const double hd = static_cast<double>(s_.hidden);
  set_pass(Pass::kRecomputeLayer);
  const KernelId ln1 = layernorm_fwd(i, "ln1", {stored.ln1});
  // The key projection, kv_t·d of the fused QKV's columns (the same shape as wk alone).
  Linear wk = w.qkv;
  wk.out = kv_local_ * s_.head_dim();
  const KernelId k = linear_fwd(i, "k", wk, false, {ln1});
  KernelId rot = k;
  if (rotary_) rot = rotary(i, "rotary" + suffix_, phase_, {k});
  const KernelId proj = linear_fwd(i, "proj", w.proj, false, {stored.context});
  const double add_ops = s_.bias ? 2.0 : 1.0;
  const KernelId res1 = stream(i, "residual1" + suffix_, KernelKind::kElementwise, phase_,
                               add_ops * rows_ * hd, 2.0 * rows_ * hd * p_, rows_ * hd * p_,
                               {proj});
  const KernelId ln2 = layernorm_fwd(i, "ln2", {res1});
  g.insert(g.end(), {ln1, rot, res1, ln2});
  if (!moe_at(i)) {
    const double fd = static_cast<double>(s_.ffn / tp_);
    const Linear& up = swiglu_ ? w.up : w.fc1;
    const KernelId u = linear_fwd(i, swiglu_ ? "up" : "fc1", up, false, {ln2});
    const double e = t_ * fd;  // the MLP's local width on every token
    const KernelId act = swiglu_ ? swiglu_fwd(i, "swiglu", e, {u})
                                 : stream(i, "gelu" + suffix_, KernelKind::kElementwise, phase_,
                                          10.0 * e, e * p_, e * p_, {u});
    g.push_back(act);
  }
  set_pass(Pass::kForward);
}

GptBuilder::LayerFwd GptBuilder::layer_fwd(int i, const Deps& x, Pass pass) {
  const double hd = static_cast<double>(s_.hidden);
  const double fd = static_cast<double>(s_.ffn / tp_);
  const LayerParams& w = params_[static_cast<std::size_t>(i)];
  set_pass(pass);
  LayerFwd r{};
  r.ln1 = layernorm_fwd(i, "ln1", x);
  if (s_.mla()) {
    mla_fwd(i, r, w, gather_in(i, "ln1.gather" + suffix_, phase_, {r.ln1}));
    attention_fwd(i, r, {r.qkv, r.kv_up});
  } else {
    const bool q1 = fp8_gathers();
    r.qkv = linear_fwd(i, "qkv", w.qkv, /*bias_epilogue=*/true,
                       q1 ? quantized_gather(i, "ln1.gather" + suffix_, "ln1.cast" + suffix_,
                                             phase_, hd, {r.ln1})
                          : gather_in(i, "ln1.gather" + suffix_, phase_, {r.ln1}),
                       /*cast_input=*/!q1);
    if (part_.eager.qkv_layout) {
      // nanotron (models/llama.py): q, k, v split and each made contiguous in the kernel's
      // layout (transpose(0, 1).contiguous(), or one permute of the whole without GQA), then
      // k and v concatenated and permuted contiguous for the rotary: (a_t + 2g_t) + 2·2g_t
      // heads of d read and written.
      const double e = t_ * static_cast<double>((s_.heads / tp_ + 6 * kv_local_) * s_.head_dim());
      r.qkv = stream(i, "qkv.layout" + suffix_, KernelKind::kElementwise, phase_, 0.0, e * p_,
                     e * p_, {r.qkv});
    }
    if (rotary_) r.qkv = rotary(i, "rotary" + suffix_, phase_, {r.qkv});
    attention_fwd(i, r, {r.qkv});
  }
  Deps res1 = reduce_out(i, "proj.reduce" + suffix_, phase_,
                         {linear_fwd(i, "proj", w.proj, false, {r.context})});
  res1.insert(res1.end(), x.begin(), x.end());
  // The residual adds fuse the preceding row-parallel GEMM's bias (and dropout): 2 per element,
  // 1 without a bias. Both are Megatron's bias_dropout_add, so both write their dropout mask
  // (read back by the backward's merges below).
  const double add_ops = s_.bias ? 2.0 : 1.0;
  const Bytes bias_bytes = s_.bias ? hd * p_ : Bytes{};
  r.res1 = stream(i, "residual1" + suffix_, KernelKind::kElementwise, phase_,
                  add_ops * rows_ * hd, 2.0 * rows_ * hd * p_ + bias_bytes,
                  rows_ * hd * (p_ + mask_), std::move(res1));
  r.ln2 = layernorm_fwd(i, "ln2", {r.res1});
  Deps res2;
  if (moe_at(i)) {
    res2 = moe_fwd(i, r, {r.ln2}, gather_in(i, "ln2.gather" + suffix_, phase_, {r.ln2}));
  } else if (fp8_gathers()) {
    res2 = dense_mlp_fwd(i, r, w, fd, "",
                         quantized_gather(i, "ln2.gather" + suffix_, "ln2.cast" + suffix_, phase_,
                                          hd, {r.ln2}),
                         /*cast_input=*/false);
  } else {
    res2 = dense_mlp_fwd(i, r, w, fd, "", gather_in(i, "ln2.gather" + suffix_, phase_, {r.ln2}));
  }
  res2.push_back(r.res1);
  r.res2 = stream(i, "residual2" + suffix_, KernelKind::kElementwise, phase_,
                  add_ops * rows_ * hd, 2.0 * rows_ * hd * p_ + bias_bytes,
                  rows_ * hd * (p_ + mask_), std::move(res2));
  set_pass(Pass::kForward);
  return r;
}

Deps GptBuilder::layer_bwd(int i, const LayerFwd& stored, const Deps& g_in) {
  const std::int64_t s = s_.sequence;
  const double fd = static_cast<double>(s_.ffn / tp_);
  const std::int64_t ba = s_.micro_batch * (s_.heads / tp_);
  const double probs = static_cast<double>(ba) * static_cast<double>(s * s);
  const std::int64_t head = s_.head_dim();
  const LayerParams& w = params_[static_cast<std::size_t>(i)];
  auto& grads = grads_[static_cast<std::size_t>(i)];

  // Selective recomputation re-runs the attention core from the stored QKV output, or (op-level)
  // every second linear and the element-wise kernels.
  LayerFwd fw = stored;
  Deps g = g_in;
  if (part_.recompute == Recompute::kSelective && part_.selective_op) {
    recompute_ops(i, stored, g);
  } else {
    const unsigned modules = selective_modules(part_.recompute, part_.recompute_modules);
    if ((modules & kRecomputeCoreAttn) != 0 && !flash_) {
      set_pass(Pass::kRecomputeAttention);
      attention_fwd(i, fw, {stored.qkv});
      set_pass(Pass::kForward);
      g.push_back(fw.context);
    }
    if ((modules & ~kRecomputeCoreAttn) != 0) recompute_modules(i, stored, modules, g);
  }

  // FFN: gather the gradient rows (SP), FFN2 and GeLU backward, FFN1, reduce its input gradient.
  const double hd = static_cast<double>(s_.hidden);
  const bool q2 = fp8_gathers() && !moe_at(i), q1 = fp8_gathers() && !s_.mla();
  const Deps g_rows = q2 ? quantized_gather(i, "fc2.gather.bwd", "fc2.grad.cast",
                                            Phase::kBackwardData, hd, g)
                         : gather_in(i, "fc2.gather.bwd", Phase::kBackwardData, g);
  // On a side stream the re-gather is launched when the MLP's backward starts (Megatron-LM and
  // TE launch it in the column-parallel layer's backward, beside its data-gradient GEMM), not
  // beside the blocking gather before it.
  Deps ln2_after{fw.ln2};
  if (part_.overlap_sp_regather) ln2_after.insert(ln2_after.end(), g_rows.begin(), g_rows.end());
  const Deps ln2_in = regather(i, "ln2.regather.bwd", q2, std::move(ln2_after));
  Deps mlp_w;
  const Deps fc1_r = moe_at(i) ? moe_bwd(i, fw, g, g_rows, ln2_in, mlp_w)
                              : dense_mlp_bwd(i, fw, w, fd, "", g_rows, ln2_in, mlp_w, !q2);
  const KernelId ln2_b = layernorm_bwd(i, "ln2", fc1_r);
  Deps m1 = g_in;
  m1.push_back(ln2_b);
  const KernelId g1 = merge(i, "residual1.grad", std::move(m1));

  // Attention: gather (SP), projection, context and scores backward, QKV, reduce.
  const auto [proj_d, proj_w] =
      fp8_gathers()
          ? linear_bwd(i, "proj", w.proj,
                       quantized_gather(i, "proj.gather.bwd", "proj.grad.cast",
                                        Phase::kBackwardData, hd, {g1}),
                       {}, /*cast_grad=*/false)
          : linear_bwd(i, "proj", w.proj, gather_in(i, "proj.gather.bwd", Phase::kBackwardData, {g1}));
  Deps dqkv;
  if (flash_) {
    dqkv = repeat_kv(i, true, {flash(i, "attn.flash.bwd", Phase::kBackwardData, false,
                                     {proj_d, fw.context})});
  } else {
    // Context C = P·V: dP = dC·Vᵀ (s, s, h/a) and dV = Pᵀ·dC (s, h/a, s) per (sequence, head).
    const KernelId dp =
        attention_bwd(i, "attn.context.dgrad_probs", KernelKind::kAttentionContext,
                      GemmShape{ba, s, s, head}, proj_d);
    const KernelId dv =
        attention_bwd(i, "attn.context.dgrad_values", KernelKind::kAttentionContext,
                      GemmShape{ba, s, head, s}, proj_d);
    const KernelId dp_in =
        s_.dropout ? stream(i, "attn.dropout.bwd", KernelKind::kElementwise, Phase::kBackwardData,
                            probs, probs * p_ + probs * bytes(1), probs * p_, {dp})
                   : dp;
    KernelId sm_b = 0;
    if (fused_softmax()) {
      sm_b = stream(i, "attn.softmax.bwd", KernelKind::kSoftmax, Phase::kBackwardData, 5.0 * probs,
                    2.0 * probs * p_, probs * p_, {dp_in, fw.softmax});
    } else {
      // Autograd through the five ops: the gradient to fp32, Softmax's backward (reading its
      // fp32 output), masked_fill's (zeroing the masked entries), the scale's, back to 16 bits.
      const Bytes f = probs * bytes(4);
      const Phase bd = Phase::kBackwardData;
      KernelId k = stream(i, "attn.softmax.to_16bit.bwd", KernelKind::kElementwise, bd, 0.0,
                          probs * p_, f, {dp_in, fw.softmax});
      k = stream(i, "attn.softmax.bwd", KernelKind::kSoftmax, bd, 3.0 * probs, 2.0 * f, f, {k});
      k = stream(i, "attn.softmax.mask.bwd", KernelKind::kElementwise, bd, probs, f, f, {k});
      k = stream(i, "attn.softmax.scale.bwd", KernelKind::kElementwise, bd, probs, f, f, {k});
      sm_b = stream(i, "attn.softmax.to_fp32.bwd", KernelKind::kElementwise, bd, 0.0, f,
                    probs * p_, {k});
    }
    // Scores S = Q·Kᵀ: dQ = dS·K and dK = dSᵀ·Q, each (s, h/a, s) per (sequence, head).
    const KernelId dq =
        attention_bwd(i, "attn.scores.dgrad_query", KernelKind::kAttentionScores,
                      GemmShape{ba, s, head, s}, sm_b);
    const KernelId dk =
        attention_bwd(i, "attn.scores.dgrad_key", KernelKind::kAttentionScores,
                      GemmShape{ba, s, head, s}, sm_b);
    dqkv = {dq, dk, dv};
  }
  if (rotary_) dqkv = {rotary(i, "rotary.bwd", Phase::kBackwardData, dqkv)};
  if ((!flash_ || part_.eager.qkv_layout) && !s_.mla()) {
    // The query, key and value gradients into the fused QKV output's gradient: the backward of
    // the split of that output into q, k and v (autograd's torch.cat) by the unfused attention,
    // or by a flash path that splits it (EagerOps::qkv_layout).
    const double e = t_ * static_cast<double>(w.qkv.out);
    dqkv = {stream(i, "qkv.grad.concat", KernelKind::kElementwise, Phase::kBackwardData, 0.0,
                   e * p_, e * p_, dqkv)};
  }
  Deps ln1_after{fw.ln1};
  if (part_.overlap_sp_regather) ln1_after.insert(ln1_after.end(), dqkv.begin(), dqkv.end());
  const Deps ln1_in = regather(i, "ln1.regather.bwd", q1, std::move(ln1_after));
  Deps qkv_r;
  if (s_.mla()) {
    qkv_r = mla_bwd(i, fw, w, dqkv, ln1_in, grads);
  } else {
    const auto [qkv_d, qkv_w] = linear_bwd(i, "qkv", w.qkv, dqkv, ln1_in);
    qkv_r = reduce_out(i, "qkv.reduce.bwd", Phase::kBackwardData, {qkv_d},
                       part_.overlap_tp_backward);
    grads.push_back(qkv_w);
  }
  const KernelId ln1_b = layernorm_bwd(i, "ln1", qkv_r);
  grads.insert(grads.end(), mlp_w.begin(), mlp_w.end());
  grads.insert(grads.end(), {ln2_b, proj_w, ln1_b});
  const KernelId out = merge(i, "residual0.grad", {g1, ln1_b});
  if (adds_every_gradient()) {
    double elements = 0.0;
    for (const auto& p : b_.parameters()) {
      if (p.layer == i + part_.first_layer && p.trainable) {
        elements += static_cast<double>(p.elements);
      }
    }
    grads.push_back(gradient_add(i, "grad.accumulate", elements, grads));
  }
  return {out};
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

}  // namespace

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
  return GptBuilder(spec, part).build();
}

}  // namespace pathfinder
