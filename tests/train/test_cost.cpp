// Money per training iteration (engine/train/cost.hpp): capital share plus electricity.
#include "engine/train/cost.hpp"

#include <catch2/catch.hpp>

#include "engine/graph/workload_loader.hpp"
#include "engine/train/training_model.hpp"
#include "tests/train/train_fixtures.hpp"

namespace pathfinder {

TEST_CASE("an iteration's cost: the devices' amortized capital and the electricity",
          "[train][cost]") {
  const test::ShippedSystem& a = test::shipped_system("a100");
  const WorkloadSpec w = load_workload(test::source_path("studies/workloads/gpt3_1.3b.yaml")).spec;
  const Strategy s = parse_strategy("tp2-pp2-dp2-mb1");
  TrainingModel m(a.spec, a.arch, w, s.devices(), TrainingOptions::from(test::shipped_software("a100")));
  const TrainingResult r = m.evaluate(s);
  REQUIRE(r.feasible);
  REQUIRE(r.cost.modelled);
  const DeviceCost d = device_cost(a.spec, a.arch);
  // 8 devices' capital over the iteration time; the iteration's joules at 0.08 USD/kWh x 1.2.
  CHECK(r.cost.capital_usd == Approx(8.0 * d.capital_usd * r.iteration_time.si() / (4.0 * 365.25 * 86400.0)));
  CHECK(r.cost.energy_usd == Approx(r.energy.joules.si() * 0.08 * 1.2 / 3.6e6));
  CHECK(r.cost.usd == Approx(r.cost.capital_usd + r.cost.energy_usd));
  // GPT-3 1.3B: 512 sequences of 2048 tokens.
  CHECK(r.cost.usd_per_token == Approx(r.cost.usd / (512.0 * 2048.0)));
  CHECK(r.cost.device_usd == d.device_usd);
  // Unmodelled: all zero.
  CHECK_FALSE(iteration_cost(DeviceCost{}, r, 8, 1.0).modelled);
  CHECK(iteration_cost(DeviceCost{}, r, 8, 1.0).usd == 0.0);
}

}  // namespace pathfinder
