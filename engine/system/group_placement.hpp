// Where one communicating group sits in the system graph, and the bandwidth and latency each of
// its members sees at every tier it spans (issue 4; paper §5.2 and deepflow-reference §3.10,
// for a hierarchy of tiers rather than a wafer mesh).
//
// A group is `size` devices `stride` ids apart: {base + k·stride}. At tier t (positions of
// devices_below devices each, group_size of them) the group occupies `members` positions
// `spacing` apart, with `below` of its members inside each position. Link sharing:
//   switch, fat-tree  one port per device at the tier, shared by `sharers` concurrent groups
//                     (one per dimension crossing the tier); a fat-tree divides by its
//                     oversubscription when the group's block of devices spans leaves.
//   ring              two ports; a group covering the whole ring runs both directions
//                     (2 ports), a segment embeds its ring with dilation 2 (each link once per
//                     direction, 1 port, latency x2); positions `spacing` apart share each link
//                     with the spacing-1 sibling groups in between: bandwidth / spacing,
//                     latency x spacing (dimension-order routing hop count).
//   mesh-2d, torus-2d four ports; the group's positions form an a x b block; rings along x
//                     and along y as for a ring (a torus axis covered whole wraps around).
//   mesh-3d, torus-3d six ports; an a x b x c block, rings along x, y and z likewise.
//   full-mesh         a direct link to each other position (group_size - 1 ports): a group of
//                     m positions drives its m - 1 links, whatever else runs beside it.
// Everything is a fixed-size value: collective_time reads it without allocating.
#pragma once

#include <array>

#include "engine/system/system_graph.hpp"

namespace pathfinder {

// One tier a group spans (occupies more than one of its positions).
struct TierSpan {
  Tier tier = Tier::kInterPackage;
  Topology topology = Topology::kSwitch;
  int members = 1;  // positions of this tier the group occupies
  int below = 1;    // group members inside one of those positions (product over inner spans)
  int spacing = 1;  // positions between consecutive occupied ones
  // Per member and direction, for a ring over this tier's positions: peak x max_utilization /
  // congestion / sharers / oversubscription / topology derates.
  Bandwidth bandwidth;
  Time latency;  // per step: congestion and hop count applied
  // The tier's latency congestion factor alone (GPCNeT CI_l, >= 1): what scales a library's
  // own per-step figures (NCCL's, collectives.cpp) in place of the link's latency.
  double latency_congestion = 1.0;
  Bytes half_bandwidth_message;
  // Grids: the positions as a grid_x x grid_y x grid_z block, and a ring along each axis.
  int grid_x = 1, grid_y = 1, grid_z = 1;
  Bandwidth bandwidth_x, bandwidth_y, bandwidth_z;
  Time latency_x, latency_y, latency_z;
};

struct GroupPlacement {
  int size = 1;
  int stride = 1;  // device-id distance between consecutive members
  Tier outermost_tier = Tier::kIntraPackage;  // the last span's tier; meaningless when size 1
  int levels = 0;  // spans in use, innermost first; 0 when size 1
  std::array<TierSpan, kMaxTiers> span{};
  // Bytes a member can reduce per second (memory bandwidth / 3: two reads and a write per byte
  // reduced); 0: unbounded. collective_time caps reduction steps at it.
  Bandwidth reduction_bandwidth;
  CollectiveLibrary library = CollectiveLibrary::kAny;  // the system graph's

  [[nodiscard]] const TierSpan& outermost() const { return span[levels - 1]; }
};

// Concurrent groups sharing each tier's ports, indexed like SystemGraph::tiers (1: alone).
struct PortSharing {
  std::array<int, kMaxTiers> sharers{1, 1, 1};
};

// Positions of tier `tier_index` that a group of `size` members `stride` apart occupies.
[[nodiscard]] int tier_members(const SystemGraph& g, int tier_index, int size, int stride);

// The group {k·stride : k < size} placed on g. Requires size·stride <= g.devices.
[[nodiscard]] GroupPlacement place_group(const SystemGraph& g, int size, int stride,
                                         const PortSharing& sharing = {});

}  // namespace pathfinder
