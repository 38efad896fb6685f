#include "engine/train/data_parallel.hpp"

#include <algorithm>
#include <utility>
#include <variant>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/system/collectives.hpp"
#include "engine/system/group_placement.hpp"

namespace pathfinder {

WorkloadSpec replica_spec(const WorkloadSpec& spec, int dp) {
  return std::visit(
      [dp](auto s) -> WorkloadSpec {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, LstmSpec>) {
          PF_ASSERT(s.batch % dp == 0);
          s.batch /= dp;
        } else if constexpr (std::is_same_v<S, GemmSpec>) {
          PF_ASSERT(s.m % dp == 0);
          s.m /= dp;
        } else {
          PF_ASSERT(false);  // GPT: gpt_training.hpp
        }
        return s;
      },
      spec);
}

DataParallelResult evaluate_data_parallel(const Workload& w, int dp, KernelTimer& timer,
                                          const SystemGraph& system, bool overlap) {
  const Workload replica = make_workload(w.name, replica_spec(w.spec, dp));
  DataParallelResult r;
  r.replica = time_workload(replica, timer);
  r.iteration_time = r.replica.iteration_time;
  if (dp == 1) return r;
  // Buckets: each optimizer kernel's parameters, ready when the last kernel producing their
  // gradient ends (its dependencies), in the order they become ready.
  const auto* lstm = std::get_if<LstmSpec>(&w.spec);
  if (lstm == nullptr) return r;  // a lone GEMM has no gradients
  const double per_param_read = update_cost(lstm->optimizer, lstm->precision).bytes_read;
  const double grad_bytes = bytes_per_element(lstm->precision).si();
  std::vector<std::pair<double, double>> buckets;  // (ready, bytes)
  const auto& kernels = replica.graph.kernels();
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const Kernel& k = kernels[i];
    if (k.phase != Phase::kUpdate) continue;
    double ready = 0.0;
    for (const KernelId d : k.deps) ready = std::max(ready, r.replica.kernels[d].end);
    buckets.emplace_back(overlap ? ready : r.replica.micro_batch_span,
                         k.bytes_read.si() / per_param_read * grad_bytes);
  }
  std::sort(buckets.begin(), buckets.end());
  const GroupPlacement g = place_group(system, dp, 1);
  double port = 0.0;
  for (const auto& [ready, bytes] : buckets) {
    const double t = collective_time(g, Collective::kAllReduce, bytes);
    r.reduction += t;
    port = std::max(port, ready) + t;
  }
  r.exposed_reduction = std::max(0.0, port - r.replica.micro_batch_span);
  r.iteration_time += r.exposed_reduction;
  return r;
}

}  // namespace pathfinder
