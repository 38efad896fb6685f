// Shared set-up for system tests: shipped templates' system graphs and hand-built ones.
#pragma once

#include <string>

#include "engine/arch/generator.hpp"
#include "engine/system/system_graph.hpp"
#include "tests/arch/arch_fixtures.hpp"

namespace pathfinder::test {

// The shipped template's own micro-architecture, filled with `devices` devices.
inline SystemGraph shipped_system(const std::string& name, int devices) {
  const ArchSpec spec = bind_template(shipped_techlib(), shipped_template(name));
  const MicroArch arch = generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl));
  return make_system_graph(spec, arch, devices);
}

// One tier with round numbers: `positions` positions, bandwidth in GB/s per direction,
// latency in us; no utilization, congestion or message-size derate.
inline TierLink simple_tier(Tier tier, Topology topology, int positions, double gb_per_s,
                            double latency_us, int devices_below = 1) {
  TierLink l;
  l.tier = tier;
  l.topology = topology;
  l.group_size = positions;
  l.bandwidth = gigabytes_per_second(gb_per_s);
  l.latency = microseconds(latency_us);
  l.devices_below = devices_below;
  l.grid_y = positions;
  return l;
}

}  // namespace pathfinder::test
