// What a distributed training evaluation reports (issue 4).
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <optional>
#include <string>
#include <vector>

#include "engine/parallel/memory_footprint.hpp"
#include "engine/parallel/strategy.hpp"
#include "engine/graph/compute_graph.hpp"
#include "engine/train/activity.hpp"
#include "engine/train/cost_report.hpp"
#include "engine/train/energy_report.hpp"

namespace pathfinder {

// Where one device's iteration goes; the parts add up to the iteration time.
struct TrainingBreakdown {
  Time compute;          // the repeated layers' kernels, recomputation included
  Time embedding_head;   // embedding, final layernorm, LM head and loss kernels
  Time tensor_comm;      // tensor-parallel collectives on the compute stream
  Time pipeline_comm;    // waiting for activations and gradients of other stages
  Time pipeline_bubble;  // idle in the pipeline fill and drain
  Time data_comm;        // gradient reduction (and ZeRO gathers) not hidden
  // After the backward pass, before the step: the tied word-embedding gradients all-reduced
  // between the first and last pipeline stage, the gradient-norm and overflow-check all-reduces.
  Time gradient_sync;
  Time optimizer;        // the update step
  Time host;             // input transfer, host stalls, synchronisation, fixed costs
  // What the device did over the iteration (energy.hpp): its forward and backward kernels with
  // every byte it sent, and its optimizer step's kernels (with the tied embedding's sync).
  Activity work;
  Activity step;

  // The parts with their names, in the order reports print them.
  [[nodiscard]] std::array<std::pair<const char*, Time>, 9> parts() const {
    return {{{"compute", compute},
             {"embedding_head", embedding_head},
             {"tensor_comm", tensor_comm},
             {"pipeline_comm", pipeline_comm},
             {"pipeline_bubble", pipeline_bubble},
             {"data_comm", data_comm},
             {"gradient_sync", gradient_sync},
             {"optimizer", optimizer},
             {"host", host}}};
  }
  [[nodiscard]] Time total() const {
    return compute + embedding_head + tensor_comm + pipeline_comm + pipeline_bubble + data_comm +
           gradient_sync + optimizer + host;
  }
};

// A GEMM workload: one device's share of the distributed product (the paper's Fig. 1 unit).
struct LocalGemm {
  GemmShape shape;
  Time device;             // its roofline time
  double intensity = 0.0;  // FLOP per main-memory byte, as the kernel timer plans it
};

struct TrainingResult {
  bool feasible = true;
  std::string reason;                 // when infeasible: what does not fit, with the numbers
  Strategy strategy;
  Time iteration_time;
  TrainingBreakdown breakdown;        // the critical stage's: stages[critical_stage]
  // Per pipeline stage (device of a pipeline), each summing to iteration_time: a stage that
  // finishes its step before the critical one waits for it, counted as pipeline_bubble.
  std::vector<TrainingBreakdown> stages;
  MemoryFootprint memory;             // the most loaded device
  Bytes memory_capacity;              // main memory per device
  std::int64_t micro_batches = 0;     // per pipeline
  Time stage_forward;                 // the first stage, one micro-batch
  Time stage_backward;
  Flops model_flops;                  // per iteration, Megatron's count (no recomputation)
  double mfu = 0.0;                   // model FLOP/s over the devices' peak
  double tokens_per_second = 0.0;
  // The job's slowest device's pace against the template's rate (engine/perf/
  // device_variation.hpp): below 1 above the size the rate was fitted on, 1 without variation.
  double job_pace = 1.0;
  std::vector<Time> device_busy;      // per pipeline stage
  EnergyReport energy;                // when feasible (TrainingModel fills it)
  CostReport cost;                    // likewise, when the template has a cost model
  int critical_stage = 0;
  std::optional<LocalGemm> local_gemm;  // GEMM workloads only
};

// `r` as a default-constructed result, keeping its vectors' and reason's storage: an evaluator
// that refills one result allocates nothing once its buffers are sized.
inline void reset_keeping_storage(TrainingResult& r) {
  std::vector<TrainingBreakdown> stages = std::move(r.stages);
  std::vector<Time> busy = std::move(r.device_busy);
  std::string reason = std::move(r.reason);
  r = TrainingResult{};
  stages.clear();
  busy.clear();
  reason.clear();
  r.stages = std::move(stages);
  r.device_busy = std::move(busy);
  r.reason = std::move(reason);
}

// Marks `r` infeasible, with the numbers, when its memory footprint exceeds its capacity and
// `check` is on; returns whether it did.
bool reject_if_out_of_memory(TrainingResult& r, bool check);

}  // namespace pathfinder
