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
  std::vector<Power> power;  // a compute class's energy over its time (0 W when it takes none)
  std::vector<Time> comm;
  std::vector<std::array<Bytes, kMaxTiers>> link;
};

// One pass's kernels in graph order on the two streams, from the graph's step program
// (ComputeGraph::pass_steps). Its state lives in locals, so the chain from one kernel's end to
// the next one's start stays in registers.
// kRecord: each kernel's span appended to `spans` (reports); the evaluation path records none.
template <bool kRecord>
PassTimes time_pass(const ComputeGraph& g, int p, Scratch& scratch, Time dispatch, Time launch,
                    double comm_overlap, std::vector<KernelSpan>* spans) {
  using Kind = ComputeGraph::StepKind;
  // Accumulated in locals, not in the returned struct: its Time fields could alias end[] and
  // would go through memory on every kernel.
  Time span, compute, exposed_comm, hidden_comm, host_stall;
  int kernels = 0;
  Activity a;
  // The host's next issue time, the two streams' free times.
  Time issue, compute_free, comm_free;
  Time* const end = scratch.end.data();
  Time* const ring = scratch.ring.data();  // a ring's time, until its consumer takes it
  const ComputeGraph::StepDep* const deps = g.step_deps().data();
  for (const ComputeGraph::PassStep& st : g.pass_steps(p)) {
    const KernelId i = st.id;
    const std::uint32_t c = st.cls;
    Time ready;  // inputs from an earlier pass count as present
    for (std::uint32_t j = st.deps_begin; j < st.deps_end; ++j) ready = later(ready, end[deps[j].id]);
    const bool comm = st.kind != Kind::kCompute;
    if (comm) a.add_link_bytes(scratch.link[c]);
    if (st.kind == Kind::kRingComm) {
      // Pipelined with its consumer: timed there (below); its own inputs pass through.
      ring[i] = scratch.comm[c];
      end[i] = ready;
      if constexpr (kRecord) spans->push_back({i, p, true, ready, ready});
      continue;
    }
    if (st.kind == Kind::kOverlappedComm) {
      const Time t = scratch.comm[c];
      const Time start = later(comm_free, ready);
      end[i] = comm_free = start + t;
      hidden_comm += t;
      span = later(span, end[i]);
      if constexpr (kRecord) spans->push_back({i, p, true, start, end[i]});
      continue;
    }
    Time t;
    if (comm) {
      t = scratch.comm[c];
    } else {
      const KernelTime& kt = scratch.kernel[c];
      t = kt.device;
      a.core += kt.core_energy;
      a.on_chip += kt.on_chip_energy;
      a.main_memory += kt.main_memory_energy;
      if (a.peak_power < scratch.power[c]) a.peak_power = scratch.power[c];
    }
    if (comm && comm_overlap > 0.0) {
      hidden_comm += comm_overlap * t;
      t *= 1.0 - comm_overlap;
    }
    // A ring of n steps feeding this kernel: its first block works on local data while step 1
    // moves, block j on what step j brought, so the kernel's other n/(n + 1) of the work covers
    // the transfers and only the excess shows (Liu et al. 2023, Ring Attention, §3).
    Time exposed_ring;
    for (std::uint32_t j = st.deps_end; j < st.rings_end; ++j) {
      const Time r = ring[deps[j].id];
      if (r <= Time{}) continue;
      const double n = deps[j].ring_steps;
      exposed_ring = later(Time{}, r - t * n / (n + 1.0));
      hidden_comm += r - exposed_ring;
      exposed_comm += exposed_ring;
    }
    // Collectives are enqueued by the same host thread but cost it little (a NCCL call) next to
    // a framework operator; only compute kernels pace the host.
    const Time host_ready = issue + launch;
    if (!comm) issue += dispatch;
    ++kernels;
    // The stream's chain from one kernel's end to the next one's start bounds this loop's
    // speed: the max with inputs and the add of a ring's excess are taken only where they
    // can change it (an empty input list leaves ready 0, no ring leaves exposed_ring 0).
    const Time free = st.deps_begin == st.deps_end ? compute_free : later(compute_free, ready);
    const Time start = later(free, host_ready);
    host_stall += later(Time{}, host_ready - free);  // adds 0 when the stream was behind
    Time finish = start + t;
    if (exposed_ring > Time{}) finish += exposed_ring;
    end[i] = compute_free = finish;
    if constexpr (kRecord) spans->push_back({i, p, false, start, end[i]});
    if (comm) {
      exposed_comm += t;
    } else {
      compute += t;
    }
  }
  PassTimes pt;
  // The compute stream's kernels end in order: its last end is its latest.
  pt.span = later(span, compute_free);
  pt.compute = compute;
  pt.exposed_comm = exposed_comm;
  pt.hidden_comm = hidden_comm;
  pt.host_stall = host_stall;
  pt.kernels = kernels;
  pt.activity = a;
  return pt;
}

}  // namespace

namespace {

// Times each timing class once, on its first kernel (the timers are pure functions of it), into
// the per-thread scratch; the passes then read them by class.
Scratch& prepared_scratch(const ComputeGraph& g, KernelTimer& timer, const CommTimes& comm) {
  thread_local Scratch scratch;
  // end[] is written before it is read (a dependency precedes its kernel in the same pass);
  // ring[] is read for every ring dependency, which may name a pass not yet timed, so it
  // starts clear (a graph without rings never touches it).
  scratch.end.resize(g.size());
  if (g.has_ring_transfers()) scratch.ring.assign(g.size(), Time{});
  const std::size_t classes = g.timing_classes();
  scratch.kernel.resize(classes);
  scratch.power.resize(classes);
  scratch.comm.resize(classes);
  scratch.link.resize(classes);
  for (std::uint32_t c = 0; c < classes; ++c) {
    const Kernel& k = g.kernel(g.class_first(c));
    if (k.comm) {
      scratch.comm[c] = comm.time(*k.comm);
      scratch.link[c] = comm.link_bytes(*k.comm);
    } else {
      const KernelTime& kt = scratch.kernel[c] = timer.time(k);
      scratch.power[c] = kt.device > Time{} ? kt.energy() / kt.device : Power{};
    }
  }
  return scratch;
}

}  // namespace

StageTimes stage_times(const ComputeGraph& g, KernelTimer& timer, const CommTimes& comm,
                       double comm_overlap) {
  const HostSpec& host = timer.machine().host;
  Scratch& scratch = prepared_scratch(g, timer, comm);
  StageTimes out;
  const Time dispatch = host.training_dispatch, launch = host.launch_latency;
  out.forward = time_pass<false>(g, 0, scratch, dispatch, launch, comm_overlap, nullptr);
  out.backward = time_pass<false>(g, 1, scratch, dispatch, launch, comm_overlap, nullptr);
  out.update = time_pass<false>(g, 2, scratch, dispatch, launch, comm_overlap, nullptr);
  return out;
}

std::vector<KernelSpan> kernel_spans(const ComputeGraph& g, KernelTimer& timer,
                                     const CommTimes& comm, double comm_overlap) {
  const HostSpec& host = timer.machine().host;
  Scratch& scratch = prepared_scratch(g, timer, comm);
  std::vector<KernelSpan> spans;
  spans.reserve(g.size());
  for (int p = 0; p < 3; ++p) {
    (void)time_pass<true>(g, p, scratch, host.training_dispatch, host.launch_latency,
                          comm_overlap, &spans);
  }
  return spans;
}

}  // namespace pathfinder
