// Distributed iteration speed (issue 4 targets): one evaluation of GPT-3 175B on 1,024
// A100-class devices with a fixed micro-architecture and strategy <= 20 us, and the same cost
// within +-20% from 8 to 65,536 devices (data parallelism grows; nothing is replicated).
#include <benchmark/benchmark.h>

#include "engine/arch/generator.hpp"
#include "engine/arch/template_loader.hpp"
#include "engine/graph/workload_loader.hpp"
#include "engine/system/system_graph.hpp"
#include "engine/techlib/techlib_loader.hpp"
#include "engine/train/gpt_training.hpp"
#include "engine/train/training_model.hpp"

namespace {

using namespace pathfinder;

const std::string kRoot = PATHFINDER_SOURCE_DIR;

// GPT-3 175B, tp8-pp8, data parallelism 1 .. 1024 (64 .. 65,536 devices), weak scaling: the
// global batch grows with the replicas (96 micro-batches of one sequence per pipeline, as
// GPT-3's 1,536 on 1,024 devices). With 8 devices (tp8, no pipeline) 175B does not fit: that
// evaluation returns the infeasible result.
void BM_Gpt3Evaluation(benchmark::State& state) {
  const int devices = static_cast<int>(state.range(0));
  static const TechLibrary lib = load_tech_library_dir(kRoot + "/techlib");
  const ArchSpec spec = bind_template(lib, load_template(kRoot + "/templates/a100.yaml"));
  const MicroArch arch = generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl));
  GptSpec w = std::get<GptSpec>(load_workload(kRoot + "/studies/workloads/gpt3_175b.yaml").spec);
  Strategy s = parse_strategy("tp8-pp8-mb1-1f1b-recompute=selective");
  s.dp = devices / 64 > 0 ? devices / 64 : 1;
  s.pp = devices / (8 * s.dp);
  w.global_batch = 96 * s.dp;
  GptTraining model(w, make_perf_machine(spec, arch), make_system_graph(spec, arch, devices),
                    arch.core.peak.si());
  benchmark::DoNotOptimize(model.evaluate(s));  // warm the per-shape memo, as a search would
  for (auto _ : state) benchmark::DoNotOptimize(model.evaluate(s).iteration_time);
  state.SetLabel(to_string(s));
}
BENCHMARK(BM_Gpt3Evaluation)->Arg(8)->Arg(64)->Arg(1024)->Arg(8192)->Arg(65536)
    ->Unit(benchmark::kMicrosecond);

// The same evaluation on 1,024 devices through the training entry point the design evaluator
// and the CLI use (training_model.hpp): the workload-kind dispatch must cost nothing.
void BM_Gpt3EntryPoint(benchmark::State& state) {
  static const TechLibrary lib = load_tech_library_dir(kRoot + "/techlib");
  const ArchSpec spec = bind_template(lib, load_template(kRoot + "/templates/a100.yaml"));
  const MicroArch arch = generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl));
  GptSpec w = std::get<GptSpec>(load_workload(kRoot + "/studies/workloads/gpt3_175b.yaml").spec);
  const Strategy s = parse_strategy("tp8-pp8-dp16-mb1-1f1b-recompute=selective");
  w.global_batch = 96 * s.dp;
  TrainingModel model(spec, arch, w, s.devices());
  benchmark::DoNotOptimize(model.evaluate(s));
  for (auto _ : state) benchmark::DoNotOptimize(model.evaluate(s).iteration_time);
  state.SetLabel(to_string(s));
}
BENCHMARK(BM_Gpt3EntryPoint)->Unit(benchmark::kMicrosecond);

}  // namespace
