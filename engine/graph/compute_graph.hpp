// Compute graph: the kernels of one training iteration with their work, traffic and order
// (issue 3). A value type (design.md §2): kernels and parameter tensors are vectors indexed by
// integer ids, dependencies are ids, and a built graph is immutable.
//
// Every dependency of a kernel has a smaller id than the kernel itself, so the id order is a
// topological order and the graph is acyclic by construction (ComputeGraphBuilder::add checks).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/units.hpp"

namespace pathfinder {

enum class KernelKind {
  kGemm,              // C[m×n] = A[m×k]·B[k×n]
  kBatchedGemm,       // batch independent GEMMs of one shape
  kElementwise,       // pointwise streams: residual adds, GeLU, gradient accumulation
  kReduction,         // sums over one axis
  kSoftmax,           // row softmax (attention probabilities, LSTM-LM output)
  kLayerNorm,         // forward or backward layer normalisation
  kEmbedding,         // row gather (forward) or scatter-add (backward) of a table
  kLstmCell,          // the gate pointwise work of one LSTM cell
  kAttentionScores,   // Q·Kᵀ per (sequence, head): a batched GEMM
  kAttentionContext,  // P·V per (sequence, head): a batched GEMM
  kCrossEntropy,      // softmax + negative log-likelihood over the vocabulary
  kOptimizerUpdate,   // SGD or Adam step over a group of parameters
  kCommunication,     // a collective or point-to-point transfer among parallel devices
  kFlashAttention,    // fused, tiled attention (Dao 2023, FlashAttention-2): no s×s in memory
};
enum class Phase { kForward, kBackwardData, kBackwardWeight, kUpdate };
// How quantized linear layers scale their tensors (Transformer Engine's recipes: DelayedScaling,
// Float8CurrentScaling, MXFP8BlockScaling, Float8BlockScaling, NVFP4BlockScaling).
enum class QuantRecipe {
  kDelayed,    // FP8, one scale per tensor from the amax history of earlier iterations
  kCurrent,    // FP8, one scale per tensor from its own amax: a pass over it first
  kRowwise,    // FP8 with a scale per row of each GEMM operand (torchao's axiswise "rowwise"
               // recipe): the row-wise copy's amax in its cast, the column-wise copy's in a pass
  kMxfp8,      // FP8 in 32-element blocks with E8M0 scales the matrix units apply (OCP MX)
  kBlockwise,  // FP8 in 1x128 (activations) and 128x128 (weights) blocks with FP32 scales applied
               // on the CUDA cores every 128 of K (DeepSeek-V3 report, 2024, section 3.3)
  kNvfp4,      // FP4 (E2M1) in 16-element blocks with E4M3 scales and a per-tensor FP32 one
               // (NVIDIA, "Pretraining Large Language Models with NVFP4", 2025)
};
[[nodiscard]] std::string_view to_string(QuantRecipe r);
// Bytes per element of one quantized copy with its scales: FP8 with per-tensor or per-row
// scales 1; MXFP8 1 + 1/32 (an E8M0 scale per 32); blockwise 1 + 4/128 (an FP32 scale per 128);
// NVFP4 1/2 + 1/16 (an E4M3 scale per 16).
[[nodiscard]] double quantized_element_bytes(QuantRecipe r);

// kFp4: NVFP4's E2M1 values, half a byte each (their block scales counted by the kernels).
enum class DataType { kFp32, kFp16, kBf16, kFp8, kFp4 };

// Communication a partitioned graph needs (issue 4): what moves, among which parallel group.
enum class CommKind { kAllReduce, kReduceScatter, kAllGather, kSendRecv, kAllToAll };
// kTensor is the (first) kernel-parallel group: Megatron's tensor group, the DeepFlow LSTM's
// kp1; kTensorColumns is the second dimension of a 2-D kernel-parallel grid (the LSTM's RC kp2).
enum class CommGroup { kTensor, kTensorColumns, kPipeline, kData, kContext, kExpert };
struct Communication {
  CommKind kind = CommKind::kAllReduce;
  CommGroup group = CommGroup::kTensor;
  Bytes bytes;               // the full buffer each member holds (NCCL's "size")
  bool overlapped = false;   // can run beside the compute that follows (no kernel waits on it)
  // A ring of this many point-to-point steps pipelined with the kernel that consumes it
  // (context parallelism's key/value exchange, Liu et al. 2023 "Ring Attention"): only what
  // the consumer's other blocks cannot cover is exposed (stage_times.hpp). 0: not a ring.
  int ring_steps = 0;
};
[[nodiscard]] std::string_view to_string(CommKind k);
[[nodiscard]] std::string_view to_string(CommGroup g);

[[nodiscard]] std::string_view to_string(KernelKind k);
[[nodiscard]] std::string_view to_string(Phase p);
[[nodiscard]] std::string_view to_string(DataType t);
// Parsers: nullopt for an unknown spelling; valid_*() lists the spellings for messages.
[[nodiscard]] std::optional<KernelKind> parse_kernel_kind(std::string_view s);
[[nodiscard]] std::optional<Phase> parse_phase(std::string_view s);
[[nodiscard]] std::optional<DataType> parse_data_type(std::string_view s);
[[nodiscard]] std::vector<std::string> valid_kernel_kinds();
[[nodiscard]] std::vector<std::string> valid_phases();
[[nodiscard]] std::vector<std::string> valid_data_types();

// Storage per element: fp32 4 B, fp16 and bf16 2 B, fp8 (E4M3/E5M2) 1 B.
[[nodiscard]] Bytes bytes_per_element(DataType t);
// Kinds that carry a GemmShape and whose FLOPs are 2·batch·m·n·k (plus any epilogue).
[[nodiscard]] bool is_gemm(KernelKind k);

// batch independent products C[m×n] = A[m×k]·B[k×n].
struct GemmShape {
  std::int64_t batch = 1;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  // C += A·B into a buffer of `accumulate` bytes per element (a weight gradient accumulated into
  // the main gradient, Megatron's gradient_accumulation_fusion): C read and written in that
  // type, not written once in the GEMM's output type. 0: no accumulation.
  std::int32_t accumulate = 0;
  // One multiply and one add per term of each dot product: 2·batch·m·n·k.
  [[nodiscard]] Flops flops() const;
  // Compulsory traffic: A and B read once, C written once (a tiling can only add to it); with
  // `accumulate` C also read, both in the accumulation buffer's type.
  [[nodiscard]] Bytes bytes_read(DataType t) const;
  [[nodiscard]] Bytes bytes_written(DataType t) const;
  friend bool operator==(const GemmShape&, const GemmShape&) = default;
};

// Which fused attention kernel runs:
//   kNative  on the device's native matrix instructions (FlashAttention-3 on Hopper,
//            FlashAttention-4 on Blackwell: core.attention_fraction)
//   kCudnn   cuDNN's fused attention on the same instructions, which Transformer Engine runs in
//            preference to flash-attn on Hopper and later ("Disabling FlashAttention to give
//            FusedAttention preference on Hopper+ for performance reasons", its
//            get_attention_backend): the native kernel's rate with a full mask, with a causal
//            mask core.cudnn_causal_fraction of it where measured
//   kFlash2  FlashAttention-2 (Dao 2023) with warp-level MMA instructions, as the flash-attn 2
//            package and PyTorch's SDPA flash backend run it (core.warp_mma_fraction)
//   kFlash1  FlashAttention-1 (Dao et al. 2022) and the Triton kernel of its generation
//            (flash_attn_triton.py, llm-foundry's attn_impl: triton; "Speed should be around the
//            same", Dao-AILab/flash-attention issue 119): half the warp-level MMA ceiling
//            (core.warp_mma_peak_fraction), FlashAttention-2's rate on the A100 where that is
//            "around 2x speedup compared to FlashAttention" (Dao 2023, abstract and Fig. 4-7)
enum class FlashKernel : std::uint8_t { kNative, kFlash2, kFlash1, kCudnn };

// One fused attention call: `batch` independent (sequence, head) problems of `sequence` queries
// and keys of `head_dim` each. Matrix FLOPs (Dao 2023, FlashAttention-2 §3.3 and its benchmark
// convention): forward 4·s²·d per problem (Q·Kᵀ and P·V), half of it with a causal mask;
// backward 2.5× the forward (five products instead of two, the scores recomputed).
struct AttentionShape {
  std::int64_t batch = 0;
  std::int64_t sequence = 0;  // keys and values per problem
  std::int64_t head_dim = 0;
  bool causal = true;
  bool backward = false;  // the backward kernel (dQ, dK, dV), else a forward or its recompute
  FlashKernel kernel = FlashKernel::kNative;
  // Queries per problem, when fewer than the keys: context parallelism gives each of cp ranks
  // s/cp queries against all s keys, causal work balanced (Megatron-Core's 2·cp chunks).
  // 0: as many as the keys.
  std::int64_t queries = 0;
  // Each value head's width when it differs from the query/key width (MLA); 0: head_dim.
  std::int64_t value_dim = 0;
  [[nodiscard]] Flops forward_flops() const;
  [[nodiscard]] std::int64_t value_width() const { return value_dim > 0 ? value_dim : head_dim; }
  [[nodiscard]] std::int64_t query_count() const { return queries > 0 ? queries : sequence; }
  friend bool operator==(const AttentionShape&, const AttentionShape&) = default;
};

using KernelId = std::uint32_t;
using ParamId = std::uint32_t;

// A parameter tensor: a weight matrix, a bias, a layernorm gain or an embedding table; frozen
// ones (LoRA's base weights) are held and used but get no gradient or update.
struct ParameterTensor {
  std::string name;
  int layer = -1;  // -1: outside the repeated layers (embeddings, output head)
  std::int64_t elements = 0;
  bool trainable = true;
};

struct Kernel {
  std::string name;
  KernelKind kind = KernelKind::kElementwise;
  Phase phase = Phase::kForward;
  DataType dtype = DataType::kFp16;  // of the activations it streams
  int layer = -1;                    // -1: outside the repeated layers
  int step = -1;                     // recurrent time step, -1 when none
  std::optional<GemmShape> gemm;     // set exactly when is_gemm(kind)
  std::optional<Communication> comm; // set exactly when kind is kCommunication
  std::optional<AttentionShape> attention;  // set exactly when kind is kFlashAttention
  Flops flops;                       // all arithmetic, GEMM epilogues included
  Bytes bytes_read;                  // true byte counts of the streams (compulsory for GEMMs)
  Bytes bytes_written;
  std::optional<ParamId> weight;     // the parameter a GEMM multiplies or whose gradient it makes
  // An FP8 GEMM whose FP32 accumulators are promoted periodically out of the tensor cores
  // (cuBLASLt without fast accumulation): timed at the template's
  // fp8_promoted_accumulation_fraction of the FP8 rate.
  bool promoted_accumulation = false;
  // The host waits for the device to finish the compute stream's work before issuing this
  // kernel (a device-to-host copy it must read, then a stream synchronize): the device then
  // idles until the host has issued it and what follows.
  bool host_sync = false;
  std::vector<KernelId> deps;        // kernels that must finish first; each id < this kernel's
  [[nodiscard]] Bytes bytes() const { return bytes_read + bytes_written; }
};

class ComputeGraph {
 public:
  [[nodiscard]] const std::vector<Kernel>& kernels() const { return kernels_; }
  [[nodiscard]] const Kernel& kernel(KernelId id) const;
  [[nodiscard]] std::size_t size() const { return kernels_.size(); }
  [[nodiscard]] const std::vector<ParameterTensor>& parameters() const { return params_; }
  [[nodiscard]] std::int64_t parameter_count() const { return parameter_count_; }
  [[nodiscard]] std::int64_t trainable_parameter_count() const { return trainable_count_; }

  // Sums over kernels (all, or one phase); gemm_flops counts 2·batch·m·n·k only. Summed once,
  // when the graph is built (in kernel order).
  [[nodiscard]] Flops total_flops() const { return total_flops_; }
  [[nodiscard]] Flops flops(Phase p) const { return phase_flops_[static_cast<std::size_t>(p)]; }
  [[nodiscard]] Flops gemm_flops() const { return gemm_flops_; }
  [[nodiscard]] Bytes total_bytes() const { return total_bytes_; }

  // Kernels the timing models cannot tell apart (the same kind, type, shape, communication,
  // FLOPs and bytes; names, phases and dependencies aside) share a timing class, numbered
  // 0 .. timing_classes() - 1 in order of first appearance: a graph repeats each layer's and
  // each time step's few kernels, so timing one kernel per class times them all.
  [[nodiscard]] std::uint32_t timing_class(KernelId id) const { return timing_class_[id]; }
  [[nodiscard]] std::size_t timing_classes() const { return class_first_.size(); }
  // The first kernel of each timing class.
  [[nodiscard]] KernelId class_first(std::uint32_t c) const { return class_first_[c]; }

  // A training step's passes: 0 forward, 1 backward (data and weight gradients), 2 update.
  [[nodiscard]] static int pass_of(Phase p) {
    return p == Phase::kForward ? 0 : p == Phase::kUpdate ? 2 : 1;
  }
  [[nodiscard]] int pass(KernelId id) const { return pass_[id]; }

  // Each pass's kernels in graph order as the timing loop reads them (stage_times.cpp), built
  // once with the graph so the loop touches neither the kernels nor their dependency lists:
  // each step's timing class, what it is, and ranges of dependencies in step_deps().
  enum class StepKind : std::uint8_t {
    kCompute,         // a device kernel on the compute stream
    kComm,            // a blocking collective
    kOverlappedComm,  // Communication::overlapped: on the communication stream
    kRingComm,        // Communication::ring_steps > 0: pipelined with its consumer
  };
  struct PassStep {
    KernelId id = 0;
    std::uint32_t cls = 0;
    StepKind kind = StepKind::kCompute;
    bool host_sync = false;  // Kernel::host_sync
    // Its dependencies in the same pass that can delay it (inputs of earlier passes count as
    // present; for a kernel on the compute stream, none if every input ran on that stream
    // before it), then those that are ring transfers (any pass), in dependency order.
    std::uint32_t deps_begin = 0, deps_end = 0, rings_end = 0;
  };
  struct StepDep {
    KernelId id = 0;
    double ring_steps = 0.0;  // the ring transfer's steps (ring dependencies only)
  };
  [[nodiscard]] const std::vector<PassStep>& pass_steps(int p) const {
    return pass_steps_[static_cast<std::size_t>(p)];
  }
  [[nodiscard]] const std::vector<StepDep>& step_deps() const { return step_deps_; }
  // Each pass's timing classes with how many of its steps are of that class, in order of
  // first appearance: a pass's sums over its kernels (energy, bytes sent, busy time) are sums
  // over these, outside the timing loop.
  struct ClassCount {
    std::uint32_t cls = 0, count = 0;
    StepKind kind = StepKind::kCompute;
    std::uint32_t weight_gradients = 0;  // of count, Phase::kBackwardWeight kernels
  };
  [[nodiscard]] const std::vector<ClassCount>& pass_classes(int p) const {
    return pass_classes_[static_cast<std::size_t>(p)];
  }
  // Whether any step lists a ring transfer (context parallelism's key/value rings).
  [[nodiscard]] bool has_ring_transfers() const { return has_ring_transfers_; }

 private:
  friend class ComputeGraphBuilder;
  std::vector<Kernel> kernels_;
  std::vector<ParameterTensor> params_;
  Flops total_flops_, gemm_flops_;
  std::array<Flops, 4> phase_flops_{};  // by Phase
  Bytes total_bytes_;
  std::int64_t parameter_count_ = 0;
  std::int64_t trainable_count_ = 0;
  std::vector<std::uint32_t> timing_class_;
  std::vector<KernelId> class_first_;
  std::vector<std::uint8_t> pass_;
  std::array<std::vector<PassStep>, 3> pass_steps_;
  std::vector<StepDep> step_deps_;
  std::array<std::vector<ClassCount>, 3> pass_classes_;
  bool has_ring_transfers_ = false;
};

// Appends kernels in a topological order; build() hands over the finished graph.
class ComputeGraphBuilder {
 public:
  ParamId add_parameter(ParameterTensor p);
  // Engine bug (PF_ASSERT) if a dependency id is not smaller than the new id, a GEMM kind lacks
  // a positive shape or a non-GEMM carries one, a weight id is unknown, or a count is negative.
  KernelId add(Kernel k);
  [[nodiscard]] KernelId next_id() const;
  [[nodiscard]] const ParameterTensor& parameter(ParamId id) const;
  [[nodiscard]] const std::vector<ParameterTensor>& parameters() const { return g_.params_; }
  [[nodiscard]] ComputeGraph build() &&;

 private:
  ComputeGraph g_;
};

// Kernel makers. A GEMM-shaped kernel with FLOPs 2·batch·m·n·k and compulsory traffic; callers
// add fused epilogue work (a bias add or bias gradient) to flops and bytes afterwards.
[[nodiscard]] Kernel gemm_kernel(std::string name, KernelKind kind, Phase phase, DataType dtype,
                                 const GemmShape& shape, std::vector<KernelId> deps);
// A memory stream: flops of arithmetic over read and written bytes.
[[nodiscard]] Kernel stream_kernel(std::string name, KernelKind kind, Phase phase, DataType dtype,
                                   Flops work, Bytes read, Bytes written,
                                   std::vector<KernelId> deps);

// A communication step: no arithmetic and no local memory traffic counted here.
[[nodiscard]] Kernel comm_kernel(std::string name, Phase phase, DataType dtype,
                                 const Communication& c, std::vector<KernelId> deps);

// True when every dependency names an earlier kernel (the invariant the builder keeps).
[[nodiscard]] bool dependencies_precede(const ComputeGraph& g);
// Kahn's algorithm over the dependency edges, independent of the id order.
[[nodiscard]] bool is_acyclic(const ComputeGraph& g);

}  // namespace pathfinder
