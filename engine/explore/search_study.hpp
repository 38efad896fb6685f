// A search study file (issue 5): which template, workload and devices, a fixed strategy or a
// strategy search, and the optimizer's options. Paths are relative to the study file.
//
//   name: gpt3-13b-on-64-a100
//   template: ../templates/a100.yaml
//   workload: workloads/gpt3_13b.yaml
//   devices: 64
//   strategy: tp8-pp2-dp4-mb1        # or "search": rank every strategy on the template's split,
//   shortlist: 3                      # keep the best few; the split search takes the best of
//                                     # them at every point (joint search)
//   search: {optimizer: pgd, restarts: 10, steps: 100, learning_rate: 1, seed: 1}
//   objective: energy                # time (default), energy, edp or cost; optional budgets
//   max_j_per_token: 0.5             # max_j_per_token, max_usd_per_mtoken
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "engine/config/node.hpp"  // ConfigOverride
#include "engine/parallel/strategy.hpp"
#include "engine/explore/convergence.hpp"
#include "engine/explore/design_evaluator.hpp"
#include "search/search.hpp"
#include "engine/techlib/tech_library.hpp"

namespace pathfinder {

class ConfigNode;

struct SearchStudy {
  std::string name;
  std::string file;
  std::string template_path;  // resolved against the study's folder
  std::string workload_path;
  SourceLoc template_loc, workload_loc;  // the keys naming them, for a file that cannot be read
  int devices = 1;
  std::optional<Strategy> strategy;  // none: search the strategies too
  // The strategy as written (complete_strategy fills in the micro-batch and dp from the
  // workload and devices); `strategy` is set from it once the workload is known.
  std::optional<PartialStrategy> written_strategy;
  SourceLoc strategy_loc;
  int shortlist = 3;
  bool check_memory = true;  // false only to reproduce the paper (it never checks capacity)
  std::string software;  // `software:` profile name or file (resolved); "" = the default
  SourceLoc software_loc;
  // `budget:` (chip_area, node_area, power, perimeter): the template's budgets replaced before
  // it is read, each value checked there and located here.
  std::vector<ConfigOverride> budget;
  SearchOptions options;
  // What the split search minimizes (`objective:`, `max_j_per_token:`, `max_usd_per_mtoken:`;
  // goal.hpp).
  Goal goal;
};

// Strict: unknown keys, wrong types, a bad strategy or bad options are ConfigErrors with
// file:line:col.
[[nodiscard]] SearchStudy load_search_study(const std::string& path);
// The same from a parsed file; paths resolve beside root.file().
[[nodiscard]] SearchStudy read_search_study(const ConfigNode& root);
// A `search:` map (optimizer, restarts, steps, learning_rate, momentum, fd_step, seed), strict;
// also the `optimizer:` map of a study file (engine/study).
[[nodiscard]] SearchOptions read_search_options(const ConfigNode& n);

struct StrategyOutcome {
  Strategy strategy;
  TrainingResult result;  // at the searched split
};

struct StudyOutcome {
  Eigen::VectorXd template_split;
  TrainingResult at_template;   // the best strategy on the template's own split
  Strategy strategy;            // the winner at the searched split
  SearchResult search;          // the joint split search (best of the shortlist per point)
  DesignEvaluation best;        // at the searched split
  Sensitivities sensitivities;  // at the searched split
  ConvergenceCheck convergence;  // at the searched split, for the winning strategy
  int polish_moves = 0;          // budget moves taken after the search (SearchOptions)
  std::vector<StrategyOutcome> tried;
  std::size_t strategies_ranked = 0;
};

[[nodiscard]] StudyOutcome run_search_study(const SearchStudy& study, const DesignEvaluator& e,
                                            const ProgressCallback& progress = {});

// The outcome as JSON: strategy, feasible (and reason), iteration at the template's and the
// searched split, MFU, the breakdown, the split per component (fractions and budget units),
// the sensitivities, the convergence check and every shortlisted strategy at the searched split.
[[nodiscard]] nlohmann::ordered_json outcome_json(const StudyOutcome& o, const DesignEvaluator& e);

// Human table, and the YAML a template's `split:` can take (with the results as comments).
[[nodiscard]] std::string format_outcome(const StudyOutcome& o, const DesignEvaluator& e);
[[nodiscard]] std::string outcome_yaml(const StudyOutcome& o, const DesignEvaluator& e);
[[nodiscard]] std::string outcome_csv(const StudyOutcome& o);

}  // namespace pathfinder
