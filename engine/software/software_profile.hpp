// The software stack a training run uses (templates/software/*.yaml): what the framework costs
// on the host and what it overlaps. Frameworks differ by 10% or more on the same hardware
// (Megatron-LM 2021 reduces gradients after the backward pass; Megatron-Core overlaps the
// reduction and the parameter gather; FSDP gathers parameters layer by layer), so these values
// live beside, not inside, the hardware templates. Every value in a shipped profile carries its
// source or is marked [fit] with what it was fitted to.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/arch/arch_template.hpp"
#include "engine/core/error.hpp"
#include "engine/core/units.hpp"
#include "engine/graph/compute_graph.hpp"
#include "engine/graph/eager_ops.hpp"
#include "engine/parallel/memory_model.hpp"
#include "engine/parallel/parallelism_support.hpp"

namespace pathfinder {

class ConfigNode;

// The element type of the data-parallel gradient reduction:
//   workload      the workload's precision (2 bytes in fp16/bf16)
//   fp32          always fp32 (nanotron's accumulate_grad_in_fp32 hook, torchtitan's
//                 mixed_precision_reduce = "float32" default)
//   fp32_if_bf16  fp32 for bf16 workloads, else the workload's (Megatron-LM arguments.py: "bfloat16
//                 requires gradient accumulation and all-reduce to be done in fp32" unless
//                 --grad-reduce-in-bf16; fp16 keeps fp16 gradients)
enum class GradientReduction { kWorkload, kFp32, kFp32IfBf16 };

// Bytes per gradient element reduced for a workload whose elements are `precision_bytes` wide
// (bf16: `bf16` true).
[[nodiscard]] constexpr double gradient_reduction_bytes(GradientReduction g, double precision_bytes,
                                                        bool bf16) {
  switch (g) {
    case GradientReduction::kFp32: return 4.0;
    case GradientReduction::kFp32IfBf16: return bf16 ? 4.0 : precision_bytes;
    case GradientReduction::kWorkload: break;
  }
  return precision_bytes;
}

// How each micro-batch's weight gradients reach the main gradient the optimizer reads
// (`kernels: {wgrad_accumulation: ...}`):
//   none      not modelled: each gradient written once (the paper's reference; FSDP, which
//             reduce-scatters every micro-batch's gradients)
//   separate  an add of every parameter's gradient into the main gradient per micro-batch, in
//             the gradient-reduction type: nanotron's FP32GradientAccumulator
//             (fp32_grad.add_(half_param.grad), src/nanotron/optim/gradient_accumulator.py),
//             Megatron's DDP hook without gradient_accumulation_fusion (main_grad.add_(grad))
//   fused     the weight-gradient GEMMs accumulate into it (Megatron's
//             gradient_accumulation_fusion, Transformer Engine's fuse_wgrad_accumulation); the
//             embedding, whose gradient no GEMM makes, still by the hook's add
enum class WgradAccumulation { kNone, kSeparate, kFused };

// What a software stack chooses for the model of a training step: its overlaps, kernels,
// precisions, memory and the parallelism its code runs. A profile reads them from its file
// (defaults: nothing overlapped, fused kernels); TrainingOptions carries them into the
// training model.
struct StackChoices {
  // Gradient reduction overlapped with the backward pass (bucketed, as PyTorch DDP and
  // Megatron-Core --overlap-grad-reduce do), sharing the ports with the tensor and pipeline
  // traffic until the backward ends; off: after the backward pass (Megatron-LM local DDP).
  // ZeRO-3's per-layer gathers and reduce-scatters are always prefetched and overlapped.
  bool overlap_data_parallel = false;
  // `zero: {overlap: ...}`: ZeRO-1/2's gradient reduction overlapped likewise (default: as
  // overlap_data_parallel); off: after the backward pass.
  bool overlap_zero_gradients = false;
  // `zero: {gradient_collective: all-reduce}`: ZeRO-1/2 all-reduce the whole gradient and each
  // member steps its share (nanotron's sync_gradients_across_dp with reduce_scatter=False);
  // `reduce-scatter` (default): each member receives only its share's sum.
  bool zero_all_reduce = false;
  // Fraction of each tensor-parallel collective hidden behind the GEMMs (decomposed or
  // userbuffer-overlapped tensor parallelism); 0 = blocking.
  double tensor_comm_overlap = 0.0;
  // `tensor_parallel: chunked`: each tensor-parallel GEMM and its collective split into tp
  // chunks that pipeline (Wang et al., ASPLOS 2023, "Overlap Communication with Dependent
  // Computation via Decomposition"; Transformer Engine userbuffers ring exchange, NeMo
  // `ub_tp_comm_overlap`): all but one chunk's transfer hidden, a fraction (tp - 1) / tp.
  bool tensor_comm_chunked = false;
  // Sequence parallelism's backward re-gathers of the layernorm outputs on a side stream.
  bool overlap_sp_regather = false;
  // `overlap: {tensor_parallel_backward: true}`: a column-parallel layer's input-gradient
  // all-reduce (reduce-scatter under SP) launched asynchronously before its weight-gradient
  // GEMM and waited for after it (GptPartition::overlap_tp_backward).
  bool overlap_tp_backward = false;
  // `overlap: {collective_sms: N}`: the SMs an overlapped collective's kernels hold while they
  // run beside compute (stage_times.hpp collective_contention); 0: none taken.
  int collective_sms = 0;
  // `precision: {linear_layers: fp8}` or `fp4`: the layers' linear GEMMs quantized
  // (GptPartition::quantized_linear), FP8 scaled by `fp8_scaling: delayed` (default), `rowwise`,
  // `current`, `mxfp8` or `blockwise`, FP4 as NVFP4 (GptPartition::quant_recipe).
  bool quantized_linear = false;
  QuantRecipe quant_recipe = QuantRecipe::kDelayed;
  // `precision: {fp8_backward_accumulation: fast}`: the FP8 backward GEMMs with fast
  // accumulation; `promoted` (default): as Transformer Engine and torchao run them
  // (GptPartition::fp8_fast_backward_accumulation).
  bool fp8_fast_backward_accumulation = false;
  // `precision: {gradient_reduction: ...}`: the element type the data-parallel gradients are
  // accumulated and reduced in (all-reduce, ZeRO's reduce-scatter, FSDP's per-layer one).
  GradientReduction gradient_reduction = GradientReduction::kWorkload;
  // `kernels: {attention: flash2}`: the workload's flash attention runs as FlashAttention-2
  // (flash-attn 2, PyTorch SDPA's flash backend); `flash1`: FlashAttention-1 or the Triton
  // kernel of its generation (llm-foundry's attn_impl: triton); `fused` (default): a kernel on
  // the device's native matrix instructions (cuDNN fused attention, FlashAttention-3).
  FlashKernel attention_kernel = FlashKernel::kNative;
  // `kernels: {metric_losses: N}`: cross-entropy evaluations of the logits beside the loss each
  // micro-batch (GptPartition::metric_losses; Composer's training metrics: 2).
  int metric_losses = 0;
  // `kernels: {cross_entropy: fp32}`: the logits cast to fp32 and the loss in separate fp32
  // passes, as the frameworks do by default; `fused` (default): one kernel each way.
  bool fp32_cross_entropy = false;
  // `kernels: {selective_recompute: ops}`: recompute=selective as op-level selective
  // checkpointing (GptPartition::selective_op, torchtitan); `attention` (default): Megatron's.
  bool selective_op = false;
  // `kernels: {bias: separate}`: linear biases added and reduced by their own kernels, as
  // Megatron-LM's linear layers do (GptPartition::separate_bias); `epilogue` (default): fused
  // into the GEMMs.
  bool separate_bias = false;
  // `kernels: {sequence_parallel_layout: copy}`: sequence parallelism shards the sequence on a
  // tensor's second dimension ([batch, sequence, hidden], DTensor's Shard(1)), while NCCL
  // gathers and scatters along the first: each all-gather is followed by a copy of the gathered
  // tensor into place and each reduce-scatter preceded by one of its input
  // (GptPartition::sp_layout_copy); `direct` (default): the sequence is the first dimension
  // (Megatron's [s, b, h]).
  bool sp_layout_copy = false;
  // `kernels: {rmsnorm: eager, rotary: eager, swiglu: eager, repeat_kv: copy, qkv_layout:
  // copy}`: those element-wise operators and layout copies as eager PyTorch runs a model's
  // Python (EagerOps); `fused` / `none` (defaults): one kernel each, no copies.
  EagerOps eager;
  // `kernels: {wgrad_accumulation: fused|separate|none}` (WgradAccumulation; default none).
  WgradAccumulation wgrad_accumulation = WgradAccumulation::kNone;
  // What the stack keeps in device memory beyond the ZeRO/Korthikanti counts (memory_model:
  // block; GPT workloads), and which layers each pipeline stage holds (`pipeline: {layer_split:
  // even|by-cost}`, MemoryModel::layer_split).
  MemoryModel memory;
  // `parallelism: {schedules, zero, context, expert, sequence_parallel}`: what the stack's code
  // can run (default: everything); a strategy outside it is infeasible with the reason.
  ParallelismSupport parallelism;
  // `moe: {dispatcher: deepep}`: the expert all-to-alls forwarded through each remote
  // scale-up domain, a token crossing the scale-out tier once per domain its experts are in
  // (forwarded_all_to_all); `alltoall` (default): Megatron-Core's flat all-to-all.
  bool forwarded_dispatch = false;
  // `moe: {dispatch_precision: bf16 | fp8}` (GptPartition::fp8_dispatch; fp8 needs FP8 linear
  // layers).
  bool fp8_dispatch = false;
  // `precision: {tensor_parallel_gather: bf16 | fp8}` (GptPartition::fp8_tp_gather): with FP8
  // linear layers at tensor-wise, MXFP8 or block scales, sequence parallelism's all-gathers
  // carry the quantized rows.
  bool fp8_tp_gather = false;
  // `overlap: {expert_parallel: true}` (GptPartition::overlap_expert_comm).
  bool overlap_expert_comm = false;
  // The main gradient's bytes per element for a workload of `precision_bytes` wide elements
  // (bf16: `bf16`), the gradient-reduction type, when accumulated (0: not modelled).
  [[nodiscard]] std::int32_t main_gradient_bytes(double precision_bytes, bool bf16) const {
    if (wgrad_accumulation == WgradAccumulation::kNone) return 0;
    return static_cast<std::int32_t>(
        gradient_reduction_bytes(gradient_reduction, precision_bytes, bf16));
  }
  // Whether ZeRO stage `zero`'s gradient reduction overlaps the backward pass (stage 3's
  // per-layer collectives are overlapped regardless).
  [[nodiscard]] bool overlaps_gradient_reduction(int zero) const {
    return zero == 1 || zero == 2 ? overlap_zero_gradients : overlap_data_parallel;
  }
};

struct SoftwareProfile : StackChoices {
  std::string name;
  std::string file;
  // Host CPU time to issue one operator outside a training step (eager framework dispatch,
  // library heuristics and the driver call): the floor of an isolated GEMM call.
  Time dispatch;
  // Host time per modelled kernel inside a training step (module, autograd and framework
  // operators that one fused graph kernel stands for).
  Time training_dispatch;
  // Fixed host work per iteration outside the modelled kernels (data loader, logging).
  Time iteration;
  // `collectives: nccl`: the collectives run as NCCL runs them (engine/system/collectives.hpp);
  // `any` (default): the fastest modelled algorithm, as the paper's reference assumes.
  CollectiveLibrary collectives = CollectiveLibrary::kAny;
};

// Throws ConfigError with the file, line and column of the first problem.
[[nodiscard]] SoftwareProfile load_software_profile(const std::string& path);
[[nodiscard]] SoftwareProfile read_software_profile(const ConfigNode& root);

// `name_or_path`: a file path (contains '/' or ends in .yaml), else a shipped profile's name,
// looked up in each of `dirs` in order as NAME.yaml. Empty: the first dir's default profile.
// `where`: what an error about the choice points at (a file's key, or the command line).
[[nodiscard]] std::string resolve_software_profile(const std::string& name_or_path,
                                                   const std::vector<std::string>& dirs,
                                                   const SourceLoc& where = {});

// `choice` (a name, a path, or empty for the default) for a template file: a name is looked up
// in software/ beside the template, then in the shipped profiles (templates/software/).
[[nodiscard]] SoftwareProfile software_for(const std::string& choice,
                                           const std::string& template_file,
                                           const SourceLoc& where = {});

// The profile shipped as the default (the software stack of the calibration measurements).
inline constexpr const char* kDefaultSoftwareProfile = "megatron-lm";

// The template's host with the profile's framework costs filled in.
[[nodiscard]] ArchTemplate with_software(ArchTemplate t, const SoftwareProfile& s);

}  // namespace pathfinder
