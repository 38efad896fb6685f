// Tests for search/split_space.hpp: bound validation messages, the Euclidean projection
// (known answers, feasibility, idempotence, KKT conditions, brute force over a grid) and the
// seeded sampler.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>

#include "tests/search/search_fixtures.hpp"

using namespace pathfinder;
using pathfinder::test::error_of;
using pathfinder::test::three_components;

namespace {

Eigen::VectorXd vec(std::initializer_list<double> v) {
  Eigen::VectorXd x(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (double d : v) x[i++] = d;
  return x;
}

// A random point around the unit box, some coordinates outside it.
Eigen::VectorXd random_point(std::mt19937_64& rng, int dim) {
  Eigen::VectorXd x(dim);
  for (int k = 0; k < dim; ++k) x[k] = -0.5 + 2.0 * uniform01(rng);
  return x;
}

// KKT conditions of min ½‖y − x‖² s.t. lo ≤ y ≤ hi, Σ y ≤ 1, block by block: with r = x − y
// there is one τ ≥ 0 with r_i = τ where lo < y_i < hi, r_i ≤ τ where y_i = lo, r_i ≥ τ where
// y_i = hi, and τ = 0 unless Σ y = 1. The problem is convex, so these prove optimality.
bool satisfies_kkt(const SplitSpace& s, const Eigen::VectorXd& x, const Eigen::VectorXd& y) {
  constexpr double tol = 1e-12;
  const int h = s.components();
  for (int b = 0; b < 3; ++b) {
    double low = 0.0, high = std::numeric_limits<double>::infinity();
    for (int i = b * h; i < (b + 1) * h; ++i) {
      const double lo = s.lower()[i], hi = s.upper()[i], r = x[i] - y[i];
      if (lo == hi) continue;  // fixed: no condition
      const bool at_lo = y[i] <= lo + tol, at_hi = y[i] >= hi - tol;
      if (!at_lo) high = std::min(high, r);  // not at lo: r ≥ τ
      if (!at_hi) low = std::max(low, r);    // not at hi: r ≤ τ
    }
    if (y.segment(b * h, h).sum() < 1.0 - tol) high = std::min(high, 0.0);  // τ = 0
    if (low > high + 1e-11) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("split space: bounds are checked, every problem named", "[search][config-error]") {
  Eigen::VectorXd lo = Eigen::VectorXd::Zero(9), hi = Eigen::VectorXd::Ones(9);
  const std::vector<std::string> names{"core", "l2", "hbm"};
  SECTION("lower above upper") {
    lo[1] = 0.6;
    hi[1] = 0.4;
    CHECK(error_of([&] { SplitSpace(3, lo, hi, names); }) ==
          "split space: error: area.l2: lower bound 0.6 exceeds upper bound 0.4");
  }
  SECTION("lower bounds above the whole budget") {
    lo.segment(3, 3) << 0.5, 0.4, 0.3;
    CHECK(error_of([&] { SplitSpace(3, lo, hi, names); }) ==
          "split space: error: power: lower bounds sum to 1.2, more than the whole budget (1)");
  }
  SECTION("outside [0, 1], not finite, all listed") {
    lo[0] = -0.1;
    hi[8] = 1.5;
    lo[4] = std::nan("");
    CHECK(error_of([&] { SplitSpace(3, lo, hi, names); }) ==
          "split space: error: area.core: lower bound -0.1 is outside [0, 1] (a fraction of the "
          "budget)\n"
          "split space: error: power.l2: lower bound nan is not a finite number\n"
          "split space: error: perimeter.hbm: upper bound 1.5 is outside [0, 1] (a fraction of "
          "the budget)");
  }
  SECTION("shapes") {
    CHECK(error_of([&] { static_cast<void>(SplitSpace::simplex(0)); }) ==
          "split space: error: components: expected at least 1 component, got 0");
    CHECK(error_of([&] { SplitSpace(3, lo.head(6), hi, names); }) ==
          "split space: error: bounds: expected 9 lower and 9 upper bounds (3 budgets x 3 "
          "components), got 6 and 9");
    CHECK(error_of([&] { SplitSpace(3, lo, hi, {"core"}); }) ==
          "split space: error: names: expected 3 component names, got 1");
  }
  SECTION("fixed coordinates and names") {
    const SplitSpace s = three_components();
    CHECK(s.free_coordinates() ==
          std::vector<int>{0, 1, 2, 3, 4, 5, 7, 8});  // perimeter.core fixed
    CHECK(s.coordinate_name(7) == "perimeter.memory");
    CHECK(SplitSpace::simplex(2).coordinate_name(3) == "power.c1");
  }
}

TEST_CASE("projection: known answers", "[search][golden]") {
  const SplitSpace s = SplitSpace::simplex(3);
  // Feasible points do not move.
  const Eigen::VectorXd inside = vec({0.2, 0.3, 0.1, 0.0, 1.0, 0.0, 0.3, 0.3, 0.3});
  CHECK(s.project(inside) == inside);
  // (0.8, 0.6, −0.2): clipped sum 1.4 > 1; τ with (0.8 − τ) + (0.6 − τ) + 0 = 1 is 0.2
  // → (0.6, 0.4, 0). (0.5, 0.5, 0.5): τ = 1/6 → thirds. (2, 0, 0) → (1, 0, 0): τ = 1.
  const Eigen::VectorXd p = s.project(vec({0.8, 0.6, -0.2, 0.5, 0.5, 0.5, 2, 0, 0}));
  CHECK_THAT(std::vector<double>(p.data(), p.data() + 9),
             Catch::Approx(std::vector<double>{0.6, 0.4, 0, 1. / 3, 1. / 3, 1. / 3, 1, 0, 0})
                 .margin(1e-15));
  // Not rescaling: rescaling (0.8, 0.6, 0) would give (0.571, 0.429, 0).
  // With bounds (three_components: power.core ≤ 0.5): power (1.2, 0.3, 0.3) → τ = 0.05 with the
  // core at its bound: 0.5 + (0.3 − τ) + (0.3 − τ) = 1 → (0.5, 0.25, 0.25). Area (0, 0, 0):
  // area.network ≥ 0.05 lifts it. Perimeter (0.7, 0.7, 0.7): core fixed at 0, τ = 0.2.
  const Eigen::VectorXd q =
      three_components().project(vec({0, 0, 0, 1.2, 0.3, 0.3, 0.7, 0.7, 0.7}));
  CHECK_THAT(
      std::vector<double>(q.data(), q.data() + 9),
      Catch::Approx(std::vector<double>{0, 0, 0.05, 0.5, 0.25, 0.25, 0, 0.5, 0.5}).margin(1e-15));
  // Lower bounds summing to exactly 1 leave one feasible point.
  Eigen::VectorXd lo = Eigen::VectorXd::Zero(9), hi = Eigen::VectorXd::Ones(9);
  lo.head(3) << 0.5, 0.25, 0.25;
  const SplitSpace one(3, lo, hi);
  CHECK((one.project(Eigen::VectorXd::Constant(9, 0.9)).head(3) - lo.head(3)).norm() < 1e-15);
}

TEST_CASE("projection: feasible, idempotent, KKT, H from 1 to 12", "[search][property]") {
  std::mt19937_64 rng(7);
  for (int h = 1; h <= 12; ++h) {
    // Random bounds: lo ~ U[0, 0.1), hi ~ lo + U[0, 0.8), some fixed (hi = lo) or zero.
    Eigen::VectorXd lo(3 * h), hi(3 * h);
    for (int k = 0; k < 3 * h; ++k) {
      lo[k] = 0.1 / h * uniform01(rng);
      const double u = uniform01(rng);
      hi[k] = u < 0.1 ? lo[k] : (u < 0.15 ? (lo[k] = 0.0) : lo[k] + 0.8 * uniform01(rng));
    }
    const SplitSpace s(h, lo, hi);
    for (int trial = 0; trial < 200; ++trial) {
      const Eigen::VectorXd x = random_point(rng, s.dim());
      const Eigen::VectorXd y = s.project(x);
      INFO("H " << h << " trial " << trial);
      REQUIRE(s.contains(y, 1e-14));
      CHECK((s.project(y) - y).cwiseAbs().maxCoeff() <= 1e-15);
      CHECK(satisfies_kkt(s, x, y));
    }
  }
}

TEST_CASE("projection: the closest point of a fine grid is never closer (H = 3)",
          "[search][property]") {
  // Every grid point (step 0.005, inside the bounds, Σ ≤ 1) is feasible, so none may be closer
  // to x than Π(x); and rounding Π(x) down to the grid gives a feasible point within
  // step·√3, so the nearest grid point is at most that much farther.
  const SplitSpace s = three_components();
  std::mt19937_64 rng(11);
  const double step = 0.005;
  for (int trial = 0; trial < 12; ++trial) {
    const Eigen::VectorXd x = random_point(rng, 9);
    const Eigen::VectorXd y = s.project(x);
    for (int b = 0; b < 3; ++b) {
      const Eigen::Vector3d xb = x.segment(3 * b, 3), yb = y.segment(3 * b, 3);
      const Eigen::Vector3d lo = s.lower().segment(3 * b, 3), hi = s.upper().segment(3 * b, 3);
      double nearest = std::numeric_limits<double>::infinity();
      for (int i = 0; i * step <= hi[0] + 1e-12; ++i) {
        for (int j = 0; j * step <= hi[1] + 1e-12; ++j) {
          for (int k = 0; k * step <= hi[2] + 1e-12; ++k) {
            const Eigen::Vector3d g(i * step, j * step, k * step);
            if ((g.array() < lo.array() - 1e-12).any() || g.sum() > 1 + 1e-12) continue;
            nearest = std::min(nearest, (g - xb).norm());
          }
        }
      }
      INFO("trial " << trial << " block " << b);
      CHECK((yb - xb).norm() <= nearest + 1e-12);
      CHECK(nearest <= (yb - xb).norm() + step * std::sqrt(3.0));
    }
  }
}

TEST_CASE("sampler: feasible, seeded by (seed, restart), uniform", "[search][property]") {
  const SplitSpace s = three_components();
  std::mt19937_64 a = restart_rng(42, 3), b = restart_rng(42, 3), c = restart_rng(42, 4);
  const Eigen::VectorXd xa = s.sample(a);
  CHECK(xa == s.sample(b));
  CHECK(xa != s.sample(c));
  CHECK(restart_rng(42, 0)() != restart_rng(43, 0)());

  // Uniform on {x ≥ 0, Σ x ≤ 1} in 3-D: each coordinate has mean 1/(3 + 1) = 1/4.
  // The box [0, 0.3]³ (Σ ≤ 0.9: the sum never binds) is sampled directly: mean 0.15.
  const SplitSpace simplex = SplitSpace::simplex(3);
  const SplitSpace box(3, Eigen::VectorXd::Zero(9), Eigen::VectorXd::Constant(9, 0.3));
  std::mt19937_64 rng = restart_rng(1, 0);
  Eigen::VectorXd mean_simplex = Eigen::VectorXd::Zero(9), mean_box = Eigen::VectorXd::Zero(9);
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const Eigen::VectorXd p = simplex.sample(rng), q = box.sample(rng);
    REQUIRE(simplex.contains(p));
    REQUIRE(box.contains(q));
    mean_simplex += p / n;
    mean_box += q / n;
  }
  for (int k = 0; k < 9; ++k) {
    CHECK(mean_simplex[k] == Approx(0.25).margin(0.005));
    CHECK(mean_box[k] == Approx(0.15).margin(0.003));
  }
  for (int i = 0; i < 1000; ++i) {
    const Eigen::VectorXd p = s.sample(rng);
    REQUIRE(s.contains(p));
    CHECK(p[6] == 0.0);  // perimeter.core fixed
  }
}
