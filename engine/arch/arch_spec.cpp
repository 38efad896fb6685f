#include "engine/arch/arch_spec.hpp"

#include "engine/arch/template_loader.hpp"

namespace pathfinder {

ArchSpec bind_template(const TechLibrary& lib, const ArchTemplate& t) {
  auto problems = check_template(t, lib);
  if (!problems.empty()) throw ConfigError(std::move(problems));
  ArchSpec s;
  s.tmpl = t;
  s.logic = *lib.find_logic(t.logic);
  for (const auto& l : t.levels) {
    SramTech sram = *s.logic.find_sram(l.technology);
    if (l.bank_capacity) sram.bank_capacity = *l.bank_capacity;
    s.level_tech.push_back(sram);
  }
  s.memory = *lib.find_memory(t.main_memory.technology);
  s.memory_layers = t.main_memory.layers.value_or(s.memory.layers);
  if (const auto* n = t.find_network(NetworkTier::kIntraPackage)) s.intra = *lib.find_network(n->technology);
  if (const auto* n = t.find_network(NetworkTier::kInterPackage)) s.inter = *lib.find_network(n->technology);
  if (s.tmpl.scale_out && !s.tmpl.scale_out->nic.empty()) {
    // The named NIC's values where the template leaves them out.
    ScaleOutSpec& so = *s.tmpl.scale_out;
    const NicTech& nic = *lib.find_nic(so.nic);
    if (!so.given.bandwidth) so.bandwidth = nic.bandwidth;
    if (!so.given.latency) so.latency = nic.latency;
    if (!so.given.max_utilization) so.behavior.max_utilization = nic.max_utilization;
    if (!so.given.power) so.power = nic.power;
  }
  return s;
}

ResourceSplit ResourceSplit::from_template(const ArchTemplate& t) {
  ResourceSplit r(static_cast<int>(t.split.size()));
  for (std::size_t i = 0; i < t.split.size(); ++i) {
    r.set(static_cast<int>(i), t.split[i].area, t.split[i].power, t.split[i].perimeter);
  }
  return r;
}

}  // namespace pathfinder
