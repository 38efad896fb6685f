// Time of one micro-batch's forward and backward on one pipeline stage's device (issue 4):
// the stage's partitioned graph run on two streams. Compute kernels and blocking collectives
// share the compute stream in graph order (Megatron's tensor-parallel all-reduces block the
// next GEMM); collectives marked overlapped run on a communication stream and only their
// consumers wait. A ring (Communication::ring_steps) is pipelined with the kernel that consumes
// it: only the part its consumer's other blocks cannot cover adds to that kernel. The host
// issues one kernel per `dispatch`, so a stage of many small kernels is host-bound.
#pragma once

#include <array>
#include <vector>

#include "engine/graph/compute_graph.hpp"
#include "engine/perf/kernel_timer.hpp"
#include "engine/train/activity.hpp"

namespace pathfinder {

// How long a communication step of the partitioned graph takes (the system model's answer).
class CommTimes {
 public:
  virtual ~CommTimes() = default;
  [[nodiscard]] virtual Time time(const Communication& c) const = 0;
  // Bytes one member sends on each tier (collectives.hpp link_bytes); none by default.
  [[nodiscard]] virtual std::array<Bytes, kMaxTiers> link_bytes(const Communication& c) const {
    (void)c;
    return {};
  }
};

struct PassTimes {
  Time span;            // from the first kernel's issue to the last kernel's end
  Time compute;         // sum of compute-kernel device times
  Time exposed_comm;    // blocking collectives, and what side-stream ones cost the compute
  Time hidden_comm;     // overlapped collectives
  Time host_stall;      // compute stream idle waiting for the host
  Time weight_gradients;  // of compute, the weight-gradient kernels' (Phase::kBackwardWeight)
  int kernels = 0;
  Activity activity;            // the kernels' dynamic energy and the bytes sent
};

struct StageTimes {
  PassTimes forward;   // Phase::kForward
  PassTimes backward;  // data and weight gradients, recomputation included
  PassTimes update;    // the optimizer step
};

// One kernel as stage_times places it, for reports (eval --all-kernels): its pass, whether it
// ran on the communication stream (an overlapped collective, or a ring timed with its consumer,
// start = end), and its start and end from the pass's first issue.
struct KernelSpan {
  KernelId id = 0;
  int pass = 0;
  bool comm_stream = false;
  Time start, end;
};
// Every kernel of the graph as stage_times times it (the same arithmetic), in graph order per
// pass: forward, backward, update.
[[nodiscard]] std::vector<KernelSpan> kernel_spans(const ComputeGraph& g, KernelTimer& timer,
                                                   const CommTimes& comm,
                                                   double comm_overlap = 0.0,
                                                   double contention = 0.0, double pace = 1.0);

// `comm_overlap`: the fraction of each blocking collective hidden behind compute by
// decomposition (asynchronous tensor parallelism, collective matmul); 0 = fully exposed.
// `contention`: what a hidden second of collective costs the compute it hides behind, the
// SMs and memory bandwidth the collective takes (collective_contention, or the scale-up tier's
// measured figure); 0 = nothing. A collective on the communication stream (Communication::
// overlapped) costs the compute stream that much of each of its seconds, whatever runs there.
// `pace`: the job's slowest device's clock against the timer's (PerfMachine::job_pace), what
// every compute kernel's clocked part runs at; collectives are the system model's.
[[nodiscard]] StageTimes stage_times(const ComputeGraph& g, KernelTimer& timer,
                                     const CommTimes& comm, double comm_overlap = 0.0,
                                     double contention = 0.0, double pace = 1.0);

// While a collective overlaps compute its kernels hold `sms` of the device's `bundles` SMs
// (NCCL's CTAs do not share an SM with compute kernels, one per channel: NVIDIA/nccl issue
// 689), so the compute beside it runs on the rest: each second of overlap costs the compute
// s / (1 - s) seconds more, s = sms / bundles (at most 1/2).
[[nodiscard]] double collective_contention(int sms, int bundles);

}  // namespace pathfinder
