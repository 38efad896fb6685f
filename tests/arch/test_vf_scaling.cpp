#include "engine/arch/vf_scaling.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <utility>
#include <vector>

#include "tests/test_support.hpp"

using namespace pathfinder;

namespace {
// The reference V100 core (deepflow-reference §1.4): Vn 0.8 V, Vt 0.2 V, Vmin 0.55 V, alpha 2.
VfModel v100_core() {
  return VfModel{volts(0.8), volts(0.2), volts(0.55), volts(5.0), 2.0};
}
}  // namespace

TEST_CASE("power ratio is V(V-Vt)^2 / (Vn(Vn-Vt)^2) for alpha 2", "[arch][vf]") {
  const VfModel m = v100_core();
  // At V = 1.0: 1.0 * 0.8^2 / (0.8 * 0.6^2) = 0.64 / 0.288 = 2.2222
  CHECK(power_ratio_at(m, 1.0) == Approx(0.64 / 0.288));
  // Rate at 1.0 V: (0.8^2/1.0) / (0.6^2/0.8) = 0.64 / 0.45 = 1.4222
  CHECK(rate_ratio_at(m, 1.0) == Approx(0.64 / 0.45));
  CHECK(rate_ratio_at(m, 0.8) == Approx(1.0));
}

TEST_CASE("reference V100 core operating point from its power budget", "[arch][vf][golden]") {
  // deepflow-reference §2.2: 643 MCUs x 0.13 W = 83.59 W nominal, budget 0.3745 x 300 W =
  // 112.35 W -> ratio 1.3441; the unique root of V(V-0.2)^2 = 1.3441 x 0.8 x 0.36 is 0.868 V
  // and f = 1.33 GHz x (0.668^2/0.868)/(0.36/0.8) = 1.519 GHz (reference: 0.87 V, 1.52 GHz).
  const VfPoint p = scale_to_power(v100_core(), 112.35 / (643 * 0.13), 1e9);
  CHECK(p.binding == VfBinding::kPower);
  CHECK(p.voltage_v == Approx(0.8679).epsilon(1e-3));
  CHECK(1.33 * p.rate_ratio == Approx(1.519).epsilon(2e-3));
  CHECK(p.power_ratio == Approx(112.35 / (643 * 0.13)).epsilon(1e-9));
}

TEST_CASE("below the minimum voltage the rate falls in proportion to power", "[arch][vf]") {
  const VfModel m = v100_core();
  const double pmin = power_ratio_at(m, 0.55);  // 0.55 x 0.35^2 / 0.288 = 0.23394
  CHECK(pmin == Approx(0.55 * 0.1225 / 0.288));
  const VfPoint p = scale_to_power(m, 0.5 * pmin, 1e9);
  CHECK(p.binding == VfBinding::kMinVoltage);
  CHECK(p.voltage_v == Approx(0.55));
  CHECK(p.rate_ratio == Approx(0.5 * rate_ratio_at(m, 0.55)));
  CHECK(p.power_ratio == Approx(0.5 * pmin));
}

TEST_CASE("rate and voltage caps leave the budget unused", "[arch][vf]") {
  VfModel m = v100_core();
  m.maximum = volts(1.0);
  const VfPoint at_vmax = scale_to_power(m, 100.0, 1e9);
  CHECK(at_vmax.binding == VfBinding::kMaxVoltage);
  CHECK(at_vmax.voltage_v == Approx(1.0));
  CHECK(at_vmax.power_ratio == Approx(0.64 / 0.288));
  const VfPoint capped = scale_to_power(m, 100.0, 1.2);  // rate cap 1.2x nominal
  CHECK(capped.binding == VfBinding::kMaxRate);
  CHECK(capped.rate_ratio == Approx(1.2).epsilon(1e-9));
  CHECK(capped.power_ratio < at_vmax.power_ratio);
}

TEST_CASE("more power never lowers the operating rate", "[arch][vf][property]") {
  VfModel m = v100_core();
  m.alpha = 1.5;
  double last = 0.0;
  for (double r = 0.01; r < 20.0; r *= 1.07) {
    const VfPoint p = scale_to_power(m, r, 3.0);
    CHECK(p.rate_ratio >= last - 1e-12);
    CHECK(p.power_ratio <= r * (1 + 1e-9));  // never over budget
    last = p.rate_ratio;
  }
}

TEST_CASE("N7: what a sustained clock below boost costs in power", "[arch][vf][golden]") {
  // The power overshoot at boost that scale_to_power would have to take back for a training
  // clock of 0.85 (a100.yaml's core.sustained_fraction) or 0.93 (near the least clock
  // LLMCompass's longest GEMM allows, 0.923, D6) of boost. N7 (techlib/logic.yaml): Vn 0.75, Vt 0.30, alpha 1.5.
  // Rate 0.85 at V = 0.6772: (0.3772^1.5 / 0.6772) / (0.45^1.5 / 0.75) = 0.34209 / 0.40249,
  // power 0.85 x (0.6772 / 0.75)^2 = 0.6929 -> the core would draw 1/0.6929 = 1.443x its budget
  // at boost (288 W of a 200 W share). Rate 0.93 at V = 0.7155: power 0.8464 -> 1.181x.
  const LogicNode* n7 = test::shipped_techlib().find_logic("N7");
  REQUIRE(n7 != nullptr);
  const VfModel& m = n7->vf;
  CHECK(rate_ratio_at(m, 0.6772) == Approx(0.34209 / 0.40249).epsilon(1e-4));
  CHECK(power_ratio_at(m, 0.6772) == Approx(0.6929).epsilon(1e-3));
  const VfPoint p85 = scale_to_power(m, 1.0 / 1.4431, 1.0);
  CHECK(p85.binding == VfBinding::kPower);
  CHECK(p85.rate_ratio == Approx(0.85).epsilon(1e-3));
  const VfPoint p93 = scale_to_power(m, 1.0 / 1.1814, 1.0);
  CHECK(p93.rate_ratio == Approx(0.93).epsilon(1e-3));
  // At the budget itself (ratio 1, capped at the boost rate) the core runs at boost.
  CHECK(scale_to_power(m, 1.0, 1.0).rate_ratio == Approx(1.0).epsilon(1e-9));
}

TEST_CASE("the operating point meets the budget to rounding, whatever the call order",
          "[arch][vf][property]") {
  // Power budgets from Vmin to the ceiling on three models called in turn (the kept ceilings
  // of vf_scaling.cpp serve each model's later calls): each kPower point's power ratio is the
  // budget to a few ulps, its rate the curve's rate at its voltage, and the same call made
  // again, after the other models', returns the same bits.
  VfModel a = v100_core();                  // Vmax 5 V stands for "none": root far below it
  VfModel b = v100_core();
  b.alpha = 1.3;
  b.maximum = volts(1.1);
  VfModel c = v100_core();
  c.threshold = volts(0.35);
  const std::array<std::pair<VfModel, double>, 3> models{
      {{a, 1e9}, {b, 1.6}, {c, 2.0}}};  // with a rate cap above nominal on b and c
  std::vector<VfPoint> first;
  for (int pass = 0; pass < 2; ++pass) {
    std::size_t k = 0;
    for (double r = 0.3; r < 4.0; r *= 1.11) {
      for (const auto& [m, cap] : models) {
        const VfPoint p = scale_to_power(m, r, cap);
        if (pass == 0) {
          first.push_back(p);
          if (p.binding == VfBinding::kPower) {
            CHECK(p.power_ratio == Approx(r).epsilon(2e-15));  // the voltage to an ulp or two
            CHECK(p.rate_ratio == rate_ratio_at(m, p.voltage_v));
            CHECK(p.voltage_v > m.minimum.si());
          }
        } else {
          const VfPoint& q = first[k];
          CHECK(p.voltage_v == q.voltage_v);
          CHECK(p.rate_ratio == q.rate_ratio);
          CHECK(p.binding == q.binding);
        }
        ++k;
      }
    }
  }
}
