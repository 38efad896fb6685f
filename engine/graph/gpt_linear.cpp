// GptBuilder's linear layers (gpt_builder.hpp): their parameters, forward and backward GEMMs,
// their LoRA adapters and the quantization of their operands for FP8 and FP4 GEMMs.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "engine/graph/gpt_builder.hpp"

namespace pathfinder::gpt_detail {

GptBuilder::Linear GptBuilder::linear(int layer, const std::string& n, std::int64_t in,
                                      std::int64_t out, bool row_parallel) {
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

// LoRA (Hu et al. 2021) as NeMo's ParallelLinearAdapter runs it, in the activations'
// precision beside the (possibly FP8) layer: A (T, r_a, in) from the layer's input x; beside a
// column-parallel layer its r/t outputs all-gathered (ColumnParallelLinear with
// gather_output), beside a row-parallel one its partial sums all-reduced (RowParallelLinear);
// B (T, out, r); the product added into the layer's output (2 FLOPs an element: the scale
// alpha/r and the add). Returns the add.
KernelId GptBuilder::lora_fwd(int layer, const std::string& n, const Linear& lin, Deps x,
                              KernelId base) {
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
std::pair<KernelId, KernelId> GptBuilder::lora_bwd(int layer, const std::string& n,
                                                   const Linear& lin, const Deps& g,
                                                   const Deps& x, KernelId dgrad) {
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
KernelId GptBuilder::quantize(int layer, const std::string& n, Phase ph, double elements,
                              Deps deps, double copies) {
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

KernelId GptBuilder::linear_fwd(int layer, const std::string& n, const Linear& lin,
                                bool bias_epilogue, Deps deps, bool cast_input) {
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
KernelId GptBuilder::rescaled(int layer, const std::string& n, Phase ph, double elements,
                              KernelId gemm) {
  if (part_.quant_recipe != QuantRecipe::kRowwise || !promoted(ph)) return gemm;
  return stream(layer, n + ".rescale", KernelKind::kElementwise, ph, elements, elements * p_,
                elements * p_, {gemm});
}

// Data gradient (T, in, out) and weight gradient (in, out, T) with the bias gradient, a
// column sum of the output gradient, in the weight-gradient epilogue. A frozen layer has no
// weight gradient: its data gradient stands in for it (or, with an adapter, the adapter's).
std::pair<KernelId, KernelId> GptBuilder::linear_bwd(int layer, const std::string& n,
                                                     const Linear& lin, Deps deps,
                                                     const Deps& wgrad_extra, bool cast_grad) {
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

}  // namespace pathfinder::gpt_detail
