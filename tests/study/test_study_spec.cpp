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
  CHECK(to_string(s.strategy->strategy) == "tp2-pp2-dp2-mb4-1f1b");
  CHECK(s.strategy->has_micro_batch);
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
  CHECK(points[7].strategy->strategy.dp == 8);
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
        "s.yaml:9:9: error: sweep.logc: unknown axis (expected logic, memory, network, nic, devices, "
        "nodes_per_package, budget.power, budget.power_limit, budget.chip_area, budget.node_area, "
        "budget.perimeter, "
        "strategy, template, workload, software, search or label); did you mean \"logic\"?");
  CHECK(study_error(kHead + fixed + "sweep:\n  logic: []\n") ==
        "s.yaml:9:10: error: sweep.logic: expected at least one value");
  CHECK(study_error(kHead + fixed + "sweep:\n  budget.power: [300 W, 400 GB/s]\n")
            .find("s.yaml:9:25: error: sweep.budget.power[1]: expected a power such as") == 0);
  CHECK(study_error(kHead + fixed + "sweep:\n  budget.power_limit: [-5 W]\n") ==
        "s.yaml:9:24: error: sweep.budget.power_limit[0]: expected a positive power, got \"-5 W\"");
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
  CHECK(study_error("name: t\nquestion: q\nworkload: b\ndevices: 8\nsearch: none\n" + fixed) ==
        "s.yaml:1:1: error: template: missing required key (or give a template axis)");
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

TEST_CASE("template, workload and search axes: files as written, each loaded once, per point",
          "[study]") {
  const StudySpec s = read_study(ConfigNode::load_string(
      "name: t\nquestion: q\ndevices: 8\nworkload: workloads/gpt3_1.3b.yaml\nsweep:\n"
      "  template: [../templates/a100.yaml, ../templates/h100.yaml]\n"
      "  search: [strategy, architecture]\n",
      "studies/s.yaml"));
  REQUIRE(s.templates.size() == 2);
  CHECK(s.templates[1].text == "../templates/h100.yaml");
  CHECK(s.templates[1].path == "templates/h100.yaml");  // beside studies/s.yaml
  CHECK(s.template_path.empty());                      // no template: key
  REQUIRE(s.workloads.size() == 1);
  CHECK(s.workloads[0].path == "studies/workloads/gpt3_1.3b.yaml");
  CHECK(s.workload_path == s.workloads[0].path);
  CHECK_FALSE(s.search);
  CHECK(s.searches(StudySearch::kArchitecture));
  CHECK_FALSE(s.searches(StudySearch::kNone));
  const std::vector<StudyPoint> points = enumerate_points(s);
  REQUIRE(points.size() == 4);  // 2 templates x 2 searches
  CHECK(points[1].values == std::vector<std::string>{"../templates/a100.yaml", "architecture"});
  CHECK(points[1].tmpl == 0);
  CHECK(points[1].search == StudySearch::kArchitecture);
  CHECK(points[2].values == std::vector<std::string>{"../templates/h100.yaml", "strategy"});
  CHECK(points[2].tmpl == 1);
  CHECK(points[2].search == StudySearch::kStrategy);
  CHECK(points[2].workload == 0);
}

TEST_CASE("template, workload and search: exactly one of key and axis, and searches that fit "
          "the strategy", "[study][config-error]") {
  const std::string head = "name: t\nquestion: q\ndevices: 8\n";  // lines 1-3
  const std::string files = head + "template: a.yaml\nworkload: w.yaml\n";  // lines 4-5
  const std::string fixed = "strategy: tp2-pp2-dp2-mb4\n";
  CHECK(study_error(files + "search: none\n" + fixed + "sweep:\n  template: [b.yaml]\n") ==
        "s.yaml:4:11: error: template: given both here and as a sweep axis; keep one");
  CHECK(study_error(head + "template: a.yaml\nsearch: none\n" + fixed) ==
        "s.yaml:1:1: error: workload: missing required key (or give a workload axis)");
  CHECK(study_error(files + "search: strategy\nsweep:\n  search: [strategy]\n") ==
        "s.yaml:6:9: error: search: given both here and as a sweep axis; keep one");
  CHECK(study_error(files + fixed) ==
        "s.yaml:1:1: error: search: missing required key (or give a search axis)");
  CHECK(study_error(files + fixed + "sweep:\n  search: [none, everything]\n") ==
        "s.yaml:8:18: error: sweep.search[1]: unknown search \"everything\" (expected none, "
        "strategy or architecture)");
  CHECK(study_error(files + "sweep:\n  search: [architecture, non]\n") ==
        "s.yaml:7:26: error: sweep.search[1]: unknown search \"non\" (expected none, strategy or "
        "architecture); did you mean \"none\"?");
  // search none needs a fixed strategy, search strategy must have none: at the sweep value,
  // or at the fixed strategy with the search value's line.
  CHECK(study_error(files + "sweep:\n  search: [none, architecture]\n") ==
        "s.yaml:7:12: error: sweep.search[0]: search: none evaluates a fixed strategy: give "
        "strategy: or a strategy axis");
  CHECK(study_error(files + fixed + "sweep:\n  search: [none, strategy]\n") ==
        "s.yaml:6:11: error: strategy: search: strategy (line 8) ranks every strategy at each "
        "point; drop the fixed strategy (or use search: none)");
  CHECK(study_error(files + fixed + "sweep:\n  search: [none, architecture]\noptimizer: {steps: 3}\nshortlist: 2\n") ==
        "s.yaml:10:12: error: shortlist: only used by search: architecture without a fixed "
        "strategy");
  CHECK(study_error(files + fixed + "sweep:\n  search: [none]\noptimizer: {steps: 3}\n") ==
        "s.yaml:9:12: error: optimizer: only used by search: architecture");
  // File values: non-empty, not repeated (compared as normal paths).
  CHECK(study_error(head + "workload: w.yaml\nsearch: strategy\nsweep:\n  template: [a.yaml, x/../a.yaml]\n") ==
        "s.yaml:7:22: error: sweep.template[1]: \"x/../a.yaml\" repeats \"a.yaml\" (line 7)");
  CHECK(study_error(head + "template: a.yaml\nsearch: strategy\nsweep:\n  workload: [\"\"]\n") ==
        "s.yaml:7:14: error: sweep.workload[0]: expected a file path, got \"\"");
  CHECK(study_error(files + "search: strategy\nsweep:\n  label: [x]\n") ==
        "s.yaml:8:10: error: sweep.label: a label names explicit points: give it under points:");
}

TEST_CASE("a missing or invalid swept template or workload is an error at its sweep value",
          "[study][config-error]") {
  const std::string file = test::source_path("tests/data/studies/s.yaml");
  const auto context_error = [&](const std::string& keys, const std::string& sweep) {
    return test::error_of([&] {
      (void)load_study_context(
          read_study(ConfigNode::load_string("name: t\nquestion: q\ndevices: 8\nsearch: strategy\n" +
                                                 keys + "sweep:\n" + sweep,
                                             file)),
          test::source_path("techlib"));
    });
  };
  const std::string workload = "workload: ../../../studies/workloads/gpt3_1.3b.yaml\n";  // line 5
  CHECK(context_error(workload, "  template: [../../../templates/a100.yaml, nope.yaml]\n") ==
        file + ":7:44: error: sweep.template[1]: cannot read template \"nope.yaml\": No such file "
               "or directory");
  // An invalid template: the sweep value, then the template's own problems.
  const std::string bad = context_error(workload, "  template: [../templates/unknown_logic.yaml]\n");
  CHECK(bad.find(file + ":7:14: error: sweep.template[0]: template "
                        "\"../templates/unknown_logic.yaml\" is invalid:\n" +
                 test::source_path("tests/data/templates/unknown_logic.yaml") + ":4:10: error: "
                 "technology.logic: unknown logic") == 0);
  CHECK(context_error("template: ../../../templates/a100.yaml\n",
                      "  workload: [../../../studies/workloads/gpt3_1.3b.yaml, ../../workloads/nope.yaml]\n") ==
        file + ":7:57: error: sweep.workload[1]: cannot read workload \"../../workloads/nope.yaml\": "
               "No such file or directory");
  // A key's file is reported at the key.
  CHECK(context_error("template: nope.yaml\n" + workload, "  logic: [N7]\n") ==
        file + ":5:11: error: template: cannot read template \"nope.yaml\": No such file or directory");
}

TEST_CASE("explicit points: each a map of axes, crossed with the sweep, the keys filling in",
          "[study]") {
  const StudySpec s = read_study(ConfigNode::load_string(
      kHead.substr(0, kHead.find("search:")) +  // lines 1-5
          "search: architecture\n"              // 6: the points' default
          "points:\n"
          "  - {label: fixed, search: none, strategy: tp2-pp2-dp2-mb4}\n"
          "  - {label: ranked, search: strategy}\n"
          "  - {label: joint}\n"
          "  - {label: bigger, workload: workloads/gpt3_13b.yaml, devices: 16}\n"
          "sweep:\n"
          "  logic: [N7, N5]\n"
          "outputs:\n"
          "  - {plot: bars, x: label, y: iteration_s, where: {logic: N5}}\n",
      "studies/s.yaml"));
  std::vector<std::string> names;
  for (const StudyAxis& a : s.axes) names.push_back(a.name());
  CHECK(names == std::vector<std::string>{"label", "search", "strategy", "workload", "devices", "logic"});
  CHECK(s.point_axes == 5);
  REQUIRE(s.points.size() == 4);
  CHECK(s.point_count() == 8);  // 4 points x 2 logic nodes
  // An axis's values: the distinct cells; a cell a point leaves out is the key's text, or "".
  const auto texts = [&](std::size_t k) {
    std::vector<std::string> out;
    for (const AxisValue& v : s.axes[k].values) out.push_back(v.text);
    return out;
  };
  CHECK(texts(1) == std::vector<std::string>{"none", "strategy", "architecture"});
  CHECK(s.axes[1].values[2].unset);
  CHECK(texts(2) == std::vector<std::string>{"tp2-pp2-dp2-mb4", ""});
  CHECK(texts(3) == std::vector<std::string>{"workloads/gpt3_1.3b.yaml", "workloads/gpt3_13b.yaml"});
  CHECK(texts(4) == std::vector<std::string>{"8", "16"});
  REQUIRE(s.workloads.size() == 2);
  CHECK(s.workloads[1].path == "studies/workloads/gpt3_13b.yaml");
  const std::vector<StudyPoint> points = enumerate_points(s);
  REQUIRE(points.size() == 8);
  CHECK(points[0].values ==
        std::vector<std::string>{"fixed", "none", "tp2-pp2-dp2-mb4", "workloads/gpt3_1.3b.yaml", "8", "N7"});
  CHECK(points[0].search == StudySearch::kNone);
  CHECK(points[0].strategy->strategy.tp == 2);
  CHECK(points[3].values ==
        std::vector<std::string>{"ranked", "strategy", "", "workloads/gpt3_1.3b.yaml", "8", "N5"});
  CHECK(points[3].search == StudySearch::kStrategy);
  CHECK_FALSE(points[3].strategy);
  CHECK(points[4].search == StudySearch::kArchitecture);  // joint: the key
  CHECK(points[7].values ==
        std::vector<std::string>{"bigger", "architecture", "", "workloads/gpt3_13b.yaml", "16", "N5"});
  CHECK(points[7].workload == 1);
  CHECK(points[7].devices == 16);
  CHECK(points[7].tech.logic == "N5");
}

TEST_CASE("explicit points: unknown axes, repeats, unused keys and overlapping plots",
          "[study][config-error]") {
  const std::string head = kHead.substr(0, kHead.find("devices:"));  // lines 1-4
  const std::string fixed = "strategy: tp2-pp2-dp2-mb4\n";
  CHECK(study_error(head + "devices: 8\nsearch: none\n" + fixed + "points:\n  - {label: a, wrkload: x.yaml}\n")
            .find("s.yaml:9:25: error: points[0].wrkload: unknown axis (expected logic, ") == 0);
  CHECK(study_error(head + "devices: 8\nsearch: none\n" + fixed + "points:\n  - {wrkload: x.yaml}\n")
            .find("did you mean \"workload\"?") != std::string::npos);
  CHECK(study_error(head + "devices: 8\nsearch: none\n" + fixed + "points:\n  - {label: a}\n  - {label: a}\n") ==
        "s.yaml:10:5: error: points[1]: repeats the point at line 9");
  CHECK(study_error(head + "devices: 8\nsearch: none\n" + fixed + "points: []\n") ==
        "s.yaml:8:9: error: points: expected at least one point");
  CHECK(study_error(head + "search: none\n" + fixed + "points:\n  - {devices: 8}\nsweep:\n  devices: [16]\n") ==
        "s.yaml:10:12: error: sweep.devices: also set by points (line 8); an axis is either swept or "
        "set by points");
  CHECK(study_error(head + "devices: 8\nsearch: none\n" + fixed + "points:\n  - {devices: 16}\n") ==
        "s.yaml:5:10: error: devices: every point sets its devices; drop this key");
  CHECK(study_error(head + "search: none\n" + fixed + "points:\n  - {devices: 16}\n  - {label: b}\n") ==
        "s.yaml:9:5: error: points[1]: sets no devices and the study has no devices: key");
  // Search and strategy per point.
  CHECK(study_error(head + "devices: 8\npoints:\n  - {search: none}\n") ==
        "s.yaml:7:14: error: points[0].search: search: none evaluates a fixed strategy: give "
        "strategy: or a strategy axis");
  CHECK(study_error(head + "devices: 8\nsearch: none\npoints:\n  - {label: a}\n") ==
        "s.yaml:8:5: error: points[0]: search: none evaluates a fixed strategy: give strategy: or "
        "a strategy axis");
  CHECK(study_error(head + "devices: 8\npoints:\n  - {search: strategy, strategy: tp2-pp2-dp2-mb4}\n") ==
        "s.yaml:7:34: error: points[0].strategy: search: strategy (line 7) ranks every strategy "
        "at each point; drop the fixed strategy (or use search: none)");
  // Plots: the points a plot selects must differ in x or series.
  const std::string ladder = head + "devices: 8\nsearch: architecture\npoints:\n"
                             "  - {label: a, search: none, strategy: tp2-pp2-dp2-mb4}\n"
                             "  - {label: b}\n  - {label: c, workload: workloads/gpt3_13b.yaml}\n"
                             "sweep:\n  logic: [N7, N5]\noutputs:\n";
  CHECK(study_error(ladder + "  - {plot: bars, x: search, y: mfu, where: {logic: N7}}\n") ==
        "s.yaml:14:5: error: outputs[0]: two points fall on search \"architecture\": they differ in "
        "label (\"b\" and \"c\"); make it the series or fix it with where: {label: b}");
  CHECK(study_error(ladder + "  - {plot: bars, x: label, y: mfu}\n") ==
        "s.yaml:14:5: error: outputs[0]: two points fall on label \"a\": they differ in logic "
        "(\"N7\" and \"N5\"); make it the series or fix it with where: {logic: N7}");
  const StudySpec ok = read_study(ConfigNode::load_string(
      ladder + "  - {plot: bars, x: label, y: mfu, series: logic}\n"
               "  - {plot: bars, name: by_search, x: search, y: mfu, series: workload, where: {logic: N5}}\n",
      "s.yaml"));
  CHECK(ok.outputs.size() == 2);
}

}  // namespace pathfinder

namespace pathfinder {

// Issue 14 item 1: a newline in a title or label started a gnuplot command of the study's
// choosing; names become file names and folder names.
TEST_CASE("names, titles and labels with control characters are refused", "[study][issue14]") {
  const std::string fixed = "strategy: tp2-pp2-dp2-mb4\n";
  CHECK(study_error(kHead + fixed + "sweep:\n  logic: [N7, N5]\noutputs:\n"
                    "  - {plot: line, x: logic, y: iteration_s, title: \"t\\nsystem 'x'\"}\n") ==
        "s.yaml:11:51: error: outputs[0].title: expected text without control characters "
        "(newline, tab, ...), got \"t\\nsystem 'x'\"");
  CHECK(study_error(kHead + fixed + "points:\n  - {label: \"a\\rb\"}\n") ==
        "s.yaml:9:13: error: points[0].label: expected text without control characters "
        "(newline, tab, ...), got \"a\\rb\"");
  CHECK(study_error(kHead + fixed + "sweep:\n  logic: [N7, N5]\noutputs:\n"
                    "  - {plot: line, x: logic, y: iteration_s, name: \"a'b\"}\n") ==
        "s.yaml:11:50: error: outputs[0].name: expected a file name of letters, digits, '_', '-' "
        "and '+' (not starting with '-'), got \"a'b\"");
  CHECK(study_error("name: ../x\nquestion: q\n") ==
        "s.yaml:1:7: error: name: expected a name without \"/\", not starting with \".\", got "
        "\"../x\"");
  CHECK(study_error("name: \"a\\tb\"\nquestion: q\n") ==
        "s.yaml:1:7: error: name: expected text without control characters (newline, tab, ...), "
        "got \"a\\tb\"");
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("a study's objective, budgets and Pareto key", "[study][goal]") {
  const std::string fixed = "strategy: tp2-pp2-dp2-mb4\n";
  const StudySpec s = read_study(ConfigNode::load_string(
      kHead + fixed + "objective: cost\nmax_j_per_token: 0.5\npareto: [time, energy]\n", "s.yaml"));
  CHECK(s.goal.kind == GoalKind::kCost);
  CHECK(s.goal.max_j_per_token == 0.5);
  REQUIRE(s.pareto.has_value());
  CHECK(*s.pareto == std::array{GoalKind::kTime, GoalKind::kEnergy});
  // kHead is 6 lines; the strategy line 7; pareto on line 8.
  CHECK(study_error(kHead + fixed + "pareto: [time, time]\n") ==
        "s.yaml:8:9: error: pareto: expected two of time, energy, edp or cost separated by a "
        "comma, got \"time,time\" (the same measure twice)");
  CHECK(study_error(kHead + fixed + "objective: speed\n") ==
        "s.yaml:8:12: error: objective: expected one of time, energy, edp or cost, got \"speed\"");
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("a software axis: profile names stay names, files resolve beside the study",
          "[study]") {
  const StudySpec s = read_study(ConfigNode::load_string(
      "name: t\nquestion: q\ndevices: 8\ntemplate: ../templates/h100.yaml\n"
      "workload: workloads/llama3_8b.yaml\nsearch: strategy\nsweep:\n"
      "  software: [megatron-core, profiles/mine.yaml, fsdp]\n",
      "studies/s.yaml"));
  // [0] stands for the software: key (here absent: the default profile), then the axis's.
  REQUIRE(s.softwares.size() == 4);
  CHECK(s.softwares[0].text == "megatron-lm");
  CHECK(s.softwares[1].path == "megatron-core");
  CHECK(s.softwares[2].path == "studies/profiles/mine.yaml");
  CHECK(s.softwares[3].path == "fsdp");
  const std::vector<StudyPoint> points = enumerate_points(s);
  REQUIRE(points.size() == 3);
  CHECK(points[0].software == 1);
  CHECK(points[1].software == 2);
  CHECK(points[2].software == 3);
  CHECK(points[2].values == std::vector<std::string>{"fsdp"});
  // Without the axis every point takes the key's profile, index 0.
  const StudySpec keyed = read_study(ConfigNode::load_string(
      "name: t\nquestion: q\ndevices: 8\ntemplate: a.yaml\nworkload: w.yaml\nsearch: strategy\n"
      "software: nanotron\n",
      "s.yaml"));
  REQUIRE(keyed.softwares.size() == 1);
  CHECK(keyed.softwares[0].path == "nanotron");
  CHECK(enumerate_points(keyed).front().software == 0);
}

TEST_CASE("a software axis: exactly one of key and axis, values named once",
          "[study][config-error]") {
  const std::string head =  // lines 1-6
      "name: t\nquestion: q\ndevices: 8\ntemplate: a.yaml\nworkload: w.yaml\nsearch: strategy\n";
  CHECK(study_error(head + "software: fsdp\nsweep:\n  software: [nanotron]\n") ==
        "s.yaml:7:11: error: software: given both here and as a sweep axis; keep one");
  CHECK(study_error(head + "sweep:\n  software: [fsdp, \"\"]\n") ==
        "s.yaml:8:20: error: sweep.software[1]: expected a software profile name or file, got "
        "\"\"");
  CHECK(study_error(head + "sweep:\n  software: [x/p.yaml, x/../x/p.yaml]\n") ==
        "s.yaml:8:24: error: sweep.software[1]: \"x/../x/p.yaml\" repeats \"x/p.yaml\" (line 8)");
}

}  // namespace pathfinder
