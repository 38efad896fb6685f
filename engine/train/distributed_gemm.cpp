#include "engine/train/distributed_gemm.hpp"

#include <array>

#include "engine/core/error.hpp"
#include "engine/core/format.hpp"
#include "engine/system/mapping.hpp"
#include "engine/train/comm_collective.hpp"
#include "engine/train/stage_times.hpp"

namespace pathfinder {
DistributedGemmResult evaluate_distributed_gemm(const GemmSpec& spec, const Strategy& s,
                                                KernelTimer& timer, const SystemGraph& system) {
  GemmPartition part;
  part.split = s.split == KernelSplit::kColumnRow  ? GemmSplit::kColumnRow
               : s.split == KernelSplit::kRowColumn ? GemmSplit::kRowColumn
                                                    : GemmSplit::kNone;
  part.kp1 = s.tp;
  part.kp2 = part.split == GemmSplit::kRowColumn ? s.tp2 : 1;
  const ComputeGraph g = build_gemm_graph(spec, part);
  const Bytes p = bytes_per_element(spec.precision);
  const Bytes mn = static_cast<double>(spec.m) * static_cast<double>(spec.n) * p;
  // Only one dimension communicates: kp1 in CR (reduce-scatter), kp2 in RC (all-gather).
  const bool rc = part.split == GemmSplit::kRowColumn;
  const std::array<ParallelDim, 2> dims{
      ParallelDim{"kp1", part.kp1, rc ? Bytes{} : mn, Collective::kReduceScatter, !rc},
      ParallelDim{"kp2", part.kp2, mn / part.kp1, Collective::kAllGather, rc}};
  const Mapping m = best_mapping(system, dims);
  const double pace = timer.machine().job_pace(s.devices());
  const PlacedComm comm({&m.groups[0], &m.groups[1], nullptr, nullptr, nullptr, nullptr});
  const StageTimes t = stage_times(g, timer, comm, 0.0, 0.0, pace);
  DistributedGemmResult r;
  r.local = *g.kernels().front().gemm;
  r.local_time = timer.time(g.kernels().front());
  KernelTimer::pace(r.local_time, pace);
  r.communication = t.forward.exposed_comm;
  r.time = t.forward.span;
  r.activity = t.forward.activity;
  return r;
}

GemmTraining::GemmTraining(GemmSpec spec, PerfMachine machine, SystemGraph system,
                           Throughput peak_flops)
    : spec_(spec), timer_(std::move(machine)), system_(std::move(system)), peak_(peak_flops) {}

TrainingResult GemmTraining::evaluate(const Strategy& s) {
  PF_ASSERT(s.devices() == system_.devices);
  if (spec_.precision == DataType::kFp4 && !(timer_.machine().fp4_matrix_flops > Throughput{})) {
    // Not a number at another precision's rate: a design without FP4 units cannot run it (every
    // caller: eval, search, explore and study).
    TrainingResult r;
    r.strategy = s;
    r.memory_capacity = timer_.machine().main_memory.capacity;
    r.feasible = false;
    r.reason = "an FP4 GEMM needs FP4 matrix units (core.fp4_throughput_ratio), which this "
               "device lacks";
    return r;
  }
  const DistributedGemmResult g = evaluate_distributed_gemm(spec_, s, timer_, system_);
  TrainingResult r;
  r.strategy = s;
  r.memory_capacity = timer_.machine().main_memory.capacity;
  r.micro_batches = 1;
  r.iteration_time = g.time;
  r.stage_forward = g.time;
  const Time local = g.local_time.device;
  TrainingBreakdown& b = r.breakdown;
  b.compute = local;
  b.tensor_comm = g.communication;
  b.host = g.time - local - g.communication;
  b.work = g.activity;
  r.stages.assign(1, b);
  r.device_busy.assign(1, local + g.communication);
  r.model_flops = flops(2.0 * static_cast<double>(spec_.m) * static_cast<double>(spec_.n) *
                        static_cast<double>(spec_.k));
  r.mfu = r.model_flops / (r.iteration_time * system_.devices * peak_);
  r.job_pace = timer_.machine().job_pace(s.devices());
  r.local_gemm = LocalGemm{g.local, local, g.local_time.intensity()};
  return r;
}

nlohmann::json to_json(const DistributedGemmResult& r, const Strategy& s) {
  return {{"strategy", to_string(s)},
          {"local_gemm", {{"m", r.local.m}, {"n", r.local.n}, {"k", r.local.k}}},
          {"local_s", r.local_time.device.si()},
          {"local_intensity_flop_per_byte", r.local_time.intensity()},
          {"communication_s", r.communication.si()},
          {"time_s", r.time.si()}};
}

std::string format_table(const DistributedGemmResult& r, const Strategy& s) {
  return printf_string("%s: local GEMM %lldx%lldx%lld %s (%.1f FLOP/B), collective %s, total %s\n",
                       to_string(s).c_str(), static_cast<long long>(r.local.m),
                       static_cast<long long>(r.local.n), static_cast<long long>(r.local.k),
                       format_seconds(r.local_time.device.si()).c_str(), r.local_time.intensity(),
                       format_seconds(r.communication.si()).c_str(),
                       format_seconds(r.time.si()).c_str());
}

}  // namespace pathfinder
