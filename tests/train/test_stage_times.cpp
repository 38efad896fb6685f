// Tests for engine/train/stage_times.cpp: the pass loop against the stream/host recurrence it
// implements, and ring pipelining (context parallelism's key/value ring): a ring of n steps
// before the kernel that consumes it is hidden by that kernel's other n/(n + 1) blocks; only
// the excess adds to the pass (Liu et al. 2023, Ring Attention §3).
#include <catch2/catch.hpp>

#include "engine/train/stage_times.hpp"
#include "tests/perf/perf_fixtures.hpp"

namespace pathfinder {
namespace {

// Every collective takes the same fixed time.
class FixedComm final : public CommTimes {
 public:
  explicit FixedComm(double t) : t_(seconds(t)) {}
  [[nodiscard]] Time time(const Communication&) const override { return t_; }

 private:
  Time t_;
};

// A 1 GB stream, a ring of `steps` steps after it, then a GEMM that consumes the ring.
ComputeGraph ring_graph(int steps) {
  ComputeGraphBuilder b;
  const KernelId x = b.add(stream_kernel("x", KernelKind::kElementwise, Phase::kForward,
                                         DataType::kBf16, flops(0.0), bytes(1e9), bytes(0.0), {}));
  const Communication c{CommKind::kSendRecv, CommGroup::kContext, bytes(1e6), false, steps};
  const KernelId r = b.add(comm_kernel("ring", Phase::kForward, DataType::kBf16, c, {x}));
  (void)b.add(gemm_kernel("attention", KernelKind::kGemm, Phase::kForward, DataType::kBf16,
                          GemmShape{1, 8192, 8192, 8192}, {r}));
  return std::move(b).build();
}

}  // namespace

TEST_CASE("a ring shows only what its consumer's other blocks cannot cover", "[train]") {
  KernelTimer timer(test::shipped_machine("a100"));
  const ComputeGraph g = ring_graph(3);  // cp = 4: three steps, four blocks
  const double tx = timer.time(g.kernels()[0]).device.si();
  const double ta = timer.time(g.kernels()[2]).device.si();
  // Short ring: all hidden; the pass is the two kernels (and the host's issue pace).
  const StageTimes fast = stage_times(g, timer, FixedComm(0.1 * ta));
  CHECK(fast.forward.exposed_comm.si() == 0.0);
  CHECK(fast.forward.hidden_comm.si() == Approx(0.1 * ta));
  CHECK(fast.forward.compute.si() == Approx(tx + ta));
  // Long ring, 2x the consumer: the first block runs on local keys while step 1 moves, the
  // other 3/4 of the work covers 3/4·ta of the transfers: 2·ta − 0.75·ta = 1.25·ta exposed.
  const StageTimes slow = stage_times(g, timer, FixedComm(2.0 * ta));
  CHECK(slow.forward.exposed_comm.si() == Approx(1.25 * ta));
  CHECK(slow.forward.hidden_comm.si() == Approx(0.75 * ta));
  CHECK(slow.forward.span.si() == Approx(fast.forward.span.si() + 1.25 * ta));
  // A one-step ring (cp = 2) can hide behind half the consumer only.
  const StageTimes two = stage_times(ring_graph(1), timer, FixedComm(ta));
  CHECK(two.forward.exposed_comm.si() == Approx(0.5 * ta));
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("kernel spans: every kernel placed as the pass times it", "[train]") {
  // The ring graph with cp = 4: the stream x, the ring (timed with its consumer: a
  // communication-stream span of zero length) and the GEMM. The compute stream's spans add up
  // to the pass's compute plus the ring's exposed part, the last ends at the pass's span, and
  // each starts no earlier than the previous one ended.
  KernelTimer timer(test::shipped_machine("a100"));
  const ComputeGraph g = ring_graph(3);
  const FixedComm comm(0.05);
  const StageTimes st = stage_times(g, timer, comm);
  const std::vector<KernelSpan> spans = kernel_spans(g, timer, comm);
  REQUIRE(spans.size() == 3);
  CHECK(spans[1].comm_stream);
  CHECK(spans[1].start == spans[1].end);
  double busy = 0.0;
  Time last;
  for (const KernelSpan& s : spans) {
    CHECK(s.pass == 0);
    if (s.comm_stream) continue;
    CHECK(s.start >= last);
    busy += (s.end - s.start).si();
    last = s.end;
  }
  CHECK(busy == Approx(st.forward.compute.si() + st.forward.exposed_comm.si()));
  CHECK(last == st.forward.span);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("a pass without inputs to wait for: span and host stall as the direct recurrence",
          "[train]") {
  // time_pass keeps the stream's free time f as sum + lead; here it is checked against the
  // recurrence itself, f' = max(f, h) + t with h the host's issue time plus the launch
  // latency, the host moving on by its dispatch time per compute kernel (not per collective),
  // and a stall of max(0, h - f) each time. Tiny kernels (host-bound) alternate with 4096^3
  // GEMMs (stream-bound) and blocking collectives, so both branches of every max are taken.
  KernelTimer timer(test::shipped_machine("a100"));
  const HostSpec& host = timer.machine().host;
  ComputeGraphBuilder b;
  KernelId prev = 0;
  for (int i = 0; i < 60; ++i) {
    std::vector<KernelId> deps;
    if (i > 0) deps.push_back(prev);  // on the stream before it: implied, not waited for
    if (i % 5 == 4) {
      const Communication c{CommKind::kAllReduce, CommGroup::kTensor, bytes(1e6), false, 0};
      prev = b.add(comm_kernel("c", Phase::kForward, DataType::kBf16, c, deps));
    } else if (i % 7 == 3) {
      prev = b.add(gemm_kernel("g", KernelKind::kGemm, Phase::kForward, DataType::kBf16,
                               GemmShape{1, 4096, 4096, 4096}, deps));
    } else {
      prev = b.add(stream_kernel("s", KernelKind::kElementwise, Phase::kForward, DataType::kBf16,
                                 flops(0.0), bytes(1e3 * (i + 1)), bytes(0.0), deps));
    }
  }
  const ComputeGraph g = std::move(b).build();
  const FixedComm comm(30e-6);
  const StageTimes st = stage_times(g, timer, comm);
  double issue = 0.0, free = 0.0, stall = 0.0, busy = 0.0;
  for (const Kernel& k : g.kernels()) {
    const double t = k.comm ? 30e-6 : timer.time(k).device.si();
    const double h = issue + host.launch_latency.si();
    if (!k.comm) issue += host.training_dispatch.si();
    stall += std::max(0.0, h - free);
    free = std::max(free, h) + t;
    if (!k.comm) busy += t;
  }
  REQUIRE(stall > 0.0);           // the host held the stream up somewhere
  REQUIRE(stall < free - busy);   // and the stream was busy elsewhere
  CHECK(st.forward.span.si() == Approx(free).epsilon(1e-12));
  CHECK(st.forward.host_stall.si() == Approx(stall).epsilon(1e-12));
  CHECK(st.forward.compute.si() == Approx(busy).epsilon(1e-12));
  CHECK(st.forward.exposed_comm.si() == Approx(12 * 30e-6).epsilon(1e-12));  // 12 collectives
  CHECK(st.forward.kernels == 60);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("a hidden collective takes SMs from the compute it hides behind", "[train]") {
  // NCCL's 16 CTAs on 132 SMs: each second beside compute costs it 16 / (132 - 16) s.
  CHECK(collective_contention(16, 132) == Approx(16.0 / 116.0).epsilon(1e-12));
  CHECK(collective_contention(0, 132) == 0.0);
  CHECK(collective_contention(16, 0) == 0.0);
  CHECK(collective_contention(200, 132) == 1.0);  // at most half the SMs: s / (1 - s) = 1
  // A blocking collective half hidden (comm_overlap 0.5) and contention 0.2: the compute
  // stream holds it for 0.5 of its time plus 0.2 x the hidden 0.5 = 0.6.
  KernelTimer timer(test::shipped_machine("a100"));
  ComputeGraphBuilder b;
  const KernelId x = b.add(stream_kernel("x", KernelKind::kElementwise, Phase::kForward,
                                         DataType::kBf16, flops(0.0), bytes(1e9), bytes(0.0), {}));
  const Communication c{CommKind::kAllReduce, CommGroup::kTensor, bytes(1e6), false, 0};
  (void)b.add(comm_kernel("ar", Phase::kForward, DataType::kBf16, c, {x}));
  const ComputeGraph g = std::move(b).build();
  const StageTimes plain = stage_times(g, timer, FixedComm(1e-3), 0.5);
  const StageTimes contended = stage_times(g, timer, FixedComm(1e-3), 0.5, 0.2);
  CHECK(plain.forward.exposed_comm.si() == Approx(0.5e-3).epsilon(1e-12));
  CHECK(contended.forward.exposed_comm.si() == Approx(0.6e-3).epsilon(1e-12));
  CHECK(contended.forward.span.si() == Approx(plain.forward.span.si() + 0.1e-3).epsilon(1e-12));
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("a host synchronize: the host issues the next kernel once the stream has caught up",
          "[train]") {
  // Four 4096^3 GEMMs (stream-bound: the host runs ahead), a blocking collective, then small
  // kernels. Marking the collective host_sync (a device-to-host copy and a stream synchronize
  // before it, as Megatron-Core's token dispatcher does before its all-to-all) sets the host's
  // issue time to the stream's free time: the recurrence f' = max(f, h) + t with h = issue +
  // launch and issue = max(issue, f) at the sync.
  KernelTimer timer(test::shipped_machine("a100"));
  const HostSpec& host = timer.machine().host;
  const auto build = [](bool sync) {
    ComputeGraphBuilder b;
    KernelId prev = 0;
    for (int i = 0; i < 10; ++i) {
      std::vector<KernelId> deps;
      if (i > 0) deps.push_back(prev);
      if (i < 4) {
        prev = b.add(gemm_kernel("g", KernelKind::kGemm, Phase::kForward, DataType::kBf16,
                                 GemmShape{1, 4096, 4096, 4096}, deps));
      } else if (i == 4) {
        const Communication c{CommKind::kAllToAll, CommGroup::kExpert, bytes(1e6), false, 0};
        Kernel k = comm_kernel("dispatch", Phase::kForward, DataType::kBf16, c, deps);
        k.host_sync = sync;
        prev = b.add(std::move(k));
      } else {
        prev = b.add(stream_kernel("s", KernelKind::kElementwise, Phase::kForward,
                                   DataType::kBf16, flops(0.0), bytes(1e6), bytes(0.0), deps));
      }
    }
    return std::move(b).build();
  };
  const FixedComm comm(50e-6);
  for (const bool sync : {false, true}) {
    const ComputeGraph g = build(sync);
    double issue = 0.0, free = 0.0;
    for (const Kernel& k : g.kernels()) {
      const double t = k.comm ? 50e-6 : timer.time(k).device.si();
      if (k.host_sync) issue = std::max(issue, free);
      const double h = issue + host.launch_latency.si();
      if (!k.comm) issue += host.training_dispatch.si();
      free = std::max(free, h) + t;
    }
    INFO("sync " << sync);
    CHECK(stage_times(g, timer, comm).forward.span.si() == Approx(free).epsilon(1e-12));
  }
  // The sync costs the launch latency before the collective and the host's pace for the five
  // small kernels after it, which the host had issued early without it.
  const double with = stage_times(build(true), timer, comm).forward.span.si();
  const double without = stage_times(build(false), timer, comm).forward.span.si();
  CHECK(with > without + host.launch_latency.si());
}

}  // namespace pathfinder
