// The system graph (issue 4): devices in a hierarchy of network tiers, innermost first.
//
//   intra_package  joins the nodes of one package        (system.nodes_per_package)
//   inter_package  joins the packages of a scale-up domain (system.packages; NVLink/NVSwitch)
//   scale_out      joins scale-up domains                  (network.scale_out; a NIC per device)
//
// Device ids are mixed-radix over the tiers: the node within its package varies fastest, then
// the package within its domain, then the domain. Typed quantities (one double each, no
// conversions at run time): this is read in the inner loop of strategy search.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/arch/arch_spec.hpp"
#include "engine/arch/micro_arch.hpp"
#include "engine/core/units.hpp"

namespace pathfinder {

enum class Tier { kIntraPackage, kInterPackage, kScaleOut };
[[nodiscard]] std::string_view to_string(Tier t);
[[nodiscard]] std::optional<Tier> parse_tier(std::string_view s);
[[nodiscard]] std::vector<std::string> valid_tiers();

inline constexpr int kMaxTiers = 3;

// One tier of the hierarchy as built for a device count.
struct TierLink {
  Tier tier = Tier::kInterPackage;
  Topology topology = Topology::kSwitch;
  double oversubscription = 1.0;  // fat-tree: divides bandwidth for groups spanning leaves
  int group_size = 1;   // positions joined at this tier: nodes per package, packages, domains
  Bandwidth bandwidth;  // per device, per direction (NetworkStats::per_direction)
  Time latency;         // per hop or message
  double bandwidth_congestion = 1.0, latency_congestion = 1.0;  // GPCNeT CI_b, CI_l (>= 1)
  double max_utilization = 1.0;        // achievable fraction of bandwidth for large messages
  Bytes half_bandwidth_message;        // chunk size reaching half the bandwidth
  int leaf_size = 32;                  // fat-tree: devices under one leaf switch
  int devices_below = 1;  // devices in one position of this tier (product of inner group sizes)
  // Grids: positions laid out x-fastest on grid_x x grid_y (x grid_z), the most square (cubic)
  // factorization of group_size; 1 x group_size (x 1) otherwise.
  int grid_x = 1, grid_y = 1, grid_z = 1;

  // Links a device's bandwidth is spread over: switch and fat-tree 1, ring 2, a grid 2 per
  // axis longer than one position (2-D 4, 3-D 6).
  [[nodiscard]] int ports() const;
  // What a device's ports carry together: bandwidth x max_utilization / bandwidth_congestion.
  [[nodiscard]] Bandwidth usable_bandwidth() const {
    return bandwidth * max_utilization / bandwidth_congestion;
  }
  [[nodiscard]] Time usable_latency() const { return latency * latency_congestion; }
};

struct SystemGraph {
  std::string name;  // the template's
  int devices = 1;
  int nodes_per_package = 1;    // template hierarchy
  int packages_per_domain = 1;
  std::vector<TierLink> tiers;  // innermost first; only tiers that join more than one position
  // Effective main-memory bandwidth of one device: bounds how fast collectives reduce.
  Bandwidth memory_bandwidth;
  CollectiveLibrary collectives = CollectiveLibrary::kAny;  // the software stack's

  [[nodiscard]] const TierLink* find(Tier t) const;
  [[nodiscard]] int domain_size() const { return nodes_per_package * packages_per_domain; }
};

// The hierarchy filled with `devices` devices. Up to one package: a partial package; up to one
// scale-up domain: whole packages; beyond: whole domains joined by network.scale_out. A partly
// filled tier is costed as a smaller instance of its topology (a ring of 3 of 4 nodes is a
// ring of 3). Tiers joining a single position are left out. Throws
// ConfigError (at the template's system section) when the count does not factor that way or a
// tier it needs has no network.
[[nodiscard]] SystemGraph make_system_graph(const ArchSpec& spec, const MicroArch& arch,
                                            int devices);

}  // namespace pathfinder
