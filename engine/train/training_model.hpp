// One training iteration of any workload under any strategy on one micro-architecture: the
// single entry point `eval`, the design evaluator and the study runner share. The workload's
// kind chooses the model once, here: GPT (gpt_training.hpp), the paper's LSTM
// (lstm_training.hpp) or one distributed GEMM (distributed_gemm.hpp). Evaluating on one device
// is no separate model: it is the trivial strategy on a one-device system.
//
// A model memoizes what strategies share (a GPT's per-layer times, placements), so one model
// evaluates many strategies of one design cheaply; it is not thread-safe (one per thread).
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "engine/arch/arch_spec.hpp"
#include "engine/arch/device_cost.hpp"
#include "engine/arch/device_power.hpp"
#include "engine/arch/micro_arch.hpp"
#include "engine/parallel/strategy.hpp"
#include "engine/graph/workload.hpp"
#include "engine/train/distributed_gemm.hpp"
#include "engine/train/gpt_training.hpp"
#include "engine/train/lstm_training.hpp"
#include "engine/train/training_result.hpp"

namespace pathfinder {

// The strategy of one device: no tensor, pipeline or data parallelism, the workload's own
// micro-batch (GPT) and the grammar's defaults otherwise -- what `eval --devices 1` completes
// an unwritten strategy to (complete_strategy).
[[nodiscard]] Strategy trivial_strategy(const WorkloadSpec& w);
// Marks `a` infeasible, with the reason, when the workload's own operands need matrix units it
// lacks: a GEMM in FP4 on a device without FP4 units (core.fp4_throughput_ratio 0).
void reject_unsupported_operands(const WorkloadSpec& w, MicroArch& a);

class TrainingModel {
 public:
  // `arch` must be feasible; `devices` is the system's size, which every strategy evaluated
  // must fill (check_strategy).
  TrainingModel(const ArchSpec& spec, const MicroArch& arch, const WorkloadSpec& w, int devices,
                TrainingOptions options = {});
  [[nodiscard]] TrainingResult evaluate(const Strategy& s);
  // The same into `r`, reusing its storage: a warm GPT evaluation allocates nothing.
  void evaluate(const Strategy& s, TrainingResult& r);
  // A lower bound of evaluate(s).iteration_time (GPT: gpt_training.hpp; 0 for the workloads
  // timed without a pipeline, the LSTM and one GEMM), or nullopt when s does not fit in memory
  // (with the memory check on): evaluate(s) would be infeasible.
  [[nodiscard]] std::optional<Time> lower_bound(const Strategy& s);
  // Whether the stack runs `s` and it fits in memory (with the memory check on): lower_bound's
  // test before it times anything.
  [[nodiscard]] bool fits(const Strategy& s) const;
  // Why the software stack cannot run `s` (evaluate(s)'s reason then); empty when it can.
  [[nodiscard]] std::string refusal(const Strategy& s) const;
  // `s` into r and, for a GPT workload's feasible result, its iteration as a timeline
  // (timeline.hpp); nullopt for the workloads timed without one (the paper's LSTM, one GEMM).
  [[nodiscard]] std::optional<Timeline> timeline(const Strategy& s, TrainingResult& r);
  // A GPT workload's one layer as timed for `s` (GptTraining::layer_kernels); nullopt for the
  // others.
  [[nodiscard]] std::optional<GptTraining::LayerKernels> layer_kernels(const Strategy& s);

 private:
  std::variant<GptTraining, LstmTraining, GemmTraining> model_;
  DevicePower power_;
  DeviceCost cost_;
  int devices_ = 1;
  ParallelismSupport support_;  // the software profile's (TrainingOptions::parallelism)
  std::string software_;
};

// One evaluation without keeping the model: `s` on s->devices() devices, or, without a
// strategy, the trivial strategy on one device.
[[nodiscard]] TrainingResult evaluate_training(const ArchSpec& spec, const MicroArch& arch,
                                               const WorkloadSpec& w,
                                               const std::optional<Strategy>& s,
                                               const TrainingOptions& options = {});

}  // namespace pathfinder
