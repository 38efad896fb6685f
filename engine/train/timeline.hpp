// One evaluated training iteration as a timeline (issue 17, `eval --trace`): per pipeline
// stage, the forward and backward passes of every micro-batch where the schedule runs them,
// the activations and gradients sent between stages, the gradient reduction, the step and the
// host's share, on separate tracks, so a person can see where the time goes.
//
// The passes come from the exhaustive pipeline simulation of the iteration's own input
// (pipeline_schedule.hpp); the phases after the last backward are laid end to end from the
// stage's breakdown, so each stage's last span ends at the iteration time.
#pragma once

#include <string>
#include <vector>

#include "engine/train/iteration.hpp"
#include "engine/train/training_result.hpp"

namespace pathfinder {

enum class TraceTrack {
  kCompute,       // forward and backward passes (their blocking collectives included), waits
  kSendForward,   // activations sent to the next stage
  kSendBackward,  // gradients sent to the previous stage
  kDataParallel,  // gradient reduction (and ZeRO's parameter gather)
  kStep,          // gradient norm and tied-embedding sync, optimizer step
  kHost,          // input transfer, synchronisation, fixed host work
};
[[nodiscard]] const char* to_string(TraceTrack t);
inline constexpr int kTraceTracks = 6;

struct TraceSpan {
  int stage = 0;  // pipeline stage: one device of the pipeline (the others run in lock-step)
  TraceTrack track = TraceTrack::kCompute;
  std::string name;      // "F 3" (micro-batch 3), "B 3 c1" (chunk 1 of an interleaved stage)
  const char* category;  // forward, backward, pipeline, data_parallel, step, bubble, host
  Time start;            // from the iteration's start
  Time duration;
  int micro_batch = -1;  // passes and sends
  int chunk = -1;
};

struct Timeline {
  int stages = 0;
  Time iteration_time;
  std::vector<TraceSpan> spans;
};

// The passes the exhaustive simulation of `in` runs (stages x 2 x micro-batches x chunks).
[[nodiscard]] double timeline_tasks(const IterationInput& in);
// `r` must be assemble_iteration's result for `in` and feasible.
[[nodiscard]] Timeline iteration_timeline(const IterationInput& in, const TrainingResult& r);

}  // namespace pathfinder
