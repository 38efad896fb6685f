// How the training models time a partitioned graph's communication on the system.
#pragma once

#include <array>

#include "engine/core/error.hpp"
#include "engine/graph/compute_graph.hpp"
#include "engine/system/collectives.hpp"
#include "engine/train/stage_times.hpp"

namespace pathfinder {

[[nodiscard]] inline Collective collective_of(CommKind k) {
  switch (k) {
    case CommKind::kAllReduce: return Collective::kAllReduce;
    case CommKind::kReduceScatter: return Collective::kReduceScatter;
    case CommKind::kAllGather: return Collective::kAllGather;
    case CommKind::kSendRecv: return Collective::kSendRecv;
    case CommKind::kAllToAll: return Collective::kAllToAll;
  }
  return Collective::kAllReduce;
}

// Collectives timed on the placement of their parallel group: one placement per CommGroup
// (tensor, tensor columns, pipeline, data, context, expert), null for a group the model does
// not form.
class PlacedComm final : public CommTimes {
 public:
  explicit PlacedComm(std::array<const GroupPlacement*, 6> groups) : groups_(groups) {}
  [[nodiscard]] double time(const Communication& c) const override {
    const GroupPlacement* g = groups_[static_cast<std::size_t>(c.group)];
    PF_ASSERT(g != nullptr);
    return collective_time(*g, collective_of(c.kind), c.bytes.si());
  }
  [[nodiscard]] std::array<double, kMaxTiers> link_bytes(const Communication& c) const override {
    const GroupPlacement* g = groups_[static_cast<std::size_t>(c.group)];
    PF_ASSERT(g != nullptr);
    return pathfinder::link_bytes(*g, collective_of(c.kind), c.bytes.si());
  }

 private:
  std::array<const GroupPlacement*, 6> groups_;
};

}  // namespace pathfinder
