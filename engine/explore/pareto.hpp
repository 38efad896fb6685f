// Pareto fronts (issue 16): the designs or strategies no other beats on two measures at once
// (goal.hpp's time, energy, energy-delay product, cost).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/explore/design_evaluator.hpp"
#include "engine/explore/goal.hpp"

namespace pathfinder {

// Indices of the points no other point dominates (no worse on both, better on one), ordered by
// the first measure; non-finite points are never on the front, and of equal points the first.
[[nodiscard]] std::vector<std::size_t> non_dominated(const std::vector<std::array<double, 2>>& points);

// The ranked strategies on the front of measures a and b (feasible ones only), by a.
[[nodiscard]] std::vector<std::size_t> pareto_front(const std::vector<RankedStrategy>& ranked,
                                                    GoalKind a, GoalKind b);

// "time,energy" -> {time, energy}: two different goal kinds; a ConfigError at `where` else.
[[nodiscard]] std::array<GoalKind, 2> parse_pareto(const std::string& text, const SourceLoc& where);

// A front over cost needs the cost model: the reason `spec` lacks it, empty otherwise.
[[nodiscard]] std::string pareto_cost_missing(const std::array<GoalKind, 2>& measures,
                                              const ArchSpec& spec);

// The front for a person (one row per strategy: both measures, iteration, J/token) and as JSON.
[[nodiscard]] std::string format_pareto(const std::vector<RankedStrategy>& ranked,
                                        const std::vector<std::size_t>& front,
                                        const std::array<GoalKind, 2>& measures);
[[nodiscard]] nlohmann::ordered_json pareto_json(const std::vector<RankedStrategy>& ranked,
                                                 const std::vector<std::size_t>& front,
                                                 const std::array<GoalKind, 2>& measures);

}  // namespace pathfinder
