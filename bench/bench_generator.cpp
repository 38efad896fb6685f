// One micro-architecture generation (issue 2 target: <= 20 us). The spec is bound once, as a
// search does; each iteration perturbs the split so nothing can be cached.
#include <benchmark/benchmark.h>

#include "engine/arch/generator.hpp"
#include "engine/arch/template_loader.hpp"
#include "engine/techlib/techlib_loader.hpp"

namespace {

using namespace pathfinder;

void BM_GenerateMicroArch(benchmark::State& state, const char* name) {
  const std::string root = PATHFINDER_SOURCE_DIR;
  const TechLibrary lib = load_tech_library_dir(root + "/techlib");
  const ArchSpec spec =
      bind_template(lib, load_template(root + "/templates/" + std::string(name) + ".yaml"));
  ResourceSplit split = ResourceSplit::from_template(spec.tmpl);
  double wiggle = 1.0;
  for (auto _ : state) {
    wiggle = wiggle > 1.01 ? 0.99 : wiggle + 1e-4;
    split.values()[0] = 0.3675 * wiggle;  // core area
    const MicroArch a = generate_micro_arch(spec, split);
    benchmark::DoNotOptimize(a.core.peak);
  }
}
BENCHMARK_CAPTURE(BM_GenerateMicroArch, a100, "a100");
BENCHMARK_CAPTURE(BM_GenerateMicroArch, h100, "h100");
BENCHMARK_CAPTURE(BM_GenerateMicroArch, deepflow_v100, "deepflow_v100");

}  // namespace
