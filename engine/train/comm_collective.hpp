// How the training models time a partitioned graph's communication on the system.
#pragma once

#include <algorithm>
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
// not form. A graph repeats the same few collectives (every layer's, every time step's): the
// last kMemo distinct ones are kept with their time and bytes per tier (one model's, one
// thread's; no allocation).
class PlacedComm final : public CommTimes {
 public:
  // `expert_cross_share` < 1: the expert group's all-to-alls forwarded through each remote
  // domain (forwarded_all_to_all; a dispatcher such as DeepEP), that share of the scale-out
  // copies crossing.
  explicit PlacedComm(std::array<const GroupPlacement*, 6> groups, double expert_cross_share = 1.0)
      : groups_(groups), expert_cross_share_(expert_cross_share) {}
  [[nodiscard]] Time time(const Communication& c) const override { return entry(c).time; }
  [[nodiscard]] std::array<Bytes, kMaxTiers> link_bytes(const Communication& c) const override {
    return entry(c).link;
  }

 private:
  struct Entry {
    CommKind kind;
    CommGroup group;
    Bytes bytes;
    Time time;
    std::array<Bytes, kMaxTiers> link;
  };
  static constexpr std::size_t kMemo = 16;
  const Entry& entry(const Communication& c) const {
    const Bytes bytes = c.bytes;
    for (std::size_t i = 0; i < size_; ++i) {
      const Entry& e = memo_[i];
      if (e.kind == c.kind && e.group == c.group && e.bytes == bytes) return e;
    }
    const GroupPlacement* g = groups_[static_cast<std::size_t>(c.group)];
    PF_ASSERT(g != nullptr);
    Entry& e = memo_[next_];
    if (c.group == CommGroup::kExpert && c.kind == CommKind::kAllToAll &&
        expert_cross_share_ < 1.0) {
      e = Entry{c.kind, c.group, bytes, forwarded_all_to_all(*g, bytes, expert_cross_share_),
                forwarded_all_to_all_link_bytes(*g, bytes, expert_cross_share_)};
    } else {
      e = Entry{c.kind, c.group, bytes, collective_time(*g, collective_of(c.kind), bytes),
                pathfinder::link_bytes(*g, collective_of(c.kind), bytes)};
    }
    next_ = (next_ + 1) % kMemo;
    size_ = std::min(size_ + 1, kMemo);
    return e;
  }
  std::array<const GroupPlacement*, 6> groups_;
  double expert_cross_share_ = 1.0;
  mutable std::array<Entry, kMemo> memo_{};
  mutable std::size_t size_ = 0, next_ = 0;
};

}  // namespace pathfinder
