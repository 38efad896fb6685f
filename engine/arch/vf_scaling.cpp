#include "engine/arch/vf_scaling.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

namespace pathfinder {

const char* to_string(VfBinding b) {
  switch (b) {
    case VfBinding::kPower: return "power";
    case VfBinding::kMinVoltage: return "min-voltage";
    case VfBinding::kMaxVoltage: return "max-voltage";
    case VfBinding::kMaxRate: return "max-rate";
  }
  return "?";
}

namespace {

// The rate and power curves of one model with their normaliser computed once, each returning
// its value and derivative: d ln rate/dV = a/(V - Vt) - 1/V, d ln power/dV = a/(V - Vt) + 1/V.
struct VfCurves {
  double vt, vn, alpha, norm;  // norm = (Vn - Vt)^a / Vn
  explicit VfCurves(const VfModel& m)
      : vt(m.threshold.si()), vn(m.nominal.si()), alpha(m.alpha),
        norm(std::pow(m.nominal.si() - m.threshold.si(), m.alpha) / m.nominal.si()) {}
  [[nodiscard]] double rate_at(double v) const {
    return v <= vt ? 0.0 : (std::pow(v - vt, alpha) / v) / norm;
  }
  [[nodiscard]] double power_at(double v) const { return rate_at(v) * (v / vn) * (v / vn); }
  [[nodiscard]] std::pair<double, double> rate(double v) const {
    const double r = rate_at(v);
    return {r, v <= vt ? 0.0 : r * (alpha / (v - vt) - 1.0 / v)};
  }
  struct PowerPoint {
    double power, slope, rate;
  };
  [[nodiscard]] PowerPoint power_point(double v) const {
    const double r = rate_at(v);
    const double p = r * (v / vn) * (v / vn);  // power_at(v)
    return {p, v <= vt ? 0.0 : p * (alpha / (v - vt) + 1.0 / v), r};
  }
};

}  // namespace

double rate_ratio_at(const VfModel& m, double v) { return VfCurves(m).rate_at(v); }
double power_ratio_at(const VfModel& m, double v) { return VfCurves(m).power_at(v); }

namespace {

// Unique root of h(V) = target on (lo, hi] for an increasing h given with its derivative:
// Newton steps from `guess` (the bracket's middle when it lies outside) kept inside a shrinking
// bracket (bisection fallback), run to machine precision.
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

// What scale_to_power finds before it looks at the budget: the model's curves (their
// normaliser), the ceiling (the rate cap's voltage, or Vmax) and the power there and at Vmin.
// A pure function of the model and the cap, kept for the last few (model, cap) pairs of this
// thread: a generator calls with the same few (one per component), and every design of a
// search does again.
struct Ceiling {
  VfCurves curves;
  double v_cap = 0.0, p_cap = 0.0, p_min = 0.0;
  VfBinding binding = VfBinding::kMaxVoltage;
};

Ceiling ceiling_of(const VfModel& m, double max_rate_ratio) {
  const double vmax = m.maximum.si(), vt = m.threshold.si();
  Ceiling c{VfCurves(m)};
  const VfCurves& curves = c.curves;
  c.v_cap = vmax;
  if (curves.rate_at(vmax) > max_rate_ratio) {
    // rate ~ ((V - Vt)/(Vn - Vt))^(a - 1) well above threshold: the start Newton needs.
    const double guess = curves.alpha > 1.0
                             ? vt + (curves.vn - vt) *
                                        std::pow(max_rate_ratio, 1.0 / (curves.alpha - 1.0))
                             : 0.5 * (vt + vmax);
    c.v_cap = increasing_root([&](double v) { return curves.rate(v); }, max_rate_ratio, vt, vmax,
                              guess);
    c.binding = VfBinding::kMaxRate;
  }
  c.p_cap = curves.power_at(c.v_cap);
  c.p_min = curves.power_at(m.minimum.si());
  return c;
}

const Ceiling& cached_ceiling(const VfModel& m, double max_rate_ratio) {
  using Key = std::array<double, 6>;
  struct Entry {
    Key key{};
    std::optional<Ceiling> ceiling;
  };
  thread_local std::array<Entry, 8> entries;
  thread_local std::size_t next = 0;
  const Key key{m.nominal.si(), m.threshold.si(), m.minimum.si(), m.maximum.si(), m.alpha,
                max_rate_ratio};
  for (const Entry& e : entries) {
    // Bitwise, so that a NaN cap or -0.0 is never taken for another value.
    if (e.ceiling && std::memcmp(e.key.data(), key.data(), sizeof(Key)) == 0) return *e.ceiling;
  }
  Entry& e = entries[next];
  next = (next + 1) % entries.size();
  e.key = key;
  e.ceiling = ceiling_of(m, max_rate_ratio);
  return *e.ceiling;
}

}  // namespace

VfPoint scale_to_power(const VfModel& m, double budget_ratio, double max_rate_ratio) {
  const double vmin = m.minimum.si(), vt = m.threshold.si();
  VfPoint p;
  if (!(budget_ratio > 0.0)) {
    p.voltage_v = vmin;
    p.binding = VfBinding::kMinVoltage;
    return p;
  }
  // The voltage at which the rate cap is reached (at most vmax), and the power there.
  const Ceiling& c = cached_ceiling(m, max_rate_ratio);
  const VfCurves& curves = c.curves;
  if (budget_ratio >= c.p_cap) {
    p.voltage_v = c.v_cap;
    p.rate_ratio = curves.rate_at(c.v_cap);
    p.power_ratio = c.p_cap;
    p.binding = c.binding;
    return p;
  }
  if (budget_ratio < c.p_min) {
    p.voltage_v = vmin;
    p.rate_ratio = curves.rate_at(vmin) * budget_ratio / c.p_min;
    p.power_ratio = budget_ratio;
    p.binding = VfBinding::kMinVoltage;
    return p;
  }
  // power ~ ((V - Vt)/(Vn - Vt))^(a + 1), exact at the nominal point: a start a few Newton
  // steps from the root (the bracket's middle can be volts away when Vmax stands for "none").
  const double guess =
      vt + (curves.vn - vt) * std::pow(budget_ratio, 1.0 / (curves.alpha + 1.0));
  // The root's last step evaluated the rate at the voltage returned: kept, not recomputed.
  double last_v = -1.0, last_rate = 0.0;
  p.voltage_v = increasing_root(
      [&](double v) {
        const VfCurves::PowerPoint q = curves.power_point(v);
        last_v = v;
        last_rate = q.rate;
        return std::pair{q.power, q.slope};
      },
      budget_ratio, std::max(vmin, vt), c.v_cap, guess);
  p.rate_ratio = last_v == p.voltage_v ? last_rate : curves.rate_at(p.voltage_v);
  p.power_ratio = p.rate_ratio * (p.voltage_v / curves.vn) * (p.voltage_v / curves.vn);
  p.binding = VfBinding::kPower;
  return p;
}

}  // namespace pathfinder
