// The iteration of a pipelined, data-parallel model from its per-chunk costs (issue 4): the
// pipeline schedule is simulated, each device's gradient buckets are reduced on its data-
// parallel port as the last micro-batch's backward produces them, the optimizer step and the
// ZeRO parameter gather follow, then the host's fixed costs. Shared by every workload.
//
// Overlapped buckets share the ports with the tensor and pipeline traffic only while the
// backward runs: each is a fluid transfer, progressing at the shared placement's rate until the
// device's last backward ends and at the data group's own rate after. At every instant at
// least as much has been reduced as when the reduction starts after the backward, so overlap
// never lengthens the iteration.
#pragma once

#include <vector>

#include "engine/arch/arch_template.hpp"
#include "engine/system/group_placement.hpp"
#include "engine/train/pipeline_schedule.hpp"
#include "engine/train/training_result.hpp"

namespace pathfinder {

// One chunk of the model (a pipeline stage, or one of its interleaved chunks) on one device.
struct ChunkCosts {
  Time forward;              // per micro-batch (or time step), communication included
  Time backward;
  Time weight_gradients;     // of backward, the weight-gradient kernels' (DualPipe's W)
  Time update;               // the optimizer step over the chunk's parameters
  double parameters = 0.0;   // elements this device holds
  double expert_parameters = 0.0;  // of those, routed experts' (reduced over the expert-data group)
  // Of those, the linear layers' weights held quantized (IterationInput::
  // quantized_parameter_bytes), routed experts' included; 0 without.
  double quantized_parameters = 0.0;
  Time tensor_comm;          // blocking kernel-group communication per micro-batch, both passes
  Time data_comm;            // ZeRO-3: exposed gathers and reduce-scatters, likewise
  Time outside_layers;       // embedding, head and loss kernels per micro-batch, both passes
  Time sync;                 // blocking collectives after the backward pass (tied embedding)
  int buckets = 1;           // gradient buckets, ready evenly during the last backward
  Activity activity;         // per micro-batch, both passes (ZeRO-3's gathers included)
  Activity step;             // once per iteration: the optimizer step's kernels, the tied sync
};

struct IterationInput {
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  int stages = 1;
  int chunks_per_stage = 1;
  int micro_batches = 1;
  // stages · chunks_per_stage; chunk c on device c mod stages. DualPipe: two per stage, chunk
  // P + d the stage P - 1 - d that device d runs for the micro-batches entering at the far end.
  std::vector<ChunkCosts> chunks;
  Time send;                        // activations or gradients between stages, each way
  Bytes send_bytes;                 // the same in bytes, over pipeline_group
  const GroupPlacement* pipeline_group = nullptr;
  const GroupPlacement* data_group = nullptr;  // null or dp = 1: no reduction
  // The data group while it shares the ports with the tensor and pipeline groups, during the
  // last backward pass; null: data_group.
  const GroupPlacement* data_group_shared = nullptr;
  // Where the routed experts' gradients and parameters go instead (null: the data group).
  const GroupPlacement* expert_data_group = nullptr;
  int dp = 1;
  int zero = 0;
  // ZeRO-3 inside the chunks' costs (ChunkCosts::data_comm): no gradient buckets after the
  // backward, no parameter gather after the optimizer step (the parameters stay sharded).
  bool sharded = false;
  bool overlap_data_parallel = true;
  // What a second of gradient reduction beside the last backward costs that backward, the SMs
  // the collective holds (collective_contention, stage_times.hpp); 0: nothing.
  double contention = 0.0;
  // ZeRO-1/2: all-reduce the gradients, not reduce-scatter (each member still steps its share).
  bool zero_all_reduce = false;
  Bytes gradient_bytes = bytes(2.0);   // per parameter
  Bytes parameter_bytes = bytes(2.0);  // per parameter, as gathered back under ZeRO
  // Per quantized parameter (ChunkCosts::quantized_parameters) as gathered back under ZeRO:
  // Megatron-Core's --fp8-param-gather all-gathers the FP8 weights.
  Bytes quantized_parameter_bytes;
  Bytes input_bytes;                   // host to device before the first micro-batch
  Time gradient_norm;  // every device: norm and overflow all-reduces before the step
  HostSpec host;
};

// Buffers assemble_iteration reuses across calls (an evaluator keeps one): once sized, an
// iteration allocates nothing in them.
struct IterationScratch {
  PipelineInput pipeline;
  PipelineScratch simulation;
  PipelineResult result;
};

// A lower bound of assemble_iteration's iteration_time, without simulating. DualPipe: the
// busiest device's work. Else every device's
// last task is a backward of its first chunk (every schedule here), so device d finishes no
// sooner than the first micro-batch's forward reaches it through chunks 0 .. d-1 (their
// forwards and sends), plus its own work on every micro-batch, plus that last gradient's way
// back through chunks d-1 .. 0; the first chunk's last backward ends the pipeline, and the
// step and the host follow. Used to prune strategies that cannot make a ranking's top.
[[nodiscard]] Time iteration_lower_bound(const IterationInput& in);

// The pipeline schedule the iteration simulates: its chunks' passes and the sends between
// stages (out's buffers reused).
void fill_pipeline_input(const IterationInput& in, PipelineInput& out);

// Fills iteration_time, stages (one breakdown per stage), breakdown (the critical stage's),
// device_busy, critical_stage, stage_forward/backward. `scratch`: reused buffers, or null.
void assemble_iteration(const IterationInput& in, TrainingResult& r,
                        IterationScratch* scratch = nullptr);

}  // namespace pathfinder
