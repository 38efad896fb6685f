#include "engine/perf/power_limiter.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

namespace pathfinder {

bool exceeds(const PowerLimit& limit, const PowerWindow& w) {
  const double duration = w.clocked + w.unclocked;
  // The dynamic power the board allows; a generated device idles below its budget, so this is
  // positive whenever the window draws anything.
  const double allowed = limit.cap - limit.idle;
  return limit.active() && duration > 0.0 && allowed > 0.0 &&
         w.core_energy + w.memory_energy > allowed * duration;
}

Throttle settle(const PowerLimit& limit, const PowerWindow& w) {
  if (!exceeds(limit, w)) return {};
  const double allowed = limit.cap - limit.idle;
  // At clock ratio r and voltage ratio s the window draws (E_v s² + E_m) / (C/r + U); it is
  // within the limit where k(s)·r <= allowed·C, k(s) = E_v s² + E_m − allowed·U.
  const double ev = w.core_energy, em = w.memory_energy, c = w.clocked;
  const double base = em - allowed * w.unclocked;
  const double vt = limit.vf.threshold.si(), a = limit.vf.alpha;
  const double v0 = limit.rated_voltage;
  const double floor_v = std::max(limit.vf.minimum.si(), vt);
  // rate(V) / rate(V0), rate ~ (V − Vt)^a / V (vf_scaling.hpp); x^1.5 as x·√x, the technology
  // library's exponent, a fifth of pow's time.
  const auto power_a = [a](double x) { return a == 1.5 ? x * std::sqrt(x) : std::pow(x, a); };
  const double rated = power_a(v0 - vt) / v0;
  const auto rate = [&](double v) { return v > vt ? power_a(v - vt) / v / rated : 0.0; };
  const auto excess = [&](double v) {  // k(s)·r − allowed·C and its slope in V
    const double s = v / v0, r = rate(v);
    const double k = ev * s * s + base;
    const double dr = v > vt ? r * (a / (v - vt) - 1.0 / v) : 0.0;
    return std::pair{k * r - allowed * c, dr * k + r * 2.0 * ev * s / v0};
  };
  if (v0 > floor_v) {
    // Between the minimum voltage and the rated one: Newton's steps from the rated voltage
    // (where r = s = 1, so its first step needs no power of V), kept inside a shrinking
    // bracket, until a step moves V by less than 1e-12 of it (Newton's error is then the
    // square of that: below an ulp). A root below the minimum leaves the search at it; the
    // clock then falls alone (below).
    double lo = floor_v, hi = v0;
    double f = ev + base - allowed * c;
    double slope = (a / (v0 - vt) - 1.0 / v0) * (ev + base) + 2.0 * ev / v0;
    double v = v0;
    for (int it = 0; it < 100; ++it) {
      const double step = slope > 0.0 ? f / slope : 0.0;
      if (slope > 0.0 && std::abs(step) <= 1e-12 * v) {
        v -= step;
        break;
      }
      double next = v - step;
      if (!(slope > 0.0 && next > lo && next < hi)) next = 0.5 * (lo + hi);
      v = next;
      std::tie(f, slope) = excess(v);
      if (f == 0.0) break;
      if (f > 0.0) hi = v; else lo = v;
      if (hi - lo <= 1e-15 * hi) break;
    }
    if (v > floor_v * (1.0 + 1e-9) || excess(floor_v).first <= 0.0) {
      const double s = v / v0;
      return {rate(v), s * s};
    }
  }
  // At the minimum voltage (or rated at it) the clock falls alone: k·r = allowed·C.
  const double s = v0 > floor_v ? floor_v / v0 : 1.0;
  const double k = ev * s * s + base;
  const double top = v0 > floor_v ? rate(floor_v) : 1.0;
  // A window with nothing on the core's clock is not slowed by it (nor does it draw more than
  // the memory allows): the voltage is what the limiter has.
  const double r = k > 0.0 && c > 0.0 ? std::min(top, allowed * c / k) : top;
  return {r, s * s};
}

}  // namespace pathfinder
