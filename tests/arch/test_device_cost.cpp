// What a device costs (engine/arch/device_cost.hpp): the die-per-wafer and yield formulas on
// worked numbers, and the shipped A100's cost derived by hand.
#include "engine/arch/device_cost.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>

#include "tests/arch/arch_fixtures.hpp"

using namespace pathfinder;

TEST_CASE("dies per 300 mm wafer and negative-binomial yield", "[arch][cost]") {
  // 100 mm^2: pi 150^2 / 100 - pi 300 / sqrt(200) = 706.86 - 66.64 = 640.2 gross dies.
  CHECK(dies_per_wafer(100.0) == Approx(706.858 - 66.643).epsilon(1e-5));
  // 826 mm^2 (A100): 85.58 - 23.19 = 62.38.
  CHECK(dies_per_wafer(826.0) ==
        Approx(std::numbers::pi * 22500.0 / 826.0 - std::numbers::pi * 300.0 / std::sqrt(1652.0)));
  CHECK(dies_per_wafer(0.0) == 0.0);
  CHECK(dies_per_wafer(1e6) == 0.0);  // larger than the wafer: none
  // Y = (1 + A D0 / alpha)^-alpha: 8.26 cm^2 at 0.09 /cm^2, alpha 3 -> 1.2478^-3 = 0.5147.
  CHECK(die_yield(826.0, 0.09, 3.0) == Approx(std::pow(1.0 + 8.26 * 0.09 / 3.0, -3.0)));
  CHECK(die_yield(826.0, 0.09, 3.0) == Approx(0.5147).epsilon(1e-3));
  // No defects: every die is good; as alpha grows the yield tends to Poisson's exp(-A D0).
  CHECK(die_yield(826.0, 0.0, 3.0) == 1.0);
  CHECK(die_yield(826.0, 0.09, 1e6) == Approx(std::exp(-8.26 * 0.09)).epsilon(1e-5));
  // Larger dies yield less and cost more per mm^2.
  CHECK(die_yield(400.0, 0.1, 3.0) > die_yield(800.0, 0.1, 3.0));
}

TEST_CASE("the A100's cost by hand from the shipped library and template", "[arch][cost]") {
  const ArchSpec spec = bind_template(test::shipped_techlib(), test::shipped_template("a100"));
  const MicroArch arch = generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl));
  const DeviceCost c = device_cost(spec, arch);
  REQUIRE(c.modelled);
  // N7 wafer 9,346 USD over 62.38 gross x 0.5147 good dies = 291.1 USD per good die.
  CHECK(c.die_usd == Approx(9346.0 / (dies_per_wafer(826.0) * die_yield(826.0, 0.09, 3.0))));
  CHECK(c.die_usd == Approx(291.1).epsilon(1e-3));
  // Five 16 GiB HBM2e stacks: 85.90 GB x 10 USD; packaging 900; system share 10,000.
  CHECK(c.memory_usd == Approx(80.0 * 1.073741824 * 10.0));
  CHECK(c.device_usd == Approx(c.die_usd + c.memory_usd + 900.0));
  CHECK(c.capital_usd == Approx(c.device_usd + 10000.0));  // markup 1
  // Over four Julian years; electricity 0.08 USD/kWh x PUE 1.2 per 3.6 MJ.
  CHECK(c.usd_per_second == Approx(c.capital_usd / (4.0 * 365.25 * 86400.0)));
  CHECK(c.usd_per_joule == Approx(0.08 * 1.2 / 3.6e6));
}

TEST_CASE("no cost section or no prices: no cost model", "[arch][cost]") {
  ArchTemplate t = test::shipped_template("a100");
  t.cost.reset();
  const ArchSpec spec = bind_template(test::shipped_techlib(), t);
  const MicroArch arch = generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl));
  CHECK_FALSE(device_cost(spec, arch).modelled);
  // The reference's DF nodes have no wafer price.
  const ArchSpec df = bind_template(test::shipped_techlib(), test::shipped_template("deepflow_v100"));
  const MicroArch dfa = generate_micro_arch(df, ResourceSplit::from_template(df.tmpl));
  CHECK_FALSE(device_cost(df, dfa).modelled);
}
