// Where a generated device's power goes (engine/arch/device_power.hpp).
#include "engine/arch/device_power.hpp"

#include <catch2/catch.hpp>

#include "tests/arch/arch_fixtures.hpp"

using namespace pathfinder;

namespace {

struct Shipped {
  ArchSpec spec;
  MicroArch arch;
};

Shipped shipped(const std::string& name, std::optional<double> power_w = std::nullopt) {
  ArchTemplate t = test::shipped_template(name);
  if (power_w) t.budget.power = watts(*power_w);
  Shipped s{bind_template(test::shipped_techlib(), t), {}};
  s.arch = generate_micro_arch(s.spec, ResourceSplit::from_template(s.spec.tmpl));
  return s;
}

}  // namespace

TEST_CASE("A100: the core's 199.6 W split into leakage, clock tree and per-FLOP energy",
          "[arch][energy]") {
  const Shipped a = shipped("a100");
  const DevicePower d = device_power(a.spec, a.arch);
  // The core runs at N7's nominal point (1.41 GHz, 0.75 V): 432 MCUs x 0.4620 W = 199.58 W.
  REQUIRE(a.arch.core.voltage.si() == Approx(0.75).epsilon(1e-4));
  const double full = 432 * 0.4620;
  CHECK(a.arch.core.use.power_used.si() == Approx(full).epsilon(1e-4));
  // techlib/logic.yaml N7: static_share 0.15, clock_gating 0.85.
  CHECK(d.core_static == Approx(0.15 * full).epsilon(1e-4));       // 29.94 W
  CHECK(d.core_clock == Approx(0.15 * 0.85 * full).epsilon(1e-4));  // 25.45 W
  CHECK(d.core_dynamic == Approx(0.85 * 0.85 * full).epsilon(1e-4));
  // 144.2 W over 311.9 TFLOP/s: 0.4624 pJ per FP16 FLOP as provisioned, x 2.582 on real
  // operands (a100.yaml flop_energy_factor) = 1.194 pJ; element-wise FLOPs 16x (1/0.0625).
  CHECK(d.joule_per_flop ==
        Approx(2.582 * 0.85 * 0.85 * full / a.arch.core.peak.si()).epsilon(1e-4));
  CHECK(d.joule_per_flop == Approx(2.582 * 0.4624e-12).epsilon(1e-3));
  CHECK(d.joule_per_vector_flop == Approx(d.joule_per_flop / 0.0625).epsilon(1e-9));
  // HBM2e: dynamic power over the 2.04 TB/s it was generated for.
  const MainMemoryStats& m = a.arch.main_memory;
  CHECK(d.main_joule_per_byte == Approx(m.dynamic_power.si() / m.bandwidth.si()));
  // NVLink 3: static_share 0.7 of the links' 28.8 W; the rest over 300 GB/s a direction.
  const NetworkStats* nv = a.arch.network(NetworkTier::kInterPackage);
  REQUIRE(nv != nullptr);
  CHECK(d.link_static[1] == Approx(0.7 * nv->power.si()));
  CHECK(d.link_joule_per_byte[1] == Approx(0.3 * nv->power.si() / nv->per_direction.si()));
  // Off the chip (templates/a100.yaml): 60 W of scale-out per GPU, 390 W of node.
  CHECK(d.link_static[2] == 60.0);
  CHECK(d.overhead == 390.0);
  CHECK(d.always_on() == Approx(d.chip_idle() + 450.0));
  // The board's limit: the 400 W budget.
  CHECK(d.limit == 400.0);
}

TEST_CASE("at full activity of every unit a device draws what the generator spent",
          "[arch][energy]") {
  for (const char* name : {"a100", "v100", "h100", "h200", "h800", "b200", "gb200", "tpu_systolic"}) {
    INFO(name);
    const Shipped s = shipped(name);
    const DevicePower d = device_power(s.spec, s.arch);
    // Static, clock tree and every unit's dynamic power at its full rate: the generator's total.
    CHECK(d.full_activity() == Approx(s.arch.total.power_used.si()).epsilon(1e-9));
    CHECK(d.full_activity() <= s.spec.tmpl.budget.power.si() * (1.0 + 1e-12));
    CHECK(d.chip_idle() > 0.0);
    CHECK(d.chip_idle() < d.full_activity());
  }
}

TEST_CASE("a lower power cap lowers the energy per FLOP as V^2 and the leakage as V",
          "[arch][energy]") {
  const Shipped hi = shipped("a100");
  const Shipped lo = shipped("a100", 300.0);
  const DevicePower dh = device_power(hi.spec, hi.arch), dl = device_power(lo.spec, lo.arch);
  // N7: Vn 0.75 V, fn 1.41 GHz (techlib/logic.yaml).
  const double v = lo.arch.core.voltage.si() / 0.75, f = lo.arch.core.frequency.si() / 1.41e9;
  REQUIRE(v < 1.0);
  // P_nom = 199.58 W: leakage 0.15 P_nom v; per FLOP g (P_nom f v^2 - 0.15 P_nom v) / (peak f)
  // as provisioned, x 2.582 on real operands (a100.yaml flop_energy_factor).
  const double nominal = 432 * 0.4620;
  CHECK(dl.core_static == Approx(0.15 * nominal * v).epsilon(1e-6));
  CHECK(dl.joule_per_flop ==
        Approx(2.582 * 0.85 * (nominal * f * v * v - 0.15 * nominal * v) / lo.arch.core.peak.si())
            .epsilon(1e-6));
  CHECK(dl.joule_per_flop < dh.joule_per_flop);
  CHECK(dl.core_static < dh.core_static);
  CHECK(dl.full_activity() <= 300.0 * (1.0 + 1e-12));
}

TEST_CASE("B200: an FP4 FLOP costs half an FP8 one at the same energy factor", "[arch][energy]") {
  // The core's dynamic power at full rate is one budget whatever the operands: over the FP8
  // peak (4.5 PFLOPS) x fp8_flop_energy_factor 3.199 per FP8 FLOP, over the FP4 peak (9
  // PFLOPS) x fp4_flop_energy_factor (default: the FP8 one) per FP4 FLOP. Without FP4 units
  // (H100) the FP8 figure stands in.
  const Shipped b = shipped("b200");
  const DevicePower d = device_power(b.spec, b.arch);
  CHECK(d.joule_per_fp4_flop == Approx(d.core_dynamic * 3.199 / b.arch.core.fp4_peak.si()));
  CHECK(d.joule_per_fp4_flop == Approx(0.5 * d.joule_per_fp8_flop).epsilon(1e-9));
  const Shipped h = shipped("h100");
  const DevicePower dh = device_power(h.spec, h.arch);
  CHECK(h.arch.core.fp4_peak.si() == 0.0);
  CHECK(dh.joule_per_fp4_flop == dh.joule_per_fp8_flop);
}
