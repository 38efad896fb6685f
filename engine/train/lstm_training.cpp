#include "engine/train/lstm_training.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/train/comm_collective.hpp"
#include "engine/parallel/memory_footprint.hpp"
#include "engine/system/collectives.hpp"
#include "engine/train/iteration.hpp"
#include "engine/train/stage_times.hpp"

namespace pathfinder {
namespace {

struct StageRange {
  int first_layer = 0;
  int layers = 0;
  bool embedding = false;
  bool softmax = false;
};

// The reference's layer placement (deepflow-reference.md §3.8).
std::vector<StageRange> stage_ranges(int layers, int lp) {
  std::vector<StageRange> out;
  if (lp > 2) {
    const int per = layers / (lp - 2);
    out.push_back({0, 0, true, false});
    for (int i = 0; i < lp - 2; ++i) out.push_back({i * per, per, false, false});
    out.push_back({0, 0, false, true});
  } else {
    const int per = layers / lp;
    for (int i = 0; i < lp; ++i) out.push_back({i * per, per, i == 0, i == lp - 1});
  }
  return out;
}

}  // namespace

LstmTraining::LstmTraining(LstmSpec spec, PerfMachine machine, SystemGraph system,
                           Throughput peak_flops, TrainingOptions options)
    : spec_(spec),
      timer_(std::move(machine)),
      system_(std::move(system)),
      peak_(peak_flops),
      options_(std::move(options)) {
  if (!options_.graphs) options_.graphs = std::make_shared<GraphCache>();
  // The whole model's graph (key all -1: no partition's), shared like the partitions'.
  const GraphKey whole{-1, -1, -1, -1, -1, -1, -1, -1};
  const WorkloadSpec w{spec_};
  const std::shared_ptr<const ComputeGraph> g =
      options_.graphs->get(whole, [&] { return build_graph(w); });
  model_flops_ = workload_stats(w, *g).flops_per_iteration;
  pace_ = timer_.machine().job_pace(system_.devices);
}

TrainingResult LstmTraining::evaluate(const Strategy& s) {
  TrainingResult r;
  evaluate(s, r);
  return r;
}

void LstmTraining::evaluate(const Strategy& s, TrainingResult& r) {
  PF_ASSERT(s.devices() == system_.devices && spec_.batch % s.dp == 0);
  reset_keeping_storage(r);
  r.strategy = s;
  r.model_flops = model_flops_;
  r.micro_batches = 1;
  r.memory = lstm_memory_footprint(spec_, s);
  r.memory_capacity = timer_.machine().main_memory.capacity;
  if (reject_if_out_of_memory(r, options_.check_memory)) return;
  const bool cr = s.split == KernelSplit::kColumnRow;
  const int kp1 = s.tp, kp2 = cr ? 1 : s.tp2;
  LstmSpec replica = spec_;
  replica.batch = spec_.batch / s.dp;
  const Bytes p = bytes_per_element(spec_.precision);
  const double B = static_cast<double>(replica.batch), D = static_cast<double>(spec_.hidden);
  const double S = static_cast<double>(spec_.sequence);

  // Bytes per iteration in each dimension weigh the mapping's orders (paper §5.2). The
  // gradients are reduced after the last backward step (one bucket), when no kernel or
  // pipeline transfer is under way: the dp groups do not share ports with the others.
  const Bytes gates = S * static_cast<double>(spec_.layers) * B * 4.0 * D * p;
  const double V = static_cast<double>(spec_.vocabulary);
  const Bytes grads = (2.0 * V * D + 8.0 * D * D * static_cast<double>(spec_.layers)) * p /
                       (kp1 * kp2 * s.pp);
  const std::array<ParallelDim, 4> dims{
      ParallelDim{"kp1", kp1, gates / kp2, Collective::kAllGather, true},
      ParallelDim{"kp2", kp2, gates / kp1, Collective::kAllGather, true},
      ParallelDim{"dp", s.dp, grads, Collective::kAllReduce, false},
      ParallelDim{"pp", s.pp, 2.0 * S * B * D * p / (kp1 * kp2), Collective::kSendRecv, true}};
  // Per thread, as `in` below that points into it: its vectors' storage kept.
  thread_local Mapping m;
  best_mapping(system_, dims, m);
  // Mapping dimensions kp1, kp2, dp, pp; CommGroup order tensor, columns, pipeline, data.
  const PlacedComm comm({&m.groups[0], &m.groups[1], &m.groups[3], &m.groups[2], nullptr, nullptr});
  const Time launch = timer_.machine().host.launch_latency;

  // One input per thread, its chunks' storage kept (a search's next design is a new model).
  thread_local IterationInput in;
  std::vector<ChunkCosts> chunks = std::move(in.chunks);
  chunks.clear();
  in = IterationInput{};
  in.chunks = std::move(chunks);
  in.schedule = PipelineSchedule::kGpipe;  // all steps forward, then all steps backward
  in.stages = s.pp;
  in.micro_batches = static_cast<int>(spec_.sequence);
  for (const StageRange& st : stage_ranges(static_cast<int>(spec_.layers), s.pp)) {
    LstmPartition part;
    part.split = cr ? GemmSplit::kColumnRow
                    : (kp1 * kp2 > 1 ? GemmSplit::kRowColumn : GemmSplit::kNone);
    part.kp1 = kp1;
    part.kp2 = kp2;
    part.first_layer = st.first_layer;
    part.layers = st.layers;
    part.embedding = st.embedding;
    part.softmax = st.softmax;
    const GraphKey key{replica.batch, static_cast<int>(part.split), kp1, kp2, part.first_layer,
                       part.layers, part.embedding ? 1 : 0, part.softmax ? 1 : 0};
    const std::shared_ptr<const ComputeGraph> shared =
        options_.graphs->get(key, [&] { return build_lstm_graph(replica, part); });
    const ComputeGraph& g = *shared;
    const StageTimes t = stage_times(g, timer_, comm, options_.tensor_comm_overlap, 0.0, pace_);
    ChunkCosts c;
    c.forward = t.forward.span / S;
    c.backward = t.backward.span / S;
    c.update = std::max(Time{}, t.update.span - launch);
    c.parameters = static_cast<double>(g.parameter_count());
    c.tensor_comm = (t.forward.exposed_comm + t.backward.exposed_comm) / S;
    c.buckets = 1;  // the reference reduces each weight once, after the last backward step
    c.activity.add(t.forward.activity, 1.0 / S);
    c.activity.add(t.backward.activity, 1.0 / S);
    c.step = t.update.activity;
    in.chunks.push_back(c);
  }
  in.send_bytes = B * D * p / (kp1 * kp2);
  in.send = s.pp > 1 ? collective_time(m.groups[3], Collective::kSendRecv, in.send_bytes) : Time{};
  in.pipeline_group = &m.groups[3];
  in.data_group = &m.groups[2];
  in.dp = s.dp;
  in.zero = s.zero;
  in.overlap_data_parallel = options_.overlaps_gradient_reduction(s.zero);
  in.zero_all_reduce = options_.zero_all_reduce;
  in.gradient_bytes = p;
  in.parameter_bytes = p;
  in.input_bytes = bytes(8.0 * B * S);  // token ids and labels
  in.host = timer_.machine().host;
  // One scratch per thread, as GptTraining's: a search's next design is a new model, and the
  // pipeline results the scratch keeps are pure functions of their inputs.
  thread_local IterationScratch scratch;
  assemble_iteration(in, r, &scratch);
  r.mfu = r.model_flops / (r.iteration_time * system_.devices * peak_);
  r.job_pace = pace_;
  r.tokens_per_second = static_cast<double>(spec_.batch) * S / r.iteration_time.si();
}

}  // namespace pathfinder
