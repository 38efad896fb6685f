// Running studies: the rows against direct evaluations, infeasible points as rows, resuming
// after an interruption, and the same bytes for any thread count.
#include <catch2/catch.hpp>

#include <oneapi/tbb/global_control.h>

#include <atomic>
#include <cmath>
#include <filesystem>

#include "engine/arch/arch_spec.hpp"
#include "engine/arch/generator.hpp"
#include "engine/config/node.hpp"
#include "engine/core/format.hpp"
#include "engine/explore/design_evaluator.hpp"
#include "engine/graph/workload_loader.hpp"
#include "engine/perf/kernel_timer.hpp"
#include "engine/perf/perf_machine.hpp"
#include "engine/train/training_model.hpp"
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
                         "tokens_per_s", "compute_s", "embedding_head_s", "tensor_comm_s", "pipeline_comm_s",
                         "pipeline_bubble_s", "data_comm_s", "gradient_sync_s", "optimizer_s", "host_s", "peak_tflops",
                         "memory_bandwidth_gbs", "memory_gb_per_device", "memory_used_gb",
                         "gemm_intensity", "energy_j", "j_per_token", "chip_j_per_token", "device_power_w",
                         "peak_device_power_w", "gflop_per_j", "usd", "usd_per_mtoken",
                         // templates/a100.yaml's split, per component, in budget units
                         "area_mm2.core", "area_mm2.RF", "area_mm2.L1", "area_mm2.L2",
                         "area_mm2.main_memory", "area_mm2.intra_package",
                         "area_mm2.inter_package", "power_w.core", "power_w.RF", "power_w.L1",
                         "power_w.L2", "power_w.main_memory", "power_w.intra_package",
                         "power_w.inter_package", "perimeter_mm.core", "perimeter_mm.RF",
                         "perimeter_mm.L1", "perimeter_mm.L2", "perimeter_mm.main_memory",
                         "perimeter_mm.intra_package", "perimeter_mm.inter_package",
                         "converged", "convergence", "settings"});
  CHECK(csv_of(out) == to_csv(t));
  // Row 3 is (N5, HBM3): the same model called directly.
  REQUIRE(t.rows[3][0] == "N5");
  REQUIRE(t.rows[3][1] == "HBM3");
  // The study runs with the default software profile (megatron-lm).
  const SoftwareProfile software = load_software_profile(
      test::source_path("templates/software/megatron-lm.yaml"));
  const ArchSpec spec = bind_template(
      test::shipped_techlib(),
      with_software(apply_overrides(load_template(test::source_path("templates/a100.yaml")),
                                    {"N5", "HBM3", "", ""}),
                    software));
  TrainingOptions options = TrainingOptions::from(software);
  const DesignEvaluator e(spec, load_workload(s.workload_path).spec, 8, options);
  const TrainingResult r =
      e.evaluate(ResourceSplit::from_template(spec.tmpl).values(), s.strategy->strategy).training;
  REQUIRE(r.feasible);
  CHECK(t.cell(3, *t.column("feasible")) == "1");
  CHECK(t.cell(3, *t.column("chosen_strategy")) == "tp2-pp2-dp2-mb4-1f1b");
  CHECK(t.cell(3, *t.column("iteration_s")) == printf_string("%.9g", r.iteration_time.si()));
  CHECK(t.cell(3, *t.column("mfu")) == printf_string("%.9g", r.mfu));
  CHECK(t.cell(3, *t.column("data_comm_s")) == printf_string("%.9g", r.breakdown.data_comm.si()));
  CHECK(t.cell(3, *t.column("memory_gb_per_device")) == printf_string("%.9g", r.memory_capacity.si() / 1e9));
  CHECK(t.cell(3, *t.column("memory_used_gb")) == printf_string("%.9g", r.memory.total().si() / 1e9));
  CHECK(t.cell(3, *t.column("gemm_intensity")).empty());  // not a GEMM workload
  CHECK(t.cell(3, *t.column("energy_j")) == printf_string("%.9g", r.energy.joules.si()));
  CHECK(t.cell(3, *t.column("j_per_token")) == printf_string("%.9g", r.energy.joules_per_token.si()));
  CHECK(t.cell(3, *t.column("device_power_w")) == printf_string("%.9g", r.energy.device_power.si()));
  CHECK(t.cell(3, *t.column("usd")) == printf_string("%.9g", r.cost.usd));
  CHECK(t.cell(3, *t.column("usd_per_mtoken")) == printf_string("%.9g", 1e6 * r.cost.usd_per_token));
  // The template's split in budget units: core 0.3675 x 826 mm^2, 0.4990 x 400 W; main memory
  // 0.35 of the inferred perimeter 4 sqrt(826 mm^2) = 114.96 mm.
  CHECK(t.cell(3, *t.column("area_mm2.core")) == printf_string("%.9g", 0.3675 * 826.0));
  CHECK(t.cell(3, *t.column("power_w.core")) == printf_string("%.9g", 0.4990 * 400.0));
  CHECK(*t.number(3, "perimeter_mm.main_memory") == Approx(0.35 * 4.0 * std::sqrt(826.0)));
  CHECK(*t.number(3, "perimeter_mm.core") == 0.0);
  CHECK(t.cell(3, *t.column("converged")).empty());  // no split search at this point
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

TEST_CASE("search strategy takes the best ranked strategy, architecture never ends slower",
          "[study]") {
  const StudySpec ranked = gpt_study("search: strategy\n");
  const StudyContext c = load_study_context(ranked, test::source_path("techlib"));
  const StudyPoint p = enumerate_points(ranked).back();  // N5
  const PointResult best = evaluate_point(ranked, c, p);
  REQUIRE(best.feasible);
  const ArchSpec spec =
      bind_template(c.lib, point_template(with_software(c.templates.front(), c.softwares.front()), p));
  // The study's own evaluator: its software profile's options (the default profile here).
  const DesignEvaluator e(spec, c.workloads.front(), 8, TrainingOptions::from(c.softwares.front()));
  const Eigen::VectorXd split = ResourceSplit::from_template(spec.tmpl).values();
  CHECK(best.design.training.iteration_time.si() == rank_strategies(e, split).front().result.iteration_time.si());

  const StudySpec joint = gpt_study(
      "search: architecture\nstrategy: " + to_string(*best.strategy) +
      "\noptimizer: {restarts: 1, steps: 3}\n");
  const PointResult searched = evaluate_point(joint, load_study_context(joint, test::source_path("techlib")), p);
  REQUIRE(searched.feasible);
  CHECK(searched.design.training.iteration_time.si() <= best.design.training.iteration_time.si() * (1.0 + 1e-12));
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

TEST_CASE("shards evaluate disjoint points, merged, they write a single run's bytes",
          "[study]") {
  // The 18 points of the resume study over 4 machines: round robin, point i to shard
  // i mod 4 + 1, so shards 1-2 hold 5 points and 3-4 hold 4.
  const StudySpec s = test::fixture_study("study_resume");
  const std::string full = test::fresh_dir("shard-full");
  (void)run_study(s, test::run_options(full));
  std::vector<std::string> dirs;
  std::size_t evaluated = 0;
  for (int k = 1; k <= 4; ++k) {
    dirs.push_back(test::fresh_dir("shard-" + std::to_string(k)));
    StudyRunOptions o = test::run_options(dirs.back());
    o.shard = k;
    o.shards = 4;
    const StudyRun r = run_study(s, o);
    CHECK(r.shard_points == (k <= 2 ? 5u : 4u));
    CHECK(r.complete());
    CHECK(parse_csv(csv_of(dirs.back())).rows.size() == r.shard_points);
    evaluated += r.evaluated;
    // Rerun, the shard has nothing left to do.
    CHECK(run_study(s, o).evaluated == 0);
  }
  CHECK(evaluated == 18);  // every point once over the four machines
  // Merged in any order: the single run's results.csv, byte for byte, nothing evaluated.
  const std::string merged = test::fresh_dir("shard-merged");
  StudyRunOptions m = test::run_options(merged);
  m.merge_from = {dirs[2], dirs[0], dirs[3], dirs[1]};
  const StudyRun joined = run_study(s, m);
  CHECK(joined.evaluated == 0);
  CHECK(joined.complete());
  CHECK(joined.reused == 18);
  CHECK(csv_of(merged) == csv_of(full));
  // Three of four shards: 4 points missing, reported unfinished, not evaluated.
  const std::string partial = test::fresh_dir("shard-partial");
  StudyRunOptions p = test::run_options(partial);
  p.merge_from = {dirs[0], dirs[1], dirs[2]};
  const StudyRun three = run_study(s, p);
  CHECK(three.evaluated == 0);
  CHECK_FALSE(three.complete());
  CHECK(three.table.rows.size() == 14);
  // A folder without results.csv is an error at its path.
  StudyRunOptions bad = test::run_options(test::fresh_dir("shard-bad"));
  bad.merge_from = {test::fresh_dir("shard-empty")};
  CHECK_THROWS_AS(run_study(s, bad), ConfigError);
}

TEST_CASE("rows of other settings are recomputed, reordered axes keep their rows", "[study]") {
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

// Issue 14 item 7: a results.csv cell changed to -1, nan, text or a feasible flag of 7 was
// reused, and the summary reported "-1 s per iteration".
TEST_CASE("resume recomputes every stored row that fails validation", "[study][issue14]") {
  const StudySpec s = test::fixture_study("study_small");
  const std::string fresh = test::fresh_dir("valid-fresh");
  (void)run_study(s, test::run_options(fresh));
  const std::string good = csv_of(fresh);
  const StudyTable t = parse_csv(good);
  REQUIRE(t.rows.size() == 4);
  REQUIRE(t.cell(0, *t.column("feasible")) == "1");
  const auto corrupted = [&](std::size_t row, const std::string& column, const std::string& value) {
    StudyTable c = t;
    c.rows[row][*c.column(column)] = value;
    return c;
  };
  const std::vector<StudyTable> cases{
      corrupted(0, "iteration_s", "-1"),       corrupted(1, "iteration_s", "nan"),
      corrupted(2, "mfu", "fast"),             corrupted(3, "feasible", "7"),
      corrupted(0, "tokens_per_s", "inf"),     corrupted(1, "compute_s", ""),
      corrupted(2, "iteration_s", "1e-3x"),    corrupted(3, "chosen_strategy", ""),
      corrupted(0, "memory_used_gb", "-0.5"),  corrupted(1, "iteration_s", " 0.5"),
  };
  std::size_t k = 0;
  for (const StudyTable& c : cases) {
    const std::string out = test::fresh_dir("valid-" + std::to_string(k++));
    write_file_atomically(out + "/results.csv", to_csv(c));
    const StudyRun run = run_study(s, test::run_options(out));
    INFO(to_csv(c));
    CHECK(run.invalid == 1);
    CHECK(run.reused == 3);
    CHECK(run.evaluated == 1);
    CHECK(run.dropped == 0);
    CHECK(csv_of(out) == good);
  }
  // An infeasible row with a training figure is not one pathfinder wrote.
  StudyTable infeasible = corrupted(2, "feasible", "0");
  const std::string out = test::fresh_dir("valid-infeasible");
  write_file_atomically(out + "/results.csv", to_csv(infeasible));
  CHECK(run_study(s, test::run_options(out)).invalid == 1);
  CHECK(csv_of(out) == good);
}

TEST_CASE("resume reads a results.csv saved with a UTF-8 byte order mark", "[study][issue14]") {
  const StudySpec s = test::fixture_study("study_small");
  const std::string fresh = test::fresh_dir("bom-fresh");
  (void)run_study(s, test::run_options(fresh));
  const std::string out = test::fresh_dir("bom");
  write_file_atomically(out + "/results.csv", "\xEF\xBB\xBF" + csv_of(fresh));
  const StudyRun run = run_study(s, test::run_options(out));
  CHECK(run.reused == 4);
  CHECK(run.evaluated == 0);
  CHECK(run.invalid == 0);
  CHECK(csv_of(out) == csv_of(fresh));
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

TEST_CASE("gemm_intensity is FLOP per main-memory byte of one device's local GEMM", "[study]") {
  // The paper's Fig. 1 GEMM (64K^3 FP16) on case-study nodes, RC 1-D over 16, 64 and 256
  // devices (each multiplies a 65536/N x 65536 row block of A by all of B: m/N x k x n) and CR
  // over 16 (the inner dimension split: m x k/16 x n), as explicit points.
  const StudySpec s = read_study(ConfigNode::load_string(
      "name: s\nquestion: q\ntemplate: " + test::source_path("templates/case_study_node.yaml") +
          "\nworkload: " + test::source_path("studies/workloads/gemm_64k.yaml") +
          "\nsearch: none\npoints:\n"
          "  - {devices: 16, strategy: RC-16-1-d1-p1}\n"
          "  - {devices: 64, strategy: RC-64-1-d1-p1}\n"
          "  - {devices: 256, strategy: RC-256-1-d1-p1}\n"
          "  - {devices: 16, strategy: CR-16-d1-p1}\n",
      "s.yaml"));
  const StudyRun run = run_study(s, test::run_options(test::fresh_dir("gemm-intensity")));
  REQUIRE(run.complete());
  const StudyTable& t = run.table;
  for (std::size_t r = 0; r < 4; ++r) REQUIRE(t.cell(r, *t.column("feasible")) == "1");
  const double rc16 = *t.number(0, "gemm_intensity"), rc64 = *t.number(1, "gemm_intensity"),
               rc256 = *t.number(2, "gemm_intensity"), cr16 = *t.number(3, "gemm_intensity");
  // By hand: the timer keeps an output tile tm x tn in L2 with k innermost (output-
  // stationary), so main memory serves A once per column of tiles, B once per row of tiles and
  // C once: 2·(m·k·n/tn + k·n·m/tm + m·n) bytes for 2·m·n·k FLOP, an intensity of
  // 1 / (1/tm + 1/tn + 1/k). This node's L2 holds 2^23 output elements: tiles 2048 x 4096 for
  // m = 4096 (16 devices), 1024 x 8192 for m = 1024 (64), 256 x 32768 for m = 256 (256).
  CHECK(rc16 == Approx(1.0 / (1.0 / 2048 + 1.0 / 4096 + 1.0 / 65536)));   // 1337.5 FLOP/B
  CHECK(rc64 == Approx(1.0 / (1.0 / 1024 + 1.0 / 8192 + 1.0 / 65536)));   // 897.8
  CHECK(rc256 == Approx(1.0 / (1.0 / 256 + 1.0 / 32768 + 1.0 / 65536)));  // 253.0
  CHECK(cr16 == Approx(1.0 / (1.0 / 2048 + 1.0 / 4096 + 1.0 / 4096)));    // 1024: k = 4096
  // RC 1-D: the local product thins as the devices grow, and its intensity falls.
  CHECK(rc16 > rc64);
  CHECK(rc64 > rc256);
  CHECK(cr16 < rc16);
  // Exactly the kernel timer's own FLOP and main-memory bytes for that local product.
  const ArchSpec spec = bind_template(test::shipped_techlib(), load_template(s.template_path));
  const MicroArch a = generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl));
  REQUIRE(a.feasible);
  KernelTimer timer(make_perf_machine(spec, a));
  const std::int64_t n = 65536;
  const GemmShape local[] = {
      {1, n / 16, n, n}, {1, n / 64, n, n}, {1, n / 256, n, n}, {1, n, n, n / 16}};  // m, n, k
  for (std::size_t r = 0; r < 4; ++r) {
    const GemmPlan& plan = timer.gemm_plan(local[r], DataType::kFp16);
    const GemmShape& g = local[r];
    CHECK(plan.flops.si() == 2.0 * static_cast<double>(g.m * g.n) * static_cast<double>(g.k));
    CHECK(t.cell(r, *t.column("gemm_intensity")) ==
          printf_string("%.9g", plan.flops.si() / plan.main_memory_bytes().si()));
    const GemmTile& outer = plan.tiles[static_cast<std::size_t>(plan.levels - 1)];
    CHECK(plan.orders[static_cast<std::size_t>(plan.levels - 1)] == LoopOrder::kOutputStationary);
    CHECK(outer.m * outer.n == std::int64_t{1} << 23);
  }
}

TEST_CASE("a workload axis gives each workload its rows, as a study of that workload alone",
          "[study]") {
  const std::string head = "name: s\nquestion: q\ntemplate: " + test::source_path("templates/a100.yaml") +
                           "\ndevices: 8\nsearch: strategy\n";
  const std::string small = test::source_path("studies/workloads/gpt3_1.3b.yaml");
  const std::string large = test::source_path("studies/workloads/gpt3_13b.yaml");
  const StudySpec both = read_study(ConfigNode::load_string(
      head + "sweep:\n  workload: [" + small + ", " + large + "]\n  logic: [N7, N5]\n", "s.yaml"));
  const StudyRun run = run_study(both, test::run_options(test::fresh_dir("workload-axis")));
  REQUIRE(run.complete());
  const StudyTable& t = run.table;
  REQUIRE(t.rows.size() == 4);
  CHECK(t.rows[0][0] == small);  // as written
  CHECK(t.rows[3][0] == large);
  CHECK(t.rows[3][1] == "N5");
  // The 13B model does 10x the work of the 1.3B one on the same devices.
  CHECK(*t.number(2, "iteration_s") > 5.0 * *t.number(0, "iteration_s"));
  // Each row equals the same point of a study of that workload alone: every result column.
  const StudySpec alone = read_study(ConfigNode::load_string(
      head + "workload: " + large + "\nsweep:\n  logic: [N7, N5]\n", "s.yaml"));
  const StudyRun single = run_study(alone, test::run_options(test::fresh_dir("workload-alone")));
  REQUIRE(single.complete());
  const StudyTable& u = single.table;
  for (std::size_t r = 0; r < 2; ++r) {
    CHECK(t.cell(2 + r, *t.column("feasible")) == "1");
    for (const std::string& column : {std::string("chosen_strategy"), std::string("iteration_s"),
                                      std::string("mfu"), std::string("data_comm_s"),
                                      std::string("memory_used_gb")}) {
      INFO(column);
      CHECK(t.cell(2 + r, *t.column(column)) == u.cell(r, *u.column(column)));
    }
  }
}

TEST_CASE("a study over template, search and explicit points resumes by axis values", "[study]") {
  // 2 points (a fixed strategy, the ranked best) x 2 templates, GPT-3 1.3B on 8 devices.
  const StudySpec s = test::fixture_study("study_axes");
  const std::string full = test::fresh_dir("axes-full");
  const StudyRun whole = run_study(s, test::run_options(full));
  REQUIRE(whole.complete());
  const StudyTable& t = whole.table;
  CHECK(t.columns[0] == "label");
  CHECK(t.columns[3] == "template");
  CHECK(t.rows[1][3] == "../../../templates/h100.yaml");  // as written
  CHECK(t.rows[1][0] == "fixed");
  CHECK(t.rows[1][2] == "tp2-pp2-dp2-mb4");
  CHECK(t.rows[2][2].empty());  // ranked: no fixed strategy
  CHECK(t.cell(1, *t.column("chosen_strategy")) == "tp2-pp2-dp2-mb4-1f1b");
  CHECK_FALSE(t.cell(2, *t.column("chosen_strategy")).empty());
  // The H100 rows are faster, and the ranked best is never slower than the fixed strategy.
  CHECK(*t.number(1, "iteration_s") < *t.number(0, "iteration_s"));
  CHECK(*t.number(2, "iteration_s") <= *t.number(0, "iteration_s"));

  const std::string part = test::fresh_dir("axes-part");
  StudyRunOptions first = test::run_options(part);
  first.max_points = 3;
  CHECK(run_study(s, first).evaluated == 3);
  const StudyRun resumed = run_study(s, test::run_options(part));
  CHECK(resumed.reused == 3);
  CHECK(resumed.evaluated == 1);
  CHECK(csv_of(part) == csv_of(full));
  CHECK(run_study(s, test::run_options(full)).evaluated == 0);
}

TEST_CASE("the settings hash covers every swept template's contents and the optimizer",
          "[study]") {
  const std::filesystem::path dir = test::fresh_dir("swept-templates");
  std::filesystem::copy_file(test::source_path("templates/a100.yaml"), dir / "a.yaml");
  std::filesystem::copy_file(test::source_path("templates/a100.yaml"), dir / "b.yaml");
  // keys, then the sweep: the two templates and `axes`.
  const auto study = [&](const std::string& keys, const std::string& axes) {
    return read_study(ConfigNode::load_string(
        "name: s\nquestion: q\nworkload: " + test::source_path("studies/workloads/gpt3_1.3b.yaml") +
            "\ndevices: 8\n" + keys + "sweep:\n  template: [a.yaml, b.yaml]\n" + axes,
        (dir / "s.yaml").string()));
  };
  const StudySpec s = study("search: strategy\n", "");
  const std::string out = test::fresh_dir("swept-templates-out");
  const StudyRun before = run_study(s, test::run_options(out));
  REQUIRE(before.complete());
  CHECK(before.table.cell(0, *before.table.column("iteration_s")) ==
        before.table.cell(1, *before.table.column("iteration_s")));  // the same file twice
  // b.yaml changes (a comment is enough): every row is recomputed.
  write_file_atomically((dir / "b.yaml").string(),
                        read_text_file((dir / "b.yaml").string()).value() + "# edited\n");
  const StudyRun after = run_study(s, test::run_options(out));
  CHECK(after.reused == 0);
  CHECK(after.dropped == 2);
  CHECK(after.evaluated == 2);
  CHECK(after.table.rows[0].back() != before.table.rows[0].back());
  // With a point searching the architecture (the search axis), the optimizer counts too.
  const auto settings = [&](const std::string& optimizer) {
    return load_study_context(study(optimizer, "  search: [strategy, architecture]\n"),
                              test::source_path("techlib"))
        .settings;
  };
  CHECK(settings("optimizer: {steps: 3}\n") == settings("optimizer: {steps: 3}\n"));
  CHECK(settings("optimizer: {steps: 3}\n") != settings("optimizer: {steps: 4}\n"));
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("a study's strategy without mbN or dpN takes the workload's micro-batch and the "
          "point's devices", "[study]") {
  // tests/data/workloads/gpt_micro_batch2.yaml sets micro_batch 2 (global batch 16): tp2-pp2
  // is dp = devices / 4: dp2 on 8 devices, dp4 on 16.
  const StudySpec s = read_study(ConfigNode::load_string(
      "name: s\nquestion: q\ntemplate: " + test::source_path("templates/a100.yaml") +
          "\nworkload: " + test::data_path("workloads/gpt_micro_batch2.yaml") +
          "\nsearch: none\nstrategy: tp2-pp2\nsweep:\n  devices: [8, 16, 12]\n",
      "s.yaml"));
  const std::string out = test::fresh_dir("partial-strategy");
  const StudyRun run = run_study(s, test::run_options(out));
  REQUIRE(run.complete());
  const StudyTable& t = run.table;
  const std::size_t col = *t.column("chosen_strategy");
  CHECK(t.cell(0, col) == "tp2-pp2-dp2-mb2-1f1b");
  CHECK(t.cell(1, col) == "tp2-pp2-dp4-mb2-1f1b");
  // 12 devices make dp3, but 16 sequences do not split over 3 replicas: an infeasible row with
  // the reason; the study goes on.
  CHECK(t.cell(2, *t.column("feasible")) == "0");
  CHECK_FALSE(t.cell(2, *t.column("reason")).empty());
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("a software axis: each point under its own profile, as eval --software would time it",
          "[study]") {
  const std::string fixed = "search: none\nstrategy: tp2-pp1-dp4-mb1\n";
  const StudySpec s = read_study(ConfigNode::load_string(
      "name: s\nquestion: q\ntemplate: " + test::source_path("templates/a100.yaml") +
          "\nworkload: " + test::source_path("studies/workloads/gpt3_1.3b.yaml") +
          "\ndevices: 8\n" + fixed + "sweep:\n  software: [megatron-core, fsdp]\n",
      "s.yaml"));
  const StudyContext c = load_study_context(s, test::source_path("techlib"));
  REQUIRE(c.softwares.size() == 3);
  CHECK(c.softwares[1].name == "megatron-core");
  CHECK(c.softwares[2].name == "fsdp");
  const std::vector<StudyPoint> points = enumerate_points(s);
  REQUIRE(points.size() == 2);
  std::vector<double> times;
  for (const StudyPoint& p : points) {
    const PointResult r = evaluate_point(s, c, p);
    REQUIRE(r.feasible);
    // The profile's host costs on the template and its options, as eval applies them.
    const SoftwareProfile& sw = c.softwares[p.software];
    const ArchSpec spec =
        bind_template(c.lib, point_template(with_software(c.templates.front(), sw), p));
    const TrainingResult direct =
        evaluate_training(spec, generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl)),
                          c.workloads.front(), parse_strategy("tp2-pp1-dp4-mb1"),
                          TrainingOptions::from(sw));
    CHECK(r.design.training.iteration_time.si() == direct.iteration_time.si());
    times.push_back(direct.iteration_time.si());
  }
  // The stacks differ (FSDP's FlashAttention-2 and fp32 loss against Megatron-Core's fused
  // kernels): the axis is not ignored.
  CHECK(times[1] > times[0]);
  // A profile that does not exist is an error at its sweep value.
  const std::string bad = test::error_of([&] {
    (void)load_study_context(
        read_study(ConfigNode::load_string(
            "name: s\nquestion: q\ntemplate: " + test::source_path("templates/a100.yaml") +
                "\nworkload: w.yaml\ndevices: 8\n" + fixed + "sweep:\n  software: [nope]\n",
            "s.yaml")),
        test::source_path("techlib"));
  });
  CHECK(bad.rfind("s.yaml:9:14: error: sweep.software[0]: ", 0) == 0);
}

}  // namespace pathfinder
