// What a study leaves for its reader, all from its result table: OUT/summary.md (the question,
// the command, the best point, a short table), OUT/report.html (study_report.hpp) and the plots (OUT/<plot>.gp, a gnuplot script
// with its data inline, run into OUT/<plot>.svg and OUT/<plot>.png). gnuplot problems are
// warnings in the summary, never errors.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/study/study_runner.hpp"
#include "engine/study/study_spec.hpp"
#include "engine/study/study_table.hpp"

namespace pathfinder {

// Row r's value of the goal measure `by` (iteration_s, energy_j, their product, usd); nullopt
// where a figure is missing.
[[nodiscard]] std::optional<double> row_measure(const StudyTable& t, std::size_t r, GoalKind by);
// The feasible row best by `by` (the study's objective: the shortest iteration by default,
// the least energy_j, energy_j x iteration_s or usd), or nullopt.
[[nodiscard]] std::optional<std::size_t> best_row(const StudyTable& t, GoalKind by = GoalKind::kTime);
// The feasible rows on the Pareto front of two goal measures (energy_j, usd, iteration_s
// columns), by the first.
[[nodiscard]] std::vector<std::size_t> pareto_rows(const StudyTable& t,
                                                   const std::array<GoalKind, 2>& m);

// An aligned text table (or a markdown one) of the rows: the axes, the strategy and the
// headline results (iteration, MFU, tokens/s), "infeasible: reason" otherwise. More than
// max_rows rows: the max_rows fastest, in point order, and a line saying how many are left out.
[[nodiscard]] std::string format_rows(const StudySpec& s, const StudyTable& t, std::size_t max_rows,
                                      bool markdown);

// The gnuplot script for one plot: data inline, SVG then PNG (pngcairo where the gnuplot has
// it, else png), file names relative to the output folder.
[[nodiscard]] std::string plot_script(const StudySpec& s, const PlotSpec& p, const StudyTable& t);

struct OutputOptions {
  std::string out_dir;
  std::string command;             // how the study was run, for the summary
  std::string gnuplot = "gnuplot";  // the executable
};

struct StudyOutputs {
  std::string summary;             // path of summary.md
  std::vector<std::string> files;  // every file written (summary, scripts, images)
  std::vector<std::string> warnings;
};

// Every file appears whole (written beside its name and renamed over it). OUT/.study records
// the study's file (absolute), for `pathfinder report DIR`. First removes the
// gnuplot work folders (.gnuplot-XXXXXX) a killed run left: the caller holds the folder's
// FolderLock (engine/core/file_io.hpp), so no other run is using one. ConfigError at the path
// when a file cannot be written.
[[nodiscard]] StudyOutputs write_study_outputs(const StudySpec& s, const StudyTable& t,
                                               const OutputOptions& o);

// A finished run as `study --format json` prints it (the Python module's study() too): counts,
// the checks, every column of the best row (numbers as numbers, empty cells null), the files
// written and the warnings; callers add what they read (inputs).
[[nodiscard]] nlohmann::ordered_json study_run_json(const StudySpec& s, const StudyRun& run,
                                                    const StudyOutputs& outputs);

// "[#########...........]  12/84 points  ETA 1m05s" for a terminal.
[[nodiscard]] std::string format_progress(const StudyProgress& p, int width = 30);

}  // namespace pathfinder
