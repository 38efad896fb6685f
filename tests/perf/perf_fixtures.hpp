// Shared set-up for perf tests: a shipped template's micro-architecture as the timer sees it.
#pragma once

#include "engine/arch/generator.hpp"
#include "engine/perf/perf_machine.hpp"
#include "tests/arch/arch_fixtures.hpp"

namespace pathfinder::test {

// Burst throughput: what one timed kernel reaches (the GEMM measurements, kernel properties).
inline PerfMachine shipped_machine(const std::string& name, const TechOverrides& o = {}) {
  const ArchSpec spec =
      bind_template(shipped_techlib(), apply_overrides(shipped_template(name), o));
  return make_perf_machine(spec, generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl)),
                           PerfMode::kBurst);
}

}  // namespace pathfinder::test
