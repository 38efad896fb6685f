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

// The number of tasks one device runs, and its idx-th in the order its schedule prescribes
// (computed, not stored: the simulation allocates nothing per device).
int order_size(const PipelineInput& in, int m) { return 2 * m * in.chunks; }
Task task_at(const PipelineInput& in, int m, int d, int idx) {
  const int P = in.stages, v = in.chunks, total = m * v;
  if (in.schedule == PipelineSchedule::kGpipe) {
    if (idx < total) return {(idx % v) * P + d, idx / v, false};
    const int k = idx - total;
    return {(v - 1 - k % v) * P + d, k / v, true};
  }
  // 1F1B and interleaved: virtual step k of m·v; groups of P micro-batches run through each
  // local chunk in turn (forward in chunk order, backward in reverse), Megatron-LM's
  // interleaved schedule; with v = 1 it is plain 1F1B. Warm-up forwards, then one forward and
  // one backward alternately, then the cool-down backwards.
  const auto task = [&](int k, bool backward) {
    const int group = k / (P * v), r = k % (P * v);
    const int local = backward ? v - 1 - r / P : r / P;
    return Task{local * P + d, group * P + r % P, backward};
  };
  const int warmup =
      v == 1 ? std::min(P - d - 1, m) : std::min((P - d - 1) * 2 + (v - 1) * P, total);
  if (idx < warmup) return task(idx, false);
  const int steady = 2 * (total - warmup);
  if (idx < warmup + steady) {
    const int i = (idx - warmup) / 2;
    return (idx - warmup) % 2 == 0 ? task(warmup + i, false) : task(i, true);
  }
  return task(total - warmup + (idx - warmup - steady), true);
}

double at(const std::vector<double>& v, int i) {
  return v.empty() ? 0.0 : v[static_cast<std::size_t>(i)];
}

// The schedule with `m` micro-batches into r, on the scratch's buffers.
void simulate(const PipelineInput& in, int m, PipelineScratch& scratch, PipelineResult& r,
              std::vector<PipelineTask>* record = nullptr) {
  const int P = in.stages, v = in.chunks, C = P * v;
  PF_ASSERT(P >= 1 && v >= 1 && m >= 1);
  PF_ASSERT(in.forward.empty() || static_cast<int>(in.forward.size()) == C);
  PF_ASSERT(in.backward.empty() || static_cast<int>(in.backward.size()) == C);
  PF_ASSERT(v == 1 || in.schedule == PipelineSchedule::kGpipe || m % P == 0);

  // End times, NaN until scheduled: [chunk][micro-batch].
  const auto cells = static_cast<std::size_t>(C) * static_cast<std::size_t>(m);
  std::vector<double>& end_f = scratch.end_forward;
  std::vector<double>& end_b = scratch.end_backward;
  end_f.assign(cells, NAN);
  end_b.assign(cells, NAN);
  const auto cell = [m](int c, int j) {
    return static_cast<std::size_t>(c) * static_cast<std::size_t>(m) +
           static_cast<std::size_t>(j);
  };
  std::vector<int>& next = scratch.next;
  std::vector<double>& free = scratch.free;
  next.assign(static_cast<std::size_t>(P), 0);
  free.assign(static_cast<std::size_t>(P), 0.0);
  const int tasks = order_size(in, m);

  r.makespan = 0.0;
  r.busy.assign(static_cast<std::size_t>(P), 0.0);
  r.last_backward.assign(static_cast<std::size_t>(C), 0.0);
  r.last_backward_start.assign(static_cast<std::size_t>(C), 0.0);
  std::size_t remaining = 2 * cells;
  while (remaining > 0) {
    bool progress = false;
    for (int d = 0; d < P; ++d) {
      const auto du = static_cast<std::size_t>(d);
      while (next[du] < tasks) {
        const Task t = task_at(in, m, d, next[du]);
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
        if (record != nullptr) {
          record->push_back({d, t.chunk, t.micro_batch, t.backward, start, free[du]});
        }
        ++next[du];
        --remaining;
        progress = true;
      }
    }
    PF_ASSERT(progress);  // a schedule whose orders deadlock is an engine bug
  }
}

}  // namespace

PipelineResult simulate_pipeline_exhaustively(const PipelineInput& in) {
  PipelineScratch scratch;
  PipelineResult r;
  simulate(in, in.micro_batches, scratch, r);
  return r;
}

std::vector<PipelineTask> pipeline_tasks(const PipelineInput& in) {
  PipelineScratch scratch;
  PipelineResult r;
  std::vector<PipelineTask> tasks;
  tasks.reserve(static_cast<std::size_t>(in.stages) * static_cast<std::size_t>(order_size(in, in.micro_batches)));
  simulate(in, in.micro_batches, scratch, r, &tasks);
  return tasks;
}

void simulate_pipeline(const PipelineInput& in, PipelineScratch& scratch, PipelineResult& out) {
  // Past the fill, every schedule repeats with a fixed period per micro-batch, so the makespan
  // and the end times are affine in the number of micro-batches: simulate 2P and 3P of them
  // and extend the line. Exact (tests compare with full simulations); the cost is O(P²·v),
  // independent of the micro-batch count and so of the data-parallel degree.
  const int P = in.stages;
  const int m1 = 2 * P, m2 = 3 * P;
  if (in.micro_batches <= m2 + P) {
    simulate(in, in.micro_batches, scratch, out);
    return;
  }
  PipelineResult& ra = scratch.shorter;
  simulate(in, m1, scratch, ra);
  simulate(in, m2, scratch, out);
  const double extra = static_cast<double>(in.micro_batches - m2);
  const double slope = (out.makespan - ra.makespan) / static_cast<double>(m2 - m1);
  out.makespan += extra * slope;
  for (double& busy : out.busy) busy *= static_cast<double>(in.micro_batches) / m2;
  for (std::size_t c = 0; c < out.last_backward.size(); ++c) {
    const double sb = (out.last_backward[c] - ra.last_backward[c]) / (m2 - m1);
    const double ss = (out.last_backward_start[c] - ra.last_backward_start[c]) / (m2 - m1);
    out.last_backward[c] += extra * sb;
    out.last_backward_start[c] += extra * ss;
  }
}

PipelineResult simulate_pipeline(const PipelineInput& in) {
  PipelineScratch scratch;
  PipelineResult r;
  simulate_pipeline(in, scratch, r);
  return r;
}

}  // namespace pathfinder
