// What a search minimizes (engine/explore/goal.hpp): the measures, the budgets and their
// reasons, the file keys and the cost-model check.
#include "engine/explore/goal.hpp"

#include <catch2/catch.hpp>

#include <cmath>

#include "tests/arch/arch_fixtures.hpp"

namespace pathfinder {
namespace {

// 2 s, 1,000 J over 10,000 tokens (0.1 J/token), 0.5 USD (50 USD per million tokens).
TrainingResult result() {
  TrainingResult r;
  r.iteration_time = seconds(2.0);
  r.energy.joules = 1000.0 * units::joules;
  r.energy.joules_per_token = 0.1 * units::joules;
  r.cost.modelled = true;
  r.cost.usd = 0.5;
  r.cost.usd_per_token = 0.5 / 10000.0;
  return r;
}

Goal read(const std::string& yaml) { return read_goal(ConfigNode::load_string(yaml, "g.yaml")); }

}  // namespace

TEST_CASE("goal measures: time, energy, energy-delay and cost of one result", "[explore][goal]") {
  const TrainingResult r = result();
  CHECK(measure(GoalKind::kTime, r) == 2.0);
  CHECK(measure(GoalKind::kEnergy, r) == 1000.0);
  CHECK(measure(GoalKind::kEnergyDelay, r) == 2000.0);  // 1,000 J x 2 s
  CHECK(measure(GoalKind::kCost, r) == 0.5);
  TrainingResult out = r;
  out.feasible = false;
  CHECK(std::isinf(measure(GoalKind::kTime, out)));
  TrainingResult no_cost = r;
  no_cost.cost = {};
  CHECK(std::isinf(measure(GoalKind::kCost, no_cost)));
}

TEST_CASE("goal budgets: per token, with the numbers in the reason", "[explore][goal]") {
  const TrainingResult r = result();
  Goal g;
  g.max_j_per_token = 0.2;
  CHECK(over_budget(g, r).empty());
  CHECK(goal_value(g, r) == 2.0);
  g.max_j_per_token = 0.05;
  CHECK(over_budget(g, r) == "0.1 J per token, budget 0.05");
  CHECK(std::isinf(goal_value(g, r)));
  Goal c;
  c.max_usd_per_mtoken = 40.0;  // 50 USD per million tokens is over
  CHECK(over_budget(c, r) == "50 USD per million tokens, budget 40");
  CHECK(c.needs_cost());
  // No tokens (a GEMM): per iteration.
  TrainingResult gemm = r;
  gemm.energy.joules_per_token = Energy{};
  Goal e;
  e.max_j_per_token = 500.0;
  CHECK(over_budget(e, gemm) == "1000 J per iteration, budget 500");
}

TEST_CASE("goal keys in a search or study file, located errors", "[explore][goal][config-error]") {
  const Goal g = read("objective: edp\nmax_j_per_token: 0.4\n");
  CHECK(g.kind == GoalKind::kEnergyDelay);
  CHECK(g.max_j_per_token == 0.4);
  CHECK_FALSE(g.max_usd_per_mtoken);
  CHECK(read("name: x\n").kind == GoalKind::kTime);  // default
  CHECK(test::error_of([] { (void)read("objective: energie\n"); }) ==
        "g.yaml:1:12: error: objective: expected one of time, energy, edp or cost, got "
        "\"energie\"; did you mean \"energy\"?");
  CHECK(test::error_of([] { (void)read("max_usd_per_mtoken: -1\n"); }) ==
        "g.yaml:1:21: error: max_usd_per_mtoken: expected a positive number, got \"-1\"");
}

TEST_CASE("a cost goal needs the template's cost model", "[explore][goal]") {
  Goal g;
  g.kind = GoalKind::kCost;
  const ArchSpec a100 = bind_template(test::shipped_techlib(), test::shipped_template("a100"));
  CHECK(cost_model_missing(g, a100).empty());
  const ArchSpec tpu = bind_template(test::shipped_techlib(), test::shipped_template("tpu_systolic"));
  CHECK(cost_model_missing(g, tpu) == "the template TPU-class-systolic has no cost section");
  CHECK(cost_model_missing(Goal{}, tpu).empty());  // time needs none
}

}  // namespace pathfinder
