// Compute graphs shared by the evaluations of one workload (issue 18): a partition's graph does
// not depend on the micro-architecture or on where its groups are placed, so a search that
// regenerates the design at every step builds each graph once. A graph is a pure function of
// its key (the workload, its options and the partition, fixed by whoever owns the cache), so
// which thread builds it first changes nothing. Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <utility>

#include "engine/graph/compute_graph.hpp"

namespace pathfinder {

// The partition's numbers, as its owner chooses them (unused entries 0).
using GraphKey = std::array<std::int64_t, 8>;
inline constexpr std::size_t kMaxGraphs = 16384;

class GraphCache {
 public:
  // The graph for `key`; `build()` makes it on the first request.
  template <class Build>
  [[nodiscard]] std::shared_ptr<const ComputeGraph> get(const GraphKey& key, Build&& build) {
    {
      std::shared_lock lock(mutex_);
      const auto it = graphs_.find(key);
      if (it != graphs_.end()) return it->second;
    }
    auto made = std::make_shared<const ComputeGraph>(std::forward<Build>(build)());
    std::unique_lock lock(mutex_);
    // A search over millions of strategies visits more shapes than fit in memory: past the
    // bound the cache starts again (a graph is a pure function of its key, and its holders
    // keep theirs alive), so results do not change.
    if (graphs_.size() >= kMaxGraphs) graphs_.clear();
    return graphs_.emplace(key, std::move(made)).first->second;  // the first one made stays
  }
  [[nodiscard]] std::size_t size() const {
    std::shared_lock lock(mutex_);
    return graphs_.size();
  }

 private:
  mutable std::shared_mutex mutex_;
  std::map<GraphKey, std::shared_ptr<const ComputeGraph>> graphs_;
};

}  // namespace pathfinder
