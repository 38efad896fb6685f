// Energy of one training iteration (issue 16): every device's always-on power (leakage, the
// core's clock tree, the links' static share, its scale-out and node share; device_power.hpp)
// over the iteration time, plus the dynamic energy of what it did (TrainingBreakdown::work and
// ::step: its kernels' energy at the operating point, its bytes sent times each tier's energy
// per byte). The pipeline stages differ (embedding, head, bubble); the devices of one stage
// (tensor, data, context ranks) do the same work.
#pragma once

#include "engine/arch/device_power.hpp"
#include "engine/train/training_result.hpp"

namespace pathfinder {

// `devices`: the system's device count (a multiple of r.stages.size()); `tokens`: per
// iteration, 0 when the workload has none. r must be feasible. Allocates nothing.
[[nodiscard]] EnergyReport iteration_energy(const DevicePower& p, const TrainingResult& r,
                                            int devices, double tokens);

}  // namespace pathfinder
