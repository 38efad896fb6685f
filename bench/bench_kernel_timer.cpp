// Kernel timing speed (issue 3 targets): all kernels of one GPT-3 175B layer, forward and
// backward, on a fixed micro-architecture <= 50 us cold and <= 2 us per kernel warm; one
// iteration of the paper's LSTM LM including micro-architecture generation <= 1 ms (the
// reference code takes about 1 s).
#include <benchmark/benchmark.h>

#include "engine/arch/generator.hpp"
#include "engine/arch/template_loader.hpp"
#include "engine/graph/workload_loader.hpp"
#include "engine/perf/graph_timing.hpp"
#include "engine/techlib/techlib_loader.hpp"

namespace {

using namespace pathfinder;

const std::string kRoot = PATHFINDER_SOURCE_DIR;

ArchSpec a100_spec() {
  static const TechLibrary lib = load_tech_library_dir(kRoot + "/techlib");
  return bind_template(lib, load_template(kRoot + "/templates/a100.yaml"));
}

PerfMachine a100_machine() {
  const ArchSpec spec = a100_spec();
  return make_perf_machine(spec, generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl)));
}

// Layer 0 of GPT-3 175B: its forward, data- and weight-gradient kernels.
std::vector<Kernel> gpt3_layer() {
  const Workload w = load_workload(kRoot + "/studies/workloads/gpt3_175b.yaml");
  std::vector<Kernel> out;
  for (const Kernel& k : w.graph.kernels()) {
    if (k.layer == 0 && k.phase != Phase::kUpdate) out.push_back(k);
  }
  return out;
}

void BM_Gpt3LayerCold(benchmark::State& state) {
  const PerfMachine m = a100_machine();
  const std::vector<Kernel> layer = gpt3_layer();
  for (auto _ : state) {
    KernelTimer timer(m);  // empty memo: every GEMM shape is searched
    double sum = 0.0;
    for (const Kernel& k : layer) sum += timer.time(k).device.si();
    benchmark::DoNotOptimize(sum);
  }
  state.counters["kernels"] = static_cast<double>(layer.size());
}
BENCHMARK(BM_Gpt3LayerCold)->Unit(benchmark::kMicrosecond);

void BM_Gpt3LayerWarmPerKernel(benchmark::State& state) {
  KernelTimer timer(a100_machine());
  const std::vector<Kernel> layer = gpt3_layer();
  for (const Kernel& k : layer) benchmark::DoNotOptimize(timer.time(k));
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(timer.time(layer[i]).device);
    i = i + 1 == layer.size() ? 0 : i + 1;
  }
}
BENCHMARK(BM_Gpt3LayerWarmPerKernel)->Unit(benchmark::kNanosecond);

// The case-study LM counted per step (lstm_lm.yaml) or batched over the sequence
// (lstm_lm_sequence.yaml: fewer, larger kernels).
void BM_LstmIterationWithGeneration(benchmark::State& state, const char* workload) {
  const ArchSpec spec = a100_spec();
  const Workload w = load_workload(kRoot + "/studies/workloads/" + workload);
  ResourceSplit split = ResourceSplit::from_template(spec.tmpl);
  double wiggle = 1.0;
  for (auto _ : state) {
    wiggle = wiggle > 1.01 ? 0.99 : wiggle + 1e-4;  // a new micro-architecture each time
    split.values()[0] = 0.3675 * wiggle;
    KernelTimer timer(make_perf_machine(spec, generate_micro_arch(spec, split)));
    benchmark::DoNotOptimize(time_workload(w, timer).iteration_time);
  }
  state.counters["kernels"] = static_cast<double>(w.graph.size());
}
BENCHMARK_CAPTURE(BM_LstmIterationWithGeneration, per_step, "lstm_lm.yaml")
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_LstmIterationWithGeneration, sequence, "lstm_lm_sequence.yaml")
    ->Unit(benchmark::kMicrosecond);

}  // namespace
