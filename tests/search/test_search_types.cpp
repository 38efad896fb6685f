// Tests for search/search_types.hpp: options validation messages, optimizer names,
// starts, picking the best restart and the reports.
#include <catch2/catch.hpp>

#include "search/search_types.hpp"
#include "tests/search/search_fixtures.hpp"

using namespace pathfinder;
using namespace pathfinder::test;

TEST_CASE("search options: defaults are valid, every bad field named", "[search][config-error]") {
  CHECK(SearchOptions{}.problems().empty());
  SearchOptions o;
  o.restarts = 0;
  o.steps = -3;
  o.learning_rate = 0.0;
  o.momentum = 1.0;
  o.backtrack = 1.0;
  o.fd_step = 0.0;
  o.tolerance = -1e-6;
  o.patience = 0;
  o.step_tolerance = std::nan("");
  o.max_evaluations = -5;
  o.start_draws = 0;
  o.initial = Eigen::VectorXd::Constant(9, kInf);
  CHECK(error_of([&] { o.validate(9); }) ==
        "search options: error: restarts: expected a whole number in [1, 10000], got 0\n"
        "search options: error: steps: expected a whole number in [1, 1000000], got -3\n"
        "search options: error: learning_rate: expected a positive finite number, got 0\n"
        "search options: error: momentum: expected a number in [0, 1), got 1\n"
        "search options: error: backtrack: expected a number in (0, 1), got 1\n"
        "search options: error: fd_step: expected a number in (0, 0.5], got 0\n"
        "search options: error: tolerance: expected a finite number >= 0, got -1e-06\n"
        "search options: error: patience: expected a whole number >= 1, got 0\n"
        "search options: error: step_tolerance: expected a finite number >= 0, got nan\n"
        "search options: error: max_evaluations: expected a whole number >= 0 (0: automatic), "
        "got -5\n"
        "search options: error: start_draws: expected a whole number >= 1, got 0\n"
        "search options: error: initial: expected finite fractions, got a NaN or infinity");
  SearchOptions lr;
  lr.learning_rate = std::numeric_limits<double>::infinity();
  lr.momentum = -0.1;
  CHECK(error_of([&] { lr.validate(); }) ==
        "search options: error: learning_rate: expected a positive finite number, got inf\n"
        "search options: error: momentum: expected a number in [0, 1), got -0.1");
}

TEST_CASE("optimizer names", "[search]") {
  for (const std::string& name : valid_search_algorithms()) {
    const auto a = parse_search_algorithm(name);
    REQUIRE(a);
    CHECK(to_string(*a) == name);
  }
  CHECK(valid_search_algorithms() ==
        std::vector<std::string>{"pgd", "cobyla", "slsqp", "direct", "isres"});
  CHECK_FALSE(parse_search_algorithm("PGD"));
  CHECK(search_algorithm_from("direct", SourceLoc{}) == SearchAlgorithm::kDirect);
  CHECK(error_of([] {
          static_cast<void>(
              search_algorithm_from("cobila", SourceLoc{"study.yaml", 3, 14, "search.optimizer"}));
        }) ==
        "study.yaml:3:14: error: search.optimizer: unknown optimizer \"cobila\" (expected "
        "pgd, cobyla, slsqp, direct or isres); did you mean \"cobyla\"?");
}

TEST_CASE("starts: the initial point, then seeded draws until feasible", "[search]") {
  const SplitSpace s = three_components();
  SearchOptions o;
  o.initial = Eigen::VectorXd::Constant(9, 0.5);
  const Objective finite = [](const Eigen::VectorXd& x) { return x.sum(); };
  const Start a = draw_start(finite, s, o, 0);
  CHECK(a.x == s.project(*o.initial));
  CHECK(a.evaluations == 1);
  // Restart 1 ignores `initial` and draws from restart_rng(seed, 1).
  std::mt19937_64 rng = restart_rng(o.seed, 1);
  CHECK(draw_start(finite, s, o, 1).x == s.sample(rng));
  // The initial point infeasible (+inf, or NaN read as +inf): draws follow, the first feasible
  // one is kept.
  const Objective picky = [](const Eigen::VectorXd& x) {
    return x[1] > 0.3 ? std::nan("") : x.sum();
  };
  const Start b = draw_start(picky, s, o, 0);
  CHECK(b.evaluations >= 2);
  CHECK(std::isfinite(b.f));
  CHECK(b.x[1] <= 0.3);
}

TEST_CASE("summarize: the best restart, ties to the lowest index, and the reports", "[search]") {
  const auto restart = [](double f, int steps, long evaluations, StopReason stop) {
    RestartResult r;
    r.x = Eigen::VectorXd::Constant(3, f);
    r.f = f;
    r.steps = steps;
    r.evaluations = evaluations;
    r.stop = stop;
    return r;
  };
  const SearchResult r =
      summarize(SearchAlgorithm::kCobyla, {restart(kInf, 0, 5, StopReason::kNoFeasibleStart),
                                           restart(2.5, 40, 400, StopReason::kConverged),
                                           restart(2.5, 10, 100, StopReason::kBudget)});
  CHECK(r.best_restart == 1);
  CHECK(r.f == 2.5);
  CHECK(r.evaluations == 505);
  CHECK(r.steps == 50);
  CHECK(r.full_report() ==
        "cobyla: f 2.5 from restart 1 of 3; 505 evaluations, 50 steps\n"
        "  restart 0: f inf, 0 steps, 5 evaluations, no feasible start\n"
        "  restart 1: f 2.5, 40 steps, 400 evaluations, converged\n"
        "  restart 2: f 2.5, 10 steps, 100 evaluations, budget spent\n");
}
