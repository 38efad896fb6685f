#include "engine/train/sharded_pass.hpp"

#include <algorithm>

namespace pathfinder {

Time ShardedPass::contended_end(Time comm_end) const {
  // The stream is busy from the layer's compute start (the next gather is issued then) to
  // comm_end; the compute slows for the part of that within it.
  const Time overlap = std::min(comm_end, compute_end_) - compute_start_;
  return overlap > Time{} ? compute_end_ + overlap * contention_ : compute_end_;
}

void ShardedPass::layer(Time gather, Time compute, Time reduce_scatter) {
  // The gather, issued when the previous layer's compute started (the pass's start for the
  // first), behind what the stream already holds.
  comm_free_ = std::max(comm_free_, first_ ? Time{} : compute_start_) + gather;
  const Time arrived = comm_free_;
  // The previous layer's compute, slowed by the communication beside it (this gather and the
  // reduce-scatter before it).
  if (!first_ && contention_ > 0.0) compute_end_ = contended_end(comm_free_);
  // The previous layer's reduce-scatter was issued when its compute ended, after this gather.
  if (pending_ > Time{}) comm_free_ = std::max(comm_free_, compute_end_) + pending_;
  compute_start_ = std::max(compute_end_, arrived);
  compute_end_ = compute_start_ + compute;
  pending_ = reduce_scatter;
  compute_sum_ += compute;
  first_ = false;
}

Time ShardedPass::span() const {
  // The last layer's compute beside the reduce-scatter still in flight from the one before.
  const Time end = contention_ > 0.0 && !first_ ? contended_end(comm_free_) : compute_end_;
  const Time comm = pending_ > Time{} ? std::max(comm_free_, end) + pending_ : comm_free_;
  return std::max(end, comm);
}

}  // namespace pathfinder
