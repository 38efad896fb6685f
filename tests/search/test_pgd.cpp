// Tests for search/pgd.hpp: known optima found by dense grid search (smooth and
// non-smooth), +inf regions, identical results for 1 and 2 threads, progress.
#include <tbb/global_control.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <thread>

#include "search/pgd.hpp"
#include "tests/search/search_fixtures.hpp"

using namespace pathfinder;
using namespace pathfinder::test;

namespace {

void print_comparison(const char* name, const SearchResult& r, const GridResult& g,
                      double analytic) {
  std::printf(
      "\n%s: PGD f %.6f (%ld evaluations, %ld steps), grid f %.6f (%ld points, step "
      "0.005), analytic %.6f; PGD/grid - 1 = %+.4f%%\n",
      name, r.f, r.evaluations, r.steps, g.f, g.points, analytic, 100.0 * (r.f / g.f - 1.0));
  std::printf("  %-18s %8s %8s\n", "coordinate", "PGD", "grid");
  const SplitSpace s = three_components();
  for (int k = 0; k < 9; ++k) {
    std::printf("  %-18s %8.4f %8.4f\n", s.coordinate_name(k).c_str(), r.x[k], g.x[k]);
  }
}

}  // namespace

TEST_CASE("PGD: smooth Σ w/x lands within 1% of the grid optimum", "[search][golden]") {
  const SplitSpace s = three_components();
  const Eigen::VectorXd w = smooth_weights().w;
  const Objective f = [&](const Eigen::VectorXd& x) { return smooth_time(w, x); };
  const GridResult grid =
      grid_search(s, [&](int b, const Eigen::VectorXd& x) { return smooth_block(w, b, x); });
  const SearchResult r = minimize_pgd(f, s, SearchOptions{});
  print_comparison("smooth sum of w/x", r, grid, kSmoothOptimum);
  REQUIRE(r.feasible());
  CHECK(s.contains(r.x));
  CHECK(grid.f == Approx(kSmoothOptimum).epsilon(1e-3));  // the grid itself is near 43
  CHECK(r.f <= 1.01 * grid.f);
  CHECK((r.x - grid.x).cwiseAbs().maxCoeff() <= 0.01);  // two grid steps
  CHECK((r.x - smooth_optimum()).cwiseAbs().maxCoeff() <= 0.01);
  CHECK(r.restarts.size() == 10);
  CHECK(r.steps <= 10 * 100);
}

TEST_CASE("PGD: non-smooth Σ max w/x lands within 1% of the grid optimum", "[search][golden]") {
  const SplitSpace s = three_components();
  const Eigen::VectorXd w = max_weights().w;
  const Objective f = [&](const Eigen::VectorXd& x) { return max_time(w, x); };
  const GridResult grid =
      grid_search(s, [&](int b, const Eigen::VectorXd& x) { return max_block(w, b, x); });
  const SearchResult r = minimize_pgd(f, s, SearchOptions{});
  print_comparison("non-smooth sum of max w/x", r, grid, kMaxOptimum);
  REQUIRE(r.feasible());
  CHECK(s.contains(r.x));
  CHECK(grid.f == Approx(kMaxOptimum).epsilon(1e-2));
  CHECK(r.f <= 1.01 * grid.f);
  CHECK((r.x - max_optimum()).cwiseAbs().maxCoeff() <= 0.01);
}

TEST_CASE("PGD: +inf region (the core needs half the area)", "[search][golden]") {
  // Smooth problem, but designs with area.core < 0.5 are infeasible (+inf). The area block's
  // optimum moves to the region's edge: core 0.5, memory and network split 0.5 ∝ (√1, √2.25)
  // → (0.2, 0.3): 4/0.5 + 1/0.2 + 2.25/0.3 = 20.5; total 20.5 + 20.5 + 2.25 = 43.25.
  const SplitSpace s = three_components();
  const Eigen::VectorXd w = smooth_weights().w;
  const Objective f = [&](const Eigen::VectorXd& x) {
    return x[0] < 0.5 ? kInf : smooth_time(w, x);
  };
  const SearchResult r = minimize_pgd(f, s, SearchOptions{});
  std::printf("\n+inf region: PGD f %.6f, analytic 43.25, area (%.4f, %.4f, %.4f)\n", r.f, r.x[0],
              r.x[1], r.x[2]);
  REQUIRE(r.feasible());
  CHECK(r.f <= 1.01 * 43.25);
  CHECK(r.x[0] >= 0.5);
  CHECK(r.x[0] == Approx(0.5).margin(0.01));
}

TEST_CASE("PGD: no feasible start", "[search]") {
  SearchOptions o;
  o.restarts = 3;
  o.start_draws = 5;
  const SearchResult r =
      minimize_pgd([](const Eigen::VectorXd&) { return kInf; }, three_components(), o);
  CHECK_FALSE(r.feasible());
  CHECK(r.evaluations == 15);
  for (const auto& restart : r.restarts) CHECK(restart.stop == StopReason::kNoFeasibleStart);
  CHECK(r.brief_report() == "pgd: no feasible point in 3 restarts; 15 evaluations, 0 steps");
}

TEST_CASE("PGD: the same answer with 1 and 2 threads, bit for bit", "[search][property]") {
  const SplitSpace s = three_components();
  const Eigen::VectorXd w = smooth_weights().w;
  const Eigen::VectorXd wm = max_weights().w;
  const Objective f = [&](const Eigen::VectorXd& x) { return smooth_time(w, x) + max_time(wm, x); };
  SearchOptions o;
  o.restarts = 6;
  const auto run = [&](int threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                              static_cast<std::size_t>(threads));
    return minimize_pgd(f, s, o);
  };
  const SearchResult one = run(1), two = run(2);
  CHECK(one.x == two.x);  // exact equality, not approximate
  CHECK(one.f == two.f);
  CHECK(one.best_restart == two.best_restart);
  CHECK(one.evaluations == two.evaluations);
  CHECK(one.steps == two.steps);
  REQUIRE(one.restarts.size() == two.restarts.size());
  for (std::size_t i = 0; i < one.restarts.size(); ++i) {
    CHECK(one.restarts[i].x == two.restarts[i].x);
    CHECK(one.restarts[i].f == two.restarts[i].f);
    CHECK(one.restarts[i].steps == two.restarts[i].steps);
  }
  std::printf("\n1 vs 2 threads: %s\n", one.full_report().c_str());
}

TEST_CASE("PGD: options, the initial point, progress", "[search]") {
  const SplitSpace s = three_components();
  const Eigen::VectorXd w = smooth_weights().w;
  const Objective f = [&](const Eigen::VectorXd& x) { return smooth_time(w, x); };
  SearchOptions o;
  o.restarts = 4;
  o.steps = 30;
  o.initial = Eigen::VectorXd::Constant(9, 0.9);
  const std::thread::id caller = std::this_thread::get_id();
  long calls = 0, last_step = -1;
  bool same_thread = true, monotone = true;
  SearchProgress last;
  const SearchResult r = minimize_pgd(f, s, o, [&](const SearchProgress& p) {
    same_thread = same_thread && std::this_thread::get_id() == caller;
    monotone = monotone && p.step >= last_step;
    last_step = p.step;
    last = p;
    ++calls;
  });
  CHECK(r.restarts[0].start == s.project(*o.initial));
  CHECK(calls >= 1);
  CHECK(same_thread);
  CHECK(monotone);
  CHECK(last.step == 4 * 30);  // steps skipped by early stops count as done
  CHECK(last.total == 4 * 30);
  CHECK(last.best_f == r.f);
  o.momentum = 1.0;
  CHECK_THROWS_AS(minimize_pgd(f, s, o), ConfigError);
  o.momentum = 0.9;
  o.initial = Eigen::VectorXd::Zero(6);
  CHECK(error_of([&] { static_cast<void>(minimize_pgd(f, s, o)); }) ==
        "search options: error: initial: expected 9 fractions (the space's dimension, 3 x "
        "components), got 6");
}
