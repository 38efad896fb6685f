#include "engine/train/sharded_pass.hpp"

#include <algorithm>

namespace pathfinder {

void ShardedPass::layer(Time gather, Time compute, Time reduce_scatter) {
  // The gather, issued when the previous layer's compute started (the pass's start for the
  // first), behind what the stream already holds.
  comm_free_ = std::max(comm_free_, first_ ? Time{} : compute_start_) + gather;
  const Time arrived = comm_free_;
  // The previous layer's reduce-scatter was issued when its compute ended, after this gather.
  if (pending_ > Time{}) comm_free_ = std::max(comm_free_, compute_end_) + pending_;
  compute_start_ = std::max(compute_end_, arrived);
  compute_end_ = compute_start_ + compute;
  pending_ = reduce_scatter;
  compute_sum_ += compute;
  first_ = false;
}

Time ShardedPass::span() const {
  const Time comm = pending_ > Time{} ? std::max(comm_free_, compute_end_) + pending_ : comm_free_;
  return std::max(compute_end_, comm);
}

}  // namespace pathfinder
