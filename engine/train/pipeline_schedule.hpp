// Pipeline schedules as event-driven list scheduling (paper §6.5, issue 4): each device runs
// its forward and backward tasks in the order its schedule prescribes; a task starts when its
// device is free and its input has arrived from the neighbouring stage (after the transfer).
// GPipe (Huang et al. 2019), 1F1B (PipeDream-Flush, Narayanan et al. 2021) and the interleaved
// 1F1B of Megatron-LM with v model chunks per device (Narayanan et al. 2021, §2.2).
// DualPipe (DeepSeek-V3 technical report §3.2.1) is not simulated task by task: device d runs
// stage d for the micro-batches entering at device 0 and stage P - 1 - d for those entering
// at device P - 1, half each, and its bubble is the report's Table 2 formula,
// (P/2 - 1)(F&B + B - 3W), with F&B = F + B (a forward and a backward chunk overlapped: their
// compute adds, their communication hidden), per slot the two sends of a hop added; F, B, W
// the means of the device's two chunks' forward, backward and weight-gradient times.
//
// Cost grows with devices-per-pipeline × micro-batches × chunks, never with data- or
// tensor-parallel degrees: replicas run in lock-step and are not simulated.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "engine/core/units.hpp"
#include "engine/parallel/strategy.hpp"

namespace pathfinder {

struct PipelineInput {
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  int stages = 1;          // devices along the pipeline
  int chunks = 1;          // model chunks per device (interleaved), else 1
  int micro_batches = 1;
  // Per chunk c = 0 .. stages·chunks − 1 (chunk c lives on device c mod stages): the time of
  // one micro-batch's forward and backward there, and of sending its output onward (the
  // activations forward, the gradient backward) to chunk c + 1 / c − 1.
  std::vector<Time> forward, backward;
  std::vector<Time> send_forward, send_backward;
  // Of backward, the weight-gradient kernels' time (DualPipe's W; empty: none).
  std::vector<Time> weight_gradients;
};

struct PipelineResult {
  Time makespan;                      // first forward start to last backward end
  std::vector<Time> busy;             // per device, time computing
  std::vector<Time> last_backward;    // per chunk: when its last backward ends
  std::vector<Time> last_backward_start;
  [[nodiscard]] double bubble_fraction(int device) const {
    return makespan > Time{} ? 1.0 - busy[static_cast<std::size_t>(device)] / makespan : 0.0;
  }
};

// One task of a schedule in an order that respects every dependency: all devices' tasks
// interleaved so that each task's inputs come before it (the schedule's structure, timing-free).
struct PipelineStep {
  int device = 0;
  int chunk = 0;
  int micro_batch = 0;
  bool backward = false;
  int cell = 0;      // chunk · micro-batches + micro-batch: where its end time goes
  int input = -1;    // the forward end it waits for (the previous chunk's, or a backward's own)
  int gradient = -1; // a backward's: the next chunk's backward end it waits for, or -1
};

// Buffers a simulation reuses: once sized, simulating again allocates nothing. The orders of
// the (schedule, stages, chunks, micro-batches) shapes met so far are kept: a simulation is
// then one pass over its steps. Orders are pure functions of their shape, also kept process-
// wide (up to 2^20 steps in all) for the scratches of models made later (a search's next design).
// The last few inputs simulated and their results are kept too: strategies that differ only
// where the pipeline cannot see (ZeRO stage, data-parallel overlap, gradient buckets) and a
// re-evaluation of the same strategy take the result without simulating.
struct PipelineScratch {
  std::vector<Time> end_forward, end_backward, free, zeros;
  PipelineResult shorter;  // the 2P-micro-batch run the steady-state extension starts from
  std::unordered_map<std::uint64_t, std::shared_ptr<const std::vector<PipelineStep>>> orders;
  struct Kept {
    bool used = false;
    PipelineInput in;
    PipelineResult out;
  };
  std::array<Kept, 4> kept;
  std::size_t next_kept = 0;
};

// Empty `forward` etc. means uniform zero. Engine bug (PF_ASSERT) on inconsistent sizes or an
// interleaved schedule whose micro-batches are not a multiple of the stages.
[[nodiscard]] PipelineResult simulate_pipeline(const PipelineInput& in);
// The same into `out` on `scratch`'s buffers (no allocation once they are sized).
void simulate_pipeline(const PipelineInput& in, PipelineScratch& scratch, PipelineResult& out);
// Every task simulated, whatever the micro-batch count (the reference simulate_pipeline's
// steady-state extension is tested against).
[[nodiscard]] PipelineResult simulate_pipeline_exhaustively(const PipelineInput& in);

// One task of a simulated schedule: a forward or backward pass of one micro-batch through one
// chunk, on the device the chunk lives on.
struct PipelineTask {
  int device = 0;
  int chunk = 0;
  int micro_batch = 0;
  bool backward = false;
  Time start, end;
};
// Every task of the exhaustive simulation, as simulated (each device's in its schedule's order).
// Engine bug (PF_ASSERT) for DualPipe, which is timed by its formula, not task by task.
[[nodiscard]] std::vector<PipelineTask> pipeline_tasks(const PipelineInput& in);

}  // namespace pathfinder
