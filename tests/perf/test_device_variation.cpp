#include "engine/perf/device_variation.hpp"

#include <catch2/catch.hpp>
#include <cmath>

namespace pathfinder {
namespace {

// The standard normal CDF, Phi(x) = erfc(-x / sqrt 2) / 2.
double phi_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// E[max of n standard normals] = integral of x * n * phi(x) * Phi(x)^(n-1) dx, by the midpoint
// rule on [-10, 10] (the integrand is below 1e-20 outside): an independent reference.
double exact_expected_max(int n) {
  constexpr int kSteps = 200000;
  constexpr double lo = -10.0, hi = 10.0, h = (hi - lo) / kSteps;
  double sum = 0.0;
  for (int i = 0; i < kSteps; ++i) {
    const double x = lo + (i + 0.5) * h;
    const double density = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
    sum += x * n * density * std::pow(phi_cdf(x), n - 1);
  }
  return sum * h;
}

}  // namespace

TEST_CASE("standard normal quantile inverts the CDF", "[perf]") {
  // Acklam's approximation: relative error below 1.2e-9 over (0, 1); checked through erfc on
  // both tails and the centre.
  for (const double p : {1e-9, 1e-4, 0.01, 0.02425, 0.1, 0.3, 0.5, 0.7, 0.9, 0.975, 0.99,
                         0.999, 1.0 - 1e-6}) {
    const double x = standard_normal_quantile(p);
    CHECK(phi_cdf(x) == Approx(p).epsilon(1e-7));
  }
  CHECK(standard_normal_quantile(0.5) == Approx(0.0).margin(1e-12));
  CHECK(standard_normal_quantile(0.975) == Approx(1.959964).epsilon(1e-6));  // the 95% bound
  // Outside (0, 1) nothing infinite escapes.
  CHECK(standard_normal_quantile(0.0) == 0.0);
  CHECK(standard_normal_quantile(1.0) == 0.0);
  CHECK(standard_normal_quantile(std::nan("")) == 0.0);
}

TEST_CASE("expected slowest of n devices: Blom's approximation against the integral", "[perf]") {
  CHECK(expected_max_standard_normal(1) == 0.0);
  CHECK(expected_max_standard_normal(0) == 0.0);
  // n = 2 in closed form: 1/sqrt(pi) = 0.5642.
  CHECK(exact_expected_max(2) == Approx(1.0 / std::sqrt(M_PI)).epsilon(1e-6));
  // Within 0.03 of the integral (at sigma = 1.5%, under 0.05% of a job's pace).
  CHECK(std::abs(expected_max_standard_normal(2) - 1.0 / std::sqrt(M_PI)) <= 0.03);
  for (const int n : {8, 64, 1024, 16384}) {
    INFO("n = " << n);
    CHECK(std::abs(expected_max_standard_normal(n) - exact_expected_max(n)) <= 0.02);
  }
  // Rising with n, slowly (about sqrt(2 ln n)).
  CHECK(expected_max_standard_normal(8) == Approx(1.42).margin(0.02));
  CHECK(expected_max_standard_normal(1024) == Approx(3.19).margin(0.05));
}

TEST_CASE("job pace: the slowest device against the fitted job size", "[perf]") {
  CHECK(job_pace(0.0, 8, 4096) == 1.0);  // no variation
  CHECK(job_pace(0.015, 8, 8) == 1.0);   // the fitted size runs at the template's rate
  // One device: the median device, 1 + 0.015 x e(8) faster than an 8-device job's slowest.
  CHECK(job_pace(0.015, 8, 1) ==
        Approx(1.0 + 0.015 * expected_max_standard_normal(8)).epsilon(1e-12));
  // 1,024 devices: (1 + 0.015 x 1.43) / (1 + 0.015 x 3.22) = 0.974.
  const double p1024 = job_pace(0.015, 8, 1024);
  CHECK(p1024 == Approx((1.0 + 0.015 * expected_max_standard_normal(8)) /
                        (1.0 + 0.015 * expected_max_standard_normal(1024)))
                     .epsilon(1e-12));
  CHECK(p1024 == Approx(0.974).margin(0.002));
  double last = 2.0;
  for (long long n = 1; n <= 1 << 20; n *= 2) {
    const double p = job_pace(0.015, 8, n);
    CHECK(p < last);
    CHECK(p > 0.9);  // 2^20 devices: e = 4.9, at most 7% slower than the median
    last = p;
  }
}

}  // namespace pathfinder
