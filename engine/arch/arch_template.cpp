#include "engine/arch/arch_template.hpp"

#include "engine/core/enum_table.hpp"

namespace pathfinder {
namespace {

constexpr enum_table::Table<Dataflow, 4> kDataflows{{
    {Dataflow::kWeightStationary, "weight-stationary"},
    {Dataflow::kActivationStationary, "activation-stationary"},
    {Dataflow::kOutputStationary, "output-stationary"},
    {Dataflow::kBest, "best"},
}};
constexpr enum_table::Table<Scope, 3> kScopes{{
    {Scope::kMcu, "mcu"}, {Scope::kBundle, "bundle"}, {Scope::kGlobal, "global"}}};
constexpr enum_table::Table<Topology, 8> kTopologies{{
    {Topology::kRing, "ring"},
    {Topology::kMesh2D, "mesh-2d"},
    {Topology::kTorus2D, "torus-2d"},
    {Topology::kSwitch, "switch"},
    {Topology::kFatTree, "fat-tree"},
    {Topology::kMesh3D, "mesh-3d"},
    {Topology::kTorus3D, "torus-3d"},
    {Topology::kFullMesh, "full-mesh"},
}};

}  // namespace

std::string_view to_string(Dataflow d) { return enum_table::name(kDataflows, d); }
std::string_view to_string(Scope s) { return enum_table::name(kScopes, s); }
std::string_view to_string(Topology t) { return enum_table::name(kTopologies, t); }
std::string_view to_string(NetworkTier t) {
  return t == NetworkTier::kIntraPackage ? "intra_package" : "inter_package";
}
std::optional<Dataflow> parse_dataflow(std::string_view s) { return enum_table::parse(kDataflows, s); }
std::optional<Scope> parse_scope(std::string_view s) { return enum_table::parse(kScopes, s); }
std::optional<Topology> parse_topology(std::string_view s) { return enum_table::parse(kTopologies, s); }
std::vector<std::string> valid_dataflows() { return enum_table::names(kDataflows); }
std::vector<std::string> valid_scopes() { return enum_table::names(kScopes); }
std::vector<std::string> valid_topologies() { return enum_table::names(kTopologies); }

const NetworkSpec* ArchTemplate::find_network(NetworkTier tier) const {
  for (const auto& n : networks) {
    if (n.tier == tier) return &n;
  }
  return nullptr;
}

std::vector<std::string> component_names(const ArchTemplate& t) {
  std::vector<std::string> out{"core"};
  for (const auto& l : t.levels) out.push_back(l.name);
  out.emplace_back("main_memory");
  out.emplace_back("intra_package");
  out.emplace_back("inter_package");
  return out;
}

}  // namespace pathfinder
