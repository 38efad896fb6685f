// A study file (issue 6): one question, the templates and workloads it runs on, its points
// (sweep axes whose Cartesian product they are, and/or an explicit list), what is searched at
// each point, and the plots to draw. Paths are relative to the study file.
//
//   name: fig9-technology-scaling
//   question: how much does each logic node, memory and network technology buy?
//   template: ../templates/deepflow_case_study.yaml   # or a `template` axis
//   workload: workloads/lstm_lm.yaml                  # or a `workload` axis
//   devices: 512                  # or a `devices` axis
//   check_memory: false           # default true
//   sweep:                        # points: the Cartesian product, first axis outermost
//     logic: [DF-N14, DF-N7]      # logic | memory | network: technology overrides
//     devices: [64, 512]          # devices | nodes_per_package: whole numbers
//     budget.power: [300 W, 400 W]  # budget.power | chip_area | node_area | perimeter
//     budget.power_limit: [200 W]    # the board's run-time limit (nvidia-smi -pl), no regeneration
//     strategy: [RC-8-8-d8-p1]    # fixed strategies
//     template: [../templates/a100.yaml, ../templates/h100.yaml]   # template | workload: files
//     search: [strategy, architecture]   # none | strategy | architecture, per point
//   search: strategy              # none | strategy | architecture (or a `search` axis)
//   strategy: RC-1-1-d512-p1      # the fixed strategy (search none; optional for architecture)
//   shortlist: 3                  # architecture without a fixed strategy: best few, jointly
//   optimizer: {optimizer: pgd, restarts: 2, steps: 30}   # architecture: SearchOptions
//   objective: energy             # what searches minimize: time (default), energy, edp, cost;
//   max_j_per_token: 0.5          # optional budgets: max_j_per_token, max_usd_per_mtoken
//   pareto: [time, energy]        # the summary's Pareto front of the points on two measures
//   outputs:
//     - {plot: line, x: logic, y: iteration_s, series: memory, title: "...", log_y: true}
//
// The keys template, workload, devices and search give every point's value: exactly one of the
// key or a sweep axis of that name. A fixed strategy (the key or a strategy axis) must be there
// when a point searches none and must not be when one searches strategy.
//
// Explicit points, instead of or besides the sweep: a list of maps axis -> value, each map one
// point (crossed with the sweep's product when there is one: each point, outermost, with every
// sweep combination). `label` is an axis for explicit points only: free text naming the point
// (a plot's x or series), with no effect on what is evaluated.
//
//   workload: workloads/lstm_lm.yaml     # the value of points that do not set workload
//   search: architecture                 # ... and of those that do not set search
//   points:
//     - {label: naive, search: none, strategy: RC-1-1-d512-p1}
//     - {label: + parallelism, search: strategy}
//     - {label: + architecture}
//     - {label: + model, workload: workloads/lstm_lm_reshaped.yaml}
//
// Every key of a point is an axis of the study (the points' axes first, in order of first use,
// then the sweep's; an axis is either swept or set by points, never both). A point that does
// not set an axis takes the study's key for it, and its cell is the key's value (a required
// key that is missing is an error at the point); without a key the cell is empty and means the
// template's technology, budget or nodes per package, no fixed strategy, no label. A key that
// no point falls back on is an error, and so is a point repeating another. The axis's values
// are the distinct cells, in order of first use.
//
// Plots: `line` (one line per value of `series`) or `bars` (grouped bars, one per series value);
// x and series are axes, y a numeric result column. No two points of a plot may fall on the
// same x and series value: with a sweep alone, every other axis with more than one value must
// be fixed with `where: {axis: value}`; with explicit points, the points `where` selects must
// differ in x or series. Optional: name (the file name, default <y>_vs_<x>), title, log_x,
// log_y.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/config/node.hpp"  // ConfigOverride
#include "engine/core/error.hpp"
#include "engine/explore/goal.hpp"
#include "engine/parallel/strategy.hpp"
#include "search/search_types.hpp"

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
  kNic,
  kDevices,
  kNodesPerPackage,
  kPower,
  kPowerLimit,
  kChipArea,
  kNodeArea,
  kPerimeter,
  kStrategy,
  kTemplate,
  kWorkload,
  kSoftware,
  kSearch,
  kLabel,
};
[[nodiscard]] std::string_view to_string(AxisKind k);  // the sweep key: "budget.power"
[[nodiscard]] std::optional<AxisKind> parse_axis_kind(std::string_view s);
[[nodiscard]] std::vector<std::string> valid_axis_kinds();
// devices and nodes_per_package: the values are numbers and plots space them by value.
[[nodiscard]] bool is_numeric_axis(AxisKind k);

struct AxisValue {
  std::string text;  // as written: "DF-N7", "300 W", "64", "../templates/a100.yaml"
  double number = 0.0;               // SI value of a budget, the count of devices/nodes
  std::optional<PartialStrategy> strategy;  // the strategy axis, as written
  std::optional<StudySearch> search;  // the search axis
  // template/workload/software axes: the index in StudySpec::templates/workloads/softwares
  std::size_t file = 0;
  // An explicit point's cell for an axis it does not set: the study's key (or, without one,
  // the template's technology/budget, no fixed strategy); sets nothing itself.
  bool unset = false;
  SourceLoc loc;
};

struct StudyAxis {
  AxisKind kind = AxisKind::kLogic;
  std::vector<AxisValue> values;  // explicit points' axes: the distinct cells, first use first
  SourceLoc loc;
  [[nodiscard]] std::string name() const { return std::string(to_string(kind)); }
};

// A template or workload file a study uses.
struct StudyFile {
  std::string path;  // resolved against the study's folder
  std::string text;  // as written
  SourceLoc loc;     // the key, or the first sweep value or point naming it
};

// One explicit point (points:): a value index into each of the study's first
// StudySpec::point_axes axes (the axis's value with unset when the point does not set it).
struct ExplicitPoint {
  std::vector<std::size_t> values;
  SourceLoc loc;
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
  std::string template_path;  // the `template:` key, resolved against the study's folder; or ""
  std::string workload_path;  // the `workload:` key; or ""
  std::vector<StudyFile> templates;  // every template the points use: the key's first
  std::vector<StudyFile> workloads;  // every workload
  std::optional<int> devices;  // the `devices:` key
  bool check_memory = true;
  std::string software;  // `software:` profile name or file (resolved); "" = the default
  SourceLoc software_loc;  // where it was given (the study file's key, or the command line)
  // The software axis's profiles: a name, or a file resolved against the study's folder. Index 0
  // stands for the `software:` key (the default profile without one): its path is not used.
  std::vector<StudyFile> softwares;
  // Values set on the command line (`study --set`), applied to every template, workload or the
  // technology library (keys without the "techlib." prefix) before each is read.
  std::vector<ConfigOverride> set_template, set_workload, set_techlib;
  std::vector<StudyAxis> axes;  // the explicit points' axes, then the sweep's in file order
  std::size_t point_axes = 0;   // how many of axes the explicit points set
  std::vector<ExplicitPoint> points;  // empty: the sweep's product alone
  std::optional<StudySearch> search;  // the `search:` key
  std::optional<PartialStrategy> strategy;  // the `strategy:` key, as written
  int shortlist = 3;
  SearchOptions optimizer;
  Goal goal;  // what strategy and architecture searches minimize (goal.hpp)
  // `pareto: [time, energy]`: the summary lists the points no other beats on both measures.
  std::optional<std::array<GoalKind, 2>> pareto;
  std::vector<PlotSpec> outputs;

  [[nodiscard]] const StudyAxis* find_axis(AxisKind k) const;
  [[nodiscard]] const StudyAxis* find_axis(std::string_view name) const;
  // Points: the explicit points (1 without) times the product of the sweep axes' value counts.
  [[nodiscard]] std::size_t point_count() const;
  // Whether some point searches `mode` (from the key, a search axis or the explicit points).
  [[nodiscard]] bool searches(StudySearch mode) const;
};

// The value of every axis at point `index` (0 <= index < point_count()): the explicit point
// outermost, then the sweep axes, first outermost, last fastest.
[[nodiscard]] std::vector<const AxisValue*> point_values(const StudySpec& s, std::size_t index);

// Strict: unknown keys and axes (with a did-you-mean), empty or repeated values, bad
// quantities, strategies, searches and plot references, a key given both as a key and an axis
// (or neither) are ConfigErrors at file:line:col. Files are only named here: load_study_context
// reads them.
[[nodiscard]] StudySpec load_study(const std::string& path);
[[nodiscard]] StudySpec read_study(const ConfigNode& root);

}  // namespace pathfinder
