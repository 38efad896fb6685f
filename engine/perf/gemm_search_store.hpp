// A process-wide memo of GEMM searches (gemm_model.hpp's GemmSearch) by everything a search
// reads: the problem, its element type, and the machine's capacities, instance counts, levels'
// scopes, MCU arrays and dataflow. A design search's budget splits mostly move rates and
// bandwidths without changing a bank count, so their timers share the searches and only time
// them (GemmSearch::time). Thread-safe; a search is a pure function of its key, so results do
// not depend on which thread filled the memo. Bounded: cleared past kMaxGemmSearches entries.
// Each thread keeps its last 32 finds in front of the memo's lock and hash (a cold evaluation
// asks for the same dozen shapes on every new design); clear_gemm_searches empties them too.
#pragma once

#include <memory>

#include "engine/perf/gemm_model.hpp"

namespace pathfinder {

inline constexpr std::size_t kMaxGemmSearches = std::size_t{1} << 12;

// The search for (m's structure, shape, dtype), found or made.
[[nodiscard]] std::shared_ptr<const GemmSearch> shared_gemm_search(const PerfMachine& m,
                                                                   const GemmShape& shape,
                                                                   DataType dtype);
// Empties the memo (benchmarks timing a search from scratch).
void clear_gemm_searches();
// Searches made since the process started (a memo miss each): for tests and benchmarks.
[[nodiscard]] std::size_t gemm_searches_made();

}  // namespace pathfinder
