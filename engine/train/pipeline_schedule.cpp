#include "engine/train/pipeline_schedule.hpp"

#include <algorithm>
#include <cmath>

#include "engine/core/error.hpp"

namespace pathfinder {
namespace {

struct Task {
  int chunk;
  int micro_batch;
  bool backward;
};

// The order one device runs its tasks in.
std::vector<Task> device_order(const PipelineInput& in, int d) {
  const int P = in.stages, v = in.chunks, m = in.micro_batches;
  std::vector<Task> order;
  order.reserve(static_cast<std::size_t>(2 * m * v));
  switch (in.schedule) {
    case PipelineSchedule::kGpipe:
      for (int j = 0; j < m; ++j) {
        for (int c = 0; c < v; ++c) order.push_back({c * P + d, j, false});
      }
      for (int j = 0; j < m; ++j) {
        for (int c = v - 1; c >= 0; --c) order.push_back({c * P + d, j, true});
      }
      break;
    case PipelineSchedule::kOneFOneB:
    case PipelineSchedule::kInterleaved: {
      // Virtual step k of m·v: groups of P micro-batches run through each local chunk in turn
      // (forward in chunk order, backward in reverse), Megatron-LM's interleaved schedule; with
      // v = 1 it is plain 1F1B.
      const auto task = [&](int k, bool backward) {
        const int group = k / (P * v), r = k % (P * v);
        const int local = backward ? v - 1 - r / P : r / P;
        return Task{local * P + d, group * P + r % P, backward};
      };
      const int total = m * v;
      const int warmup = v == 1 ? std::min(P - d - 1, m)
                                : std::min((P - d - 1) * 2 + (v - 1) * P, total);
      for (int k = 0; k < warmup; ++k) order.push_back(task(k, false));
      for (int i = 0; i < total - warmup; ++i) {
        order.push_back(task(warmup + i, false));
        order.push_back(task(i, true));
      }
      for (int k = total - warmup; k < total; ++k) order.push_back(task(k, true));
      break;
    }
  }
  return order;
}

double at(const std::vector<double>& v, int i) {
  return v.empty() ? 0.0 : v[static_cast<std::size_t>(i)];
}


}  // namespace

PipelineResult simulate_pipeline_exhaustively(const PipelineInput& in) {
  const int P = in.stages, v = in.chunks, m = in.micro_batches, C = P * v;
  PF_ASSERT(P >= 1 && v >= 1 && m >= 1);
  PF_ASSERT(in.forward.empty() || static_cast<int>(in.forward.size()) == C);
  PF_ASSERT(in.backward.empty() || static_cast<int>(in.backward.size()) == C);
  PF_ASSERT(v == 1 || in.schedule == PipelineSchedule::kGpipe || m % P == 0);

  // End times, NaN until scheduled: [chunk][micro-batch].
  const auto cells = static_cast<std::size_t>(C) * static_cast<std::size_t>(m);
  std::vector<double> end_f(cells, NAN), end_b(cells, NAN);
  const auto cell = [m](int c, int j) {
    return static_cast<std::size_t>(c) * static_cast<std::size_t>(m) +
           static_cast<std::size_t>(j);
  };
  std::vector<std::vector<Task>> orders;
  for (int d = 0; d < P; ++d) orders.push_back(device_order(in, d));
  std::vector<std::size_t> next(static_cast<std::size_t>(P), 0);
  std::vector<double> free(static_cast<std::size_t>(P), 0.0);

  PipelineResult r;
  r.busy.assign(static_cast<std::size_t>(P), 0.0);
  r.last_backward.assign(static_cast<std::size_t>(C), 0.0);
  r.last_backward_start.assign(static_cast<std::size_t>(C), 0.0);
  std::size_t remaining = 2 * cells;
  while (remaining > 0) {
    bool progress = false;
    for (int d = 0; d < P; ++d) {
      const auto du = static_cast<std::size_t>(d);
      while (next[du] < orders[du].size()) {
        const Task t = orders[du][next[du]];
        // When its input is here: the previous chunk's forward output, or the next chunk's
        // gradient (the last chunk starts its backward from its own forward).
        double ready = 0.0;
        if (!t.backward && t.chunk > 0) {
          const double e = end_f[cell(t.chunk - 1, t.micro_batch)];
          if (std::isnan(e)) break;
          ready = e + at(in.send_forward, t.chunk - 1);
        } else if (t.backward) {
          const double own = end_f[cell(t.chunk, t.micro_batch)];
          if (std::isnan(own)) break;
          ready = own;
          if (t.chunk + 1 < C) {
            const double e = end_b[cell(t.chunk + 1, t.micro_batch)];
            if (std::isnan(e)) break;
            ready = std::max(ready, e + at(in.send_backward, t.chunk + 1));
          }
        }
        const double dur = t.backward ? at(in.backward, t.chunk) : at(in.forward, t.chunk);
        const double start = std::max(free[du], ready);
        free[du] = start + dur;
        r.busy[du] += dur;
        (t.backward ? end_b : end_f)[cell(t.chunk, t.micro_batch)] = free[du];
        if (t.backward && free[du] >= r.last_backward[static_cast<std::size_t>(t.chunk)]) {
          r.last_backward[static_cast<std::size_t>(t.chunk)] = free[du];
          r.last_backward_start[static_cast<std::size_t>(t.chunk)] = start;
        }
        r.makespan = std::max(r.makespan, free[du]);
        ++next[du];
        --remaining;
        progress = true;
      }
    }
    PF_ASSERT(progress);  // a schedule whose orders deadlock is an engine bug
  }
  return r;
}

PipelineResult simulate_pipeline(const PipelineInput& in) {
  // Past the fill, every schedule repeats with a fixed period per micro-batch, so the makespan
  // and the end times are affine in the number of micro-batches: simulate 2P and 3P of them
  // and extend the line. Exact (tests compare with full simulations); the cost is O(P²·v),
  // independent of the micro-batch count and so of the data-parallel degree.
  const int P = in.stages;
  const int m1 = 2 * P, m2 = 3 * P;
  if (in.micro_batches <= m2 + P) return simulate_pipeline_exhaustively(in);
  PipelineInput a = in, b = in;
  a.micro_batches = m1;
  b.micro_batches = m2;
  const PipelineResult ra = simulate_pipeline_exhaustively(a);
  PipelineResult rb = simulate_pipeline_exhaustively(b);
  const double extra = static_cast<double>(in.micro_batches - m2);
  const double slope = (rb.makespan - ra.makespan) / static_cast<double>(m2 - m1);
  rb.makespan += extra * slope;
  for (double& busy : rb.busy) busy *= static_cast<double>(in.micro_batches) / m2;
  for (std::size_t c = 0; c < rb.last_backward.size(); ++c) {
    const double sb = (rb.last_backward[c] - ra.last_backward[c]) / (m2 - m1);
    const double ss = (rb.last_backward_start[c] - ra.last_backward_start[c]) / (m2 - m1);
    rb.last_backward[c] += extra * sb;
    rb.last_backward_start[c] += extra * ss;
  }
  return rb;
}

}  // namespace pathfinder
