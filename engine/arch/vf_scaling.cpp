#include "engine/arch/vf_scaling.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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
  [[nodiscard]] std::pair<double, double> power(double v) const {
    const double p = power_at(v);
    return {p, v <= vt ? 0.0 : p * (alpha / (v - vt) + 1.0 / v)};
  }
};

}  // namespace

double rate_ratio_at(const VfModel& m, double v) { return VfCurves(m).rate_at(v); }
double power_ratio_at(const VfModel& m, double v) { return VfCurves(m).power_at(v); }

namespace {

// Unique root of h(V) = target on (lo, hi] for an increasing h given with its derivative:
// Newton steps kept inside a shrinking bracket (bisection fallback), run to machine precision
// (the root does not depend on the path taken to it).
template <class H>
double increasing_root(H h, double target, double lo, double hi) {
  double v = 0.5 * (lo + hi);
  for (int it = 0; it < 200; ++it) {
    const auto [value, slope] = h(v);
    const double f = value - target;
    if (f == 0.0) break;
    if (f > 0) hi = v; else lo = v;
    if (hi - lo <= 4.0 * std::numeric_limits<double>::epsilon() * hi) break;
    double next = (slope > 0) ? v - f / slope : 0.5 * (lo + hi);
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (std::abs(next - v) <= std::numeric_limits<double>::epsilon() * v) break;
    v = next;
  }
  return v;
}
}  // namespace

VfPoint scale_to_power(const VfModel& m, double budget_ratio, double max_rate_ratio) {
  const double vmin = m.minimum.si(), vmax = m.maximum.si(), vt = m.threshold.si();
  VfPoint p;
  if (!(budget_ratio > 0.0)) {
    p.voltage_v = vmin;
    p.binding = VfBinding::kMinVoltage;
    return p;
  }
  // The voltage at which the rate cap is reached (at most vmax).
  double v_cap = vmax;
  VfBinding cap_binding = VfBinding::kMaxVoltage;
  const VfCurves curves(m);
  if (curves.rate_at(vmax) > max_rate_ratio) {
    v_cap = increasing_root([&](double v) { return curves.rate(v); }, max_rate_ratio, vt, vmax);
    cap_binding = VfBinding::kMaxRate;
  }
  const double p_cap = curves.power_at(v_cap);
  if (budget_ratio >= p_cap) {
    p.voltage_v = v_cap;
    p.rate_ratio = curves.rate_at(v_cap);
    p.power_ratio = p_cap;
    p.binding = cap_binding;
    return p;
  }
  const double p_min = curves.power_at(vmin);
  if (budget_ratio < p_min) {
    p.voltage_v = vmin;
    p.rate_ratio = curves.rate_at(vmin) * budget_ratio / p_min;
    p.power_ratio = budget_ratio;
    p.binding = VfBinding::kMinVoltage;
    return p;
  }
  p.voltage_v = increasing_root([&](double v) { return curves.power(v); }, budget_ratio,
                                std::max(vmin, vt), v_cap);
  p.rate_ratio = curves.rate_at(p.voltage_v);
  p.power_ratio = p.rate_ratio * (p.voltage_v / curves.vn) * (p.voltage_v / curves.vn);
  p.binding = VfBinding::kPower;
  return p;
}

}  // namespace pathfinder
