// Writers for one workload timed on one device (`pathfinder eval`): JSON, CSV and a human table.
// Every number carries its unit in its key or column name (device_s, flops_per_s).
//
// Kernel figures are per execution of the graph: one micro-batch's forward and backward
// kernels and the update kernels of one optimizer step; start_s/end_s are GraphTiming's, within
// the kernel's stream (the micro-batch's, or the update's). Totals are GraphTiming's as
// graph_timing.hpp defines them, or a training model's iteration (IterationFigures). "Peak" is the MCU arrays' peak FLOP/s (MicroArch core.peak,
// what `pathfinder arch` prints), before the template's core.max_utilization derating that
// the timer itself uses (reported as matrix_flops_per_s); intensity is FLOP per main-memory
// byte of the timed plan.
//
// CSV: one row per kernel after one header line, nothing else (a rectangular table for
// spreadsheets and pandas); the totals are in the JSON and the table only.
//
// Table: kernels whose names differ only by the layer prefix `l<N>.` and the LSTM step prefix
// `t<N>.` share one row (name `t*.l*.cell.fwd`, with their count and summed time), in graph
// order of first occurrence; all_kernels lists every kernel instead.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/arch/micro_arch.hpp"
#include "engine/graph/workload.hpp"
#include "engine/perf/graph_timing.hpp"
#include "engine/perf/kernel_timer.hpp"

namespace pathfinder {

[[nodiscard]] nlohmann::ordered_json to_json(const MicroArch& a, const Workload& w,
                                             const GraphTiming& g, const KernelTimer& t);

// The iteration as a training model times it (train/training_model.hpp: `eval` reports the
// kernels of the one-device strategy under that model's iteration, not the stream's). The
// report's totals then take these figures and leave out the stream's spans; not feasible (the
// strategy does not fit in memory): times and rates null, as infeasible_json.
struct IterationFigures {
  bool feasible = true;
  Time iteration_time;
  Time device_busy;  // the device computes over the iteration
};
[[nodiscard]] nlohmann::ordered_json to_json(const MicroArch& a, const Workload& w,
                                             const GraphTiming& g, const KernelTimer& t,
                                             const IterationFigures& iteration);
[[nodiscard]] std::string format_table(const MicroArch& a, const Workload& w,
                                       const GraphTiming& g, const KernelTimer& t,
                                       const IterationFigures& iteration, bool all_kernels);
[[nodiscard]] std::string to_csv(const Workload& w, const GraphTiming& g, const KernelTimer& t);
[[nodiscard]] std::string format_table(const MicroArch& a, const Workload& w,
                                       const GraphTiming& g, const KernelTimer& t,
                                       bool all_kernels = false);

// An infeasible micro-architecture is a result, not an error: the same heading with
// `feasible: false` and the generator's reason as `reason`, no kernels, and totals whose times
// and rates are null (the workload's FLOP count stays). The CSV is the header line
// followed by one `# infeasible: <reason>` line.
[[nodiscard]] nlohmann::ordered_json infeasible_json(const MicroArch& a, const Workload& w);
[[nodiscard]] std::string infeasible_csv(const MicroArch& a);
[[nodiscard]] std::string format_infeasible_table(const MicroArch& a, const Workload& w);

// One GEMM workload's kernel timed as a per-call benchmark measures it (`eval --isolated`; the
// GEMM calibration, tests/perf/test_gemm_model.cpp): the host issues the call, the device runs
// it, the host waits. call = host.dispatch + host.launch_latency + device + host.synchronize
// (isolated_time, graph_timing.hpp); no training host costs (training_dispatch, iteration,
// input transfer). The timer should run at burst throughput (PerfMode::kBurst): one call does
// not sustain a training run's clocks. The workload must be a GEMM.
[[nodiscard]] nlohmann::ordered_json isolated_call_json(const MicroArch& a, const Workload& w,
                                                        KernelTimer& t);
[[nodiscard]] std::string isolated_call_csv(const Workload& w, KernelTimer& t);
[[nodiscard]] std::string format_isolated_call(const MicroArch& a, const Workload& w,
                                               KernelTimer& t);

// The table's grouping. "l3.qkv.fwd" -> "l*.qkv.fwd", "t5.l1.cell.fwd" -> "t*.l*.cell.fwd",
// "logits.fwd" unchanged: leading `t<digits>.` and `l<digits>.` segments become `t*.`/`l*.`.
[[nodiscard]] std::string kernel_group_name(std::string_view kernel_name);

struct KernelGroup {
  std::string name;                // kernel_group_name of its members
  KernelId first = 0;              // id of the first member (the groups' order)
  int count = 0;
  Phase phase = Phase::kForward;   // of the first member
  KernelKind kind = KernelKind::kElementwise;
  std::optional<GemmShape> shape;  // when every member is a GEMM of this one shape
  std::optional<int> binding;      // when every member binds on the same level; else "mixed"
  Time device;                     // summed over the members (one execution of the graph)
  Time iteration_device;           // per iteration: forward and backward members count once
                                   // per micro-batch, update members once
  Flops flops;                     // summed
  Bytes main_memory_bytes;         // summed
  [[nodiscard]] Throughput achieved() const {
    return device > Time{} ? flops / device : Throughput{};
  }
  // FLOP per byte (no unit type of its own).
  [[nodiscard]] double intensity() const {
    return main_memory_bytes > Bytes{} ? flops.si() / main_memory_bytes.si() : 0.0;
  }
};
// Groups of the graph's kernels in order of first occurrence; with all_kernels one per kernel.
[[nodiscard]] std::vector<KernelGroup> group_kernels(const Workload& w, const GraphTiming& g,
                                                     bool all_kernels = false);

}  // namespace pathfinder
