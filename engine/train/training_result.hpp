// What a distributed training evaluation reports (issue 4).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/dist/memory_footprint.hpp"
#include "engine/dist/strategy.hpp"

namespace pathfinder {

// Where the critical device's iteration goes; the parts add up to the iteration time.
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

  [[nodiscard]] double total() const {
    return compute + embedding_head + tensor_comm + pipeline_comm + pipeline_bubble + data_comm +
           gradient_sync + optimizer + host;
  }
};

struct TrainingResult {
  bool feasible = true;
  std::string reason;                 // when infeasible: what does not fit, with the numbers
  Strategy strategy;
  double iteration_time = 0.0;        // s
  TrainingBreakdown breakdown;
  MemoryFootprint memory;             // the most loaded device
  double memory_capacity = 0.0;       // bytes of main memory per device
  std::int64_t micro_batches = 0;     // per pipeline
  double stage_forward = 0.0;         // the first stage, one micro-batch, s
  double stage_backward = 0.0;
  double model_flops = 0.0;           // per iteration, Megatron's count (no recomputation)
  double mfu = 0.0;                   // model FLOP/s over the devices' peak
  double tokens_per_second = 0.0;
  std::vector<double> device_busy;    // per pipeline stage, s
  int critical_stage = 0;
};

// Marks `r` infeasible, with the numbers, when its memory footprint exceeds its capacity and
// `check` is on; returns whether it did.
bool reject_if_out_of_memory(TrainingResult& r, bool check);

}  // namespace pathfinder
