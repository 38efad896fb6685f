// Micro-architecture generator (paper §4.4 with deepflow-reference §3.1-3.4, fixed per §7).
#pragma once

#include "engine/arch/arch_spec.hpp"
#include "engine/arch/micro_arch.hpp"

namespace pathfinder {

// Pure and thread-safe. An infeasible design comes back with feasible = false and a reason.
[[nodiscard]] MicroArch generate_micro_arch(const ArchSpec& spec, const ResourceSplit& split);
// The same into `out`, reusing its storage (a search's objective generates one per call).
void generate_micro_arch(const ArchSpec& spec, const ResourceSplit& split, MicroArch& out);
// Binds and generates with the template's own split (throws ConfigError on a bad template).
[[nodiscard]] MicroArch generate_micro_arch(const TechLibrary& lib, const ArchTemplate& t);

}  // namespace pathfinder
