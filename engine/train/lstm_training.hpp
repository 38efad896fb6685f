// One training iteration of the paper's LSTM language model over many devices (issue 4;
// paper §5, deepflow-reference.md §3.8-3.9): kernel parallelism RC (kp1 x kp2) or CR (kp1)
// inside every distributed GEMM, data parallelism over the batch, and layer (pipeline)
// parallelism as the reference places it: with lp > 2 the embedding and the softmax get a
// device each and the layers share the other lp - 2; with lp <= 2 the layers share lp devices.
// Layer pipelining runs over the unrolled time steps (a wavefront): each stage's per-step
// forward and backward times are simulated as a GPipe pipeline of S "micro-batches". With the
// LM batched over the sequence (LstmBatching::kSequence) the softmax stage's one S·B-row
// softmax and each stage's per-layer weight gradient are spread evenly over the S chunks (the
// stage's span / S), an approximation when pp > 1: the real stage runs them once, after the
// last step reaches it.
#pragma once

#include <map>
#include <tuple>

#include "engine/graph/workload.hpp"
#include "engine/perf/kernel_timer.hpp"
#include "engine/system/mapping.hpp"
#include "engine/train/gpt_training.hpp"
#include "engine/train/training_result.hpp"

namespace pathfinder {

class LstmTraining {
 public:
  LstmTraining(LstmSpec spec, PerfMachine machine, SystemGraph system, Throughput peak_flops,
               TrainingOptions options = {});
  // The strategy must be valid for the spec and the device count (check_strategy).
  [[nodiscard]] TrainingResult evaluate(const Strategy& s);
  // The same into `r`, reusing its storage.
  void evaluate(const Strategy& s, TrainingResult& r);
  [[nodiscard]] const LstmSpec& spec() const { return spec_; }

 private:
  LstmSpec spec_;
  KernelTimer timer_;
  SystemGraph system_;
  Throughput peak_;
  double pace_ = 1.0;  // the job's slowest device's (PerfMachine::job_pace, all devices)
  TrainingOptions options_;
  Flops model_flops_;
};

}  // namespace pathfinder
