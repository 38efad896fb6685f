// The Pareto front of a split search (engine/explore/pareto_search.hpp): no returned split
// dominates another, and a grid of splits on a small problem finds none dominating the front.
#include "engine/explore/pareto_search.hpp"

#include <catch2/catch.hpp>

#include <cstdio>

#include "engine/graph/workload_loader.hpp"
#include "tests/train/train_fixtures.hpp"

namespace pathfinder {
namespace {

bool dominates(const std::array<double, 2>& a, const std::array<double, 2>& b) {
  return a[0] <= b[0] && a[1] <= b[1] && (a[0] < b[0] || a[1] < b[1]);
}

}  // namespace

TEST_CASE("a time-energy front of splits: non-dominated, and no grid split beats it",
          "[explore][pareto]") {
  // GPT-3 1.3B on 8 A100s with one strategy (tests/data/studies/small_search.yaml, the
  // strategy fixed), 3 weights x 2 restarts x 8 steps.
  SearchStudy s = load_search_study(test::source_path("tests/data/studies/small_search.yaml"));
  s.strategy = parse_strategy("tp1-pp1-dp8-mb1");
  s.options.steps = 8;
  const WorkloadSpec w = load_workload(s.workload_path).spec;
  const test::ShippedSystem& a = test::shipped_system("a100");
  const DesignEvaluator e(a.spec, w, 8, TrainingOptions::from(test::shipped_software("a100")));
  const std::array<GoalKind, 2> m{GoalKind::kTime, GoalKind::kEnergy};
  const ParetoSearch p = pareto_search(s, e, m, 3);
  CHECK(p.searched == 3);
  REQUIRE_FALSE(p.front.empty());
  for (const ParetoPoint& x : p.front) {
    CHECK(x.measures[0] == x.result.iteration_time.si());
    CHECK(x.measures[1] == x.result.energy.joules.si());
    for (const ParetoPoint& y : p.front) CHECK_FALSE(dominates(x.measures, y.measures));
  }
  // A grid: power moved between the core and main memory in 5% steps of the budget, the rest
  // of the template's split kept (the line through the template's own split).
  const Eigen::VectorXd x0 = ResourceSplit::from_template(a.spec.tmpl).values();
  const Eigen::Index h = static_cast<Eigen::Index>(a.spec.tmpl.split.size());
  const double core = x0[h + 0], memory = x0[h + 4];  // power shares: core 0, main_memory 4
  int beaten = 0, points = 0;
  for (double d = -0.3; d <= 0.3 + 1e-9; d += 0.05) {
    Eigen::VectorXd x = x0;
    x[h + 0] = core + d;
    x[h + 4] = memory - d;
    if (x[h + 0] <= 0.0 || x[h + 4] <= 0.0) continue;
    const TrainingResult r = e.evaluate(x, *s.strategy).training;
    if (!r.feasible) continue;
    ++points;
    const std::array<double, 2> g{r.iteration_time.si(), r.energy.joules.si()};
    for (const ParetoPoint& f : p.front) beaten += dominates(g, f.measures) ? 1 : 0;
  }
  std::printf("\nPareto front %zu splits; %d grid splits, %d dominating a front point\n",
              p.front.size(), points, beaten);
  CHECK(points > 5);
  CHECK(beaten == 0);
}

}  // namespace pathfinder
