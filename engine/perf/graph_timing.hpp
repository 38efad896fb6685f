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
  Time start;  // from the start of the micro-batch's stream
  Time end;
};

struct PhaseTotals {
  Time device;  // sum of device times of the phase's kernels (one micro-batch)
  Flops flops;
  int kernels = 0;
};

struct GraphTiming {
  std::vector<KernelRun> kernels;            // per kernel of the graph, in id order
  std::array<PhaseTotals, 4> phases{};       // forward, backward data, backward weight, update
  Time micro_batch_span;                     // one micro-batch's forward and backward, stream
  Time update_span;                          // the optimizer kernels, stream
  Time input_transfer;                       // host-to-device of one micro-batch's inputs
  Time iteration_time;                       // all micro-batches, update, host fixed costs
  Time device_busy;                          // sum of device times over the iteration
  Flops flops;                               // per iteration
  // Fraction of the iteration the device computes (1 - host and launch stalls).
  [[nodiscard]] double device_utilization() const {
    return iteration_time > Time{} ? device_busy / iteration_time : 0.0;
  }
};

// A kernel timed on its own: host issues it, waits for it (what a per-call benchmark measures).
[[nodiscard]] Time isolated_time(const HostSpec& host, const KernelTime& t);

[[nodiscard]] GraphTiming time_workload(const Workload& w, KernelTimer& timer);

}  // namespace pathfinder
