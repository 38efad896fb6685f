// What one training iteration costs in money (issue 16; computed by cost.hpp from
// engine/arch/device_cost.hpp). All zero when the template has no cost model.
#pragma once

namespace pathfinder {

struct CostReport {
  bool modelled = false;
  double usd = 0.0;            // per iteration: capital share plus electricity
  double usd_per_token = 0.0;  // 0 for a workload without tokens
  double capital_usd = 0.0;    // the devices' and their systems' amortized share
  double energy_usd = 0.0;     // electricity with the facility's overhead (PUE)
  double device_usd = 0.0;     // one device's manufacturing cost (dies, memory, packaging)
};

}  // namespace pathfinder
