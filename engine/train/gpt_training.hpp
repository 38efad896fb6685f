// One training iteration of a GPT over many devices (issue 4; paper §5-6).
//
// A strategy (tensor, pipeline, data parallelism, micro-batches, schedule, sequence
// parallelism, recomputation, ZeRO) is evaluated without materialising replicas: one tensor-
// parallel layer, the embedding and the head are timed once per (tp, sp, recompute,
// micro-batch) on the device's kernels and the tensor group's collectives (memoized); pipeline
// stages are sums of those; the pipeline schedule is simulated per chunk and micro-batch; the
// data-parallel gradient reduction overlaps the last micro-batch's backward bucket by bucket
// (one layer a bucket, one collective at a time on the port); the optimizer step follows.
// ZeRO-3 instead gathers each layer's parameters before its forward and its backward and
// reduce-scatters its gradients after its backward, on every micro-batch (sharded_pass.hpp):
// those lengthen the chunks' passes. An evaluation's cost does not grow with the data- or
// tensor-parallel degree.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "engine/parallel/layer_split.hpp"
#include "engine/parallel/memory_footprint.hpp"
#include "engine/parallel/strategy.hpp"
#include "engine/graph/graph_cache.hpp"
#include "engine/graph/workload.hpp"
#include "engine/perf/kernel_timer.hpp"
#include "engine/software/software_profile.hpp"
#include "engine/system/mapping.hpp"
#include "engine/train/comm_collective.hpp"
#include "engine/train/iteration.hpp"
#include "engine/train/stage_times.hpp"
#include "engine/train/timeline.hpp"
#include "engine/train/training_result.hpp"

namespace pathfinder {

// The software stack's choices (StackChoices, from its profile) and how results are judged.
// Without a profile: the reference's overlaps (the data-parallel and ZeRO reductions overlapped
// with the backward pass), nothing else.
struct TrainingOptions : StackChoices {
  TrainingOptions() {
    overlap_data_parallel = true;
    overlap_zero_gradients = true;
  }
  // Report a strategy that does not fit in main memory as infeasible (default). Off: time it
  // anyway, as the DeepFlow reference does (it only prints the overflow) -- for reproducing
  // the paper's comparisons, never for recommendations.
  bool check_memory = true;
  // The profile's name.
  std::string software;
  // Graphs shared with the other models of the same workload and options (a design
  // evaluator's, across the splits a search visits); null: each model keeps its own.
  std::shared_ptr<GraphCache> graphs;
  [[nodiscard]] static TrainingOptions from(const SoftwareProfile& s) {
    TrainingOptions o;
    static_cast<StackChoices&>(o) = s;
    o.software = s.name;
    return o;
  }
};

// The graph choices the software profile makes (kernels, precision, recomputation style) as a
// whole-model partition; strategies add their tensor, sequence, context and expert splits.
[[nodiscard]] GptPartition software_partition(const TrainingOptions& o, DataType precision);

class GptTraining {
 public:
  // `peak_flops`: one device's dense peak (MFU's denominator).
  GptTraining(GptSpec spec, PerfMachine machine, SystemGraph system, Throughput peak_flops,
              TrainingOptions options = {});
  // The strategy must be valid for the spec and the system's device count (check_strategy).
  [[nodiscard]] TrainingResult evaluate(const Strategy& s);
  // The same into `r`, reusing its storage: no allocation once warm (the memo filled, r's
  // vectors sized).
  void evaluate(const Strategy& s, TrainingResult& r);
  // A lower bound of evaluate(s).iteration_time for a strategy that fits in memory
  // (iteration_lower_bound: the stages' passes without the pipeline simulation).
  [[nodiscard]] Time lower_bound(const Strategy& s);
  // `s` evaluated into r, and, when feasible, its iteration as a timeline (timeline.hpp).
  [[nodiscard]] Timeline timeline(const Strategy& s, TrainingResult& r);
  // One tensor-parallel layer's forward, backward (recomputation included) and update on one
  // device for the strategy's tp, sp, recompute and micro-batch (Korthikanti's Table 4 unit).
  [[nodiscard]] const StageTimes& layer_times(const Strategy& s) {
    return parts(s, 0).layer;
  }
  // That layer's kernels as timed (the first stage's placement), with the graph they index:
  // what `eval --all-kernels` shows for a distributed evaluation.
  struct LayerKernels {
    std::shared_ptr<const ComputeGraph> graph;
    std::vector<KernelSpan> spans;
  };
  [[nodiscard]] LayerKernels layer_kernels(const Strategy& s);
  // With a forwarding dispatcher (TrainingOptions::forwarded_dispatch): the share of a flat
  // all-to-all's scale-out copies the expert group's dispatch and combine send, a token's
  // distinct remote domains over its top_k copies; 1 otherwise.
  [[nodiscard]] double dispatch_cross_share(const GroupPlacement& expert) const;
  // With TrainingOptions::overlap_expert_comm: the share of pipeline stage `stage`'s
  // sparse-layer passes that the schedule pairs with another micro-batch's, their expert
  // all-to-alls overlapped (the rest run them on the compute stream); 1 without the overlap.
  [[nodiscard]] double expert_paired_share(const Strategy& s, int stage,
                                           std::int64_t micro_batches) const;
  [[nodiscard]] const GptSpec& spec() const { return spec_; }
  [[nodiscard]] const TrainingOptions& options() const { return options_; }
  [[nodiscard]] Bytes memory_capacity() const {
    return timer_.machine().main_memory.capacity;
  }
  [[nodiscard]] const SystemGraph& system() const { return system_; }

 private:
  // One layer of each kind (a mixture of experts' leading dense layers apart: dense_layer),
  // the embedding and the head, each timed alone.
  struct Parts {
    StageTimes layer, dense_layer, embedding, head;
    // A sparse layer's passes with its expert all-to-alls on the compute stream: what a pass
    // the schedule cannot pair with another micro-batch's runs (TrainingOptions::
    // overlap_expert_comm; equal to `layer` without it).
    StageTimes layer_unpaired;
    double layer_parameters = 0.0, dense_layer_parameters = 0.0, embedding_parameters = 0.0,
           head_parameters = 0.0;
    // Of those, the trained ones (all, or LoRA's adapters): gradients reduced, states updated.
    double layer_trained = 0.0, dense_layer_trained = 0.0, embedding_trained = 0.0,
           head_trained = 0.0;
  };
  // The tensor, data and pipeline groups' placements, and the data group's while it shares
  // the ports with the tensor and pipeline groups (see placements() in the source). `id`:
  // 0 without ZeRO-3; 1 and 2 the two orders ZeRO-3 chooses from. With context parallelism
  // the data group is Megatron's data-context group (dp·cp members: gradients and optimizer
  // shards), and the context group its first cp members (the key/value ring).
  struct Placements {
    Mapping mapping;
    GroupPlacement data_shared;
    GroupPlacement context;
    GroupPlacement expert;  // the expert group: ep members of the data group, after cp
    // The expert-data-parallel group: the dp·cp/ep ranks holding the same experts (every
    // cp·ep-th member of the data group), over which the experts' gradients are reduced.
    GroupPlacement expert_data;
  };
  const Parts& parts(const Strategy& s, int id);
  // The graph cache's part numbers.
  enum class PartKind { kLayer, kDenseLayer, kEmbedding, kHead, kLayerUnpaired };
  // One part's graph for the strategy's shape (built once, shared through options_.graphs).
  std::shared_ptr<const ComputeGraph> part_graph(const Strategy& s, PartKind kind, int layers,
                                                 int first_layer, bool embedding, bool head);
  // The collectives' times on a placement's groups.
  [[nodiscard]] PlacedComm placed_comm(const Placements& pl) const;
  // The share of each tensor-parallel collective hidden (chunked, or the profile's fraction).
  [[nodiscard]] double tensor_overlap(const Strategy& s) const;
  // What a second of a collective of the group overlapping compute costs it: the SMs it
  // holds (collective_contention of collective_sms) or, for a group within the scale-up
  // domain, at least that tier's measured contention (PerfMachine::scale_up_contention).
  [[nodiscard]] double contention(const GroupPlacement& group) const;
  // The same for the tensor group's collectives: the SMs' share alone when they are chunked.
  [[nodiscard]] double tensor_comm_contention(const GroupPlacement& group) const;
  const Placements& placements(const Strategy& s, int id);
  // Fills r's timing (iteration, breakdown, ...) with placements `id`.
  void time_iteration(const Strategy& s, int id, TrainingResult& r);
  // A quantization recipe the device cannot run (FP4 without FP4 units; MXFP8 and NVFP4
  // without matrix units that apply block scales): infeasible, with the reason.
  bool reject_if_unsupported(TrainingResult& r) const;
  // The iteration's input (input_) for placements `id`. `timing_only`: the chunks' times and
  // sends alone (what iteration_lower_bound reads), without the energy accounting and the
  // step's collectives.
  void build_input(const Strategy& s, int id, std::int64_t micro_batches,
                   bool timing_only = false);
  // ZeRO-3's collectives per FSDP unit (embedding, layer, dense layer, head), the same for
  // every chunk of an iteration: the parameter gather and the gradient reduce-scatter, and the
  // bytes each sends per tier. A sparse layer's routed experts gather and reduce-scatter over
  // the expert-data-parallel group, the rest over the data group.
  struct ShardedUnit {
    Time gather, scatter;
    std::array<Bytes, kMaxTiers> gather_bytes{}, scatter_bytes{};
  };
  struct ShardedUnits {
    ShardedUnit embedding, layer, dense_layer, head;
    double contention = 0.0;  // of the data group's collectives (contention)
  };
  // A sparse and a dense layer's linear weights gathered quantized (Megatron-Core's
  // --fp8-param-gather: MemoryModel::quantized_parameters), routed experts' included, and the
  // bytes each moves; zeros without.
  struct QuantizedWeights {
    double layer = 0.0, dense_layer = 0.0;
    Bytes bytes;
  };
  [[nodiscard]] QuantizedWeights quantized_weights(const Strategy& s) const;
  [[nodiscard]] ShardedUnits sharded_units(const Parts& pt, const GroupPlacement& data,
                                           const GroupPlacement& experts, double layer_experts,
                                           const QuantizedWeights& quantized,
                                           bool timing_only) const;
  // ZeRO-3: the chunk's forward and backward with each unit's parameter gathers and gradient
  // reduce-scatters (sharded_pass.hpp), launch latency excluded. `dense` of the chunk's
  // `layers` are leading dense layers (a mixture of experts').
  void add_sharded_passes(const Parts& pt, const ShardedUnits& u, int layers, int dense,
                          bool embedding, bool head, bool timing_only, ChunkCosts& c) const;

  GptSpec spec_;
  KernelTimer timer_;
  SystemGraph system_;
  Throughput peak_;
  // The pace of the job's slowest device (PerfMachine::job_pace): every strategy runs on all
  // of the system's devices (experts are placed over the data-parallel ranks, not beside them).
  double pace_ = 1.0;
  TrainingOptions options_;
  IterationInput input_;       // time_iteration's, reused across evaluations
  std::vector<StageSpan> spans_;  // build_input's layers per model chunk, reused
  int timed_ = 0;              // the placements id of the last evaluation's result
  TrainingResult other_;       // ZeRO-3's second placement order, reused
  void trim_memos();
  std::map<std::tuple<int, int, int, int, int, int, int, int, int, int>, Parts> parts_;
  // The parts' graphs, which depend neither on the placements (dp, pp, the ZeRO-3 order) nor
  // on the micro-architecture: per (tp, sp, recompute, micro-batch, cp, ep, part, ulysses),
  // timed again for each placement (options_.graphs, or the model's own).
  std::map<std::tuple<int, int, int, int, int, int, int>, Placements> placements_;
};

}  // namespace pathfinder
