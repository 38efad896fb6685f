#include "engine/train/stage_times.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace pathfinder {
namespace {

// max by value: std::max returns a reference, which keeps the chain from one kernel's end to
// the next one's start in memory.
Time later(Time a, Time b) { return a < b ? b : a; }

// One call's buffers, per thread: once sized, a call allocates nothing.
struct Scratch {
  std::vector<Time> end, ring;
  // Per timing class (ComputeGraph::timing_class), timed on its first kernel.
  std::vector<KernelTime> kernel;
  std::vector<Time> comm;
  std::vector<std::array<Bytes, kMaxTiers>> link;
};

// One pass's kernels in graph order on the two streams. Its state lives in locals, so the
// chain from one kernel's end to the next one's start stays in registers.
PassTimes time_pass(const ComputeGraph& g, int p, Scratch& scratch, Time dispatch, Time launch,
                    double comm_overlap) {
  PassTimes pt;
  Activity a;
  // The host's next issue time, the two streams' free times.
  Time issue, compute_free, comm_free;
  std::vector<Time>& end = scratch.end;
  std::vector<Time>& ring = scratch.ring;  // a ring's time, until its consumer takes it
  for (const KernelId i : g.pass_kernels(p)) {
    const Kernel& k = g.kernels()[i];
    const std::uint32_t c = g.timing_class(i);
    Time ready;  // inputs from an earlier pass count as present
    for (const KernelId d : k.deps) {
      if (g.pass(d) == p) ready = later(ready, end[d]);
    }
    if (k.comm) a.add_link_bytes(scratch.link[c]);
    if (k.comm && k.comm->ring_steps > 0) {
      // Pipelined with its consumer: timed there (below); its own inputs pass through.
      ring[i] = scratch.comm[c];
      end[i] = ready;
      continue;
    }
    if (k.comm && k.comm->overlapped) {
      const Time t = scratch.comm[c];
      const Time start = later(comm_free, ready);
      end[i] = comm_free = start + t;
      pt.hidden_comm += t;
      pt.span = later(pt.span, end[i]);
      continue;
    }
    Time t;
    if (k.comm) {
      t = scratch.comm[c];
    } else {
      const KernelTime& kt = scratch.kernel[c];
      t = kt.device;
      a.core += kt.core_energy;
      a.on_chip += kt.on_chip_energy;
      a.main_memory += kt.main_memory_energy;
      if (t > Time{}) {
        const Power power = kt.energy() / t;
        if (a.peak_power < power) a.peak_power = power;
      }
    }
    if (k.comm && comm_overlap > 0.0) {
      pt.hidden_comm += comm_overlap * t;
      t *= 1.0 - comm_overlap;
    }
    // A ring of n steps feeding this kernel: its first block works on local data while step 1
    // moves, block j on what step j brought, so the kernel's other n/(n + 1) of the work covers
    // the transfers and only the excess shows (Liu et al. 2023, Ring Attention, §3).
    Time exposed_ring;
    for (const KernelId d : k.deps) {
      if (ring[d] <= Time{}) continue;
      const auto& rc = *g.kernels()[d].comm;
      const double n = rc.ring_steps;
      exposed_ring = later(Time{}, ring[d] - t * n / (n + 1.0));
      pt.hidden_comm += ring[d] - exposed_ring;
      pt.exposed_comm += exposed_ring;
    }
    // Collectives are enqueued by the same host thread but cost it little (a NCCL call) next to
    // a framework operator; only compute kernels pace the host.
    const Time host_ready = issue + launch;
    if (!k.comm) issue += dispatch;
    ++pt.kernels;
    const Time free = later(compute_free, ready);
    const Time start = later(free, host_ready);
    if (host_ready > free) pt.host_stall += host_ready - free;
    end[i] = compute_free = start + t + exposed_ring;
    if (k.comm) {
      pt.exposed_comm += t;
    } else {
      pt.compute += t;
    }
    pt.span = later(pt.span, end[i]);
  }
  pt.activity = a;
  return pt;
}

}  // namespace

StageTimes stage_times(const ComputeGraph& g, KernelTimer& timer, const CommTimes& comm,
                       double comm_overlap) {
  const HostSpec& host = timer.machine().host;
  thread_local Scratch scratch;
  // end[] is written before it is read (a dependency precedes its kernel in the same pass);
  // ring[] is read for every dependency, so it starts clear.
  scratch.end.resize(g.size());
  scratch.ring.assign(g.size(), Time{});
  const std::size_t classes = g.timing_classes();
  scratch.kernel.resize(classes);
  scratch.comm.resize(classes);
  scratch.link.resize(classes);
  // Each class timed once, on its first kernel: the timers are pure functions of it.
  for (std::uint32_t c = 0; c < classes; ++c) {
    const Kernel& k = g.kernel(g.class_first(c));
    if (k.comm) {
      scratch.comm[c] = comm.time(*k.comm);
      scratch.link[c] = comm.link_bytes(*k.comm);
    } else {
      scratch.kernel[c] = timer.time(k);
    }
  }
  StageTimes out;
  const Time dispatch = host.training_dispatch, launch = host.launch_latency;
  out.forward = time_pass(g, 0, scratch, dispatch, launch, comm_overlap);
  out.backward = time_pass(g, 1, scratch, dispatch, launch, comm_overlap);
  out.update = time_pass(g, 2, scratch, dispatch, launch, comm_overlap);
  return out;
}

}  // namespace pathfinder
