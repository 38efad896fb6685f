// One iteration on one device: host dispatch, launch latency, micro-batches, update.
#include <catch2/catch.hpp>

#include "engine/perf/graph_timing.hpp"
#include "tests/perf/perf_fixtures.hpp"

namespace pathfinder {
namespace {

// n element-wise kernels of `bytes` each in a chain, plus one update kernel.
Workload chain(int n, double bytes, std::int64_t micro_batches) {
  ComputeGraphBuilder b;
  std::vector<KernelId> prev;
  for (int i = 0; i < n; ++i) {
    prev = {b.add(stream_kernel("k" + std::to_string(i), KernelKind::kElementwise,
                                Phase::kForward, DataType::kFp16, Flops{}, bytes * units::bytes,
                                Bytes{}, prev))};
  }
  b.add(stream_kernel("update", KernelKind::kOptimizerUpdate, Phase::kUpdate, DataType::kFp32,
                      Flops{}, bytes * units::bytes, Bytes{}, prev));
  Workload w;
  w.name = "chain";
  w.spec = GemmSpec{1, 1, 1, DataType::kFp16};
  w.graph = std::move(b).build();
  w.stats.micro_batches = micro_batches;
  return w;
}

}  // namespace

TEST_CASE("a kernel timed on its own pays the whole host round trip", "[perf]") {
  // A100 host: dispatch 12 + launch 5 + synchronize 11 = 28 us around the device time.
  const PerfMachine m = test::shipped_machine("a100");
  KernelTime t;
  t.device = Time::from_si(1e-3);
  CHECK(isolated_time(m.host, t).si() == Approx(1e-3 + 28e-6));
}

TEST_CASE("small kernels are host-bound, large ones device-bound", "[perf]") {
  KernelTimer timer(test::shipped_machine("a100"));
  const double bw = timer.machine().stream_bandwidth.si();
  {
    // 100 kernels of 1 KB: ~0.1 us each on the device, a new one issued every 65 us (the
    // megatron-lm profile's training_dispatch). The last is issued at 99 x 65 us and starts 5 us
    // later.
    const Workload w = chain(100, 1e3, 1);
    const GraphTiming g = time_workload(w, timer);
    const double d = 1e3 / bw + 100e-9;
    CHECK(g.micro_batch_span.si() == Approx(99 * 65e-6 + 5e-6 + d));
    // Iteration: span + update (5 us + d) + synchronize 11 us + the profile's per-iteration
    // host time (megatron-lm.yaml: 0 ms [fit]); no input.
    CHECK(g.iteration_time.si() == Approx(g.micro_batch_span.si() + 5e-6 + d + 11e-6));
    CHECK(g.device_utilization() < 0.01);
  }
  {
    // 10 kernels of 1 GB: 726 us each, back to back after the first launch.
    const Workload w = chain(10, 1e9, 1);
    const GraphTiming g = time_workload(w, timer);
    const double d = 1e9 / bw + 100e-9;
    CHECK(g.micro_batch_span.si() == Approx(5e-6 + 10 * d));
    CHECK(g.phases[0].device.si() == Approx(10 * d));
    CHECK(g.phases[0].kernels == 10);
    // Busy all the time apart from the fixed host costs (11 us synchronize).
    CHECK(g.device_busy.si() / (g.iteration_time.si() - 11e-6) > 0.99);
    CHECK(g.device_utilization() == Approx(g.device_busy.si() / g.iteration_time.si()));
  }
}

TEST_CASE("later micro-batches repeat the first at the device's or the host's pace", "[perf]") {
  KernelTimer timer(test::shipped_machine("a100"));
  const double bw = timer.machine().stream_bandwidth.si();
  // Device-bound: 4 micro-batches of 10 x 1 GB; the 3 repeats cost their device time.
  const Workload big = chain(10, 1e9, 4);
  const GraphTiming g = time_workload(big, timer);
  const double d = 1e9 / bw + 100e-9;
  CHECK(g.iteration_time.si() ==
        Approx(g.micro_batch_span.si() + 3 * 10 * d + g.update_span.si() + 11e-6));
  CHECK(g.device_busy.si() == Approx(40 * d + d));
  // Host-bound: repeats cost 100 dispatches of 65 us each.
  const Workload small = chain(100, 1e3, 4);
  const GraphTiming h = time_workload(small, timer);
  CHECK(h.iteration_time.si() ==
        Approx(h.micro_batch_span.si() + 3 * 100 * 65e-6 + h.update_span.si() + 11e-6));
}

TEST_CASE("the input batch crosses the host link once per iteration", "[perf]") {
  // GPT with micro-batch 2 x sequence 64: 128 token ids and 128 labels of 4 bytes = 1024 B
  // over 25 GB/s = 40.96 ns.
  KernelTimer timer(test::shipped_machine("a100"));
  const GptSpec spec{1, 64, 2, 256, 64, 512, 2, 2, DataType::kFp16, Optimizer::kAdam};
  const Workload w = make_workload("tiny-gpt", spec);
  const GraphTiming g = time_workload(w, timer);
  CHECK(g.input_transfer.si() == Approx(1024.0 / 25e9));
  CHECK(g.flops.si() == Approx(w.stats.flops_per_iteration.si()));
  double sum = 0.0;
  for (const KernelRun& r : g.kernels) sum += r.time.device.si();
  CHECK(g.device_busy.si() == Approx(sum));
}

}  // namespace pathfinder
