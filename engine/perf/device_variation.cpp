#include "engine/perf/device_variation.hpp"

#include <cmath>

namespace pathfinder {

double standard_normal_quantile(double p) {
  // P. J. Acklam, "An algorithm for computing the inverse normal cumulative distribution
  // function" (2003): rational approximations on the central region and the two tails.
  constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                          1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                          6.680131188771972e+01, -1.328068155288572e+01};
  constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                          -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                          3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  if (!(p > 0.0 && p < 1.0)) return 0.0;  // callers pass (0, 1); nothing infinite escapes
  const auto tail = [&](double q) {
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  };
  if (p < kLow) return tail(std::sqrt(-2.0 * std::log(p)));
  if (p > 1.0 - kLow) return -tail(std::sqrt(-2.0 * std::log1p(-p)));
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
}

double expected_max_standard_normal(long long n) {
  if (n <= 1) return 0.0;
  const double x = static_cast<double>(n);
  return standard_normal_quantile((x - 0.375) / (x + 0.25));
}

double job_pace(double sigma, long long fitted_devices, long long devices) {
  if (!(sigma > 0.0)) return 1.0;
  return (1.0 + sigma * expected_max_standard_normal(fitted_devices)) /
         (1.0 + sigma * expected_max_standard_normal(devices));
}

}  // namespace pathfinder
