// Per-device memory of one training iteration under a strategy (issue 4): weights, gradients,
// optimizer state, stored activations and workspace, for the most loaded device.
//
// Model states per parameter (Rajbhandari et al. 2020, "ZeRO", §3.1), p bytes per element of
// the workload's precision:
//   mixed precision (fp16, bf16, fp8)  weights p, gradients p, optimizer: fp32 master copy 4
//                                      + Adam's momentum and variance 4 + 4 (SGD: the master 4)
//                                      -> 2 + 2 + 12 = 16 B for fp16 Adam, ZeRO's K = 12
//   fp32                               weights 4, gradients 4, optimizer: Adam 8, SGD 0
// (update_cost in engine/graph/workload.hpp streams the same state.) ZeRO stage 1 divides the
// optimizer state by dp, stage 2 the gradients too, stage 3 the weights too.
//
// Activations follow Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
// Transformer Models", §4, Table 2); see memory_footprint.cpp for every term. Workspace is what
// the backward pass needs beside the stored activations (see gpt_stage_memory_footprint).
//
// Functions take a strategy that passes is_valid_strategy for its own device count (PF_ASSERT).
#pragma once

#include <cstdint>

#include "engine/core/units.hpp"
#include "engine/parallel/memory_model.hpp"
#include "engine/parallel/strategy.hpp"

namespace pathfinder {

struct MemoryFootprint {
  Bytes weights, gradients, optimizer, activations, workspace;
  // Forward passes whose activations the device holds at its peak; with the interleaved
  // schedule, model-chunk forward passes (each layers/(pp·v) layers).
  int in_flight_micro_batches = 1;
  int stage = 0;  // the pipeline stage the numbers are for
  [[nodiscard]] Bytes total() const;
};

// Weights, gradients and optimizer state of `parameters` on one device of a dp-way data-parallel
// group at a ZeRO stage (the other fields zero); `mm` adds what the software stack keeps.
[[nodiscard]] MemoryFootprint model_state_footprint(double parameters, Optimizer o,
                                                    DataType precision, int zero, int dp,
                                                    const MemoryModel& mm = {});

// Forward passes a pipeline stage holds at its peak with m micro-batches per pipeline:
//   GPipe        m (every forward runs before the first backward; Huang et al. 2019)
//   1F1B         min(pp − stage, m) (Narayanan et al. 2021, PipeDream-Flush)
//   interleaved  min(2·(pp − 1 − stage) + (v − 1)·pp + 1, m·v) model-chunk forwards:
//                Megatron-LM's warm-up count plus the one forward of the steady state; on stage
//                0 that is pp·v + pp − 1 chunks of layers/(pp·v) layers = pp·(1 + (pp−1)/(pp·v))
//                stages' worth of layers, Korthikanti et al.'s §4.2.3 figure.
[[nodiscard]] int in_flight_micro_batches(const Strategy& s, std::int64_t micro_batches, int stage);

// GPT. The strategy's micro-batch replaces the workload's (mb0: global_batch/dp).
// Activation bytes of one transformer layer for one micro-batch of b sequences.
// `linear_input_bytes` (MemoryModel's; 0: the workload's precision): the linear layers' saved
// inputs at that size (the norms' outputs before the QKV and first MLP GEMMs, the MLP's
// activation output, the experts' rows and activation outputs, MLA's normalised latents; the
// output projection's cast beside the attention output the attention core keeps).
[[nodiscard]] Bytes gpt_layer_activations(const GptSpec& w, const Strategy& s, std::int64_t b,
                                          double linear_input_bytes = 0.0);
// Parameters a device of pipeline stage `stage` holds (one tensor-parallel shard), its layers
// as `split` places them (layer_split.hpp).
[[nodiscard]] std::int64_t gpt_stage_parameters(const GptSpec& w, const Strategy& s, int stage,
                                                LayerSplit split = LayerSplit::kEven);
[[nodiscard]] MemoryFootprint gpt_stage_memory_footprint(const GptSpec& w, const Strategy& s,
                                                         int stage, const MemoryModel& mm = {});
// The most loaded device: the larger of the first stage (embedding, most in-flight
// micro-batches) and the last (output head and fp32 logits); middle stages hold less than the
// first.
[[nodiscard]] MemoryFootprint gpt_memory_footprint(const GptSpec& w, const Strategy& s,
                                                   const MemoryModel& mm = {});

// LSTM LM (DeepFlow's model), simple: parameters as the reference places them (with pp > 2 the
// embedding and the softmax take a stage each), weights split by the kernel split (RC: kp2
// column shards of each weight; CR: kp1 row shards), activations of all S steps split over
// kp1·kp2 devices: per layer and step [x; h] (2D), the four gates (4D) and the cell state (D);
// per softmax step its input (D) and probabilities (V); no workspace. The most loaded stage.
[[nodiscard]] MemoryFootprint lstm_memory_footprint(const LstmSpec& w, const Strategy& s);

// GEMM (forward only): B is the weight, A and C activations; RC holds A/kp1, B/kp2 and
// C/(kp1·kp2), CR holds A/kp1, B/kp1 and the full C of partial sums before its reduce-scatter.
[[nodiscard]] MemoryFootprint gemm_memory_footprint(const GemmSpec& w, const Strategy& s);

[[nodiscard]] MemoryFootprint memory_footprint(const WorkloadSpec& w, const Strategy& s,
                                               const MemoryModel& mm = {});

}  // namespace pathfinder
