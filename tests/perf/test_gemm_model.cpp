// GEMM hierarchical roofline: calibration against measured A100 GEMMs, parity with the
// reference implementation, the register-traffic formula, wave quantization, and properties.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include "engine/perf/gemm_model.hpp"
#include "engine/perf/graph_timing.hpp"
#include "tests/perf/perf_fixtures.hpp"

namespace pathfinder {
namespace {

struct MeasuredGemm {
  std::int64_t m, k, n;
  double ms;
};

std::vector<MeasuredGemm> llmcompass_a100() {
  std::ifstream f(PATHFINDER_TEST_DATA "/calibration/llmcompass_a100_fp16_gemm.csv");
  REQUIRE(f.good());
  std::string line;
  std::getline(f, line);  // M,K,N,latency_ms,tflops
  std::vector<MeasuredGemm> rows;
  while (std::getline(f, line)) {
    MeasuredGemm g{};
    char comma = 0;
    std::istringstream is(line);
    is >> g.m >> comma >> g.k >> comma >> g.n >> comma >> g.ms;
    rows.push_back(g);
  }
  return rows;
}

const std::vector<std::string> kTemplates = {"a100", "v100", "h100", "deepflow_v100",
                                             "tpu_systolic", "mcm4", "waferscale"};

}  // namespace

TEST_CASE("[calibration] A100 FP16 GEMMs: the 20 LLMCompass measurements", "[perf]") {
  // Each measurement times one cuBLAS call from the host (the median of 50 back-to-back calls
  // after 3 warm-up calls: LLMCompass software_model/matmul.py, Matmul.run_on_gpu), so the
  // prediction is the isolated time in burst mode: the template's host floor (dispatch 12 + launch 5 + synchronize 11 = 28 us) plus the
  // device time of the searched plan.
  const PerfMachine m = test::shipped_machine("a100");
  double sum = 0.0, worst = 0.0;
  const auto rows = llmcompass_a100();
  REQUIRE(rows.size() == 20);
  std::printf("\n%7s %7s %7s %10s %10s %7s  %s\n", "M", "K", "N", "meas ms", "pred ms", "err",
              "binding");
  for (const MeasuredGemm& g : rows) {
    const GemmPlan p = plan_gemm(m, GemmShape{1, g.m, g.n, g.k}, DataType::kFp16);
    KernelTime t;
    t.device = p.device_time;
    const double pred = isolated_time(m.host, t).si() * 1e3;
    const double err = (pred - g.ms) / g.ms;
    sum += std::abs(err);
    worst = std::max(worst, std::abs(err));
    std::printf("%7lld %7lld %7lld %10.4f %10.4f %+6.1f%%  %s\n", static_cast<long long>(g.m),
                static_cast<long long>(g.k), static_cast<long long>(g.n), g.ms, pred, 100 * err,
                p.binding < 0 ? "compute"
                : p.binding < p.levels ? m.levels[static_cast<std::size_t>(p.binding)].name.c_str()
                                       : m.main_memory.name.c_str());
  }
  const double mape = sum / static_cast<double>(rows.size());
  std::printf("MAPE %.2f%%, worst %.2f%% (bounds 10%%, 25%%)\n", 100 * mape, 100 * worst);
  CHECK(mape <= 0.10);
  CHECK(worst <= 0.25);
}

TEST_CASE("parity: the reference's V100 8192^3 GEMM (deepflow-reference.md §8)", "[perf]") {
  // The reference predicts 10.355114 ms: compute-bound at 106.2 TFLOP/s (124.96 peak x 0.85
  // util) plus its 9 us kernel_launch_overhead. deepflow_v100 holds the same numbers
  // (launch_latency 9 us, no dispatch or synchronize).
  const PerfMachine m = test::shipped_machine("deepflow_v100");
  const GemmPlan p = plan_gemm(m, GemmShape{1, 8192, 8192, 8192}, DataType::kFp16);
  KernelTime t;
  t.device = p.device_time;
  const double pred = isolated_time(m.host, t).si();
  std::printf("\nreference V100 8192^3: predicted %.4f ms, reference 10.3551 ms\n", pred * 1e3);
  CHECK(p.binding == -1);
  CHECK(pred == Approx(10.355114e-3).epsilon(0.10));
  // Tighter than required: the same arithmetic gives the same answer.
  CHECK(pred == Approx(10.355114e-3).epsilon(0.01));
}

TEST_CASE("register traffic follows paper eq. 5 with the dataflow's reuse", "[perf]") {
  // A100: 16x16 arrays. Tiles chosen by hand; eq. 5: F·(Nx·Ny + K·Nx + K·Ny)/(2·K·Nx·Ny)
  // accesses of 2 bytes, with K = the RF tile's m (weight-), n (activation-) or k
  // (output-stationary).
  const PerfMachine m = test::shipped_machine("a100");
  const GemmShape s{1, 4096, 4096, 4096};
  std::array<GemmTile, kMaxPerfLevels> tiles{};
  tiles[0] = {64, 32, 16};      // RF, per tensor core
  tiles[1] = {128, 64, 16};     // L1, per SM
  tiles[2] = {2048, 2048, 16};  // L2
  std::array<LoopOrder, kMaxPerfLevels> orders{};
  const double F = 2.0 * 4096.0 * 4096.0 * 4096.0;
  const auto eq5 = [&](double K) { return F * (256 + 32 * K) / (2 * K * 256) * 2.0; };
  CHECK(evaluate_gemm(m, s, DataType::kFp16, tiles, orders, Dataflow::kWeightStationary).bytes[0].si() ==
        Approx(eq5(64)));
  CHECK(evaluate_gemm(m, s, DataType::kFp16, tiles, orders, Dataflow::kActivationStationary)
            .bytes[0].si() == Approx(eq5(32)));
  CHECK(evaluate_gemm(m, s, DataType::kFp16, tiles, orders, Dataflow::kOutputStationary)
            .bytes[0].si() == Approx(eq5(16)));
  // `best` picks the largest reuse: weight-stationary here.
  CHECK(evaluate_gemm(m, s, DataType::kFp16, tiles, orders, Dataflow::kBest).dataflow ==
        Dataflow::kWeightStationary);
}

TEST_CASE("traffic per level follows the tile formulas, C written back", "[perf]") {
  // L2 tile 2048x2048 output-stationary inside the whole 4096^3 problem: A read 4096/2048 = 2
  // times, B twice, C written once: 2·(2·4096²) + 2·(2·4096²) + 2·4096² bytes = 5·2·4096².
  const PerfMachine m = test::shipped_machine("a100");
  const GemmShape s{1, 4096, 4096, 4096};
  const double mn = 4096.0 * 4096.0;
  CHECK(outer_level_traffic(m, s, DataType::kFp16, 2, {2048, 2048, 16},
                            LoopOrder::kOutputStationary) == Approx(5 * 2 * mn));
  // Weight-stationary with k = 512 < K: B read once, A per n tile (2x), and C's partial sums
  // leave and return 4096/512 - 1 = 7 times in fp32: 2·2mn + 2mn + 2mn + 2·4·mn·7.
  CHECK(outer_level_traffic(m, s, DataType::kFp16, 2, {1024, 2048, 512},
                            LoopOrder::kWeightStationary) ==
        Approx(4 * mn + 2 * mn + 2 * mn + 56 * mn));
  // A tile larger than the level (40 MiB) does not fit.
  CHECK(std::isinf(outer_level_traffic(m, s, DataType::kFp16, 2, {4096, 4096, 4096},
                                       LoopOrder::kOutputStationary)));
}

TEST_CASE("wave quantization: output tiles over 108 SMs", "[perf]") {
  // M=256, N=K=12288 on the A100: any tile of 32K outputs gives 256·12288/32768 = 96 tiles,
  // one wave on 108 SMs, 96/108 = 0.889 of the machine (measured 242.7 of 296 TFLOP/s = 0.82).
  const PerfMachine m = test::shipped_machine("a100");
  const GemmPlan p = plan_gemm(m, GemmShape{1, 256, 12288, 12288}, DataType::kFp16);
  CHECK(p.waves == (p.parallel_tiles + 107) / 108);
  CHECK(p.wave_efficiency == Approx(96.0 / 108.0).margin(0.005));
  // Fixed 128x128 tiles (64 array blocks, 16 per tensor core): 108 row tiles fill one wave
  // exactly; 109 need a second wave with one busy SM, 109/216 = 0.505 of the machine.
  std::array<GemmTile, kMaxPerfLevels> tiles{};
  tiles[0] = {64, 64, 16};
  tiles[1] = {128, 128, 32};
  tiles[2] = {16384, 128, 32};
  const std::array<LoopOrder, kMaxPerfLevels> orders{};
  const auto eff = [&](std::int64_t rows) {
    return evaluate_gemm(m, GemmShape{1, 128 * rows, 128, 4096}, DataType::kFp16, tiles, orders,
                         Dataflow::kBest)
        .wave_efficiency;
  };
  CHECK(eff(108) == Approx(1.0));
  CHECK(eff(109) == Approx(109.0 / 216.0));
}

TEST_CASE("the outer level's tile has the least traffic of every fitting tile of its order",
          "[perf]") {
  // Brute force over all power-of-two sides and the extents for the L2 tile of a few shapes.
  const PerfMachine m = test::shipped_machine("a100");
  for (const GemmShape s : {GemmShape{1, 8192, 8192, 8192}, GemmShape{1, 64, 12288, 12288},
                            GemmShape{1, 2048, 36864, 12288}, GemmShape{1, 12288, 4096, 96}}) {
    const GemmPlan p = plan_gemm(m, s, DataType::kFp16);
    const GemmTile chosen = p.tiles[2];
    const double got = outer_level_traffic(m, s, DataType::kFp16, 2, chosen, p.orders[2]);
    REQUIRE(got == Approx(p.main_memory_bytes().si()));
    const auto sides = [](std::int64_t extent) {
      std::vector<std::int64_t> v;
      for (std::int64_t x = 1; x < extent; x *= 2) v.push_back(x);
      v.push_back(extent);
      return v;
    };
    double best = INFINITY;
    for (std::int64_t tm : sides(s.m)) {
      for (std::int64_t tn : sides(s.n)) {
        for (std::int64_t tk : sides(s.k)) {
          best = std::min(best, outer_level_traffic(m, s, DataType::kFp16, 2, {tm, tn, tk},
                                                    p.orders[2]));
        }
      }
    }
    INFO(s.m << "x" << s.n << "x" << s.k);
    CHECK(got <= best * (1.0 + 1e-12));
  }
}

TEST_CASE("properties: tilings fit, traffic >= compulsory, more bandwidth or FLOP/s never slower",
          "[perf]") {
  std::mt19937_64 rng(20261121);
  std::uniform_int_distribution<int> log_side(0, 14);  // 1 .. 16384, plus odd offsets
  std::uniform_int_distribution<int> odd(0, 100);
  for (const std::string& name : kTemplates) {
    const PerfMachine base = test::shipped_machine(name);
    for (int trial = 0; trial < 40; ++trial) {
      const auto side = [&] { return (std::int64_t{1} << log_side(rng)) + odd(rng); };
      const GemmShape s{1 + odd(rng) % 3, side(), side(), side()};
      const GemmPlan p = plan_gemm(base, s, DataType::kFp16);
      INFO(name << " " << s.batch << "x" << s.m << "x" << s.n << "x" << s.k);
      CHECK(fits_gemm_plan(base, s, DataType::kFp16, p));
      const double compulsory =
          2.0 * static_cast<double>(s.batch) *
          static_cast<double>(s.m * s.k + s.k * s.n + s.m * s.n);
      for (int i = 0; i <= p.levels; ++i) {
        CHECK(p.bytes[static_cast<std::size_t>(i)].si() >= compulsory * (1.0 - 1e-12));
      }
      // Doubling any one level's bandwidth, main memory's, or the FLOP rate.
      for (int which = -1; which <= p.levels; ++which) {
        PerfMachine faster = base;
        if (which < 0) faster.matrix_flops *= 2.0;
        else if (which < p.levels) faster.levels[static_cast<std::size_t>(which)].bandwidth *= 2.0;
        else faster.main_memory.bandwidth *= 2.0;
        CHECK(plan_gemm(faster, s, DataType::kFp16).device_time.si() <= p.device_time.si() * (1 + 1e-12));
      }
    }
  }
}

TEST_CASE("a search made on one machine times another of the same capacities as its own search",
          "[perf]") {
  // GemmSearch builds a candidate's tiles and traffic once and keeps the last machines' plans;
  // time() on a machine with other rates, bandwidths and latency must give exactly the plan a
  // fresh search on it gives, or a shared search would leak one machine's figures into
  // another's plans.
  std::mt19937_64 rng(20261126);
  std::uniform_real_distribution<double> scale(0.25, 4.0);
  std::uniform_int_distribution<int> log_side(4, 14);
  for (const std::string& name : kTemplates) {
    const PerfMachine base = test::shipped_machine(name);
    for (int trial = 0; trial < 20; ++trial) {
      const GemmShape s{1 + trial % 2, std::int64_t{1} << log_side(rng),
                        std::int64_t{1} << log_side(rng), (std::int64_t{1} << log_side(rng)) + trial};
      const GemmSearch shared(base, s, DataType::kBf16);
      std::vector<PerfMachine> others(6, base);
      for (PerfMachine& other : others) {
        other.matrix_flops *= scale(rng);
        for (PerfLevel& l : other.levels) l.bandwidth *= scale(rng);
        other.main_memory.bandwidth *= scale(rng);
        other.main_memory.latency *= scale(rng);
      }
      // Repeats a machine while its plan is kept, then past the four kept and back.
      for (const int variant : {0, 1, 2, 0, 1, 2, 3, 4, 5, 0, 5}) {
        const PerfMachine& other = others[static_cast<std::size_t>(variant)];
        const GemmPlan a = shared.time(other), b = plan_gemm(other, s, DataType::kBf16);
        INFO(name << " " << s.batch << "x" << s.m << "x" << s.n << "x" << s.k << " variant "
                  << variant);
        CHECK(a.tiles == b.tiles);
        CHECK(a.orders == b.orders);
        CHECK(a.dataflow == b.dataflow);
        CHECK(a.bytes == b.bytes);
        CHECK(a.time == b.time);
        CHECK(a.device_time == b.device_time);
        CHECK(a.binding == b.binding);
        CHECK(a.wave_efficiency == b.wave_efficiency);
      }
    }
  }
}

TEST_CASE("plans are deterministic", "[perf]") {
  const PerfMachine m = test::shipped_machine("h100");
  const GemmShape s{4, 2048, 2048, 128};
  const GemmPlan a = plan_gemm(m, s, DataType::kBf16);
  const GemmPlan b = plan_gemm(m, s, DataType::kBf16);
  CHECK(a.device_time == b.device_time);
  CHECK(a.tiles == b.tiles);
  CHECK(a.orders == b.orders);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("FP8 GEMMs run at the FP8 rate with 1-byte operands and 16-bit outputs", "[perf]") {
  // H100 SXM: 1,979 TFLOPS dense FP8 = 2 x 989.4 FP16 (templates/h100.yaml
  // fp8_throughput_ratio 2). A compute-bound 8192^3 GEMM (1.1 TFLOP) takes about half the time
  // in FP8; its main-memory traffic falls too (A and B 1 B per element, C stays 2 B).
  const PerfMachine h100 = test::shipped_machine("h100");
  CHECK(h100.fp8_matrix_flops.si() == Approx(2.0 * h100.matrix_flops.si()));
  const GemmShape big{1, 8192, 8192, 8192};
  const GemmPlan f16 = plan_gemm(h100, big, DataType::kBf16), f8 = plan_gemm(h100, big, DataType::kFp8);
  CHECK(f16.binding == -1);  // compute-bound
  const double speedup = f16.device_time / f8.device_time;
  INFO("fp8 speed-up " << speedup);
  CHECK(speedup > 1.7);
  CHECK(speedup <= 2.0 + 1e-9);
  // A100 has no faster FP8 path (fp8_throughput_ratio 1): the same rate, smaller operands only.
  const PerfMachine a100 = test::shipped_machine("a100");
  CHECK(a100.fp8_matrix_flops == a100.matrix_flops);
  const double a_speedup = plan_gemm(a100, big, DataType::kFp16).device_time /
                           plan_gemm(a100, big, DataType::kFp8).device_time;
  CHECK(a_speedup == Approx(1.0).margin(0.05));
}

TEST_CASE("A benchmark loop reaches the maximum achievable matmul FLOPS, FP8 and BF16",
          "[perf]") {
  // H100 SXM, maximum achievable matmul FLOPS (S. Bekman's mamf-finder: many back-to-back
  // matmuls on random operands): BF16 806 TFLOPS, FP8 1,402.6. A loop of one GEMM runs under
  // the board's power limiter (PerfMode::kBackToBack); h100.yaml's flop_energy_factor 2.223 and
  // fp8_flop_energy_factor 3.152 are fitted so that 8192^3 reaches those rates [fit]. Here the
  // fit is checked, and that the limiter holds the board at its 700 W in both.
  const ArchSpec spec = bind_template(test::shipped_techlib(), test::shipped_template("h100"));
  const MicroArch arch = generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl));
  KernelTimer loop(make_perf_machine(spec, arch, PerfMode::kBackToBack));
  const GemmShape s{1, 8192, 8192, 8192};
  const double flops = 2.0 * 8192.0 * 8192.0 * 8192.0;
  for (const auto& [dtype, measured] : {std::pair{DataType::kFp16, 806.4e12},
                                        std::pair{DataType::kFp8, 1402.6e12}}) {
    const KernelTime t = loop.time(gemm_kernel("g", KernelKind::kGemm, Phase::kForward, dtype, s, {}));
    CHECK(flops / t.device.si() == Approx(measured).epsilon(0.002));
    CHECK(loop.machine().power_limit.idle + (t.energy() / t.device).si() ==
          Approx(700.0).epsilon(1e-9));
  }
  // One timed call (burst clocks, no limiter) sees the datasheet ratio, 2.
  const PerfMachine burst = make_perf_machine(spec, arch, PerfMode::kBurst);
  CHECK(burst.fp8_matrix_flops / burst.matrix_flops == Approx(2.0));
  // A training run sustains the same share of either rate (the FP8 shortfall is its power).
  CHECK(spec.tmpl.core.fp8_sustained_fraction == spec.tmpl.core.sustained_fraction);
  // A template without the key sustains FP8 as it sustains BF16 (a100.yaml: ratio 1).
  const ArchSpec a = bind_template(test::shipped_techlib(), test::shipped_template("a100"));
  CHECK(a.tmpl.core.fp8_sustained_fraction == a.tmpl.core.sustained_fraction);
}

TEST_CASE("Every GPU template's benchmark loop at its measured maximum achievable matmul FLOPS",
          "[perf]") {
  // S. Bekman's MAMF table (ml-engineering compute/accelerator/README.md; the best of a shape
  // sweep, each shape the mean of 100 back-to-back matmuls): BF16 and FP8 TFLOPS per device.
  // Each template's flop_energy_factor and fp8_flop_energy_factor are fitted so that a loop of
  // 8192^3 GEMMs reaches them under its board's limit [fit]; the H200 carries the H100's fit
  // ("H200 is the same"); the MI300X's FP8 cell is empty (its factor at the bound, 10).
  struct Row {
    const char* tmpl;
    double bf16, fp8, board_w;
  };
  const Row rows[] = {{"h100", 806.4, 1402.6, 700},   {"h200", 806.4, 1453.4, 700},
                      {"b200", 1745.0, 3432.5, 1000}, {"gb200", 1822.0, 3615.6, 1200},
                      {"mi300x", 668.4, 0.0, 750}};
  const GemmShape s{1, 8192, 8192, 8192};
  const double flops = 2.0 * 8192.0 * 8192.0 * 8192.0;
  for (const Row& r : rows) {
    INFO(r.tmpl);
    const ArchSpec spec = bind_template(test::shipped_techlib(), test::shipped_template(r.tmpl));
    const MicroArch arch = generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl));
    KernelTimer loop(make_perf_machine(spec, arch, PerfMode::kBackToBack));
    for (const auto& [dtype, measured] :
         {std::pair{DataType::kBf16, r.bf16}, std::pair{DataType::kFp8, r.fp8}}) {
      if (measured == 0.0) continue;
      const KernelTime t =
          loop.time(gemm_kernel("g", KernelKind::kGemm, Phase::kForward, dtype, s, {}));
      CHECK(flops / t.device.si() == Approx(measured * 1e12).epsilon(0.005));
      CHECK(t.clock < 1.0);  // the limiter binds: the board at its power, not its clock
      CHECK(loop.machine().power_limit.idle + (t.energy() / t.device).si() ==
            Approx(r.board_w).epsilon(1e-9));
    }
  }
}

TEST_CASE("[calibration] benchmark-loop GEMMs on H100 and B200 against XLA's measured tables",
          "[perf]") {
  // XLA's default matmul performance tables (openxla/xla, xla/service/gpu/model/
  // matmul_interpolator_data.h, Apache-2.0): measured BF16 FLOP/s of batched GEMMs b x (m, n, k)
  // on sm_90 (H100) and sm_100 (B200), independent of the MAMF fits above. The model times the
  // batch as one GEMM of b*m rows in a back-to-back loop, plus the table's own fixed cost per
  // call: its smallest GEMM, 256^3 (33.6 MFLOP), takes 5.2 us on sm_90 (6.45 TFLOP/s) and 5.0 us
  // on sm_100 (6.77), whatever the device's rate.
  struct Row {
    std::int64_t b, m, n, k;
    double h100, b200;  // TFLOP/s measured
  };
  const double floor_h100 = 2.0 * 256 * 256 * 256 / 6.4528e12,
               floor_b200 = 2.0 * 256 * 256 * 256 / 6.7650e12;
  const Row rows[] = {{4, 4096, 4096, 4096, 793.1, 1690.7}, {2, 4096, 4096, 4096, 807.7, 1455.7},
                      {1, 4096, 4096, 4096, 783.3, 1416.5}, {4, 4096, 4096, 2048, 764.6, 1544.0},
                      {1, 2048, 4096, 4096, 753.6, 1338.6}, {1, 2048, 2048, 2048, 632.0, 959.4},
                      {1, 1024, 1024, 1024, 236.3, 267.3},  {4, 4096, 4096, 512, 619.9, 1092.4}};
  const auto loop_of = [](const char* name) {
    const ArchSpec spec = bind_template(test::shipped_techlib(), test::shipped_template(name));
    const MicroArch arch = generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl));
    return KernelTimer(make_perf_machine(spec, arch, PerfMode::kBackToBack));
  };
  KernelTimer h100 = loop_of("h100"), b200 = loop_of("b200");
  std::printf("\n%-22s %8s %8s %6s %8s %8s %6s\n", "XLA b x m x n x k", "H100", "model", "err",
              "B200", "model", "err");
  for (const Row& r : rows) {
    const GemmShape s{1, r.b * r.m, r.n, r.k};
    const double flops = 2.0 * static_cast<double>(r.b * r.m) * static_cast<double>(r.n * r.k);
    const auto rate = [&](KernelTimer& t, double fixed) {
      const Kernel g = gemm_kernel("g", KernelKind::kGemm, Phase::kForward, DataType::kBf16, s, {});
      return flops / (t.time(g).device.si() + fixed) / 1e12;
    };
    const double h = rate(h100, floor_h100), b = rate(b200, floor_b200);
    std::printf("%lld x %lld x %lld x %lld %*s %8.1f %8.1f %+5.0f%% %8.1f %8.1f %+5.0f%%\n",
                static_cast<long long>(r.b), static_cast<long long>(r.m),
                static_cast<long long>(r.n), static_cast<long long>(r.k), 1, "", r.h100, h,
                100 * (h / r.h100 - 1), r.b200, b, 100 * (b / r.b200 - 1));
    // GEMMs of 64 GFLOP and more with k >= 2048 (training's): H100 -2..+3.1%, B200
    // +2..+9% (the model a little fast at 4096-class shapes).
    if (flops >= 64e9 && r.k >= 2048) {
      CHECK(std::abs(h / r.h100 - 1) <= 0.035);
      CHECK(std::abs(b / r.b200 - 1) <= 0.10);
    }
  }
  // Thin k (512): the model 17% and 35% fast (each tile's prologue and epilogue over a short
  // k-loop are not modelled); 1024^3 and 2048^3 within -11..+9%.
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("a GEMM accumulating into its output reads C and writes it in the buffer's type",
          "[perf]") {
  // The same tiles with C += A·B into fp32 (GemmShape::accumulate 4, Megatron's
  // gradient_accumulation_fusion): every boundary's C term goes from 2 B written to 4 B read
  // and 4 B written per element, +6·m·n bytes; A, B and the partial sums are unchanged.
  const PerfMachine m = test::shipped_machine("a100");
  const GemmShape plain{1, 4096, 4096, 1024};
  GemmShape acc = plain;
  acc.accumulate = 4;
  std::array<GemmTile, kMaxPerfLevels> tiles{};
  tiles[0] = {64, 32, 16};
  tiles[1] = {128, 64, 16};
  tiles[2] = {2048, 2048, 16};
  std::array<LoopOrder, kMaxPerfLevels> orders{};
  const GemmPlan a = evaluate_gemm(m, plain, DataType::kFp16, tiles, orders, Dataflow::kBest);
  const GemmPlan b = evaluate_gemm(m, acc, DataType::kFp16, tiles, orders, Dataflow::kBest);
  const double mn = 4096.0 * 4096.0;
  for (int l = 1; l <= a.levels; ++l) {
    INFO("level " << l);
    const auto u = static_cast<std::size_t>(l);
    CHECK(b.bytes[u].si() - a.bytes[u].si() == Approx(6.0 * mn));
  }
  CHECK(b.flops == a.flops);
  // The search's plan is never faster with the extra traffic.
  CHECK(plan_gemm(m, acc, DataType::kFp16).device_time >=
        plan_gemm(m, plain, DataType::kFp16).device_time);
}

}  // namespace pathfinder
