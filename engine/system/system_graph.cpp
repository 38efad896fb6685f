#include "engine/system/system_graph.hpp"

#include <algorithm>
#include <cmath>

#include "engine/core/enum_table.hpp"

namespace pathfinder {
namespace {

constexpr enum_table::Table<Tier, 3> kTiers{{
    {Tier::kIntraPackage, "intra_package"},
    {Tier::kInterPackage, "inter_package"},
    {Tier::kScaleOut, "scale_out"},
}};

ConfigError system_error(const ArchTemplate& t, const std::string& message) {
  SourceLoc loc = t.system_loc;
  if (loc.file.empty()) loc.file = t.file;
  loc.key_path = "system";
  return ConfigError(Diagnostic{loc, message});
}

std::string count(int n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// The most square factorization x * y = n with x <= y; 3-D: x <= y <= z with the least z,
// then the least y (64: 4 x 4 x 4; 16: 2 x 2 x 4).
void set_grid(TierLink& l) {
  const int n = l.group_size;
  l.grid_x = 1;
  l.grid_y = n;
  l.grid_z = 1;
  if (!is_grid(l.topology)) return;
  if (is_3d(l.topology)) {
    l.grid_y = 1;
    l.grid_z = n;
    for (int x = 1; x * x * x <= n; ++x) {
      if (n % x != 0) continue;
      for (int y = x; y * y <= n / x; ++y) {
        if ((n / x) % y != 0) continue;
        const int z = n / x / y;
        if (z < l.grid_z || (z == l.grid_z && y < l.grid_y)) {
          l.grid_x = x;
          l.grid_y = y;
          l.grid_z = z;
        }
      }
    }
    return;
  }
  for (int x = static_cast<int>(std::sqrt(static_cast<double>(n))); x >= 1; --x) {
    if (n % x == 0) {
      l.grid_x = x;
      l.grid_y = n / x;
      return;
    }
  }
}

void set_behavior(TierLink& l, const LinkBehavior& b) {
  l.max_utilization = b.max_utilization;
  l.half_bandwidth_message = b.half_bandwidth_message;
  l.bandwidth_congestion = b.bandwidth_congestion;
  l.latency_congestion = b.latency_congestion;
  l.leaf_size = b.leaf_size;
}

// A generated tier: its spec from the template, bandwidth and latency from the generator.
TierLink generated_tier(const ArchSpec& spec, const MicroArch& arch, NetworkTier which, Tier tier,
                        int group_size, int below, const std::string& what) {
  const ArchTemplate& t = spec.tmpl;
  const NetworkSpec* ns = t.find_network(which);
  const NetworkStats* stats = arch.network(which);
  if (ns == nullptr || stats == nullptr) {
    throw system_error(t, what + " need network." +
                              std::string(to_string(which)) + ", which the template does not define");
  }
  TierLink l;
  l.tier = tier;
  l.topology = ns->topology;
  l.oversubscription = ns->oversubscription;
  l.group_size = group_size;
  l.bandwidth = stats->per_direction;
  l.latency = stats->latency;
  set_behavior(l, ns->behavior);
  l.devices_below = below;
  set_grid(l);
  return l;
}

}  // namespace

std::string_view to_string(Tier t) { return enum_table::name(kTiers, t); }
std::optional<Tier> parse_tier(std::string_view s) { return enum_table::parse(kTiers, s); }
std::vector<std::string> valid_tiers() { return enum_table::names(kTiers); }

int TierLink::ports() const {
  switch (topology) {
    case Topology::kSwitch:
    case Topology::kFatTree: return 1;
    case Topology::kRing: return 2;
    case Topology::kFullMesh: return std::max(group_size - 1, 1);  // one link per peer
    case Topology::kMesh2D:
    case Topology::kTorus2D:
    case Topology::kMesh3D:
    case Topology::kTorus3D: {
      const int p = (grid_x > 1 ? 2 : 0) + (grid_y > 1 ? 2 : 0) + (grid_z > 1 ? 2 : 0);
      return p > 0 ? p : 1;
    }
  }
  return 1;
}

const TierLink* SystemGraph::find(Tier t) const {
  for (const auto& l : tiers) {
    if (l.tier == t) return &l;
  }
  return nullptr;
}

SystemGraph make_system_graph(const ArchSpec& spec, const MicroArch& arch, int devices) {
  const ArchTemplate& t = spec.tmpl;
  SystemGraph g;
  g.name = t.name;
  g.devices = devices;
  g.nodes_per_package = t.nodes_per_package;
  g.packages_per_domain = t.packages;
  g.memory_bandwidth = arch.main_memory.effective_bandwidth;
  g.collectives = spec.tmpl.collectives;
  const int npp = t.nodes_per_package;
  const int domain = g.domain_size();
  if (devices < 1) throw system_error(t, "expected at least one device, got " + std::to_string(devices));

  int nodes = devices, packages = 1, domains = 1;
  if (devices > npp) {
    if (devices % npp != 0) {
      throw system_error(t, count(devices, "device") + " do not fill whole packages of " +
                                std::to_string(npp) + " (system.nodes_per_package)");
    }
    nodes = npp;
    packages = devices / npp;
  }
  if (devices > domain) {
    const std::string what = std::to_string(domain) + " (system.nodes_per_package " +
                             std::to_string(npp) + " x system.packages " +
                             std::to_string(t.packages) + ")";
    if (!t.scale_out) {
      throw system_error(t, count(devices, "device") + " exceed one scale-up domain of " + what +
                                " and the template has no network.scale_out");
    }
    if (devices % domain != 0) {
      throw system_error(t, count(devices, "device") +
                                " do not fill whole scale-up domains of " + what);
    }
    packages = t.packages;
    domains = devices / domain;
  }

  if (nodes > 1) {
    g.tiers.push_back(generated_tier(spec, arch, NetworkTier::kIntraPackage, Tier::kIntraPackage,
                                     nodes, 1, std::to_string(nodes) + " nodes in a package"));
  }
  if (packages > 1) {
    g.tiers.push_back(generated_tier(spec, arch, NetworkTier::kInterPackage, Tier::kInterPackage,
                                     packages, nodes, count(packages, "package")));
  }
  if (domains > 1) {
    const ScaleOutSpec& so = *t.scale_out;
    TierLink l;
    l.tier = Tier::kScaleOut;
    l.topology = so.topology;
    l.oversubscription = so.oversubscription;
    l.group_size = domains;
    l.bandwidth = so.bandwidth;
    l.latency = so.latency;
    set_behavior(l, so.behavior);
    l.devices_below = domain;
    set_grid(l);
    g.tiers.push_back(l);
  }
  return g;
}

}  // namespace pathfinder
