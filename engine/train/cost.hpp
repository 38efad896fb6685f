// Money per training iteration (issue 16): every device's capital share over the iteration
// time (its cost over its amortization) plus the iteration's energy at the electricity price
// and the facility's PUE (engine/arch/device_cost.hpp).
#pragma once

#include "engine/arch/device_cost.hpp"
#include "engine/train/training_result.hpp"

namespace pathfinder {

// r must be feasible with its energy filled; `tokens` 0 when the workload has none.
[[nodiscard]] CostReport iteration_cost(const DeviceCost& c, const TrainingResult& r, int devices,
                                        double tokens);

}  // namespace pathfinder
