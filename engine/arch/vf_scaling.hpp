// Voltage-frequency scaling to a power budget (paper §4.4.1, deepflow-reference §3.1 step 5-7).
#pragma once

#include "engine/techlib/tech_library.hpp"

namespace pathfinder {

// What set an operating point.
enum class VfBinding {
  kPower,       // the power budget: the unique root above threshold
  kMinVoltage,  // below the minimum voltage: held at Vmin, rate (or unit count) cut
  kMaxVoltage,  // the maximum voltage: budget left unused
  kMaxRate,     // the rate cap (timing or signalling standard): budget left unused
};
[[nodiscard]] const char* to_string(VfBinding b);

struct VfPoint {
  double voltage_v = 0.0;
  double rate_ratio = 0.0;   // operating rate / nominal rate
  double power_ratio = 0.0;  // operating power / nominal power (per unit, full activity)
  VfBinding binding = VfBinding::kPower;
};

// rate(V)/rate_nom = [(V-Vt)^a / V] / [(Vn-Vt)^a / Vn]
[[nodiscard]] double rate_ratio_at(const VfModel& m, double v);
// P(V)/P_nom = rate ratio · (V/Vn)^2 = V (V-Vt)^a / (Vn (Vn-Vt)^a); increasing for V > Vt.
[[nodiscard]] double power_ratio_at(const VfModel& m, double v);

// The operating point for a budget of `budget_ratio` = P_budget / P_nominal, with the rate
// capped at `max_rate_ratio`. Below Vmin the voltage is held at Vmin and the rate falls in
// proportion to the budget (power is linear in rate at fixed voltage); callers that drop units
// instead (the core, paper §4.4.1) use the Vmin rate and scale the count.
[[nodiscard]] VfPoint scale_to_power(const VfModel& m, double budget_ratio, double max_rate_ratio);

}  // namespace pathfinder
