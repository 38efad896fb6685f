// Search speed (issue 5 targets): the strategy search for GPT-3 175B on 1,024 A100s evaluates
// >= 100,000 strategies per second (every valid strategy, micro-architecture generation
// included, on all cores).
#include <benchmark/benchmark.h>

#include "engine/arch/template_loader.hpp"
#include "engine/explore/design_evaluator.hpp"
#include "engine/graph/workload_loader.hpp"
#include "engine/techlib/techlib_loader.hpp"

namespace {

using namespace pathfinder;

const std::string kRoot = PATHFINDER_SOURCE_DIR;

void BM_StrategySearchGpt3(benchmark::State& state) {
  const TechLibrary lib = load_tech_library_dir(kRoot + "/techlib");
  const ArchSpec spec = bind_template(lib, load_template(kRoot + "/templates/a100.yaml"));
  const DesignEvaluator e(spec, load_workload(kRoot + "/studies/workloads/gpt3_175b.yaml").spec,
                          1024);
  const Eigen::VectorXd split = ResourceSplit::from_template(spec.tmpl).values();
  std::size_t n = 0;
  for (auto _ : state) benchmark::DoNotOptimize(rank_strategies(e, split, &n));
  state.counters["strategies_per_s"] = benchmark::Counter(
      static_cast<double>(n) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_StrategySearchGpt3)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
