// Data-parallel training of the LSTM LM: gradient all-reduce overlapped with backward.
#include <catch2/catch.hpp>

#include <cstdio>

#include "engine/train/data_parallel.hpp"
#include "tests/train/train_fixtures.hpp"

namespace pathfinder {
namespace {

// The reference's case-study sweep (deepflow-reference.md §2.6): B 4096, S 20, D 19968,
// V 800000, 2 layers, fp16, SGD, on 64 devices of its V100 configuration.
Workload reference_lm() {
  return make_workload("lstm-lm-64", LstmSpec{4096, 20, 19968, 800000, 2, DataType::kFp16,
                                              Optimizer::kSgd});
}

struct Sweep {
  double inter_gib_s;
  double seconds;
};

}  // namespace

TEST_CASE("64-way data-parallel LSTM LM: time falls with inter-node bandwidth, then flattens",
          "[train]") {
  // The reference predicts 8.283, 4.017 and 3.576 s at 48.1, 384.5 and 1395.8 GiB/s per device
  // (strategy RC 1x1 d64, node N14): the gradient all-reduce stops being exposed. The trend,
  // not the numbers, is what carries over: ours hides the reduction behind the backward pass.
  ArchTemplate t = test::shipped_template("deepflow_v100");
  t.packages = 64;  // 64 single-GPU packages on the switched DF-inter network
  const ArchSpec spec = bind_template(test::shipped_techlib(), t);
  const MicroArch arch = generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl));
  KernelTimer timer(make_perf_machine(spec, arch));
  const Workload w = reference_lm();
  std::vector<Sweep> sweep{{48.1, 0}, {384.5, 0}, {1395.8, 0}};
  std::printf("\n64-way data-parallel LSTM LM (reference: 8.283, 4.017, 3.576 s)\n");
  for (Sweep& s : sweep) {
    SystemGraph g = make_system_graph(spec, arch, 64);
    REQUIRE(g.tiers.size() == 1);
    g.tiers[0].bandwidth = s.inter_gib_s * 1073741824.0;
    g.tiers[0].max_utilization = 1.0;
    const DataParallelResult r = evaluate_data_parallel(w, 64, timer, g);
    s.seconds = r.iteration_time;
    std::printf("  %7.1f GiB/s: %.3f s (all-reduce %.3f s, exposed %.3f s)\n", s.inter_gib_s,
                r.iteration_time, r.reduction, r.exposed_reduction);
  }
  CHECK(sweep[0].seconds > sweep[1].seconds);
  CHECK(sweep[1].seconds >= sweep[2].seconds);
  // Flattening: the second step gains at most a fifth of the first (reference: 0.44 vs 4.27).
  CHECK(sweep[1].seconds - sweep[2].seconds <= 0.2 * (sweep[0].seconds - sweep[1].seconds));
}

TEST_CASE("data parallelism splits the batch and adds only the exposed reduction", "[train]") {
  const test::ShippedSystem& sys = test::shipped_system("a100");
  KernelTimer timer(make_perf_machine(sys.spec, sys.arch));
  const Workload w = make_workload("lstm", LstmSpec{512, 10, 2048, 8192, 2, DataType::kFp16,
                                                    Optimizer::kSgd});
  const SystemGraph g = make_system_graph(sys.spec, sys.arch, 8);
  const DataParallelResult one = evaluate_data_parallel(w, 1, timer, g);
  const DataParallelResult eight = evaluate_data_parallel(w, 8, timer, g);
  CHECK(one.reduction == 0.0);
  CHECK(std::get<LstmSpec>(replica_spec(w.spec, 8)).batch == 64);
  CHECK(eight.iteration_time == Approx(eight.replica.iteration_time + eight.exposed_reduction));
  CHECK(eight.exposed_reduction <= eight.reduction);
  // Without overlap every collective waits for the end of the backward pass.
  const DataParallelResult serial = evaluate_data_parallel(w, 8, timer, g, false);
  CHECK(serial.exposed_reduction == Approx(serial.reduction));
  CHECK(serial.iteration_time >= eight.iteration_time);
}

}  // namespace pathfinder
