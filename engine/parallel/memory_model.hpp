// What a software stack keeps in device memory beyond the ZeRO and Korthikanti counts of
// memory_footprint.hpp (a plain value: the software profile carries one, templates/software/).
// The defaults are Megatron-LM's as those papers count it, so a default MemoryModel changes
// nothing.
#pragma once

namespace pathfinder {

// How a pipeline places a GPT model's layers on its stages (engine/parallel/layer_split.hpp).
enum class LayerSplit { kEven, kByCost };

struct MemoryModel {
  // Gradients accumulated in an fp32 buffer beside the p-byte ones: 4 more bytes per local
  // parameter, kept whole under ZeRO-1 (nanotron's accumulate_grad_in_fp32:
  // FP32GradientAccumulator.build_grad_buffers holds fp32 gradients for every parameter so that
  // micro-batches accumulate without a reduction; sharded only from ZeRO-2 on).
  bool fp32_gradient_buffer = false;
  // Bytes per parameter a ZeRO stage >= 1 adds, whole and sharded over dp ([fit] values of a
  // profile; what they were fitted to is in its file).
  double zero_unsharded_bytes = 0.0;
  double zero_sharded_bytes = 0.0;
  // Multiplies the stored activations: what an eager framework keeps beyond Korthikanti's
  // count plus the caching allocator's rounding ([fit] in a profile; 1 = the count).
  double activation_factor = 1.0;
  // Hidden-state tensors of one micro-batch (b·s·h·p bytes each, whole: not split by tp or
  // sequence parallelism) a pipeline stage keeps allocated for its transfers when pp > 1
  // ([fit] in a profile; 0 = none beyond the counted activations).
  double pipeline_buffers = 0.0;
  // Bytes per element of the layers' stored activations, 0: the workload's precision
  // (`memory_model: {activation_precision: fp8}`: DeepSeek-V3 report §3.3.3, "we cache the
  // activations in FP8 for the backward of the Linear operator").
  double activation_bytes = 0.0;
  // A stack that runs the layers' linear GEMMs quantized (a profile's precision.linear_layers):
  // bytes per element of each such layer's saved input, 0: the workload's precision. Transformer
  // Engine's Linear, LayerNormLinear and LayerNormMLP save the FP8 cast of their input for the
  // weight-gradient GEMM instead of the 16-bit tensor (transformer_engine/pytorch/module/
  // linear.py: `inputmat_t if weight.requires_grad and fp8_wgrad`); torchao's Float8Linear
  // saves the high-precision input and casts it again in the backward
  // (matmul_with_hp_or_float8_args: `ctx.save_for_backward(input_hp, weight_hp_t)`).
  double linear_input_bytes = 0.0;
  // Bytes per linear-layer weight element (gpt_layer_linear_weights) of the quantized copies the
  // stack keeps across micro-batches: Transformer Engine's FP8 workspaces, the weight's cast and
  // its transpose (TransformerEngineBaseModule.get_fp8_workspace, with_transpose), 2 in FP8.
  double linear_weight_copy_bytes = 0.0;
  // The linear layers' weights held only quantized (Megatron-Core's --fp8-param-gather,
  // Transformer Engine's fp8_model_init): no 16-bit copy beside the quantized ones above.
  bool quantized_parameters = false;
  // Bytes per parameter of the gradients the backward writes, 0: the workload's precision. A
  // stack whose weight-gradient GEMMs accumulate into a main gradient holds that instead of the
  // 16-bit gradients: Megatron's main_grad, fp32 for bf16 ("bf16 param, fp32 grads: 6 + 12/d
  // bytes" with the distributed optimizer, Megatron-LM docs/source/api-guide/
  // dist_optimizer.md; arguments.py forces accumulate_allreduce_grads_in_fp32 for bf16 unless
  // --grad-reduce-in-bf16), the 16-bit type for fp16 (GptTraining sets it from the profile's
  // fused wgrad_accumulation and gradient reduction).
  double gradient_bytes = 0.0;
  // Bytes per parameter of Adam's two moments, 0: fp32 each, 8 (`memory_model:
  // {optimizer_moments: bf16}`: 4, DeepSeek-V3 report §3.3.3, "BF16 ... to track the first and
  // second moments in the AdamW optimizer").
  double moment_bytes = 0.0;
  // Which layers each pipeline stage holds (a profile's `pipeline: {layer_split: ...}`): what
  // it keeps in memory and, in the training model, what it computes.
  LayerSplit layer_split = LayerSplit::kEven;
};

}  // namespace pathfinder
