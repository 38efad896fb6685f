// Device mapping (issue 4; paper §5.2, deepflow-reference §3.10, for a hierarchy of tiers).
//
// A strategy's parallel dimensions (tensor, pipeline, data, ...) each split the devices into
// groups of `degree` members. A mapping is an order of the dimensions: device id is the
// mixed-radix number over that order, the first dimension varying fastest, so its groups are
// contiguous devices and a later dimension's stride is the product of the earlier degrees.
// Groups of concurrent dimensions that cross the same tier share each device's port there.
//
// best_mapping tries every order of the dimensions with degree > 1 (k! orders; 24 for four)
// and keeps the one with the least Σ collective_time(group, collective, weight): each
// dimension's bytes per iteration moved as one collective. Ties keep the first order in
// lexicographic order of dimension indices, so the result is deterministic.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "engine/system/collectives.hpp"
#include "engine/system/group_placement.hpp"
#include "engine/system/system_graph.hpp"

namespace pathfinder {

struct ParallelDim {
  std::string name;
  int degree = 1;
  Bytes weight;  // what each member moves per iteration in this dimension (scores orders)
  Collective collective = Collective::kAllReduce;  // the pattern those bytes move in
  bool concurrent = true;  // communicates while the other concurrent dimensions do
  // Dimensions (bit i: the caller's dimension i) this one never communicates at the same time
  // as, though both are concurrent: it shares no port with them.
  std::uint32_t apart_from = 0;
};

// The most dimensions best_mapping and map_dims place (tensor, second tensor, context, pipeline,
// data, expert, ... with room to spare).
inline constexpr std::size_t kMaxMappedDims = 8;

struct Mapping {
  std::vector<int> order;               // dimension indices, fastest-varying first
  std::vector<GroupPlacement> groups;   // one per dimension, in the caller's order
  Time score;                           // Σ collective_time(groups[i], collective, weight)
};

// The placements for one order (a permutation of all dimension indices). Throws ConfigError
// when a degree is < 1 or the degrees' product is not g.devices.
[[nodiscard]] Mapping map_dims(const SystemGraph& g, std::span<const ParallelDim> dims,
                               std::span<const int> order);

// The best order (see above); dimensions of degree 1 come last, in their given order.
[[nodiscard]] Mapping best_mapping(const SystemGraph& g, std::span<const ParallelDim> dims);
// The same into `out`, reusing its storage.
void best_mapping(const SystemGraph& g, std::span<const ParallelDim> dims, Mapping& out);

}  // namespace pathfinder
