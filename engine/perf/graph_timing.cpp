#include "engine/perf/graph_timing.hpp"

#include <algorithm>
#include <variant>

namespace pathfinder {
namespace {

// Token ids and labels of one micro-batch as int32 (what a data loader hands the device).
double input_bytes(const WorkloadSpec& spec) {
  constexpr double kIdBytes = 4.0;
  return std::visit(
      [](const auto& s) -> double {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, GptSpec>) {
          return 2.0 * kIdBytes * static_cast<double>(s.micro_batch * s.sequence);
        } else if constexpr (std::is_same_v<S, LstmSpec>) {
          return 2.0 * kIdBytes * static_cast<double>(s.batch * s.sequence);
        } else {
          return 0.0;  // a lone GEMM's operands are already on the device
        }
      },
      spec);
}

// One stream over kernels [first, last): the host issues a kernel every `dispatch`, the device
// starts it `launch_latency` after its issue or when the previous kernel ends.
struct Stream {
  Time host;    // when the host issues the next kernel
  Time device;  // when the device becomes free
};

void run(const HostSpec& h, Stream& s, KernelRun& r) {
  const Time issue = s.host;
  s.host += h.training_dispatch;
  r.start = std::max(issue + h.launch_latency, s.device);
  r.end = r.start + r.time.device;
  s.device = r.end;
}

}  // namespace

Time isolated_time(const HostSpec& host, const KernelTime& t) {
  return host.dispatch + host.launch_latency + t.device + host.synchronize;
}

GraphTiming time_workload(const Workload& w, KernelTimer& timer) {
  const ComputeGraph& g = w.graph;
  const HostSpec& h = timer.machine().host;
  GraphTiming out;
  out.kernels.resize(g.size());
  // One device: the median device's pace (device_variation.hpp), as the training model's for a
  // one-device strategy.
  const double pace = timer.machine().job_pace(1);
  for (std::size_t i = 0; i < g.size(); ++i) {
    const Kernel& k = g.kernels()[i];
    out.kernels[i].time = timer.time(k);
    KernelTimer::pace(out.kernels[i].time, pace);
    PhaseTotals& p = out.phases[static_cast<std::size_t>(k.phase)];
    p.device += out.kernels[i].time.device;
    p.flops += out.kernels[i].time.flops;
    ++p.kernels;
  }
  // Forward and backward of one micro-batch, then the update, each as one stream from an idle
  // device. Later micro-batches repeat the first: the host runs ahead of a busy device, so a
  // repeat costs the larger of its device work plus launch gaps and its host issue time.
  Stream mb, up;
  Time mb_device, mb_host;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const bool update = g.kernels()[i].phase == Phase::kUpdate;
    run(h, update ? up : mb, out.kernels[i]);
    if (!update) {
      mb_device += out.kernels[i].time.device;
      mb_host += h.training_dispatch;
    }
  }
  out.micro_batch_span = mb.device;
  out.update_span = up.device;
  const Bandwidth h2d = h.host_to_device;
  out.input_transfer = h2d > Bandwidth{} ? Bytes::from_si(input_bytes(w.spec)) / h2d : Time{};
  const double repeats = static_cast<double>(std::max<std::int64_t>(w.stats.micro_batches, 1) - 1);
  const Time steady = std::max(mb_device, mb_host);
  out.iteration_time = out.input_transfer + out.micro_batch_span + repeats * steady +
                       out.update_span + h.synchronize + h.iteration;
  out.device_busy = mb_device * (repeats + 1.0) + out.phases[3].device;
  out.flops = w.stats.flops_per_iteration;
  return out;
}

}  // namespace pathfinder
