// One GEMM distributed by the paper's kernel parallelism (RC / CR) over a kernel group (the
// paper's Fig. 1 unit): the local product on each device, then the group's collective.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine/parallel/strategy.hpp"
#include "engine/graph/workload.hpp"
#include "engine/perf/kernel_timer.hpp"
#include "engine/system/system_graph.hpp"
#include "engine/train/training_result.hpp"

namespace pathfinder {

struct DistributedGemmResult {
  GemmShape local;          // each device's product
  KernelTime local_time;    // its roofline timing (intensity: FLOP per main-memory byte)
  Time communication;       // the collective after it
  Time time;                // launch, product and collective
  Activity activity;        // one device's: the product's energy, the collective's bytes
};

// The strategy's split and kp1 x kp2 must match the device count (check_strategy).
[[nodiscard]] DistributedGemmResult evaluate_distributed_gemm(const GemmSpec& spec,
                                                              const Strategy& s,
                                                              KernelTimer& timer,
                                                              const SystemGraph& system);

// The distributed GEMM as a training result (training_model.hpp): one call is the iteration --
// launch, local product and collective, no optimizer and no per-iteration host costs (a GEMM
// benchmark times the call alone). Breakdown: compute is the local product's device time,
// tensor_comm the collective, host the launch latency.
class GemmTraining {
 public:
  // `peak_flops`: one device's dense peak (MFU's denominator).
  GemmTraining(GemmSpec spec, PerfMachine machine, SystemGraph system, Throughput peak_flops);
  // The strategy's split and kp1 x kp2 must fill the system (check_strategy).
  [[nodiscard]] TrainingResult evaluate(const Strategy& s);

 private:
  GemmSpec spec_;
  KernelTimer timer_;
  SystemGraph system_;
  Throughput peak_;
};

[[nodiscard]] nlohmann::json to_json(const DistributedGemmResult& r, const Strategy& s);
[[nodiscard]] std::string format_table(const DistributedGemmResult& r, const Strategy& s);

}  // namespace pathfinder
