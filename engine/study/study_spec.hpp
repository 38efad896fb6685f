// A study file (issue 6): one question, a base template and workload, sweep axes whose Cartesian
// product are the points, what is searched at each point, and the plots to draw. Paths are
// relative to the study file.
//
//   name: fig9-technology-scaling
//   question: how much does each logic node, memory and network technology buy?
//   template: ../templates/deepflow_case_study.yaml
//   workload: workloads/lstm_lm.yaml
//   devices: 512                  # or a `devices` axis
//   check_memory: false           # default true
//   sweep:                        # points: the Cartesian product, first axis outermost
//     logic: [DF-N14, DF-N7]      # logic | memory | network: technology overrides
//     devices: [64, 512]          # devices | nodes_per_package: whole numbers
//     budget.power: [300 W, 400 W]  # budget.power | chip_area | node_area | perimeter
//     strategy: [RC-8-8-d8-p1]    # fixed strategies
//   search: strategy              # none | strategy | architecture
//   strategy: RC-1-1-d512-p1      # the fixed strategy (none; optional for architecture)
//   shortlist: 3                  # architecture without a fixed strategy: best few, jointly
//   optimizer: {optimizer: pgd, restarts: 2, steps: 30}   # architecture: SearchOptions
//   outputs:
//     - {plot: line, x: logic, y: iteration_s, series: memory, title: "...", log_y: true}
//
// Plots: `line` (one line per value of `series`) or `bars` (grouped bars, one per series value);
// x and series are axes, y a numeric result column; every other axis with more than one value
// must be fixed with `where: {axis: value}`. Optional: name (the file name, default
// <y>_vs_<x>), title, log_x, log_y.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/dist/strategy.hpp"
#include "engine/search/search_types.hpp"

namespace pathfinder {

class ConfigNode;

enum class StudySearch { kNone, kStrategy, kArchitecture };
[[nodiscard]] std::string_view to_string(StudySearch s);
[[nodiscard]] std::optional<StudySearch> parse_study_search(std::string_view s);
[[nodiscard]] std::vector<std::string> valid_study_searches();

enum class AxisKind {
  kLogic,
  kMemory,
  kNetwork,
  kDevices,
  kNodesPerPackage,
  kPower,
  kChipArea,
  kNodeArea,
  kPerimeter,
  kStrategy,
};
[[nodiscard]] std::string_view to_string(AxisKind k);  // the sweep key: "budget.power"
[[nodiscard]] std::optional<AxisKind> parse_axis_kind(std::string_view s);
[[nodiscard]] std::vector<std::string> valid_axis_kinds();
// devices and nodes_per_package: the values are numbers and plots space them by value.
[[nodiscard]] bool is_numeric_axis(AxisKind k);

struct AxisValue {
  std::string text;  // as written: "DF-N7", "300 W", "64"
  double number = 0.0;               // SI value of a budget, the count of devices/nodes
  std::optional<Strategy> strategy;  // the strategy axis
  SourceLoc loc;
};

struct StudyAxis {
  AxisKind kind = AxisKind::kLogic;
  std::vector<AxisValue> values;
  SourceLoc loc;
  [[nodiscard]] std::string name() const { return std::string(to_string(kind)); }
};

enum class PlotKind { kLine, kBars };
[[nodiscard]] std::string_view to_string(PlotKind k);

struct PlotSpec {
  PlotKind kind = PlotKind::kLine;
  std::string name;    // OUT/<name>.svg and .png
  std::string x, y;    // an axis; a numeric result column
  std::string series;  // an axis, or empty for one line
  std::string title;
  bool log_x = false, log_y = false;
  std::vector<std::pair<std::string, std::string>> where;  // axis, value text
  SourceLoc loc;
};

// Result columns a plot's y can name (study_runner.hpp writes them).
[[nodiscard]] const std::vector<std::string>& numeric_result_columns();

struct StudySpec {
  std::string name;
  std::string question;
  std::string file;
  std::string template_path;  // resolved against the study's folder
  std::string workload_path;
  std::optional<int> devices;  // absent when there is a devices axis
  bool check_memory = true;
  std::vector<StudyAxis> axes;  // in file order
  StudySearch search = StudySearch::kNone;
  std::optional<Strategy> strategy;  // the `strategy:` key
  int shortlist = 3;
  SearchOptions optimizer;
  std::vector<PlotSpec> outputs;

  [[nodiscard]] const StudyAxis* find_axis(AxisKind k) const;
  [[nodiscard]] const StudyAxis* find_axis(std::string_view name) const;
  // Points: the product of the axes' value counts (1 without axes).
  [[nodiscard]] std::size_t point_count() const;
};

// Strict: unknown keys and axes (with a did-you-mean), empty or repeated values, bad
// quantities, strategies and plot references are ConfigErrors at file:line:col.
[[nodiscard]] StudySpec load_study(const std::string& path);
[[nodiscard]] StudySpec read_study(const ConfigNode& root);

}  // namespace pathfinder
