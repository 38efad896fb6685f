// Data-parallel training of any workload graph (issue 4): each of dp replicas runs the graph
// on its share of the batch; gradients are all-reduced over the data-parallel group bucket by
// bucket (one bucket per optimizer parameter group) as the backward pass produces them, one
// collective at a time on the port, and the optimizer step waits for the last. GPT workloads
// with tensor and pipeline parallelism go through gpt_training.hpp instead.
#pragma once

#include <string>

#include "engine/graph/workload.hpp"
#include "engine/perf/graph_timing.hpp"
#include "engine/system/system_graph.hpp"

namespace pathfinder {

struct DataParallelResult {
  GraphTiming replica;           // one replica's iteration on its share of the batch
  double reduction = 0.0;        // all gradient collectives, back to back
  double exposed_reduction = 0.0;  // what the backward pass does not hide
  double iteration_time = 0.0;
};

// The workload one replica runs: LSTM batch / dp, GEMM rows / dp. Engine bug (PF_ASSERT) for
// a GPT spec or a dp that does not divide.
[[nodiscard]] WorkloadSpec replica_spec(const WorkloadSpec& spec, int dp);

[[nodiscard]] DataParallelResult evaluate_data_parallel(const Workload& w, int dp,
                                                        KernelTimer& timer,
                                                        const SystemGraph& system,
                                                        bool overlap = true);

}  // namespace pathfinder
