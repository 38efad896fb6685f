#include "search/search.hpp"

namespace pathfinder {

SearchResult minimize(const Objective& f, const SplitSpace& space, const SearchOptions& options,
                      const ProgressCallback& progress) {
  if (options.algorithm == SearchAlgorithm::kPgd) return minimize_pgd(f, space, options, progress);
  return minimize_nlopt(f, space, options, progress);
}

}  // namespace pathfinder
