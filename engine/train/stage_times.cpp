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
  std::vector<Time> stream;  // what a kernel of the class holds the compute stream for
  std::vector<std::array<Bytes, kMaxTiers>> link;
};

// One pass's kernels in graph order on the two streams, from the graph's step program
// (ComputeGraph::pass_steps). Its state lives in locals, so the chain from one kernel's end to
// the next one's start stays in registers; sums over the kernels (busy time, energy, bytes
// sent) are taken per timing class after the loop (ComputeGraph::pass_classes).
//
// The compute stream's free time f obeys f' = max(f, h) + t for a kernel issued by the host at
// h taking t. Written as f = sum + lead, with sum the stream's work since the last rebase and
// lead' = max(lead, h - sum), the recurrence is two independent one-operation chains (an add
// and a max) instead of one chain of a max then an add: the loop runs at about one
// floating-point latency per kernel, not two. A step with inputs or a ring to wait for is
// timed as f' = max(f, inputs, h) + t + exposed ring, and rebases (sum = 0, lead = f').
// kRecord: each kernel's span appended to `spans` (reports); the evaluation path records none.
template <bool kRecord>
PassTimes time_pass(const ComputeGraph& g, int p, Scratch& scratch, Time dispatch, Time launch,
                    double comm_overlap, std::vector<KernelSpan>* spans) {
  using Kind = ComputeGraph::StepKind;
  // Accumulated in locals, not in the returned struct: its Time fields could alias end[] and
  // would go through memory on every kernel.
  Time span, host_stall, ring_exposed, ring_hidden;
  // The host's next issue time; the compute stream's free time as sum + lead; the
  // communication stream's free time.
  Time issue, sum, lead, comm_free;
  Time run_lead;  // lead when the current run of steps without inputs began
  // How far each step moves the host's next issue (by StepKind): only compute kernels pace it.
  static_assert(static_cast<int>(Kind::kCompute) == 0 && static_cast<int>(Kind::kComm) == 1);
  const std::array<Time, 2> pace{dispatch, Time{}};
  Time* const end = scratch.end.data();
  Time* const ring = scratch.ring.data();  // a ring's time, until its consumer takes it
  const Time* const stream = scratch.stream.data();
  const ComputeGraph::StepDep* const deps = g.step_deps().data();
  const auto ready_of = [&](const ComputeGraph::PassStep& st) {
    Time ready;  // inputs from an earlier pass count as present
    for (std::uint32_t j = st.deps_begin; j < st.deps_end; ++j) ready = later(ready, end[deps[j].id]);
    return ready;
  };
  for (const ComputeGraph::PassStep& st : g.pass_steps(p)) {
    const KernelId i = st.id;
    const std::uint32_t c = st.cls;
    if (st.kind == Kind::kRingComm) {
      // Pipelined with its consumer: timed there (below); its own inputs pass through.
      const Time ready = ready_of(st);
      ring[i] = scratch.comm[c];
      end[i] = ready;
      if constexpr (kRecord) spans->push_back({i, p, true, ready, ready});
      continue;
    }
    if (st.kind == Kind::kOverlappedComm) {
      const Time start = later(comm_free, ready_of(st));
      end[i] = comm_free = start + scratch.comm[c];
      // The compute beside it loses what the collective takes from it (stream[c]: its time
      // times the contention): the compute stream's free time moves on by that much, not
      // counted as a host stall.
      lead += stream[c];
      run_lead += stream[c];
      span = later(span, end[i]);
      if constexpr (kRecord) spans->push_back({i, p, true, start, end[i]});
      continue;
    }
    // On the compute stream. Collectives are enqueued by the same host thread but cost it
    // little (a NCCL call) next to a framework operator; only compute kernels pace the host.
    const Time t = stream[c];
    // A host synchronize before it: the host issues it only once the compute stream's work so
    // far has ended (sum + lead), so the stream then waits launch and the host's issue pace.
    if (st.host_sync) issue = later(issue, sum + lead);
    const Time host_ready = issue + launch;
    issue += pace[static_cast<std::size_t>(st.kind)];
    if (st.deps_begin == st.rings_end) {
      // Held up only by the stream and the host: the stream waits max(0, gap - lead) for the
      // host, which is how much lead grows, so a run's host stall is its lead's growth.
      const Time gap = host_ready - sum;
      lead = later(lead, gap);
      if constexpr (kRecord) spans->push_back({i, p, false, sum + lead, sum + t + lead});
      sum += t;
      end[i] = sum + lead;
      continue;
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
      ring_hidden += r - exposed_ring;
      ring_exposed += exposed_ring;
    }
    const Time free = later(sum + lead, ready_of(st));
    const Time start = later(free, host_ready);
    host_stall += lead - run_lead;                   // the run of steps before this one
    host_stall += later(Time{}, host_ready - free);  // adds 0 when the stream was behind
    const Time finish = start + t + exposed_ring;
    end[i] = lead = run_lead = finish;
    sum = Time{};
    if constexpr (kRecord) spans->push_back({i, p, false, start, finish});
  }
  PassTimes pt;
  // The compute stream's kernels end in order: its last end is its latest.
  pt.span = later(span, sum + lead);
  pt.exposed_comm = ring_exposed;
  pt.hidden_comm = ring_hidden;
  pt.host_stall = host_stall + (lead - run_lead);
  Activity& a = pt.activity;
  for (const ComputeGraph::ClassCount& cc : g.pass_classes(p)) {
    const std::uint32_t c = cc.cls;
    const double n = cc.count;
    if (cc.kind == Kind::kCompute) {
      const KernelTime& kt = scratch.kernel[c];
      pt.compute += n * kt.device;
      pt.weight_gradients += static_cast<double>(cc.weight_gradients) * kt.device;
      a.core += n * kt.core_energy;
      a.on_chip += n * kt.on_chip_energy;
      a.main_memory += n * kt.main_memory_energy;
      if (a.peak_power < scratch.power[c]) a.peak_power = scratch.power[c];
      pt.kernels += static_cast<int>(cc.count);
      continue;
    }
    a.add_link_bytes(scratch.link[c], n);
    if (cc.kind == Kind::kComm) {
      pt.exposed_comm += n * stream[c];
      if (comm_overlap > 0.0) pt.hidden_comm += n * (comm_overlap * scratch.comm[c]);
      pt.kernels += static_cast<int>(cc.count);
    } else if (cc.kind == Kind::kOverlappedComm) {
      pt.hidden_comm += n * scratch.comm[c];
      pt.exposed_comm += n * stream[c];  // what it cost the compute beside it
    }
  }
  return pt;
}

}  // namespace

namespace {

// Times each timing class once, on its first kernel (the timers are pure functions of it), into
// the per-thread scratch; the passes then read them by class.
Scratch& prepared_scratch(const ComputeGraph& g, KernelTimer& timer, const CommTimes& comm,
                          double comm_overlap, double contention, double pace) {
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
  scratch.stream.resize(classes);
  scratch.link.resize(classes);
  for (std::uint32_t c = 0; c < classes; ++c) {
    const Kernel& k = g.kernel(g.class_first(c));
    if (k.comm) {
      scratch.comm[c] = comm.time(*k.comm);
      scratch.link[c] = comm.link_bytes(*k.comm);
      // A blocking collective holds the stream for the part of it not hidden behind compute,
      // and slows the compute hiding the rest by the SMs it takes; one on the communication
      // stream slows the compute beside it likewise (taken as busy for the whole collective).
      scratch.stream[c] =
          k.comm->overlapped ? scratch.comm[c] * contention
          : comm_overlap > 0.0
              ? scratch.comm[c] * (1.0 - comm_overlap + comm_overlap * contention)
              : scratch.comm[c];
    } else {
      KernelTime& kt = scratch.kernel[c] = timer.time(k);
      KernelTimer::pace(kt, pace);
      scratch.power[c] = kt.device > Time{} ? kt.energy() / kt.device : Power{};
      scratch.stream[c] = kt.device;
    }
  }
  return scratch;
}

}  // namespace

double collective_contention(int sms, int bundles) {
  if (sms <= 0 || bundles <= 0) return 0.0;
  const double s = std::min(0.5, static_cast<double>(sms) / static_cast<double>(bundles));
  return s / (1.0 - s);
}

StageTimes stage_times(const ComputeGraph& g, KernelTimer& timer, const CommTimes& comm,
                       double comm_overlap, double contention, double pace) {
  const HostSpec& host = timer.machine().host;
  Scratch& scratch = prepared_scratch(g, timer, comm, comm_overlap, contention, pace);
  StageTimes out;
  const Time dispatch = host.training_dispatch, launch = host.launch_latency;
  out.forward = time_pass<false>(g, 0, scratch, dispatch, launch, comm_overlap, nullptr);
  out.backward = time_pass<false>(g, 1, scratch, dispatch, launch, comm_overlap, nullptr);
  out.update = time_pass<false>(g, 2, scratch, dispatch, launch, comm_overlap, nullptr);
  return out;
}

std::vector<KernelSpan> kernel_spans(const ComputeGraph& g, KernelTimer& timer,
                                     const CommTimes& comm, double comm_overlap,
                                     double contention, double pace) {
  const HostSpec& host = timer.machine().host;
  Scratch& scratch = prepared_scratch(g, timer, comm, comm_overlap, contention, pace);
  std::vector<KernelSpan> spans;
  spans.reserve(g.size());
  for (int p = 0; p < 3; ++p) {
    (void)time_pass<true>(g, p, scratch, host.training_dispatch, host.launch_latency,
                          comm_overlap, &spans);
  }
  return spans;
}

}  // namespace pathfinder
