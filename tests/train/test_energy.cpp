// Energy of one training iteration (engine/train/energy.hpp): the accounting adds up, more
// work never costs less, no device is ever above the power it was generated under, a lower
// cap never raises power; and a compute-bound GEMM against the board power.
#include "engine/train/energy.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "engine/graph/workload_loader.hpp"
#include "engine/train/training_model.hpp"
#include "tests/train/train_fixtures.hpp"

namespace pathfinder {
namespace {

WorkloadSpec workload(const std::string& path) {
  return load_workload(test::source_path(path)).spec;
}

TrainingResult run(const std::string& tmpl, const WorkloadSpec& w, const std::string& strategy,
                   std::optional<double> power_w = std::nullopt) {
  ArchTemplate t = test::shipped_template(tmpl);
  if (power_w) t.budget.power = watts(*power_w);
  const ArchSpec spec = bind_template(test::shipped_techlib(), t);
  const MicroArch arch = generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl));
  const Strategy s = parse_strategy(strategy);
  TrainingOptions o = TrainingOptions::from(test::shipped_software(tmpl));
  o.parallelism = ParallelismSupport{};  // ZeRO-3 too, which Megatron-LM's code does not offer
  TrainingModel m(spec, arch, w, s.devices(), o);
  return m.evaluate(s);
}

void check_adds_up(const TrainingResult& r) {
  REQUIRE(r.feasible);
  const EnergyReport& e = r.energy;
  CHECK(e.joules.si() > 0.0);
  CHECK(e.by_component.total().si() == Approx(e.joules.si()).epsilon(1e-12));
  CHECK(e.by_phase.total().si() == Approx(e.joules.si()).epsilon(1e-9));
  for (const auto& [name, v] : e.by_component.parts()) CHECK(v.si() >= 0.0);
  for (const auto& [name, v] : e.by_phase.parts()) CHECK(v.si() >= 0.0);
  CHECK(e.device_power.si() <= e.system_power.si());
  CHECK(e.flop_per_joule == Approx(r.model_flops.si() / e.joules.si()));
  CHECK(e.chip_joules.si() > 0.0);
  CHECK(e.chip_joules.si() <= e.joules.si());
  // Both powers average over the same devices and time: their ratio is the energies'.
  CHECK(e.device_power.si() * e.joules.si() == Approx(e.system_power.si() * e.chip_joules.si()));
}

}  // namespace

TEST_CASE("energy accounting: components and phases both add up to the total", "[train][energy]") {
  // GPT 1.3B: every stage kind, pipeline sends, data-parallel buckets, ZeRO-1 and -3.
  const WorkloadSpec w = workload("studies/workloads/gpt3_1.3b.yaml");
  for (const char* s : {"tp1-pp1-dp1-mb1", "tp2-pp2-dp2-mb1-1f1b", "tp1-pp1-dp8-mb1-zero1",
                        "tp1-pp1-dp8-mb1-zero3", "tp2-pp4-dp1-mb1-interleaved-v2",
                        "tp8-pp1-dp1-mb1-sp-recompute=full"}) {
    INFO(s);
    const TrainingResult r = run("a100", w, s);
    check_adds_up(r);
    // GPT-3 1.3B: 512 sequences of 2048 tokens per iteration.
    CHECK(r.energy.joules_per_token.si() == Approx(r.energy.joules.si() / (512.0 * 2048.0)).epsilon(1e-9));
  }
  // LSTM and GEMM workloads too (a GEMM has no tokens: 0).
  check_adds_up(run("a100", workload("tests/data/workloads/lstm.yaml"), "tp1-pp1-dp1-mb1"));
  const TrainingResult g = run("a100", workload("studies/workloads/gemm.yaml"), "tp1-pp1-dp1-mb1");
  check_adds_up(g);
  CHECK(g.energy.joules_per_token.si() == 0.0);
}

TEST_CASE("energy: one device by hand, and data-parallel bytes on the links", "[train][energy]") {
  const WorkloadSpec w = workload("studies/workloads/gpt3_1.3b.yaml");
  const test::ShippedSystem& a = test::shipped_system("a100");
  const DevicePower d = device_power(a.spec, a.arch);
  // One device: always-on power over the iteration plus its kernels' dynamic energy.
  const TrainingResult one = run("a100", w, "tp1-pp1-dp1-mb1");
  REQUIRE(one.feasible);
  const TrainingBreakdown& b = one.stages.front();
  const double kernels = (b.work.kernel_energy() + b.step.kernel_energy()).si();
  CHECK(one.energy.joules.si() == Approx(d.always_on() * one.iteration_time.si() + kernels).epsilon(1e-12));
  CHECK(b.work.link_bytes == std::array<Bytes, kMaxTiers>{});
  // Two devices, data parallel: each all-reduces its fp16 gradients once after the backward
  // pass, a ring of 2 moving 2·(2-1)/2 = 1x the buffer over NVLink: 2 bytes per parameter.
  const TrainingResult two = run("a100", w, "tp1-pp1-dp2-mb1");
  REQUIRE(two.feasible);
  const auto params = static_cast<double>(gpt_parameters(std::get<GptSpec>(w)));  // 1.42 B
  const double sent =
      two.stages.front().work.link_bytes[static_cast<std::size_t>(Tier::kInterPackage)].si();
  CHECK(sent == Approx(2.0 * params).epsilon(1e-9));
  // The same bytes at NVLink 3's dynamic energy per byte.
  const double links = sent * d.link_joule_per_byte[1];
  CHECK(links > 0.0);
  CHECK(two.energy.by_phase.communication.si() >= links);
}

TEST_CASE("more work never costs less energy", "[train][energy][property]") {
  const WorkloadSpec w = workload("studies/workloads/gpt3_1.3b.yaml");
  // Recomputation adds kernels; a larger global batch adds micro-batches.
  const TrainingResult plain = run("a100", w, "tp2-pp2-dp2-mb1");
  const TrainingResult full = run("a100", w, "tp2-pp2-dp2-mb1-recompute=full");
  CHECK(full.energy.joules.si() > plain.energy.joules.si());
  GptSpec bigger = std::get<GptSpec>(w);
  bigger.global_batch *= 2;
  CHECK(run("a100", bigger, "tp2-pp2-dp2-mb1").energy.joules.si() > plain.energy.joules.si());
  // A larger GEMM.
  GemmSpec gemm = std::get<GemmSpec>(workload("studies/workloads/gemm.yaml"));
  const double small = run("a100", gemm, "tp1-pp1-dp1-mb1").energy.joules.si();
  gemm.k *= 2;
  CHECK(run("a100", gemm, "tp1-pp1-dp1-mb1").energy.joules.si() > small);
}

TEST_CASE("no device draws more than the power it was generated under", "[train][energy][property]") {
  const WorkloadSpec w = workload("studies/workloads/gpt3_1.3b.yaml");
  for (const char* tmpl : {"a100", "v100", "h100", "b200"}) {
    for (const char* s : {"tp2-pp1-dp4-mb1", "tp8-pp1-dp1-mb1-sp", "tp2-pp4-dp1-mb1"}) {
      INFO(tmpl << " " << s);
      const TrainingResult r = run(tmpl, w, s);
      REQUIRE(r.feasible);
      const double budget = test::shipped_template(tmpl).budget.power.si();
      CHECK(r.energy.peak_device_power.si() <= budget);
      CHECK(r.energy.device_power.si() <= r.energy.peak_device_power.si());
    }
  }
}

TEST_CASE("a lower power cap never raises power", "[train][energy][property]") {
  const WorkloadSpec w = workload("studies/workloads/gpt3_1.3b.yaml");
  double last_avg = 1e300, last_peak = 1e300;
  for (const double cap : {400.0, 350.0, 300.0, 250.0}) {
    INFO(cap << " W");
    const TrainingResult r = run("a100", w, "tp2-pp2-dp2-mb1", cap);
    REQUIRE(r.feasible);
    CHECK(r.energy.device_power.si() <= last_avg);
    CHECK(r.energy.peak_device_power.si() <= last_peak);
    CHECK(r.energy.peak_device_power.si() <= cap);
    last_avg = r.energy.device_power.si();
    last_peak = r.energy.peak_device_power.si();
  }
}

TEST_CASE("a board limited below its idle power cannot run: infeasible, with the reason",
          "[train][energy]") {
  // The A100 template idles at 76.0 W (device_power.hpp: leakage, clock tree, links): a 50 W
  // run-time limit leaves no power for any work at any clock.
  ArchTemplate t = test::shipped_template("a100");
  t.budget.power_limit = watts(50.0);
  const ArchSpec spec = bind_template(test::shipped_techlib(), t);
  const MicroArch arch = generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl));
  const Strategy s = parse_strategy("tp2-pp2-dp2-mb1");
  TrainingModel m(spec, arch, workload("studies/workloads/gpt3_1.3b.yaml"), s.devices(),
                  TrainingOptions::from(test::shipped_software("a100")));
  const TrainingResult r = m.evaluate(s);
  CHECK_FALSE(r.feasible);
  CHECK(r.reason.find("power limit (50 W) is not above what the chip draws idle (75.97 W") !=
        std::string::npos);
  // At 100 W it runs, slower than at the full 400 W.
  t.budget.power_limit = watts(100.0);
  const ArchSpec spec100 = bind_template(test::shipped_techlib(), t);
  TrainingModel m100(spec100, arch, workload("studies/workloads/gpt3_1.3b.yaml"), s.devices(),
                     TrainingOptions::from(test::shipped_software("a100")));
  const TrainingResult r100 = m100.evaluate(s);
  REQUIRE(r100.feasible);
  CHECK(r100.iteration_time > run("a100", workload("studies/workloads/gpt3_1.3b.yaml"), "tp2-pp2-dp2-mb1")
                                  .iteration_time);
  CHECK(r100.energy.peak_device_power.si() <= 100.0 * (1.0 + 1e-9));
}

TEST_CASE("[calibration] a compute-bound GEMM back to back against the board power",
          "[train][energy]") {
  // 8192^3 FP16 GEMMs back to back (PerfMode::kBackToBack) and in a training iteration
  // (kSustained): the chip's always-on power plus the kernel's dynamic energy over its time.
  // Board powers (datasheets): A100 SXM 400 W, H100 SXM 700 W, V100 SXM2 300 W. On random
  // operands a dense GEMM draws more than the board allows at the rated clock (He 2024: an
  // A100's 8192^3 runs at 295 TFLOP/s on zeros, 257 on random inputs); the power limiter
  // (engine/perf/power_limiter.hpp) slows it to the board's power, at the rate the maximum
  // achievable matmul FLOPS measure (a100.yaml, h100.yaml: 271.2 and 806 TFLOP/s, the fits of
  // their flop_energy_factor). Issue 16's goal: within 10% of the board power. The V100
  // template has no such fit (no measurement in hand): it draws what its budget provisions,
  // printed, bounded by the budget.
  std::printf("\n%-6s %8s %10s %8s %10s %8s %10s\n", "GEMM", "board W", "loop W", "err",
              "loop TF/s", "train W", "train TF/s");
  for (const auto& [tmpl, board] : {std::pair{"a100", 400.0}, {"h100", 700.0}, {"v100", 300.0}}) {
    const test::ShippedSystem& s = test::shipped_system(tmpl);
    const DevicePower d = device_power(s.spec, s.arch);
    const Kernel k = gemm_kernel("gemm", KernelKind::kGemm, Phase::kForward, DataType::kFp16,
                                 GemmShape{1, 8192, 8192, 8192}, {});
    const auto run = [&](PerfMode mode) {
      KernelTimer timer(make_perf_machine(s.spec, s.arch, mode));
      const KernelTime t = timer.time(k);
      return std::pair{d.chip_idle() + (t.energy() / t.device).si(), k.flops.si() / t.device.si()};
    };
    const auto [loop_w, loop_flops] = run(PerfMode::kBackToBack);
    const auto [train_w, train_flops] = run(PerfMode::kSustained);
    std::printf("%-6s %8.0f %10.1f %+7.1f%% %10.1f %8.1f %10.1f\n", tmpl, board, loop_w,
                100.0 * (loop_w - board) / board, loop_flops / 1e12, train_w, train_flops / 1e12);
    CHECK(loop_w > d.chip_idle());
    CHECK(loop_w <= board * (1.0 + 1e-9));
    CHECK(train_w <= board * (1.0 + 1e-9));
    CHECK(train_flops <= loop_flops);  // the training residual (sustained_fraction; V100: 1)
    if (std::string(tmpl) != "v100") {
      CHECK(loop_w == Approx(board).epsilon(0.10));
      CHECK(train_w == Approx(board).epsilon(0.10));
    }
  }
}

}  // namespace pathfinder
