// The Pareto front of a split search (issue 16): the budget splits that trade one measure for
// another (time against energy, energy against cost, ...), each found by minimizing a weighted
// sum of the two measures, normalized at the template's split, for weights w = 0, 1/(K-1), ...,
// 1, then keeping the non-dominated results (pareto.hpp). A weighted sum finds the front's
// supported (convex-hull) points; every point it returns is a local optimum of its weight.
#pragma once

#include <array>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <nlohmann/json.hpp>

#include "engine/explore/goal.hpp"
#include "engine/explore/search_study.hpp"

namespace pathfinder {

struct ParetoPoint {
  double weight = 0.0;        // on the first measure
  Eigen::VectorXd split;
  Strategy strategy;          // the best of the candidates there for this weight
  TrainingResult result;
  std::array<double, 2> measures{};
};

struct ParetoSearch {
  std::array<GoalKind, 2> measures{};
  std::vector<ParetoPoint> front;  // non-dominated, by the first measure
  int searched = 0;                // weights searched
  long evaluations = 0;
};

// `weights` >= 2 searches; the study's strategy or its shortlist as run_search_study takes it.
[[nodiscard]] ParetoSearch pareto_search(const SearchStudy& study, const DesignEvaluator& e,
                                         const std::array<GoalKind, 2>& measures, int weights);

[[nodiscard]] std::string format_pareto_search(const ParetoSearch& p, const DesignEvaluator& e);
// One row per front point: weight, both measures, iteration, J/token, strategy, the split.
[[nodiscard]] std::string pareto_search_csv(const ParetoSearch& p, const DesignEvaluator& e);
[[nodiscard]] nlohmann::ordered_json pareto_search_json(const ParetoSearch& p,
                                                        const DesignEvaluator& e);

}  // namespace pathfinder
