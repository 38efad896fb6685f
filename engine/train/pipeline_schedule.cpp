#include "engine/train/pipeline_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <shared_mutex>

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

// Every device's tasks in one order in which each task's inputs come first: each device takes
// its next task while its inputs are done, round after round (a schedule whose orders deadlock
// is an engine bug).
std::vector<PipelineStep> compile_order(const PipelineInput& in, int m) {
  const int P = in.stages, C = P * in.chunks, tasks = order_size(in, m);
  const auto cells = static_cast<std::size_t>(C) * static_cast<std::size_t>(m);
  PF_ASSERT(cells < (std::size_t{1} << 30));
  std::vector<char> done_f(cells, 0), done_b(cells, 0);
  std::vector<int> next(static_cast<std::size_t>(P), 0);
  std::vector<PipelineStep> order;
  order.reserve(2 * cells);
  const auto cell = [m](int c, int j) { return c * m + j; };
  while (order.size() < 2 * cells) {
    bool progress = false;
    for (int d = 0; d < P; ++d) {
      int& n = next[static_cast<std::size_t>(d)];
      while (n < tasks) {
        const Task t = task_at(in, m, d, n);
        PipelineStep step{d, t.chunk, t.micro_batch, t.backward, cell(t.chunk, t.micro_batch)};
        if (!t.backward && t.chunk > 0) {
          step.input = cell(t.chunk - 1, t.micro_batch);
          if (done_f[static_cast<std::size_t>(step.input)] == 0) break;
        } else if (t.backward) {
          step.input = step.cell;
          if (done_f[static_cast<std::size_t>(step.input)] == 0) break;
          if (t.chunk + 1 < C) {
            step.gradient = cell(t.chunk + 1, t.micro_batch);
            if (done_b[static_cast<std::size_t>(step.gradient)] == 0) break;
          }
        }
        (t.backward ? done_b : done_f)[static_cast<std::size_t>(step.cell)] = 1;
        order.push_back(step);
        ++n;
        progress = true;
      }
    }
    PF_ASSERT(progress);
  }
  return order;
}

// The process-wide orders, up to kSharedSteps steps in all (28 MB); past that they start again
// (an order is a pure function of its key, and its holders keep theirs alive).
std::shared_ptr<const std::vector<PipelineStep>> shared_order(const PipelineInput& in, int m,
                                                              std::uint64_t key) {
  constexpr std::size_t kSharedSteps = std::size_t{1} << 20;
  static std::shared_mutex mutex;
  static std::unordered_map<std::uint64_t, std::shared_ptr<const std::vector<PipelineStep>>> kept;
  static std::size_t steps = 0;
  {
    std::shared_lock lock(mutex);
    const auto it = kept.find(key);
    if (it != kept.end()) return it->second;
  }
  auto made = std::make_shared<const std::vector<PipelineStep>>(compile_order(in, m));
  std::unique_lock lock(mutex);
  const auto it = kept.find(key);
  if (it != kept.end()) return it->second;
  if (steps + made->size() > kSharedSteps) {
    kept.clear();
    steps = 0;
  }
  steps += made->size();
  return kept.emplace(key, std::move(made)).first->second;
}

// The order of the shape (schedule, stages, chunks, m), compiled once per scratch.
const std::vector<PipelineStep>& order_of(const PipelineInput& in, int m,
                                          PipelineScratch& scratch) {
  PF_ASSERT(in.stages < (1 << 20) && in.chunks < (1 << 10));
  const std::uint64_t key = (static_cast<std::uint64_t>(m) << 32) |
                            (static_cast<std::uint64_t>(in.stages) << 12) |
                            (static_cast<std::uint64_t>(in.chunks) << 2) |
                            static_cast<std::uint64_t>(in.schedule);
  const auto it = scratch.orders.find(key);
  if (it != scratch.orders.end()) return *it->second;
  if (scratch.orders.size() >= 64) scratch.orders.clear();  // bounded across long searches
  return *scratch.orders.emplace(key, shared_order(in, m, key)).first->second;
}

// The schedule with `m` micro-batches into r, on the scratch's buffers: a task starts when its
// device is free and its inputs have arrived (the sends after them). Recording or not is a
// template argument: the evaluation path's loop carries no test for it.
template <bool kRecord>
void simulate(const PipelineInput& in, int m, PipelineScratch& scratch, PipelineResult& r,
              std::vector<PipelineTask>* record) {
  const int P = in.stages, v = in.chunks, C = P * v;
  PF_ASSERT(P >= 1 && v >= 1 && m >= 1);
  PF_ASSERT(in.forward.empty() || static_cast<int>(in.forward.size()) == C);
  PF_ASSERT(in.backward.empty() || static_cast<int>(in.backward.size()) == C);
  PF_ASSERT(in.send_forward.empty() || static_cast<int>(in.send_forward.size()) == C);
  PF_ASSERT(in.send_backward.empty() || static_cast<int>(in.send_backward.size()) == C);
  PF_ASSERT(v == 1 || in.schedule == PipelineSchedule::kGpipe || m % P == 0);
  const std::vector<PipelineStep>& order = order_of(in, m, scratch);

  const auto cells = static_cast<std::size_t>(C) * static_cast<std::size_t>(m);
  std::vector<Time>& end_f = scratch.end_forward;
  std::vector<Time>& end_b = scratch.end_backward;
  end_f.resize(cells);
  end_b.resize(cells);
  std::vector<Time>& free = scratch.free;
  free.assign(static_cast<std::size_t>(P), Time{});
  // An empty duration list is all zeros.
  scratch.zeros.assign(static_cast<std::size_t>(C), Time{});
  const auto data = [&](const std::vector<Time>& x) {
    return x.empty() ? scratch.zeros.data() : x.data();
  };
  const Time* fwd = data(in.forward);
  const Time* bwd = data(in.backward);
  const Time* send_f = data(in.send_forward);
  const Time* send_b = data(in.send_backward);
  r.makespan = Time{};
  r.busy.assign(static_cast<std::size_t>(P), Time{});
  r.last_backward.assign(static_cast<std::size_t>(C), Time{});
  r.last_backward_start.assign(static_cast<std::size_t>(C), Time{});
  Time* busy = r.busy.data();
  Time* last = r.last_backward.data();
  Time* last_start = r.last_backward_start.data();
  Time* ends_f = end_f.data();
  Time* ends_b = end_b.data();
  Time* frees = free.data();
  // Maxima by value and the makespan in a local: std::max returns a reference, and the
  // result's members may alias the arrays, so either would keep the chain in memory.
  const auto later = [](Time a, Time b) { return a < b ? b : a; };
  Time makespan;
  for (const PipelineStep& t : order) {
    Time ready, end;
    const auto device = static_cast<std::size_t>(t.device);
    if (!t.backward) {
      if (t.input >= 0) ready = ends_f[static_cast<std::size_t>(t.input)] + send_f[t.chunk - 1];
      const Time start = later(frees[device], ready);
      const Time work = fwd[t.chunk];
      end = start + work;
      busy[device] += work;
      ends_f[static_cast<std::size_t>(t.cell)] = end;
      if constexpr (kRecord) record->push_back({t.device, t.chunk, t.micro_batch, false, start, end});
    } else {
      ready = ends_f[static_cast<std::size_t>(t.input)];
      if (t.gradient >= 0) {
        ready = later(ready, ends_b[static_cast<std::size_t>(t.gradient)] + send_b[t.chunk + 1]);
      }
      const Time start = later(frees[device], ready);
      const Time work = bwd[t.chunk];
      end = start + work;
      busy[device] += work;
      ends_b[static_cast<std::size_t>(t.cell)] = end;
      if (end >= last[t.chunk]) {
        last[t.chunk] = end;
        last_start[t.chunk] = start;
      }
      if constexpr (kRecord) record->push_back({t.device, t.chunk, t.micro_batch, true, start, end});
    }
    frees[device] = end;
    makespan = later(makespan, end);
  }
  r.makespan = makespan;
}

// DualPipe by the DeepSeek-V3 report's Table 2 (see the header): device d's busy time is its
// two chunks' passes for half the micro-batches each; every device then idles the bubble of
// the busiest one, whose passes pace the pipeline. Each chunk's last backward ends with the
// schedule (its last weight-gradient passes, step 8 of deepseek-ai/DualPipe's step(), close
// it on every device).
void dual_pipe(const PipelineInput& in, PipelineResult& out) {
  const int P = in.stages;
  PF_ASSERT(in.schedule == PipelineSchedule::kDualPipe && in.chunks == 2 && P % 2 == 0 &&
            in.micro_batches >= 2 * P && in.micro_batches % 2 == 0 &&
            in.forward.size() == static_cast<std::size_t>(2 * P) &&
            in.backward.size() == in.forward.size());
  const auto at = [](const std::vector<Time>& v, int c) {
    return v.empty() ? Time{} : v[static_cast<std::size_t>(c)];
  };
  const double half = 0.5 * static_cast<double>(in.micro_batches);
  out.busy.assign(static_cast<std::size_t>(P), Time{});
  Time paced, bubble;
  for (int d = 0; d < P; ++d) {
    const int a = d, b = P + d;
    const Time f = 0.5 * (at(in.forward, a) + at(in.forward, b));
    const Time bw = 0.5 * (at(in.backward, a) + at(in.backward, b));
    const Time w = 0.5 * (at(in.weight_gradients, a) + at(in.weight_gradients, b));
    const Time sends = at(in.send_forward, a) + at(in.send_backward, a);
    const Time busy = 2.0 * half * (f + bw);
    out.busy[static_cast<std::size_t>(d)] = busy;
    if (busy < paced) continue;
    paced = busy;
    const Time slot = f + 2.0 * bw - 3.0 * w + sends;
    bubble = (0.5 * P - 1.0) * (slot > Time{} ? slot : Time{});
  }
  out.makespan = paced + bubble;
  out.last_backward.assign(static_cast<std::size_t>(2 * P), out.makespan);
  out.last_backward_start.resize(static_cast<std::size_t>(2 * P));
  for (int c = 0; c < 2 * P; ++c) {
    out.last_backward_start[static_cast<std::size_t>(c)] = out.makespan - at(in.backward, c);
  }
}

}  // namespace

PipelineResult simulate_pipeline_exhaustively(const PipelineInput& in) {
  PipelineResult r;
  if (in.schedule == PipelineSchedule::kDualPipe) {
    dual_pipe(in, r);
    return r;
  }
  PipelineScratch scratch;
  simulate<false>(in, in.micro_batches, scratch, r, nullptr);
  return r;
}

std::vector<PipelineTask> pipeline_tasks(const PipelineInput& in) {
  PF_ASSERT(in.schedule != PipelineSchedule::kDualPipe);
  PipelineScratch scratch;
  PipelineResult r;
  std::vector<PipelineTask> tasks;
  tasks.reserve(static_cast<std::size_t>(in.stages) * static_cast<std::size_t>(order_size(in, in.micro_batches)));
  simulate<true>(in, in.micro_batches, scratch, r, &tasks);
  return tasks;
}

namespace {

bool same_input(const PipelineInput& a, const PipelineInput& b) {
  return a.schedule == b.schedule && a.stages == b.stages && a.chunks == b.chunks &&
         a.micro_batches == b.micro_batches && a.forward == b.forward &&
         a.backward == b.backward && a.send_forward == b.send_forward &&
         a.send_backward == b.send_backward;
}

void simulate_affine(const PipelineInput& in, PipelineScratch& scratch, PipelineResult& out);

}  // namespace

void simulate_pipeline(const PipelineInput& in, PipelineScratch& scratch, PipelineResult& out) {
  if (in.schedule == PipelineSchedule::kDualPipe) {
    dual_pipe(in, out);
    return;
  }
  // Vector copy-assignment reuses the destination's capacity: nothing allocated once sized.
  for (const PipelineScratch::Kept& k : scratch.kept) {
    if (k.used && same_input(k.in, in)) {
      out = k.out;
      return;
    }
  }
  simulate_affine(in, scratch, out);
  PipelineScratch::Kept& k = scratch.kept[scratch.next_kept];
  scratch.next_kept = (scratch.next_kept + 1) % scratch.kept.size();
  k.used = true;
  k.in = in;
  k.out = out;
}

namespace {

void simulate_affine(const PipelineInput& in, PipelineScratch& scratch, PipelineResult& out) {
  // Past the fill, every schedule repeats with a fixed period per micro-batch, so the makespan
  // and the end times are affine in the number of micro-batches: simulate 2P and 3P of them
  // and extend the line. Exact (tests compare with full simulations); the cost is O(P²·v),
  // independent of the micro-batch count and so of the data-parallel degree.
  const int P = in.stages;
  const int m1 = 2 * P, m2 = 3 * P;
  if (in.micro_batches <= m2 + P) {
    simulate<false>(in, in.micro_batches, scratch, out, nullptr);
    return;
  }
  PipelineResult& ra = scratch.shorter;
  simulate<false>(in, m1, scratch, ra, nullptr);
  simulate<false>(in, m2, scratch, out, nullptr);
  const double extra = static_cast<double>(in.micro_batches - m2);
  const Time slope = (out.makespan - ra.makespan) / static_cast<double>(m2 - m1);
  // In the periodic regime a micro-batch adds at least the busiest device's work per
  // micro-batch; a smaller slope means 2P micro-batches had not reached it (many model chunks
  // of unequal cost): simulate every task instead.
  Time work;
  for (const Time busy : out.busy) work = max(work, busy / m2);
  if (slope < work * (1.0 - 1e-9)) {
    simulate<false>(in, in.micro_batches, scratch, out, nullptr);
    return;
  }
  out.makespan += extra * slope;
  for (Time& busy : out.busy) busy *= static_cast<double>(in.micro_batches) / m2;
  for (std::size_t c = 0; c < out.last_backward.size(); ++c) {
    const Time sb = (out.last_backward[c] - ra.last_backward[c]) / (m2 - m1);
    const Time ss = (out.last_backward_start[c] - ra.last_backward_start[c]) / (m2 - m1);
    out.last_backward[c] += extra * sb;
    out.last_backward_start[c] += extra * ss;
  }
}

}  // namespace

PipelineResult simulate_pipeline(const PipelineInput& in) {
  PipelineScratch scratch;
  PipelineResult r;
  simulate_pipeline(in, scratch, r);
  return r;
}

}  // namespace pathfinder
