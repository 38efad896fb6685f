// The root of an increasing function given with its derivative (the V-f model's power and
// rate curves, the power limiter's balance).
#pragma once

#include <cmath>
#include <limits>

namespace pathfinder {

// Unique root of h(V) = target on (lo, hi] for an increasing h given with its derivative
// (h(v) returns {value, slope}): Newton steps from `guess` (the bracket's middle when it lies
// outside) kept inside a shrinking bracket (bisection fallback), run to machine precision.
template <class H>
double increasing_root(H h, double target, double lo, double hi, double guess) {
  double v = guess > lo && guess < hi ? guess : 0.5 * (lo + hi);
  for (int it = 0; it < 200; ++it) {
    const auto [value, slope] = h(v);
    const double f = value - target;
    if (f == 0.0) break;
    if (f > 0) hi = v; else lo = v;
    if (hi - lo <= 4.0 * std::numeric_limits<double>::epsilon() * hi) break;
    double next = (slope > 0) ? v - f / slope : 0.5 * (lo + hi);
    // Converged when Newton's step is below an ulp (the step then rounds to v itself, which
    // the bracket test below would take for a step outside and bisect from).
    if (std::abs(next - v) <= std::numeric_limits<double>::epsilon() * v) break;
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    v = next;
  }
  return v;
}

}  // namespace pathfinder
