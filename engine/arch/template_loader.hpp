// Loading architecture templates (templates/README.md documents every key) and the semantic
// pass that checks them against a technology library.
#pragma once

#include <string>
#include <vector>

#include "engine/arch/arch_template.hpp"
#include "engine/config/node.hpp"  // ConfigOverride
#include "engine/techlib/tech_library.hpp"

namespace pathfinder {


// Throws ConfigError at the first parse error (missing key, wrong unit, unknown key, ...).
// `overrides` (--set budget.power=300W) replace or add keys before the template is read, so
// their values pass the same checks; errors name the option.
[[nodiscard]] ArchTemplate load_template(const std::string& path,
                                         const std::vector<ConfigOverride>& overrides = {});
// Whether a key's first part is a template section (technology, core, memory, network, system,
// host, budget, split, techlib): where a --set of eval goes.
[[nodiscard]] bool is_template_section(std::string_view key);
[[nodiscard]] ArchTemplate read_template(const ConfigNode& root);

// Technology choices that replace the template's (pathfinder arch --tech/--memory/--network).
struct TechOverrides {
  std::string logic;
  std::string memory;
  std::string network;  // inter-package tier
  std::string nic;      // scale-out NIC: its bandwidth, efficiency, latency and power replace the
                        // template's
};
[[nodiscard]] ArchTemplate apply_overrides(ArchTemplate t, const TechOverrides& o);

// Every semantic problem: fractions summing over 1, references to unknown technologies, a
// package too small for its die. Empty when the template is usable with this library.
[[nodiscard]] std::vector<Diagnostic> check_template(const ArchTemplate& t, const TechLibrary& lib);

}  // namespace pathfinder
