#include "engine/train/stage_times.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace pathfinder {
namespace {

int pass_of(Phase p) {
  switch (p) {
    case Phase::kForward: return 0;
    case Phase::kBackwardData:
    case Phase::kBackwardWeight: return 1;
    case Phase::kUpdate: return 2;
  }
  return 0;
}

// One call's buffers, per thread: once sized, a call allocates nothing.
struct Scratch {
  std::vector<Time> end, ring;
  std::vector<int> pass;
  // Per timing class (ComputeGraph::timing_class), timed on its first kernel.
  std::vector<char> known;
  std::vector<KernelTime> kernel;
  std::vector<Time> comm;
  std::vector<std::array<Bytes, kMaxTiers>> link;
};

}  // namespace

StageTimes stage_times(const ComputeGraph& g, KernelTimer& timer, const CommTimes& comm,
                       double comm_overlap) {
  const HostSpec& host = timer.machine().host;
  const Time dispatch = host.training_dispatch, launch = host.launch_latency;
  StageTimes out;
  std::array<PassTimes*, 3> passes{&out.forward, &out.backward, &out.update};
  // Per pass: the host's next issue time, the two streams' free times.
  std::array<Time, 3> issue{}, compute_free{}, comm_free{};
  thread_local Scratch scratch;
  std::vector<Time>& end = scratch.end;
  std::vector<int>& pass = scratch.pass;
  std::vector<Time>& ring = scratch.ring;  // a ring's time, until its consumer takes it
  end.assign(g.size(), Time{});
  pass.assign(g.size(), 0);
  ring.assign(g.size(), Time{});
  scratch.known.assign(g.timing_classes(), 0);
  scratch.kernel.resize(g.timing_classes());
  scratch.comm.resize(g.timing_classes());
  scratch.link.resize(g.timing_classes());
  for (std::size_t i = 0; i < g.size(); ++i) {
    const Kernel& k = g.kernels()[i];
    // Each class timed once, on its first kernel: the timers are pure functions of it.
    const std::uint32_t c = g.timing_class(static_cast<KernelId>(i));
    if (scratch.known[c] == 0) {
      scratch.known[c] = 1;
      if (k.comm) {
        scratch.comm[c] = comm.time(*k.comm);
        scratch.link[c] = comm.link_bytes(*k.comm);
      } else {
        scratch.kernel[c] = timer.time(k);
      }
    }
    const int p = pass_of(k.phase);
    const auto pu = static_cast<std::size_t>(p);
    pass[i] = p;
    PassTimes& pt = *passes[pu];
    Time ready;  // inputs from an earlier pass count as present
    for (const KernelId d : k.deps) {
      if (pass[d] == p) ready = std::max(ready, end[d]);
    }
    if (k.comm) pt.activity.add_link_bytes(scratch.link[c]);
    if (k.comm && k.comm->ring_steps > 0) {
      // Pipelined with its consumer: timed there (below); its own inputs pass through.
      ring[i] = scratch.comm[c];
      end[i] = ready;
      continue;
    }
    if (k.comm && k.comm->overlapped) {
      const Time t = scratch.comm[c];
      const Time start = std::max(comm_free[pu], ready);
      end[i] = comm_free[pu] = start + t;
      pt.hidden_comm += t;
      pt.span = std::max(pt.span, end[i]);
      continue;
    }
    Time t;
    if (k.comm) {
      t = scratch.comm[c];
    } else {
      const KernelTime& kt = scratch.kernel[c];
      t = kt.device;
      Activity& a = pt.activity;
      a.core += kt.core_energy;
      a.on_chip += kt.on_chip_energy;
      a.main_memory += kt.main_memory_energy;
      if (t > Time{}) a.peak_power = std::max(a.peak_power, kt.energy() / t);
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
      exposed_ring = std::max(Time{}, ring[d] - t * n / (n + 1.0));
      pt.hidden_comm += ring[d] - exposed_ring;
      pt.exposed_comm += exposed_ring;
    }
    // Collectives are enqueued by the same host thread but cost it little (a NCCL call) next to
    // a framework operator; only compute kernels pace the host.
    const Time host_ready = issue[pu] + launch;
    if (!k.comm) issue[pu] += dispatch;
    ++pt.kernels;
    const Time start = std::max({compute_free[pu], ready, host_ready});
    if (host_ready > std::max(compute_free[pu], ready)) {
      pt.host_stall += host_ready - std::max(compute_free[pu], ready);
    }
    end[i] = compute_free[pu] = start + t + exposed_ring;
    (k.comm ? pt.exposed_comm : pt.compute) += t;
    pt.span = std::max(pt.span, end[i]);
  }
  return out;
}

}  // namespace pathfinder
