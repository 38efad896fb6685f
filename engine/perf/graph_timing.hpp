// One training iteration of a workload on one device, kernel by kernel (issue 3): device time
// of every kernel plus the host's part (perfnetv2's pre/post phases). Kernels run in id order
// on one stream; the host issues one per `dispatch` and the device starts a kernel
// `launch_latency` after its issue or when the previous one ends, whichever is later, so small
// kernels become host-bound. Distributed scheduling is issue 4's.
//
// The kernel-level view: per-kernel times and the stream they form. The training iteration
// `eval`, the searches and the studies report is the training model's
// (train/training_model.hpp; on one device, the trivial strategy); iteration_time here is
// the lone stream's, which only perf_report's own totals use when given no iteration.
#pragma once

#include <array>
#include <vector>

#include "engine/graph/workload.hpp"
#include "engine/perf/kernel_timer.hpp"

namespace pathfinder {

struct KernelRun {
  KernelTime time;
  double start = 0.0;  // s from the start of the micro-batch's stream
  double end = 0.0;
};

struct PhaseTotals {
  double device = 0.0;  // sum of device times of the phase's kernels (one micro-batch)
  double flops = 0.0;
  int kernels = 0;
};

struct GraphTiming {
  std::vector<KernelRun> kernels;            // per kernel of the graph, in id order
  std::array<PhaseTotals, 4> phases{};       // forward, backward data, backward weight, update
  double micro_batch_span = 0.0;             // one micro-batch's forward and backward, stream
  double update_span = 0.0;                  // the optimizer kernels, stream
  double input_transfer = 0.0;               // host-to-device of one micro-batch's inputs
  double iteration_time = 0.0;               // all micro-batches, update, host fixed costs
  double device_busy = 0.0;                  // sum of device times over the iteration
  double flops = 0.0;                        // per iteration
  // Fraction of the iteration the device computes (1 - host and launch stalls).
  [[nodiscard]] double device_utilization() const {
    return iteration_time > 0.0 ? device_busy / iteration_time : 0.0;
  }
};

// A kernel timed on its own: host issues it, waits for it (what a per-call benchmark measures).
[[nodiscard]] double isolated_time(const HostSpec& host, const KernelTime& t);

[[nodiscard]] GraphTiming time_workload(const Workload& w, KernelTimer& timer);

}  // namespace pathfinder
