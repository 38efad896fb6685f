// Generator properties (issue 2): no design exceeds any budget; raising one component's budget
// never lowers the figure it feeds; output is deterministic. Plus golden checks of the
// equations on a hand-computable case.
#include <catch2/catch.hpp>
#include <random>

#include "engine/arch/micro_arch_report.hpp"
#include "tests/arch/arch_fixtures.hpp"

using namespace pathfinder;
using namespace pathfinder::test;

namespace {

const char* const kTemplates[] = {"v100", "a100", "h100", "deepflow_v100", "tpu_systolic", "mcm4", "waferscale"};

// A random split with every budget summing to at most 1 (seeded: deterministic test).
ResourceSplit random_split(int h, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  ResourceSplit s(h);
  std::vector<double> a(h), p(h), r(h);
  double sa = 0, sp = 0, sr = 0;
  for (int i = 0; i < h; ++i) {
    sa += a[i] = u(rng);
    sp += p[i] = u(rng);
    sr += r[i] = u(rng);
  }
  const double fill = 0.5 + 0.5 * u(rng);
  for (int i = 0; i < h; ++i) s.set(i, fill * a[i] / sa, fill * p[i] / sp, fill * r[i] / sr);
  return s;
}

void check_within_budget(const BudgetUse& u, const std::string& what) {
  INFO(what);
  CHECK(u.area_used.si() <= u.area_budget.si() * (1 + 1e-9) + 1e-18);
  CHECK(u.power_used.si() <= u.power_budget.si() * (1 + 1e-9) + 1e-12);
  CHECK(u.perimeter_used.si() <= u.perimeter_budget.si() * (1 + 1e-9) + 1e-12);
}

}  // namespace

TEST_CASE("no generated design exceeds any budget", "[arch][property]") {
  std::mt19937_64 rng(42);
  for (const char* name : kTemplates) {
    const ArchSpec spec = bind_template(shipped_techlib(), shipped_template(name));
    const int h = ResourceSplit::from_template(spec.tmpl).components();
    for (int trial = 0; trial < 200; ++trial) {
      const MicroArch a = generate_micro_arch(spec, random_split(h, rng));
      check_within_budget(a.core.use, "core");
      for (const auto& l : a.levels) check_within_budget(l.use, l.name);
      check_within_budget(a.main_memory.use, "main_memory");
      for (const auto& n : a.networks) check_within_budget(n.use, "network");
      CHECK(a.total.area_used <= a.total.area_budget);
      CHECK(a.total.power_used.si() <= a.total.power_budget.si() * (1 + 1e-9));
      CHECK(a.node_area_used <= spec.tmpl.budget.node_area);
      if (!a.feasible) CHECK_FALSE(a.infeasible_reason.empty());
    }
  }
}

TEST_CASE("raising one component's budget never lowers the figure it feeds", "[arch][property]") {
  for (const char* name : kTemplates) {
    const ArchSpec spec = bind_template(shipped_techlib(), shipped_template(name));
    const ResourceSplit base = ResourceSplit::from_template(spec.tmpl);
    const ComponentIndex idx{static_cast<int>(spec.tmpl.levels.size())};
    // Figures fed by each budget of each component.
    auto figures = [&](const MicroArch& a, int comp, int budget) -> std::vector<double> {
      if (comp == idx.core()) return {a.core.peak.si()};
      if (comp == idx.main_memory()) {
        if (budget == 1) return {a.main_memory.bandwidth.si()};
        return {a.main_memory.capacity.si()};
      }
      if (comp == idx.intra() || comp == idx.inter()) {
        const auto* n = a.network(comp == idx.intra() ? NetworkTier::kIntraPackage
                                                      : NetworkTier::kInterPackage);
        return {n != nullptr ? n->bandwidth.si() : 0.0};
      }
      const LevelStats& l = a.levels[comp - 1];
      return budget == 1 ? std::vector<double>{l.bandwidth.si()} : std::vector<double>{l.capacity.si()};
    };
    for (int comp = 0; comp < idx.count(); ++comp) {
      for (int budget = 0; budget < 3; ++budget) {
        double last = -1.0;
        for (double scale = 0.25; scale <= 2.0; scale += 0.05) {
          ResourceSplit s = base;
          const double v = (budget == 0 ? base.area(comp) : budget == 1 ? base.power(comp)
                                                                       : base.perimeter(comp));
          s.values()[budget * idx.count() + comp] = v * scale;
          const double f = figures(generate_micro_arch(spec, s), comp, budget)[0];
          INFO(name << " component " << comp << " budget " << budget << " scale " << scale);
          CHECK(f >= last * (1 - 1e-12));
          last = f;
        }
      }
    }
  }
}

TEST_CASE("generation is deterministic", "[arch][property]") {
  const MicroArch a = generate_shipped("a100");
  const MicroArch b = generate_shipped("a100");
  CHECK(to_json(a).dump() == to_json(b).dump());
}

TEST_CASE("core equations on a hand-computed case", "[arch][golden]") {
  // A100 template, core area halved: 0.3675/2 x 826 mm^2 = 151.78 mm^2 / 0.5904 mm^2 = 257
  // MCUs -> 64 bundles built -> floor(64 x 0.84375) = 54 enabled = 216 MCUs. The same core
  // power (199.6 W) over half the MCUs drives the voltage up: P ratio = 199.6 / (216 x 0.462 W)
  // = 2.0, the unique root of V (V-0.3)^1.5 = 2.0 x 0.75 x 0.45^1.5 = 0.4528 is V = 0.9223 V
  // (< Vmax 1.0): 0.9223 x 0.6223^1.5 = 0.4528. f = 1.41 GHz x [(0.6223^1.5 / 0.9223) /
  // (0.45^1.5 / 0.75)] = 1.41 x (0.53228 / 0.40249) = 1.865 GHz.
  const ArchSpec spec = bind_template(shipped_techlib(), shipped_template("a100"));
  ResourceSplit s = ResourceSplit::from_template(spec.tmpl);
  s.set(0, s.area(0) / 2, s.power(0), 0.0);
  const MicroArch a = generate_micro_arch(spec, s);
  CHECK(a.core.bundles_built == 64);
  CHECK(a.core.mcus == 216);
  CHECK(a.core.frequency_binding == VfBinding::kPower);
  const double ratio = 0.4990 * 400 / (216 * 0.4620);
  CHECK(a.core.use.power_used.in(units::watts) == Approx(0.4990 * 400).epsilon(1e-9));
  CHECK(ratio == Approx(2.0003).epsilon(1e-3));
  CHECK(a.core.voltage.in(units::volts) == Approx(0.9223).epsilon(1e-3));
  CHECK(a.core.frequency.in(units::gigahertz) == Approx(1.865).epsilon(2e-3));
}

TEST_CASE("a power-starved core drops bundles at Vmin (paper 4.4.1)", "[arch][golden]") {
  // 2% of 400 W = 8 W for 432 MCUs of 0.462 W: far below Vmin. At Vmin 0.55 V the power ratio
  // is 0.55 x 0.25^1.5 / (0.75 x 0.45^1.5) = 0.3037, so a bundle of 4 costs 4 x 0.462 x 0.3037
  // = 0.5612 W and floor(8 / 0.5612) = 14 bundles survive. They then spend the whole 8 W:
  // ratio 8 / (56 x 0.462 W) = 0.3092 = V (V-0.3)^1.5 / (0.75 x 0.45^1.5) -> V = 0.5523 V, just
  // above Vmin, f = 1.41 GHz x (0.2523^1.5 / 0.5523) / (0.45^1.5 / 0.75) = 0.804 GHz.
  const ArchSpec spec = bind_template(shipped_techlib(), shipped_template("a100"));
  ResourceSplit s = ResourceSplit::from_template(spec.tmpl);
  s.set(0, s.area(0), 0.02, 0.0);
  const MicroArch a = generate_micro_arch(spec, s);
  CHECK(a.core.count_binding == CountBinding::kPowerAtMinVoltage);
  CHECK(a.core.bundles == 14);
  CHECK(a.core.voltage.in(units::volts) == Approx(0.5523).epsilon(1e-3));
  CHECK(a.core.frequency.in(units::gigahertz) == Approx(0.804).epsilon(2e-3));
  CHECK(a.core.use.power_used.in(units::watts) == Approx(8.0).epsilon(1e-9));
}

TEST_CASE("an empty core budget is an infeasible design, not an exception", "[arch]") {
  const ArchSpec spec = bind_template(shipped_techlib(), shipped_template("a100"));
  ResourceSplit s = ResourceSplit::from_template(spec.tmpl);
  s.set(0, 0.0, s.power(0), 0.0);
  const MicroArch a = generate_micro_arch(spec, s);
  CHECK_FALSE(a.feasible);
  CHECK(a.infeasible_reason == "core: no bundle of MCUs fits the core area budget");
}

TEST_CASE("memory and vector derates: effective bandwidth and vector peak", "[arch][golden]") {
  // A100 template: memory.main.max_utilization 0.9, so the effective bandwidth is 0.9 x the
  // derived HBM2e bandwidth, 0.9 x 2039 GB/s (datasheet, reproduced within 0.3%) = 1835 GB/s;
  // core.vector_throughput_ratio 0.0625, so the vector peak is 0.0625 x 312 TFLOP/s = 19.5
  // TFLOP/s, the FP32 CUDA-core figure.
  const MicroArch a = generate_shipped("a100");
  CHECK(a.main_memory.effective_bandwidth.si() == Approx(0.9 * a.main_memory.bandwidth.si()));
  CHECK(a.main_memory.effective_bandwidth.in(units::gigabytes_per_second) ==
        Approx(1835.1).epsilon(3e-3));
  CHECK(a.core.vector_peak.si() == Approx(0.0625 * a.core.peak.si()));
  CHECK(a.core.vector_peak.in(units::teraflops_per_second) == Approx(19.5).epsilon(3e-3));
  const auto j = to_json(a);
  CHECK(j["main_memory"]["effective_bandwidth_gbs"].get<double>() ==
        Approx(a.main_memory.effective_bandwidth.in(units::gigabytes_per_second)).epsilon(1e-3));
  CHECK(j["core"]["vector_peak_tflops"].get<double>() ==
        Approx(a.core.vector_peak.in(units::teraflops_per_second)).epsilon(1e-3));
  // deepflow_v100 keeps the reference's DRAM util of 1: nothing is derated.
  const MicroArch d = generate_shipped("deepflow_v100");
  CHECK(d.main_memory.effective_bandwidth.si() == d.main_memory.bandwidth.si());
}
