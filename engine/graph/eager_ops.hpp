// Which element-wise operators run unfused (GptPartition::eager, SoftwareProfile::eager).
#pragma once

namespace pathfinder {

// Element-wise operators a framework runs as eager PyTorch decomposes them (one aten kernel per
// operator, each a pass over its tensor, fp32 where the model code casts) instead of one fused
// kernel each (a hand-written kernel, Transformer Engine, or torch.compile's generated one).
// Counts per element in GptBuilder (gpt_builder.hpp); the model code is torchtitan's Llama
// (pytorch/torchtitan, models/llama/model.py and models/norms.py, December 2024).
struct EagerOps {
  bool rmsnorm = false;    // `_norm(x.float()).type_as(x) * weight`, x * rsqrt(mean(x^2) + eps)
  bool rotary = false;     // q, k `.float()`, complex multiply by freqs_cis, `.type_as`
  bool swiglu = false;     // `F.silu(w1(x)) * w3(x)`: SiLU, then the product
  bool repeat_kv = false;  // grouped-query K, V copied to every query head before attention
  // q, k, v split from the fused QKV output and copied contiguous in the attention kernel's
  // layout, k and v packed together (nanotron's CausalSelfAttention); backward, the split's
  // gradients concatenated (autograd's cat)
  bool qkv_layout = false;
  [[nodiscard]] bool any() const { return rmsnorm || rotary || swiglu || repeat_kv || qkv_layout; }
  friend bool operator==(const EagerOps&, const EagerOps&) = default;
};

}  // namespace pathfinder
