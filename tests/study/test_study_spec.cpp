// Study files: what they hold, and every way one can be wrong, with file:line:col.
#include <catch2/catch.hpp>

#include "engine/config/node.hpp"
#include "engine/study/study_runner.hpp"
#include "tests/study/study_fixtures.hpp"
#include "tests/test_support.hpp"

namespace pathfinder {
namespace {

// Lines 1-6; a test adds its keys from line 7 on.
const std::string kHead =
    "name: t\n"
    "question: does it work?\n"
    "template: ../templates/a100.yaml\n"
    "workload: workloads/gpt3_1.3b.yaml\n"
    "devices: 8\n"
    "search: none\n";

std::string study_error(const std::string& text) {
  return test::error_of([&] { (void)read_study(ConfigNode::load_string(text, "s.yaml")); });
}

}  // namespace

TEST_CASE("a study file resolves its paths and keeps the axes in file order", "[study]") {
  const StudySpec s = test::fixture_study("study_small");
  CHECK(s.name == "small-study");
  CHECK(s.question == "does N5 or HBM3 buy more for GPT-3 1.3B on 8 devices?");
  CHECK(s.template_path == test::source_path("templates/a100.yaml"));
  CHECK(s.workload_path == test::source_path("studies/workloads/gpt3_1.3b.yaml"));
  CHECK(s.devices == 8);
  CHECK(s.check_memory);
  CHECK(s.search == StudySearch::kNone);
  REQUIRE(s.strategy);
  CHECK(to_string(*s.strategy) == "tp2-pp2-dp2-mb4-1f1b");
  REQUIRE(s.axes.size() == 2);
  CHECK(s.axes[0].name() == "logic");
  CHECK(s.axes[1].values[1].text == "HBM3");
  CHECK(s.point_count() == 4);
  REQUIRE(s.outputs.size() == 2);
  CHECK(s.outputs[0].name == "iteration_s_vs_logic");
  CHECK(s.outputs[0].log_y);
  CHECK(s.outputs[1].kind == PlotKind::kBars);
  CHECK(s.outputs[1].title == "small-study: mfu vs memory");
}

TEST_CASE("points are the Cartesian product of the axes, first axis outermost", "[study]") {
  const StudySpec s = test::fixture_study("study_resume");
  const std::vector<StudyPoint> points = enumerate_points(s);
  REQUIRE(points.size() == 18);  // 3 device counts x 2 budgets x 3 strategies
  CHECK(points[0].values == std::vector<std::string>{"8", "300 W", "tp2-pp2-dp2-mb4"});
  CHECK(points[1].values == std::vector<std::string>{"8", "300 W", "tp2-pp1-dp8-mb2"});
  CHECK(points[3].values == std::vector<std::string>{"8", "400 W", "tp2-pp2-dp2-mb4"});
  CHECK(points[17].values == std::vector<std::string>{"32", "400 W", "tp4-pp2-dp4-mb2"});
  CHECK(points[7].devices == 16);
  CHECK(points[7].power->in(units::watts) == 300.0);
  CHECK(points[7].strategy->dp == 8);
  CHECK(points[17].index == 17);
  // No axes: one point.
  const StudySpec one = read_study(ConfigNode::load_string(kHead + "strategy: tp2-pp2-dp2-mb4\n", "s.yaml"));
  CHECK(enumerate_points(one).size() == 1);
}

TEST_CASE("a point's template takes its technologies, budgets and nodes per package",
          "[study]") {
  const ArchTemplate base = load_template(test::source_path("templates/deepflow_case_study.yaml"));
  StudyPoint p;
  p.tech.logic = "DF-N7";
  p.chip_area = square_millimeters(400);
  p.power = Power::from_si(400.0);
  p.nodes_per_package = 4;
  const ArchTemplate t = point_template(base, p);
  CHECK(t.logic == "DF-N7");
  CHECK(t.budget.power.in(units::watts) == 400.0);
  CHECK(t.budget.perimeter.in(units::millimeters) == Approx(80.0));  // 4·sqrt(400 mm²), inferred
  CHECK(t.nodes_per_package == 4);
  CHECK(t.packages == 128);  // the domain keeps its 512 nodes
  p.nodes_per_package = 3;
  CHECK(test::error_of([&] { (void)point_template(base, p); })
            .find("3 nodes per package do not divide the scale-up domain of 512 nodes") !=
        std::string::npos);
}

TEST_CASE("study errors name the file, line, column and key", "[study][config-error]") {
  const std::string fixed = "strategy: tp2-pp2-dp2-mb4\n";
  CHECK(study_error(kHead + fixed + "sweep:\n  logc: [N7]\n") ==
        "s.yaml:9:9: error: sweep.logc: unknown axis (expected logic, memory, network, devices, "
        "nodes_per_package, budget.power, budget.chip_area, budget.node_area, budget.perimeter or "
        "strategy); did you mean \"logic\"?");
  CHECK(study_error(kHead + fixed + "sweep:\n  logic: []\n") ==
        "s.yaml:9:10: error: sweep.logic: expected at least one value");
  CHECK(study_error(kHead + fixed + "sweep:\n  budget.power: [300 W, 400 GB/s]\n")
            .find("s.yaml:9:25: error: sweep.budget.power[1]: expected a power such as") == 0);
  CHECK(study_error(kHead + fixed + "sweep:\n  budget.chip_area: [-3 mm^2]\n") ==
        "s.yaml:9:22: error: sweep.budget.chip_area[0]: expected a positive area, got \"-3 mm^2\"");
  CHECK(study_error(kHead + fixed + "sweep:\n  logic: [N7, N5, N7]\n") ==
        "s.yaml:9:19: error: sweep.logic[2]: \"N7\" repeats \"N7\" (line 9)");
  CHECK(study_error(kHead + fixed + "sweep:\n  devices: [8, 0]\n") ==
        "s.yaml:9:16: error: sweep.devices[1]: expected a positive whole number, got \"0\"");
  const std::string bad_item =
      study_error(kHead + "sweep:\n  strategy: [tp2-pp2-dp2-mb4, tp2-pp2-dp2-recompute=selectve]\n");
  CHECK(bad_item.find("s.yaml:8:31: error: sweep.strategy[1]: ") == 0);
  CHECK(bad_item.find("did you mean \"selective\"") != std::string::npos);
  CHECK(study_error(kHead + fixed + "shortlst: 3\n") ==
        "s.yaml:8:1: error: shortlst: unknown key; did you mean \"shortlist\"?");
  CHECK(study_error("name: t\ntemplate: a\nworkload: b\ndevices: 8\nsearch: none\n")
            .find("s.yaml:1:1: error: question: missing required key") == 0);
  CHECK(study_error(kHead).find("s.yaml:6:9: error: search: search: none evaluates a fixed strategy") == 0);
  CHECK(study_error(kHead + "sweep:\n  devices: [8]\n" + fixed)
            .find("s.yaml:5:10: error: devices: given both here and as a sweep axis") == 0);
}

TEST_CASE("a study's search, strategy and optimizer settings must agree", "[study][config-error]") {
  const std::string head = kHead.substr(0, kHead.find("search:"));
  CHECK(study_error(head + "search: everything\n") ==
        "s.yaml:6:9: error: search: unknown search \"everything\" (expected none, strategy or "
        "architecture)");
  CHECK(study_error(head + "search: strategy\nstrategy: tp2-pp2-dp2-mb4\n")
            .find("s.yaml:7:11: error: strategy: search: strategy ranks every strategy") == 0);
  CHECK(study_error(head + "search: strategy\nshortlist: 2\n")
            .find("shortlist: only used by search: architecture") != std::string::npos);
  CHECK(study_error(head + "search: none\nstrategy: tp2-pp2-dp2-mb4\noptimizer: {steps: 3}\n")
            .find("s.yaml:8:12: error: optimizer: only used by search: architecture") == 0);
  CHECK(study_error(head + "search: architecture\noptimizer: {stpes: 3}\n")
            .find("optimizer.stpes: unknown key; did you mean \"steps\"?") != std::string::npos);
  CHECK(study_error(head + "search: architecture\noptimizer: {momentum: 1.5}\n")
            .find("momentum") != std::string::npos);
  const StudySpec a = read_study(ConfigNode::load_string(
      head + "search: architecture\nshortlist: 2\noptimizer: {optimizer: cobyla, restarts: 2, steps: 5}\n", "s.yaml"));
  CHECK(a.shortlist == 2);
  CHECK(a.optimizer.algorithm == SearchAlgorithm::kCobyla);
  CHECK(a.optimizer.steps == 5);
}

TEST_CASE("plots name axes and result columns that exist", "[study][config-error]") {
  const std::string head = kHead + "strategy: tp2-pp2-dp2-mb4\nsweep:\n  logic: [N7, N5]\n  memory: [HBM2e, HBM3]\n";
  CHECK(study_error(head + "outputs:\n  - {plot: line, x: logic, y: iteration_s}\n")
            .find("s.yaml:12:5: error: outputs[0]: the memory axis has 2 values but is neither x nor "
                  "series") == 0);
  CHECK(study_error(head + "outputs:\n  - {plot: line, x: logc, y: iteration_s, series: memory}\n")
            .find("s.yaml:12:21: error: outputs[0].x: \"logc\" is not an axis of this study (axes: "
                  "logic or memory); did you mean \"logic\"?") == 0);
  CHECK(study_error(head + "outputs:\n  - {plot: line, x: logic, y: time, series: memory}\n")
            .find("outputs[0].y: \"time\" is not a numeric result column") != std::string::npos);
  CHECK(study_error(head + "outputs:\n  - {plot: pie, x: logic, y: mfu, series: memory}\n")
            .find("outputs[0].plot: unknown plot \"pie\" (expected line or bars)") != std::string::npos);
  CHECK(study_error(head + "outputs:\n  - {plot: line, x: logic, y: mfu, where: {memory: HBM4}}\n")
            .find("\"HBM4\" is not a value of the memory axis") != std::string::npos);
  const StudySpec s = read_study(ConfigNode::load_string(
      head + "outputs:\n  - {plot: line, x: logic, y: mfu, where: {memory: HBM3}}\n", "s.yaml"));
  REQUIRE(s.outputs.size() == 1);
  CHECK(s.outputs[0].where == std::vector<std::pair<std::string, std::string>>{{"memory", "HBM3"}});
}

TEST_CASE("sweep technologies are checked against the library at the sweep value",
          "[study][config-error]") {
  const StudySpec s = read_study(ConfigNode::load_string(
      "name: t\nquestion: q\ntemplate: " + test::source_path("templates/a100.yaml") +
          "\nworkload: " + test::source_path("studies/workloads/gpt3_1.3b.yaml") +
          "\ndevices: 8\nsearch: strategy\nsweep:\n  memory: [HBM3, HMB4]\n",
      "s.yaml"));
  CHECK(test::error_of([&] { (void)load_study_context(s, test::source_path("techlib")); })
            .find("s.yaml:8:18: error: sweep.memory[1]: unknown memory technology \"HMB4\"") == 0);
}

}  // namespace pathfinder
