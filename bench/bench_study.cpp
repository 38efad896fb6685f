// Study speed (issue 6 target): the full Fig. 9 technology-scaling study
// (studies/fig9_technology_scaling_full.yaml: 7 logic nodes x 4 HBM generations x 3 networks =
// 84 points, each with a joint strategy and architecture search) finishes in <= 10 minutes on
// 2 cores (issue 18: <= 15 s). One iteration runs every point from scratch into a fresh folder, on all cores.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include <unistd.h>

#include "engine/study/study_runner.hpp"

namespace {

using namespace pathfinder;

const std::string kRoot = PATHFINDER_SOURCE_DIR;

void BM_Fig9FullStudy(benchmark::State& state) {
  const StudySpec s = load_study(kRoot + "/studies/fig9_technology_scaling_full.yaml");
  const std::filesystem::path out = std::filesystem::temp_directory_path() /
                                    ("pathfinder-bench-fig9-" + std::to_string(::getpid()));
  StudyRunOptions o;
  o.out_dir = out.string();
  o.techlib_dir = kRoot + "/techlib";
  std::size_t points = 0, feasible = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::filesystem::remove_all(out);
    std::filesystem::create_directories(out);
    state.ResumeTiming();
    const StudyRun run = run_study(s, o);
    points = run.evaluated;
    feasible = 0;
    for (const auto& row : run.table.rows) feasible += row[s.axes.size()] == "1";
  }
  std::filesystem::remove_all(out);
  state.counters["points"] = static_cast<double>(points);
  state.counters["feasible"] = static_cast<double>(feasible);
  state.counters["s_per_point"] = benchmark::Counter(
      static_cast<double>(points) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Fig9FullStudy)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace
