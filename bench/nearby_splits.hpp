// Budget splits a PGD step apart, for benchmarks that must time a design no earlier call saw:
// the template's split with 1e-4 .. count x 1e-4 of the power budget moved from the core to
// main memory (as a finite-difference step moves it), rates different, bank counts the same.
// 256 of them taken in turn outrun every cache of timed designs (each GEMM search's plans for
// its last four machines, gemm_model.hpp; the pipeline results, PipelineScratch): each call is
// a new design.
#pragma once

#include <vector>

#include "engine/arch/arch_spec.hpp"
#include "engine/arch/arch_template.hpp"

namespace pathfinder::bench {

inline std::vector<ResourceSplit> nearby_splits(const ArchTemplate& t, int count = 256) {
  const ResourceSplit base = ResourceSplit::from_template(t);
  const ComponentIndex index{static_cast<int>(t.levels.size())};
  const int core = ComponentIndex::core(), memory = index.main_memory();
  std::vector<ResourceSplit> splits;
  for (int i = 0; i < count; ++i) {
    ResourceSplit x = base;
    const double step = 1e-4 * (i + 1);
    x.set(core, x.area(core), x.power(core) - step, x.perimeter(core));
    x.set(memory, x.area(memory), x.power(memory) + step, x.perimeter(memory));
    splits.push_back(x);
  }
  return splits;
}

}  // namespace pathfinder::bench
