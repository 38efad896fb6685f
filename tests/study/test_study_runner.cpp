// Running studies: the rows against direct evaluations, infeasible points as rows, resuming
// after an interruption, and the same bytes for any thread count.
#include <catch2/catch.hpp>

#include <oneapi/tbb/global_control.h>

#include <atomic>
#include <filesystem>

#include "engine/arch/arch_spec.hpp"
#include "engine/config/node.hpp"
#include "engine/core/format.hpp"
#include "engine/explore/design_evaluator.hpp"
#include "engine/graph/workload_loader.hpp"
#include "tests/study/study_fixtures.hpp"
#include "tests/test_support.hpp"

namespace pathfinder {
namespace {

std::string csv_of(const std::string& dir) {
  return read_text_file(dir + "/results.csv").value_or("<missing>");
}

// The study of the resume tests, on any search, for GPT-3 1.3B on 8 A100-class devices.
StudySpec gpt_study(const std::string& search_keys) {
  return read_study(ConfigNode::load_string(
      "name: s\nquestion: q\ntemplate: " + test::source_path("templates/a100.yaml") +
          "\nworkload: " + test::source_path("studies/workloads/gpt3_1.3b.yaml") +
          "\ndevices: 8\nsweep:\n  logic: [N7, N5]\n" + search_keys,
      "s.yaml"));
}

}  // namespace

TEST_CASE("a study's rows hold every axis and result, equal to a direct evaluation", "[study]") {
  const StudySpec s = test::fixture_study("study_small");
  const std::string out = test::fresh_dir("small-run");
  const StudyRun run = run_study(s, test::run_options(out));
  REQUIRE(run.complete());
  CHECK(run.evaluated == 4);
  CHECK(run.reused == 0);
  const StudyTable& t = run.table;
  CHECK(t.columns == std::vector<std::string>{
                         "logic", "memory", "feasible", "reason", "chosen_strategy", "iteration_s", "mfu",
                         "tokens_per_s", "compute_s", "tensor_comm_s", "pipeline_comm_s",
                         "pipeline_bubble_s", "data_comm_s", "optimizer_s", "host_s", "peak_tflops",
                         "memory_bandwidth_gbs", "memory_gb_per_device", "memory_used_gb", "settings"});
  CHECK(csv_of(out) == to_csv(t));
  // Row 3 is (N5, HBM3): the same model called directly.
  REQUIRE(t.rows[3][0] == "N5");
  REQUIRE(t.rows[3][1] == "HBM3");
  const ArchSpec spec = bind_template(
      test::shipped_techlib(),
      apply_overrides(load_template(test::source_path("templates/a100.yaml")), {"N5", "HBM3", ""}));
  const DesignEvaluator e(spec, load_workload(s.workload_path).spec, 8);
  const TrainingResult r = e.evaluate(ResourceSplit::from_template(spec.tmpl).values(), *s.strategy);
  REQUIRE(r.feasible);
  CHECK(t.cell(3, *t.column("feasible")) == "1");
  CHECK(t.cell(3, *t.column("chosen_strategy")) == "tp2-pp2-dp2-mb4-1f1b");
  CHECK(t.cell(3, *t.column("iteration_s")) == printf_string("%.9g", r.iteration_time));
  CHECK(t.cell(3, *t.column("mfu")) == printf_string("%.9g", r.mfu));
  CHECK(t.cell(3, *t.column("data_comm_s")) == printf_string("%.9g", r.breakdown.data_comm));
  CHECK(t.cell(3, *t.column("memory_gb_per_device")) == printf_string("%.9g", r.memory_capacity / 1e9));
  CHECK(t.cell(3, *t.column("memory_used_gb")) == printf_string("%.9g", r.memory.total().si() / 1e9));
  // A later node with a faster memory is never slower here.
  CHECK(*t.number(3, "iteration_s") <= *t.number(0, "iteration_s"));
  CHECK(*t.number(2, "peak_tflops") > *t.number(0, "peak_tflops"));
  CHECK(*t.number(1, "memory_bandwidth_gbs") > *t.number(0, "memory_bandwidth_gbs"));
}

TEST_CASE("an infeasible point is a row with its reason", "[study]") {
  const StudyRun run = run_study(test::fixture_study("study_resume"),
                                 test::run_options(test::fresh_dir("infeasible")));
  const StudyTable& t = run.table;
  REQUIRE(t.rows.size() == 18);
  // (8 devices, 300 W, tp2-pp1-dp8-mb2): a strategy for 16 devices.
  CHECK(t.rows[1][0] == "8");
  CHECK(t.cell(1, *t.column("feasible")) == "0");
  CHECK(t.cell(1, *t.column("reason")).find("16") != std::string::npos);
  CHECK(t.cell(1, *t.column("iteration_s")).empty());
  CHECK(t.cell(0, *t.column("feasible")) == "1");
  CHECK(t.cell(7, *t.column("feasible")) == "1");  // 16 devices, 300 W, tp2-pp1-dp8-mb2
  CHECK(t.cell(17, *t.column("feasible")) == "1");  // 32 devices, 400 W, tp4-pp2-dp4-mb2
  // A point whose system cannot be built (3 nodes per package on an 8-node domain).
  StudySpec s = test::fixture_study("study_small");
  StudyPoint p = enumerate_points(s).front();
  p.nodes_per_package = 3;
  const PointResult r = evaluate_point(s, load_study_context(s, test::source_path("techlib")), p);
  CHECK_FALSE(r.feasible);
  CHECK(r.reason.find("nodes per package do not divide") != std::string::npos);
}

TEST_CASE("search strategy takes the best ranked strategy; architecture never ends slower",
          "[study]") {
  const StudySpec ranked = gpt_study("search: strategy\n");
  const StudyContext c = load_study_context(ranked, test::source_path("techlib"));
  const StudyPoint p = enumerate_points(ranked).back();  // N5
  const PointResult best = evaluate_point(ranked, c, p);
  REQUIRE(best.feasible);
  const ArchSpec spec = bind_template(c.lib, point_template(c.base, p));
  const DesignEvaluator e(spec, c.workload, 8);
  const Eigen::VectorXd split = ResourceSplit::from_template(spec.tmpl).values();
  CHECK(best.training.iteration_time == rank_strategies(e, split).front().result.iteration_time);

  const StudySpec joint = gpt_study(
      "search: architecture\nstrategy: " + to_string(*best.strategy) +
      "\noptimizer: {restarts: 1, steps: 3}\n");
  const PointResult searched = evaluate_point(joint, load_study_context(joint, test::source_path("techlib")), p);
  REQUIRE(searched.feasible);
  CHECK(searched.training.iteration_time <= best.training.iteration_time * (1.0 + 1e-12));
}

TEST_CASE("a study stopped midway and rerun redoes nothing and loses nothing", "[study]") {
  const StudySpec s = test::fixture_study("study_resume");
  const std::string full = test::fresh_dir("resume-full");
  const StudyRun whole = run_study(s, test::run_options(full));
  REQUIRE(whole.complete());
  CHECK(whole.evaluated == 18);

  // Stopped after 5 points (--max-points), then rerun.
  const std::string part = test::fresh_dir("resume-part");
  StudyRunOptions first = test::run_options(part);
  first.max_points = 5;
  const StudyRun stopped = run_study(s, first);
  CHECK(stopped.evaluated == 5);
  CHECK_FALSE(stopped.complete());
  CHECK(parse_csv(csv_of(part)).rows.size() == 5);
  const StudyRun resumed = run_study(s, test::run_options(part));
  CHECK(resumed.reused == 5);
  CHECK(resumed.evaluated == 13);
  CHECK(csv_of(part) == csv_of(full));  // byte for byte

  // Cancelled from outside after 3 points: the points under way finish and are saved.
  const std::string cancelled = test::fresh_dir("resume-cancel");
  std::atomic<int> finished{0};
  StudyRunOptions cancel = test::run_options(cancelled);
  cancel.progress = [&](const StudyProgress& p) { finished = static_cast<int>(p.run_done); };
  cancel.stop = [&] { return finished.load() >= 3; };
  const StudyRun interrupted = run_study(s, cancel);
  CHECK(interrupted.evaluated >= 3);
  CHECK(interrupted.evaluated < 18);
  CHECK(parse_csv(csv_of(cancelled)).rows.size() == interrupted.evaluated);
  const StudyRun rerun = run_study(s, test::run_options(cancelled));
  CHECK(rerun.evaluated == 18 - interrupted.evaluated);
  CHECK(csv_of(cancelled) == csv_of(full));

  // Finished: nothing to do. No temporary file is left behind.
  CHECK(run_study(s, test::run_options(full)).evaluated == 0);
  for (const auto& f : std::filesystem::directory_iterator(full)) {
    CHECK(f.path().filename() == "results.csv");
  }
}

TEST_CASE("rows of other settings are recomputed; reordered axes keep their rows", "[study]") {
  StudySpec s = test::fixture_study("study_small");
  const std::string out = test::fresh_dir("settings");
  (void)run_study(s, test::run_options(out));
  s.check_memory = false;  // a setting every row depends on
  const StudyRun changed = run_study(s, test::run_options(out));
  CHECK(changed.reused == 0);
  CHECK(changed.dropped == 4);
  CHECK(changed.evaluated == 4);
  std::swap(s.axes[0], s.axes[1]);  // memory outermost now
  const StudyRun reordered = run_study(s, test::run_options(out));
  CHECK(reordered.evaluated == 0);
  CHECK(reordered.table.columns[0] == "memory");
  CHECK(reordered.table.rows[1][0] == "HBM2e");
  CHECK(reordered.table.rows[1][1] == "N5");
}

TEST_CASE("a study writes the same bytes with 1 and 2 threads", "[study]") {
  const StudySpec s = test::fixture_study("study_resume");
  const auto run_with = [&](std::size_t threads, const std::string& name) {
    oneapi::tbb::global_control c(oneapi::tbb::global_control::max_allowed_parallelism, threads);
    const std::string out = test::fresh_dir(name);
    (void)run_study(s, test::run_options(out));
    return csv_of(out);
  };
  CHECK(run_with(1, "threads-1") == run_with(2, "threads-2"));
}

}  // namespace pathfinder
