// Running a study (issue 6): its points (the explicit points times the Cartesian product of
// the sweep axes), each evaluated on its own copy of its template in parallel (oneTBB), one
// CSV row a point in OUT/results.csv. Resumable: rows already in the file for the same
// settings are kept, once checked (StudyRun::invalid), and their points (matched by their axis
// values) skipped; finished points
// are written atomically as they complete, so a study killed midway and rerun loses nothing
// and redoes nothing finished. The same rows, byte for byte, for any thread count and any
// sequence of interruptions.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/arch/arch_template.hpp"
#include "engine/arch/template_loader.hpp"
#include "engine/graph/workload.hpp"
#include "engine/software/software_profile.hpp"
#include "engine/study/study_spec.hpp"
#include "engine/study/study_table.hpp"
#include "engine/techlib/tech_library.hpp"
#include "engine/explore/convergence.hpp"
#include "engine/explore/design_evaluator.hpp"
#include "engine/train/training_result.hpp"

namespace pathfinder {

// One point: the value of every axis, and what they set.
struct StudyPoint {
  std::size_t index = 0;            // enumeration order
  std::vector<std::string> values;  // per axis, in the study's axis order, as written
  TechOverrides tech;               // empty: the template's
  int devices = 0;
  std::optional<int> nodes_per_package;
  std::optional<Power> power, power_limit;
  std::optional<Area> chip_area, node_area;
  std::optional<Length> perimeter;
  // The axis, else the study's `strategy:`, as written: each point completes it for its
  // workload (micro-batch) and devices (dp), as eval does.
  std::optional<PartialStrategy> strategy;
  // Indices into StudySpec::templates, workloads and softwares (0: the `software:` key's).
  std::size_t tmpl = 0, workload = 0, software = 0;
  StudySearch search = StudySearch::kNone;  // the axis, else the study's `search:`
};

// The explicit points outermost, then the sweep: first axis outermost, last axis fastest.
[[nodiscard]] std::vector<StudyPoint> enumerate_points(const StudySpec& s);

// The point's template: technology overrides, budgets (the perimeter follows a new chip area
// as 4·sqrt(area) when the template inferred it so), and nodes per package (the scale-up
// domain keeps its node count: packages = nodes / nodes_per_package). Throws ConfigError when
// the nodes per package do not divide the domain.
[[nodiscard]] ArchTemplate point_template(const ArchTemplate& base, const StudyPoint& p);

// What a study evaluates against, loaded and checked once: every template (bound to the
// library) and workload the study names, every technology of the sweep against every template
// (ConfigError at the sweep value), and the fingerprint of everything a row depends on besides
// its axis values (the study's other settings, the optimizer's when a point searches the
// architecture, and the contents of every template, workload and technology library file). A
// template or workload file that is missing or invalid is a ConfigError at the key or sweep
// value naming it (the file's own problems follow).
struct StudyContext {
  std::vector<ArchTemplate> templates;  // StudySpec::templates, in order, without software
  std::vector<WorkloadSpec> workloads;  // StudySpec::workloads
  TechLibrary lib;
  // StudySpec::softwares: [0] the `software:` key's (or the default), then the axis's; each
  // point's is applied to its template (with_software) and options.
  std::vector<SoftwareProfile> softwares;
  std::string settings;  // 16 hex digits
};
[[nodiscard]] StudyContext load_study_context(const StudySpec& s, const std::string& techlib_dir);

// One component's share of the budgets at a point, in the budget's units.
struct ComponentBudget {
  std::string name;
  Area area;
  Power power;
  Length perimeter;
};

struct PointResult {
  bool feasible = false;
  std::string reason;                // when infeasible
  std::optional<Strategy> strategy;  // the one evaluated (the winner of a search)
  // At the chosen split: the micro-architecture's figures and the training result, as the
  // design evaluator returned them (for a GEMM workload, the local product and its FLOP per
  // main-memory byte, the paper's Fig. 1). Default when no design was evaluated.
  DesignEvaluation design;
  // The split evaluated (the template's, or the search's), in budget units, per component in
  // the template's order; empty when no design was evaluated.
  std::vector<ComponentBudget> split;
  // search: architecture only: whether the split search converged (engine/explore/convergence).
  std::optional<ConvergenceCheck> convergence;
};

// The point's search (p.search) on its template and workload. none: the point's strategy on
// the template's split; strategy: the best of rank_strategies there; architecture:
// run_search_study's joint split (and strategy) search.
// An infeasible design, strategy or system (devices that do not fill the packages, ...) is a
// result with the reason, never an exception. Thread-safe.
[[nodiscard]] PointResult evaluate_point(const StudySpec& s, const StudyContext& c,
                                         const StudyPoint& p);

// The CSV: every axis (its value as written: template and workload files as the study names
// them), then feasible, reason, chosen_strategy (evaluated, or the search's winner),
// iteration_s, mfu, tokens_per_s, the breakdown (compute_s ... host_s), peak_tflops,
// memory_bandwidth_gbs, memory_gb_per_device (main-memory capacity), memory_used_gb (the most
// loaded device), gemm_intensity (GEMM workloads: FLOP per main-memory byte of one device's
// local product; empty for others), the split per component (area_mm2.NAME, power_w.NAME,
// perimeter_mm.NAME for every component name of the study's templates, in order of first
// appearance; empty where a point's template has no such component), converged and
// convergence (search: architecture only: 1 or 0, and the best budget move the KKT check found
// when it saves more than 0.1%), settings.
[[nodiscard]] std::vector<std::string> split_components(const StudyContext& c);
[[nodiscard]] std::vector<std::string> study_columns(const StudySpec& s, const StudyContext& c);
[[nodiscard]] std::vector<std::string> result_row(const StudyPoint& p, const PointResult& r,
                                                  const std::string& settings,
                                                  const std::vector<std::string>& components);

struct StudyProgress {
  std::size_t done = 0, total = 0;        // points finished (reused included), all points
  std::size_t run_done = 0, run_todo = 0;  // evaluated in this run, to evaluate in this run
  double elapsed_s = 0.0;                 // since this run's first evaluation started
};

struct StudyRunOptions {
  std::string out_dir;      // results.csv goes here
  std::string techlib_dir;  // the technology library
  // Evaluate at most this many unfinished points (in point order), then stop; 0: all.
  std::size_t max_points = 0;
  // Shard `shard` of `shards` (`study --shard K/N`, 1 <= K <= N): only the points whose index
  // is K - 1 modulo N are evaluated and kept, round robin, so every shard gets a share of each
  // part of the sweep. 1 of 1: every point.
  int shard = 1, shards = 1;
  // `study --merge DIR...`: the rows of each folder's results.csv (shards, or any runs of the
  // same study and settings) join this folder's, in point order; nothing is evaluated. The
  // merged results.csv is byte for byte what one run of every point writes.
  std::vector<std::string> merge_from;
  // Asked before each point starts; true: start no more (points under way finish and are saved).
  std::function<bool()> stop;
  // After each finished point; never concurrently.
  std::function<void(const StudyProgress&)> progress;
};

struct StudyRun {
  StudyTable table;  // the finished rows, in point order (results.csv)
  std::string csv_path;
  std::size_t points = 0;     // in the study
  std::size_t reused = 0;     // rows found in results.csv for this study's settings
  std::size_t evaluated = 0;  // in this run
  std::size_t dropped = 0;    // rows of results.csv for other settings or points, not kept
  // Rows of results.csv for a point of this study that fail validation (a feasible flag other
  // than 0 or 1, a number that is negative, not finite, not a number or not as written, a
  // missing or extra figure): not reused, the point evaluated again.
  std::size_t invalid = 0;
  std::size_t shard_points = 0;  // the points of this run's shard (all of them unsharded)
  [[nodiscard]] bool complete() const { return table.rows.size() == shard_points; }
};

// Throws ConfigError for problems with the study's inputs (load_study_context); never for a
// point's infeasibility.
[[nodiscard]] StudyRun run_study(const StudySpec& s, const StudyRunOptions& o);

}  // namespace pathfinder
