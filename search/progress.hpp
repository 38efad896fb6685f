// Progress of a parallel search (internal to search/): workers on any thread count steps
// and offer their best f; the callback runs only on the thread that built the reporter, and only
// when that thread itself reports or at finish(), so it is never called concurrently.
#pragma once

#include <algorithm>
#include <atomic>
#include <limits>
#include <thread>
#include <utility>

#include "search/search_types.hpp"

namespace pathfinder::detail {

class ProgressReporter {
 public:
  ProgressReporter(ProgressCallback callback, long total)
      : callback_(std::move(callback)), total_(total), owner_(std::this_thread::get_id()) {}

  // Any thread: `steps` more done, `f` the reporting worker's best so far.
  void add(long steps, double f) {
    if (!callback_) return;
    const long done = done_.fetch_add(steps, std::memory_order_relaxed) + steps;
    double best = best_.load(std::memory_order_relaxed);
    while (f < best && !best_.compare_exchange_weak(best, f, std::memory_order_relaxed)) {
    }
    if (std::this_thread::get_id() == owner_) {
      callback_(SearchProgress{done, total_, std::min(best, f)});
    }
  }
  // The owner thread, after the workers are done: the final count and best.
  void finish() {
    if (callback_) {
      callback_(SearchProgress{done_.load(), total_, best_.load()});
    }
  }

 private:
  ProgressCallback callback_;
  long total_ = 0;
  std::thread::id owner_;
  std::atomic<long> done_{0};
  std::atomic<double> best_{std::numeric_limits<double>::infinity()};
};

}  // namespace pathfinder::detail
