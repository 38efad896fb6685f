// Whether a strategy fits a workload and a device count (the semantic pass of design.md §4:
// every problem is collected, each message names the sizes and the rule).
//
// Every workload:   degrees ≥ 1, micro_batch ≥ 0, ZeRO stage 0..3, tp2 only with RC, vN only
//                   with interleaved; the degrees' product equals the device count.
// GPT (Megatron-LM; Narayanan et al. 2021, Korthikanti et al. 2022): split tensor only (RC/CR
//   are DeepFlow's LSTM/GEMM splits); tp divides heads, hidden, ffn and the (padded)
//   vocabulary; pp·v divides layers; dp·mb divides global_batch (dp alone when mb is 0); with sp,
//   tp divides the sequence; interleaved needs pp > 1, v ≥ 2 and micro-batches per pipeline
//   global_batch/(dp·mb) a multiple of pp (Megatron-LM's rule). The strategy's micro-batch
//   replaces the workload file's (which describes a single device).
// LSTM (DeepFlow, deepflow-reference.md §3.8): RC or CR, or tensor with tp 1 (no kernel
//   parallelism); dp divides batch and mb, when given, divides batch/dp; RC: kp1 divides the
//   rows of a micro-batch, kp2 divides 4·hidden and vocabulary (the columns of the cell and
//   softmax weights); CR: kp1 divides hidden (the inner dimension 2D or D); pipeline stages as the
//   reference: with pp > 2 the embedding and the softmax take a stage each and the pp − 2 others
//   share the layers, else the pp stages do; the layers must split evenly. No sp, recompute or
//   interleaving (transformer techniques).
// GEMM: dp = pp = 1; RC: kp1 divides m, kp2 divides n; CR: kp1 divides k; tensor only with
//   tp 1; no sp, recompute or interleaving; micro_batch is ignored.
#pragma once

#include <vector>

#include "engine/core/error.hpp"
#include "engine/parallel/strategy.hpp"

namespace pathfinder {

// Completes a strategy as written (PartialStrategy) for a workload and a device count; devices
// 0 means the strategy's own product. A micro-batch size not written takes a GPT workload's
// micro_batch (other workloads have none: Strategy's default stays). A dp not written takes
// devices / (tp·tp2·pp), or stays 1 without a device count. Throws ConfigError at
// `devices_loc` when devices is not a multiple of tp·tp2·pp, or when a written dp makes the
// degrees' product differ from devices; each message names the numbers.
[[nodiscard]] Strategy complete_strategy(const PartialStrategy& p, const WorkloadSpec& w,
                                         int devices, const SourceLoc& devices_loc);

// Every problem, each at `where` (the YAML node the strategy came from, or strategy_source()).
[[nodiscard]] std::vector<Diagnostic> check_strategy(const Strategy& s, const WorkloadSpec& w,
                                                     int devices,
                                                     const SourceLoc& where = strategy_source());
// The same rules without building messages: no allocation, for enumeration and asserts.
[[nodiscard]] bool is_valid_strategy(const Strategy& s, const WorkloadSpec& w, int devices);
// Throws ConfigError listing every problem check_strategy finds.
void validate_strategy(const Strategy& s, const WorkloadSpec& w, int devices,
                       const SourceLoc& where = strategy_source());

}  // namespace pathfinder
