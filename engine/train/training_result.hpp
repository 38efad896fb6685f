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
  double compute = 0.0;          // the repeated layers' kernels, recomputation included
  double embedding_head = 0.0;   // embedding, final layernorm, LM head and loss kernels
  double tensor_comm = 0.0;      // tensor-parallel collectives on the compute stream
  double pipeline_comm = 0.0;    // waiting for activations and gradients of other stages
  double pipeline_bubble = 0.0;  // idle in the pipeline fill and drain
  double data_comm = 0.0;        // gradient reduction (and ZeRO gathers) not hidden
  // After the backward pass, before the step: the tied word-embedding gradients all-reduced
  // between the first and last pipeline stage, the gradient-norm and overflow-check all-reduces.
  double gradient_sync = 0.0;
  double optimizer = 0.0;        // the update step
  double host = 0.0;             // input transfer, host stalls, synchronisation, fixed costs
  // What the device did over the iteration (energy.hpp): its forward and backward kernels with
  // every byte it sent, and its optimizer step's kernels (with the tied embedding's sync).
  Activity work;
  Activity step;

  // The parts with their names, in the order reports print them.
  [[nodiscard]] std::array<std::pair<const char*, double>, 9> parts() const {
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
  [[nodiscard]] double total() const {
    return compute + embedding_head + tensor_comm + pipeline_comm + pipeline_bubble + data_comm +
           gradient_sync + optimizer + host;
  }
};

// A GEMM workload: one device's share of the distributed product (the paper's Fig. 1 unit).
struct LocalGemm {
  GemmShape shape;
  double device = 0.0;     // s, its roofline time
  double intensity = 0.0;  // FLOP per main-memory byte, as the kernel timer plans it
};

struct TrainingResult {
  bool feasible = true;
  std::string reason;                 // when infeasible: what does not fit, with the numbers
  Strategy strategy;
  double iteration_time = 0.0;        // s
  TrainingBreakdown breakdown;        // the critical stage's: stages[critical_stage]
  // Per pipeline stage (device of a pipeline), each summing to iteration_time: a stage that
  // finishes its step before the critical one waits for it, counted as pipeline_bubble.
  std::vector<TrainingBreakdown> stages;
  MemoryFootprint memory;             // the most loaded device
  double memory_capacity = 0.0;       // bytes of main memory per device
  std::int64_t micro_batches = 0;     // per pipeline
  double stage_forward = 0.0;         // the first stage, one micro-batch, s
  double stage_backward = 0.0;
  double model_flops = 0.0;           // per iteration, Megatron's count (no recomputation)
  double mfu = 0.0;                   // model FLOP/s over the devices' peak
  double tokens_per_second = 0.0;
  std::vector<double> device_busy;    // per pipeline stage, s
  EnergyReport energy;                // when feasible (TrainingModel fills it)
  CostReport cost;                    // likewise, when the template has a cost model
  int critical_stage = 0;
  std::optional<LocalGemm> local_gemm;  // GEMM workloads only
};

// `r` as a default-constructed result, keeping its vectors' and reason's storage: an evaluator
// that refills one result allocates nothing once its buffers are sized.
inline void reset_keeping_storage(TrainingResult& r) {
  std::vector<TrainingBreakdown> stages = std::move(r.stages);
  std::vector<double> busy = std::move(r.device_busy);
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
