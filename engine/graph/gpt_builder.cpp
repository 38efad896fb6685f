// GptBuilder's kernels shared by every part of a layer (gpt_builder.hpp): the tensor group's
// collectives, the norms, and the element-wise gradient merges and accumulation.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "engine/graph/gpt_builder.hpp"

namespace pathfinder::gpt_detail {

// Tensor-group communication of the T·h activations (or `bytes`) after `after`; with t = 1
// there is none and the dependencies pass through.
Deps GptBuilder::tp_comm(int layer, const std::string& n, CommKind kind, Phase ph, Deps after,
                         bool overlapped, std::optional<Bytes> bytes) {
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

// The gather of `width`-wide rows for quantized GEMMs with fp8_gathers(): the local rows
// quantized (the row-wise copy), gathered at the quantized row's size, and the gathered rows
// transposed for the GEMM that takes them column-wise (Transformer Engine's fp8_transpose
// after the gather; torchao's transposed copy). The GEMMs then take them without a cast.
Deps GptBuilder::quantized_gather(int layer, const std::string& gather, const std::string& cast,
                                  Phase ph, double width, Deps x) {
  const double row = fp8_row_bytes();
  x = {quantize(layer, cast, ph, rows_ * width, std::move(x), 1.0)};
  x = tp_comm(layer, gather, CommKind::kAllGather, ph, std::move(x), false,
              t_ * width * bytes(row));
  const Bytes full = t_ * width * bytes(row);
  return {stream(layer, cast + ".transpose", KernelKind::kElementwise, ph, 0.0, full, full,
                 std::move(x))};
}

// A re-gather (backward) of rows the forward gathered quantized: at the quantized size.
Deps GptBuilder::regather(int layer, const std::string& n, bool quantized, Deps x) {
  if (!quantized || !part_.sequence_parallel) {
    return gather_in(layer, n, Phase::kBackwardData, std::move(x), part_.overlap_sp_regather);
  }
  return tp_comm(layer, n, CommKind::kAllGather, Phase::kBackwardData, std::move(x),
                 part_.overlap_sp_regather,
                 t_ * static_cast<double>(s_.hidden) * bytes(fp8_row_bytes()));
}

// A norm over `width` elements on `rows` rows (the hidden states: rows_ and h).
KernelId GptBuilder::layernorm_fwd(int layer, const std::string& n, Deps in) {
  return norm_fwd(layer, n, rows_, static_cast<double>(s_.hidden), std::move(in));
}

KernelId GptBuilder::layernorm_bwd(int layer, const std::string& n, Deps grad) {
  return norm_bwd(layer, n, rows_, static_cast<double>(s_.hidden), std::move(grad));
}

KernelId GptBuilder::norm_fwd(int layer, const std::string& n, double rows, double h, Deps in) {
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

KernelId GptBuilder::norm_bwd(int layer, const std::string& n, double rows, double h, Deps grad) {
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
void GptBuilder::norm_params(int layer, const std::string& n, std::int64_t h) {
  const int global = layer < 0 ? -1 : layer + part_.first_layer;
  (void)param(name(layer, n + ".gain"), global, h);
  if (!rms_) (void)param(name(layer, n + ".bias"), global, h);
}

// `elements` of one micro-batch's gradients added into the main gradient by their own kernel
// (GptPartition::gradient_add): the gradient and the main gradient read, the main gradient
// written.
KernelId GptBuilder::gradient_add(int layer, const std::string& n, double elements, Deps deps) {
  const Bytes main = bytes(part_.gradient_add);
  return stream(layer, n, KernelKind::kElementwise, Phase::kBackwardWeight,
                elements, elements * (p_ + main), elements * main, std::move(deps));
}

// Gradient flowing into a residual stream from its branch: g + branch.
KernelId GptBuilder::merge(int layer, const std::string& n, Deps deps) {
  const double h = static_cast<double>(s_.hidden);
  return stream(layer, n, KernelKind::kElementwise, Phase::kBackwardData, rows_ * h,
                2.0 * rows_ * h * p_ + rows_ * h * mask_, rows_ * h * p_, std::move(deps));
}

}  // namespace pathfinder::gpt_detail
