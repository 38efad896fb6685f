// Tests for search/finite_difference.hpp: against the analytic gradient, one-sided at
// the box and next to +inf, h shrinking when both sides are +inf, thread-count independence.
#include <tbb/global_control.h>

#include <catch2/catch.hpp>

#include "search/finite_difference.hpp"
#include "tests/search/search_fixtures.hpp"

using namespace pathfinder;
using namespace pathfinder::test;

namespace {

Eigen::VectorXd interior_point() {
  Eigen::VectorXd x(9);
  x << 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.0, 0.4, 0.4;
  return x;
}

}  // namespace

TEST_CASE("finite differences: central inside the box, matching -w/x^2", "[search][property]") {
  // d(w/x)/dx = −w/x²; the central difference of w/x with step h is −w/(x² − h²), relative
  // error h²/x² = 1e-6/0.09 ≈ 1.1e-5 at x = 0.3.
  const SplitSpace s = three_components();
  const Eigen::VectorXd w = smooth_weights().w;
  const Objective f = [&](const Eigen::VectorXd& x) { return smooth_time(w, x); };
  const Eigen::VectorXd x = interior_point();
  FiniteDifference fd(s, 1e-3);
  const Eigen::VectorXd& g = fd.gradient(f, x, f(x));
  for (int k = 0; k < 9; ++k) {
    const double exact = w[k] == 0.0 ? 0.0 : -w[k] / (x[k] * x[k]);
    INFO(s.coordinate_name(k));
    CHECK(g[k] == Approx(exact).epsilon(2e-5));
  }
  CHECK(g[6] == 0.0);                // perimeter.core is fixed
  CHECK(fd.evaluations() == 2 * 8);  // two per free coordinate
}

TEST_CASE("finite differences: one-sided at a bound and next to +inf", "[search][property]") {
  const SplitSpace s = three_components();
  const Eigen::VectorXd w = smooth_weights().w;
  Eigen::VectorXd x = interior_point();
  x[3] = 0.5;  // power.core at its upper bound: backward difference, one evaluation
  // area.core: +inf below 0.3 − 1e-4, so x⁻ = 0.299 is +inf and x⁺ = 0.301 is used:
  // (f(x⁺) − f(x))/h, the forward difference, −w/(x(x + h)).
  const Objective f = [&](const Eigen::VectorXd& p) {
    return p[0] < 0.3 - 1e-4 ? kInf : smooth_time(w, p);
  };
  const double h = 1e-3;
  FiniteDifference fd(s, h);
  const Eigen::VectorXd& g = fd.gradient(f, x, f(x));
  CHECK(g[0] == Approx(-4.0 / (0.3 * 0.301)).epsilon(1e-9));
  CHECK(g[3] == Approx(-6.25 / (0.5 * 0.499)).epsilon(1e-9));
  CHECK(fd.evaluations() == 2 * 8 - 1);  // power.core's upper side is x itself
}

TEST_CASE("finite differences: h shrinks when both sides are +inf", "[search][property]") {
  const SplitSpace s = three_components();
  const Eigen::VectorXd w = smooth_weights().w;
  const Eigen::VectorXd x = interior_point();
  SECTION("feasible within 1e-4 of x: h/4 = 2.5e-4 fails, h/16 = 6.25e-5 works") {
    const Objective f = [&](const Eigen::VectorXd& p) {
      return std::abs(p[1] - 0.3) > 1e-4 ? kInf : smooth_time(w, p);
    };
    FiniteDifference fd(s, 1e-3);
    const Eigen::VectorXd& g = fd.gradient(f, x, f(x));
    const double hh = 1e-3 / 16;
    CHECK(g[1] == Approx(-1.0 / (0.09 - hh * hh)).epsilon(1e-9));
    CHECK(fd.evaluations() == 2 * 8 + 2 + 2);  // two retries of area.memory
  }
  SECTION("never feasible on either side: 0 after three retries") {
    const Objective f = [&](const Eigen::VectorXd& p) {
      return p[1] != 0.3 ? kInf : smooth_time(w, p);
    };
    FiniteDifference fd(s, 1e-3);
    CHECK(fd.gradient(f, x, f(x))[1] == 0.0);
    CHECK(fd.evaluations() == 2 * 8 + 3 * 2);
  }
}

TEST_CASE("finite differences: identical for 1 and 2 threads", "[search][property]") {
  const SplitSpace s = three_components();
  const Eigen::VectorXd w = smooth_weights().w, wm = max_weights().w;
  const Objective f = [&](const Eigen::VectorXd& p) {
    return p[1] < 0.2995 ? kInf : smooth_time(w, p) + max_time(wm, p);
  };
  const Eigen::VectorXd x = interior_point();
  const auto run = [&](std::size_t threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    FiniteDifference fd(s, 1e-3);
    return Eigen::VectorXd(fd.gradient(f, x, f(x)));
  };
  CHECK(run(1) == run(2));
}
