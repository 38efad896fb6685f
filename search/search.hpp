// The split search's entry point: PGD or an NLopt optimizer, as options.algorithm says.
#pragma once

#include "search/nlopt_search.hpp"
#include "search/pgd.hpp"
#include "search/search_types.hpp"
#include "search/split_space.hpp"

namespace pathfinder {

// Minimizes f over the space. Throws ConfigError when options.validate(space.dim()) does.
[[nodiscard]] SearchResult minimize(const Objective& f, const SplitSpace& space,
                                    const SearchOptions& options,
                                    const ProgressCallback& progress = {});

}  // namespace pathfinder
