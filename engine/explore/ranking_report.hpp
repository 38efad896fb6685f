// Every valid strategy ranked on one design (rank_strategies), reported for a person: the top N
// with their full breakdowns side by side, the gap to the best, a one-line reason per row
// derived from the breakdown, memory per device, and how many strategies were dropped and why.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "engine/explore/design_evaluator.hpp"

namespace pathfinder {

// Why a strategy was dropped, as a class: kNoMemoryClass, or the reason's words up to its
// first number (reasons carry the numbers of one strategy).
inline constexpr const char* kNoMemoryClass = "does not fit in memory";
[[nodiscard]] std::string reason_class(const std::string& reason);

// Counts per reason class, most frequent first (ties by name).
[[nodiscard]] std::vector<std::pair<std::string, std::size_t>> by_count(
    const std::map<std::string, std::size_t>& counts);

// Dropped strategies counted per reason class, most frequent first (ties by name).
[[nodiscard]] std::vector<std::pair<std::string, std::size_t>> dropped_by_reason(
    const std::vector<RankedStrategy>& ranked);

// One line for a feasible row against the best: the two parts of the breakdown that differ
// most, e.g. "+0.062 s vs #1: pipeline_bubble +0.41 s, tensor_comm -0.33 s"; for the best
// itself, its largest part and the runner-up's gap (in the ranking's measure `by`).
[[nodiscard]] std::string ranking_reason(const std::vector<RankedStrategy>& ranked,
                                         std::size_t row, GoalKind by = GoalKind::kTime);

// `by`: what the ranking sorted on (rank_strategies' goal), named in the title line.
// `counts`: the ranking's counts when `ranked` holds only the strategies timed (a top-k
// ranking); without them they are counted from `ranked`.
[[nodiscard]] std::string format_ranking(const std::vector<RankedStrategy>& ranked,
                                         std::size_t top, const std::string& title,
                                         GoalKind by = GoalKind::kTime,
                                         const RankingCounts* counts = nullptr);
// One row per ranked strategy of the top N: rank, strategy, times, MFU, memory, the breakdown's
// parts and the reason.
[[nodiscard]] std::string ranking_csv(const std::vector<RankedStrategy>& ranked, std::size_t top);
[[nodiscard]] nlohmann::ordered_json ranking_json(const std::vector<RankedStrategy>& ranked,
                                                  std::size_t top, GoalKind by = GoalKind::kTime,
                                                  const RankingCounts* counts = nullptr);
// The counts of a full ranking (every strategy timed), from its results.
[[nodiscard]] RankingCounts count_ranking(const std::vector<RankedStrategy>& ranked);

}  // namespace pathfinder
