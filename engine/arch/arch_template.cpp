#include "engine/arch/arch_template.hpp"

#include <array>
#include <utility>

namespace pathfinder {
namespace {

template <class E, std::size_t N>
std::optional<E> parse_from(const std::array<std::pair<E, std::string_view>, N>& table,
                            std::string_view s) {
  for (const auto& [e, name] : table) {
    if (name == s) return e;
  }
  return std::nullopt;
}
template <class E, std::size_t N>
std::string_view name_in(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
  for (const auto& [v, name] : table) {
    if (v == e) return name;
  }
  return "?";
}
template <class E, std::size_t N>
std::vector<std::string> names_in(const std::array<std::pair<E, std::string_view>, N>& table) {
  std::vector<std::string> out;
  for (const auto& p : table) out.emplace_back(p.second);
  return out;
}

constexpr std::array<std::pair<Dataflow, std::string_view>, 4> kDataflows{{
    {Dataflow::kWeightStationary, "weight-stationary"},
    {Dataflow::kActivationStationary, "activation-stationary"},
    {Dataflow::kOutputStationary, "output-stationary"},
    {Dataflow::kBest, "best"},
}};
constexpr std::array<std::pair<Scope, std::string_view>, 3> kScopes{{
    {Scope::kMcu, "mcu"}, {Scope::kBundle, "bundle"}, {Scope::kGlobal, "global"}}};
constexpr std::array<std::pair<Topology, std::string_view>, 5> kTopologies{{
    {Topology::kRing, "ring"},
    {Topology::kMesh2D, "mesh-2d"},
    {Topology::kTorus2D, "torus-2d"},
    {Topology::kSwitch, "switch"},
    {Topology::kFatTree, "fat-tree"},
}};

}  // namespace

std::string_view to_string(Dataflow d) { return name_in(kDataflows, d); }
std::string_view to_string(Scope s) { return name_in(kScopes, s); }
std::string_view to_string(Topology t) { return name_in(kTopologies, t); }
std::string_view to_string(NetworkTier t) {
  return t == NetworkTier::kIntraPackage ? "intra_package" : "inter_package";
}
std::optional<Dataflow> parse_dataflow(std::string_view s) { return parse_from(kDataflows, s); }
std::optional<Scope> parse_scope(std::string_view s) { return parse_from(kScopes, s); }
std::optional<Topology> parse_topology(std::string_view s) { return parse_from(kTopologies, s); }
std::vector<std::string> valid_dataflows() { return names_in(kDataflows); }
std::vector<std::string> valid_scopes() { return names_in(kScopes); }
std::vector<std::string> valid_topologies() { return names_in(kTopologies); }

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
