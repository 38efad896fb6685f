// What a study's plots show (study_outputs.hpp's gnuplot scripts, study_report.hpp's HTML
// charts): one plot's values by x and series from the result table, and the labels, units and
// direction of its columns.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/study/study_spec.hpp"
#include "engine/study/study_table.hpp"

namespace pathfinder {

// The y values of one plot, by x value (rows) and series value (columns); nullopt: no
// feasible point there.
struct PlotData {
  std::vector<std::string> x_labels, series;
  std::vector<double> x_numbers;
  std::vector<std::vector<std::optional<double>>> y;
};

[[nodiscard]] PlotData plot_data(const StudySpec& s, const PlotSpec& p, const StudyTable& t);
// Whether series j has any point.
[[nodiscard]] bool has_points(const PlotData& d, std::size_t series);

// Axis and column names as a reader wants them: what it is and its unit ("iteration time (s)").
[[nodiscard]] std::string axis_label(std::string_view name);
// A value as a plot shows it: template and workload files by their stem ("h100"), the rest
// as written.
[[nodiscard]] std::string shown(std::string_view axis, const std::string& text);
// Plotted values: MFU as a percentage, the rest as written in results.csv.
[[nodiscard]] double plotted(std::string_view y, double v);
// Larger is better for throughput-like columns; smaller for times, energies and costs.
[[nodiscard]] bool larger_is_better(std::string_view y);

}  // namespace pathfinder
