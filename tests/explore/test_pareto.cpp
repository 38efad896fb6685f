// Pareto fronts (engine/explore/pareto.hpp): the sweep on worked points, and on every strategy
// of a real ranking no point dominates the front and no front point another.
#include "engine/explore/pareto.hpp"

#include <catch2/catch.hpp>

#include <limits>

#include "engine/graph/workload_loader.hpp"
#include "tests/arch/arch_fixtures.hpp"

namespace pathfinder {
namespace {

bool dominates(const std::array<double, 2>& a, const std::array<double, 2>& b) {
  return a[0] <= b[0] && a[1] <= b[1] && (a[0] < b[0] || a[1] < b[1]);
}

}  // namespace

TEST_CASE("non-dominated points on worked examples", "[explore][pareto]") {
  const double inf = std::numeric_limits<double>::infinity();
  // (1,5) (2,3) (3,4) (4,1) (2,3) (inf,0): (3,4) is dominated by (2,3); the second (2,3) is a
  // copy; the infinite one is never on the front.
  const std::vector<std::array<double, 2>> p{{1, 5}, {2, 3}, {3, 4}, {4, 1}, {2, 3}, {inf, 0}};
  CHECK(non_dominated(p) == std::vector<std::size_t>{0, 1, 3});
  CHECK(non_dominated({}).empty());
  // Equal first measure: only the better second survives.
  CHECK(non_dominated({{1, 2}, {1, 1}}) == std::vector<std::size_t>{1});
}

TEST_CASE("the time-energy front of every GPT-3 13B strategy on 64 A100s", "[explore][pareto]") {
  const ArchSpec spec = bind_template(test::shipped_techlib(), test::shipped_template("a100"));
  const WorkloadSpec w = load_workload(test::source_path("studies/workloads/gpt3_13b.yaml")).spec;
  const DesignEvaluator e(spec, w, 64, TrainingOptions::from(test::shipped_software("a100")));
  const std::vector<RankedStrategy> ranked =
      rank_strategies(e, ResourceSplit::from_template(spec.tmpl).values());
  for (const auto& [a, b] : {std::pair{GoalKind::kTime, GoalKind::kEnergy},
                             std::pair{GoalKind::kTime, GoalKind::kCost},
                             std::pair{GoalKind::kEnergy, GoalKind::kCost}}) {
    const std::vector<std::size_t> front = pareto_front(ranked, a, b);
    REQUIRE_FALSE(front.empty());
    std::vector<std::array<double, 2>> all;
    for (const RankedStrategy& r : ranked) all.push_back({measure(a, r.result), measure(b, r.result)});
    // The grid here is exhaustive (every valid strategy): none dominates a front point, and
    // the front's own points do not dominate each other; ordered by the first measure.
    for (const std::size_t f : front) {
      for (const auto& q : all) CHECK_FALSE(dominates(q, all[f]));
    }
    for (std::size_t i = 1; i < front.size(); ++i) {
      CHECK(all[front[i - 1]][0] <= all[front[i]][0]);
      CHECK(all[front[i - 1]][1] > all[front[i]][1]);
    }
    // Its ends are the best on each measure alone.
    double best_a = std::numeric_limits<double>::infinity(), best_b = best_a;
    for (const auto& q : all) {
      best_a = std::min(best_a, q[0]);
      best_b = std::min(best_b, q[1]);
    }
    CHECK(all[front.front()][0] == best_a);
    CHECK(all[front.back()][1] == best_b);
  }
}

TEST_CASE("the pareto option takes two different measures", "[explore][pareto][config-error]") {
  const SourceLoc at{"command line", 0, 0, "--pareto"};
  CHECK(parse_pareto("time,energy", at) == std::array{GoalKind::kTime, GoalKind::kEnergy});
  CHECK(test::error_of([&] { (void)parse_pareto("time", at); }) ==
        "command line: error: --pareto: expected two of time, energy, edp or cost separated by "
        "a comma, got \"time\"");
  CHECK(test::error_of([&] { (void)parse_pareto("time,time", at); }) ==
        "command line: error: --pareto: expected two of time, energy, edp or cost separated by "
        "a comma, got \"time,time\" (the same measure twice)");
}

}  // namespace pathfinder
