// Search speed. Issue 5: the strategy search for GPT-3 175B on 1,024 A100s evaluates >= 100,000
// strategies per second (every valid strategy, micro-architecture generation included, on all
// cores). Issue 18: a search for the best few considers >= 1,000,000 strategies per second of
// wall time with the same top rows; PGD S = 10 x T = 100 on the paper's LM in <= 0.3 s.
#include <benchmark/benchmark.h>

// The replaced global operator new/delete below pair malloc with free; GCC 12 cannot see that
// through inlining into static initializers and calls it a mismatch.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

#include <cstdlib>
#include <new>
#include <vector>

#include "bench/nearby_splits.hpp"
#include "engine/parallel/strategy_enumeration.hpp"

#include "engine/arch/template_loader.hpp"
#include "engine/explore/design_evaluator.hpp"
#include "engine/graph/workload_loader.hpp"
#include "search/search.hpp"
#include "engine/techlib/techlib_loader.hpp"

namespace {

// Heap allocations by this thread, counted by this binary's global operator new (per thread:
// the multi-threaded searches do not contend for it).
thread_local long long t_allocations = 0;

}  // namespace

void* operator new(std::size_t n) {
  ++t_allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

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

// The same space searched for the best 5 (best-first by lower bounds, rank_strategies' `top`):
// strategies considered per second of wall time, and how many of them were timed.
void BM_StrategySearchGpt3Top5(benchmark::State& state) {
  const TechLibrary lib = load_tech_library_dir(kRoot + "/techlib");
  const ArchSpec spec = bind_template(lib, load_template(kRoot + "/templates/a100.yaml"));
  const WorkloadSpec w = load_workload(kRoot + "/studies/workloads/gpt3_175b.yaml").spec;
  const DesignEvaluator e(spec, w, 1024);
  const Eigen::VectorXd split = ResourceSplit::from_template(spec.tmpl).values();
  const std::size_t considered = enumerate_strategies(w, 1024).size();
  std::size_t timed = 0;
  for (auto _ : state) benchmark::DoNotOptimize(rank_strategies(e, split, &timed, nullptr, 5));
  state.counters["strategies_per_s"] = benchmark::Counter(
      static_cast<double>(considered) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
  state.counters["timed"] = static_cast<double>(timed);
  state.counters["considered"] = static_cast<double>(considered);
}
BENCHMARK(BM_StrategySearchGpt3Top5)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

namespace {

// The paper's case-study LM on 512 nodes of templates/deepflow_case_study.yaml, memory not
// enforced (as in the paper).
DesignEvaluator case_study_evaluator() {
  const TechLibrary lib = load_tech_library_dir(kRoot + "/techlib");
  TrainingOptions o;
  o.check_memory = false;
  return DesignEvaluator(
      bind_template(lib, load_template(kRoot + "/templates/deepflow_case_study.yaml")),
      LstmSpec{16384, 20, 16384, 800000, 2, DataType::kFp16, Optimizer::kSgd}, 512, o);
}

// The paper's case-study LM on 512 nodes (templates/deepflow_case_study.yaml), strategy
// CR-8-d64-p1 (the best of the paper's space, tests/explore/test_paper_claims.cpp), the full
// PGD search S = 10, T = 100 over the split (target <= 10 s on 2 cores; the reference needs
// about 18 minutes per restart). Memory is not enforced, as in the paper.
void BM_PgdCaseStudy(benchmark::State& state) {
  const DesignEvaluator e = case_study_evaluator();
  const ArchSpec& spec = e.spec();
  const SplitSpace space = template_split_space(spec.tmpl);
  const Strategy s = parse_strategy("CR-8-d64-p1");
  SearchOptions opt;
  opt.initial = ResourceSplit::from_template(spec.tmpl).values();
  double f = 0.0;
  long evaluations = 0;
  for (auto _ : state) {
    const SearchResult r =
        minimize([&](const Eigen::VectorXd& x) { return e.objective(x, s); }, space, opt);
    f = r.f;
    evaluations = r.evaluations;
  }
  state.counters["iteration_s"] = f;
  state.counters["evaluations"] = static_cast<double>(evaluations);
}
BENCHMARK(BM_PgdCaseStudy)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

// One objective call of that search (issue 18's LSTM evaluation "including generation"): the
// micro-architecture generated, the model built (graphs from the evaluator's cache) and
// CR-8-d64-p1 timed. 256 splits a few 1e-4 of the power budget apart (core against main
// memory, as a PGD step moves them) in turn, so no call finds its design's timings kept.
void BM_LstmLmObjective(benchmark::State& state) {
  const DesignEvaluator e = case_study_evaluator();
  const ArchSpec& spec = e.spec();
  const Strategy s = parse_strategy("CR-8-d64-p1");
  std::vector<Eigen::VectorXd> xs;
  for (const ResourceSplit& x : bench::nearby_splits(spec.tmpl)) xs.push_back(x.values());
  for (const Eigen::VectorXd& x : xs) benchmark::DoNotOptimize(e.objective(x, s));
  std::size_t next = 0;
  const long long before = t_allocations;
  for (auto _ : state) {
    benchmark::DoNotOptimize(e.objective(xs[next], s));
    next = (next + 1) % xs.size();
  }
  state.counters["allocs_per_eval"] = static_cast<double>(t_allocations - before) /
                                      static_cast<double>(state.iterations());
  state.SetLabel("CR-8-d64-p1 on 512 nodes, generation included, 256 designs in turn");
}
BENCHMARK(BM_LstmLmObjective)->Unit(benchmark::kMicrosecond);

}  // namespace
