#include "engine/train/timeline.hpp"

#include <algorithm>
#include <cstddef>

#include "engine/core/error.hpp"
#include "engine/train/pipeline_schedule.hpp"

namespace pathfinder {

const char* to_string(TraceTrack t) {
  switch (t) {
    case TraceTrack::kCompute: return "compute";
    case TraceTrack::kSendForward: return "send activations";
    case TraceTrack::kSendBackward: return "send gradients";
    case TraceTrack::kDataParallel: return "data-parallel";
    case TraceTrack::kStep: return "step";
    case TraceTrack::kHost: return "host";
  }
  return "?";
}

double timeline_tasks(const IterationInput& in) {
  return 2.0 * in.stages * in.chunks_per_stage * static_cast<double>(in.micro_batches);
}

Timeline iteration_timeline(const IterationInput& in, const TrainingResult& r) {
  PF_ASSERT(r.feasible && static_cast<int>(r.stages.size()) == in.stages);
  const int P = in.stages, v = in.chunks_per_stage, m = in.micro_batches, C = P * v;
  PipelineInput pi;
  fill_pipeline_input(in, pi);
  const std::vector<PipelineTask> tasks = pipeline_tasks(pi);

  Timeline t;
  t.stages = P;
  t.iteration_time = r.iteration_time;
  t.spans.reserve(tasks.size() * 2 + static_cast<std::size_t>(P) * 6);
  // End of each pass by (chunk, micro-batch): where the sends start.
  const auto cell = [m](int c, int j) {
    return static_cast<std::size_t>(c) * static_cast<std::size_t>(m) + static_cast<std::size_t>(j);
  };
  std::vector<Time> end_f(static_cast<std::size_t>(C) * static_cast<std::size_t>(m));
  std::vector<Time> end_b = end_f;
  std::vector<Time> last_end(static_cast<std::size_t>(P));
  std::vector<Time> last_backward_start(static_cast<std::size_t>(P));
  for (const PipelineTask& k : tasks) {
    const Time start = k.start, end = k.end;
    (k.backward ? end_b : end_f)[cell(k.chunk, k.micro_batch)] = end;
    const auto du = static_cast<std::size_t>(k.device);
    last_end[du] = std::max(last_end[du], end);
    if (k.backward) last_backward_start[du] = std::max(last_backward_start[du], start);
    std::string name = (k.backward ? "B " : "F ") + std::to_string(k.micro_batch);
    if (v > 1) name += " c" + std::to_string(k.chunk / P);
    t.spans.push_back(TraceSpan{k.device, TraceTrack::kCompute, std::move(name),
                                k.backward ? "backward" : "forward", start,
                                k.end - k.start,
                                k.micro_batch, k.chunk});
  }
  // Sends: a stage's output leaves when its pass ends, and arrives in.send later.
  if (P > 1 && in.send > Time{}) {
    for (int c = 0; c < C; ++c) {
      for (int j = 0; j < m; ++j) {
        if (c + 1 < C) {
          t.spans.push_back(TraceSpan{c % P, TraceTrack::kSendForward, "act " + std::to_string(j),
                                      "pipeline", end_f[cell(c, j)], in.send, j, c});
        }
        if (c > 0) {
          t.spans.push_back(TraceSpan{c % P, TraceTrack::kSendBackward, "grad " + std::to_string(j),
                                      "pipeline", end_b[cell(c, j)], in.send, j, c});
        }
      }
    }
  }
  // After the last backward, as assemble_iteration adds them up.
  const Time finish = r.iteration_time - r.stages.front().host;
  for (int d = 0; d < P; ++d) {
    const auto du = static_cast<std::size_t>(d);
    const TrainingBreakdown& b = r.stages[du];
    Time sharded;  // ZeRO-3's exposed gathers and reduce-scatters: inside the passes
    for (int local = 0; local < v; ++local) {
      sharded += in.chunks[static_cast<std::size_t>(local * P + d)].data_comm * m;
    }
    Time at = last_end[du];
    const auto add = [&](TraceTrack track, const char* name, const char* category, Time length) {
      if (!(length > Time{})) return;
      t.spans.push_back(TraceSpan{d, track, name, category, at, length, -1, -1});
      at += length;
    };
    if (in.overlap_data_parallel && !in.sharded && in.dp > 1 &&
        last_end[du] > last_backward_start[du]) {
      // The buckets reduced while the last backward produces them (fluid, iteration.hpp).
      t.spans.push_back(TraceSpan{d, TraceTrack::kDataParallel, "gradient reduction (overlapped)",
                                  "data_parallel", last_backward_start[du],
                                  last_end[du] - last_backward_start[du], -1, -1});
    }
    add(TraceTrack::kDataParallel, "gradient reduction and parameter gather (exposed)",
        "data_parallel", b.data_comm - sharded);
    add(TraceTrack::kStep, "gradient norm and sync", "step", b.gradient_sync);
    add(TraceTrack::kStep, "optimizer step", "step", b.optimizer);
    add(TraceTrack::kCompute, "wait for the slowest stage", "bubble", finish - at);
    add(TraceTrack::kHost, "host", "host", r.iteration_time - at);
  }
  return t;
}

}  // namespace pathfinder
