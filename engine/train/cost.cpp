#include "engine/train/cost.hpp"

namespace pathfinder {

CostReport iteration_cost(const DeviceCost& c, const TrainingResult& r, int devices,
                          double tokens) {
  CostReport out;
  if (!c.modelled) return out;
  out.modelled = true;
  out.capital_usd = c.usd_per_second * static_cast<double>(devices) * r.iteration_time.si();
  out.energy_usd = c.usd_per_joule * r.energy.joules.si();
  out.usd = out.capital_usd + out.energy_usd;
  out.usd_per_token = tokens > 0.0 ? out.usd / tokens : 0.0;
  out.device_usd = c.device_usd;
  return out;
}

}  // namespace pathfinder
