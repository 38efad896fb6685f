#include "engine/train/gpt_training.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "engine/core/error.hpp"
#include "engine/train/pipeline_schedule.hpp"

namespace pathfinder {
namespace {

Collective collective_of(CommKind k) {
  switch (k) {
    case CommKind::kAllReduce: return Collective::kAllReduce;
    case CommKind::kReduceScatter: return Collective::kReduceScatter;
    case CommKind::kAllGather: return Collective::kAllGather;
    case CommKind::kSendRecv: return Collective::kSendRecv;
  }
  return Collective::kAllReduce;
}

// The tensor group's collectives on its placement.
class GroupComm final : public CommTimes {
 public:
  explicit GroupComm(const GroupPlacement& g) : g_(g) {}
  [[nodiscard]] double time(const Communication& c) const override {
    return collective_time(g_, collective_of(c.kind), c.bytes.si());
  }

 private:
  const GroupPlacement& g_;
};

// Megatron's model FLOPs per iteration without recomputation (Narayanan et al. 2021, eq. 3).
double megatron_flops(const GptSpec& w) {
  const double B = static_cast<double>(w.global_batch), s = static_cast<double>(w.sequence),
               l = static_cast<double>(w.layers), h = static_cast<double>(w.hidden),
               V = static_cast<double>(w.vocabulary);
  return 72.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * l * h));
}

// A part's pass time with the one launch latency it starts with removed, so parts chain.
double chained(const PassTimes& p, double launch) { return std::max(0.0, p.span - launch); }

}  // namespace

GptTraining::GptTraining(GptSpec spec, PerfMachine machine, SystemGraph system,
                         double peak_flops, TrainingOptions options)
    : spec_(std::move(spec)),
      timer_(std::move(machine)),
      system_(std::move(system)),
      peak_(peak_flops),
      options_(options) {}

const Mapping& GptTraining::mapping(const Strategy& s) {
  const auto key = std::make_tuple(s.tp, s.dp, s.pp);
  auto it = mappings_.find(key);
  if (it != mappings_.end()) return it->second;
  // Bytes each member moves per iteration in each dimension weigh the orders (paper §5.2):
  // tensor-parallel all-reduces of the activations, 4 per layer and micro-batch on the
  // stage's layers; the stage's gradients once; activations to the next stage per micro-batch.
  const double p = bytes_per_element(spec_.precision).si();
  const double micro = static_cast<double>(spec_.global_batch) / (s.dp * s.micro_batch);
  const double act =
      static_cast<double>(s.micro_batch * spec_.sequence * spec_.hidden) * p;
  const double stage_layers = static_cast<double>(spec_.layers) / s.pp;
  const double params = 12.0 * static_cast<double>(spec_.hidden * spec_.hidden) * stage_layers /
                        s.tp;
  const std::array<ParallelDim, 3> dims{
      ParallelDim{"tp", s.tp, 4.0 * act * stage_layers * micro, Collective::kAllReduce, true},
      ParallelDim{"dp", s.dp, params * p, Collective::kAllReduce, true},
      ParallelDim{"pp", s.pp, 2.0 * act / s.tp * micro, Collective::kSendRecv, true}};
  return mappings_.emplace(key, best_mapping(system_, dims)).first->second;
}

const GptTraining::Parts& GptTraining::parts(const Strategy& s, const Mapping& m) {
  const auto key = std::make_tuple(s.tp, s.sequence_parallel ? 1 : 0,
                                   static_cast<int>(s.recompute), s.micro_batch, s.dp, s.pp);
  auto it = parts_.find(key);
  if (it != parts_.end()) return it->second;
  GptSpec w = spec_;
  w.micro_batch = s.micro_batch;
  const GroupComm comm(m.groups[0]);
  const auto part = [&](int layers, bool embedding, bool head, double& params) {
    GptPartition p;
    p.tensor = s.tp;
    p.sequence_parallel = s.sequence_parallel;
    p.recompute = s.recompute;
    p.layers = layers;
    p.embedding = embedding;
    p.head = head;
    const ComputeGraph g = build_gpt_graph(w, p);
    params = static_cast<double>(g.parameter_count());
    return stage_times(g, timer_, comm);
  };
  Parts parts;
  parts.layer = part(1, false, false, parts.layer_parameters);
  parts.embedding = part(0, true, false, parts.embedding_parameters);
  parts.head = part(0, false, true, parts.head_parameters);
  return parts_.emplace(key, std::move(parts)).first->second;
}

TrainingResult GptTraining::evaluate(const Strategy& s) {
  PF_ASSERT(s.devices() == system_.devices && s.micro_batch > 0);
  TrainingResult r;
  r.strategy = s;
  r.memory = gpt_memory_footprint(spec_, s);
  r.memory_capacity = timer_.machine().main_memory.capacity;
  r.model_flops = megatron_flops(spec_);
  r.micro_batches = spec_.global_batch / (static_cast<std::int64_t>(s.dp) * s.micro_batch);
  if (r.memory.total().si() > r.memory_capacity) {
    r.feasible = false;
    r.reason = "needs " + std::to_string(r.memory.total().si() / 1e9) + " GB per device (stage " +
               std::to_string(r.memory.stage) + "), has " +
               std::to_string(r.memory_capacity / 1e9) + " GB";
    return r;
  }

  const Mapping& m = mapping(s);
  const Parts& pt = parts(s, m);
  const HostSpec& host = timer_.machine().host;
  const double launch = host.launch_latency.si();

  // Chunks: pp·v, each layers/(pp·v) layers; the embedding on the first, the head on the last.
  const int v = s.schedule == PipelineSchedule::kInterleaved ? s.virtual_stages : 1;
  const int chunks = s.pp * v;
  const double layers = static_cast<double>(spec_.layers) / chunks;
  PipelineInput in;
  in.schedule = s.schedule;
  in.stages = s.pp;
  in.chunks = v;
  in.micro_batches = static_cast<int>(r.micro_batches);
  const double p = bytes_per_element(spec_.precision).si();
  // Activations between stages, split over the tensor group (Megatron's scatter-gather).
  const double send_bytes =
      static_cast<double>(s.micro_batch * spec_.sequence * spec_.hidden) * p / s.tp;
  const double send = s.pp > 1 ? collective_time(m.groups[2], Collective::kSendRecv, send_bytes)
                               : 0.0;
  std::vector<double> chunk_update(static_cast<std::size_t>(chunks), 0.0);
  std::vector<double> chunk_params(static_cast<std::size_t>(chunks), 0.0);
  std::vector<double> chunk_tp_comm(static_cast<std::size_t>(chunks), 0.0);
  for (int c = 0; c < chunks; ++c) {
    const bool first = c == 0, last = c == chunks - 1;
    const auto cu = static_cast<std::size_t>(c);
    double f = layers * chained(pt.layer.forward, launch);
    double b = layers * chained(pt.layer.backward, launch);
    double u = layers * chained(pt.layer.update, launch);
    double tpc = layers * (pt.layer.forward.exposed_comm + pt.layer.backward.exposed_comm);
    chunk_params[cu] = layers * pt.layer_parameters;
    if (first) {
      f += chained(pt.embedding.forward, launch);
      b += chained(pt.embedding.backward, launch);
      u += chained(pt.embedding.update, launch);
      tpc += pt.embedding.forward.exposed_comm + pt.embedding.backward.exposed_comm;
      chunk_params[cu] += pt.embedding_parameters;
    }
    if (last) {
      f += chained(pt.head.forward, launch);
      b += chained(pt.head.backward, launch);
      u += chained(pt.head.update, launch);
      tpc += pt.head.forward.exposed_comm + pt.head.backward.exposed_comm;
      chunk_params[cu] += pt.head_parameters;
    }
    in.forward.push_back(f + launch);
    in.backward.push_back(b + launch);
    in.send_forward.push_back(send);
    in.send_backward.push_back(send);
    chunk_update[cu] = u;
    chunk_tp_comm[cu] = tpc;
  }
  r.stage_forward = in.forward.front();
  r.stage_backward = in.backward.front();
  const PipelineResult pipe = simulate_pipeline(in);
  r.device_busy = pipe.busy;

  // Per device: gradient reduction of its chunks' buckets (one layer each) on the data-parallel
  // port as they become ready, then the optimizer step and (ZeRO) the parameter all-gather.
  const GroupPlacement& dpg = m.groups[1];
  const double grad_bytes = p;  // gradients in the training precision
  double finish = 0.0;
  for (int d = 0; d < s.pp; ++d) {
    double port = 0.0, end = 0.0, update = 0.0, gather = 0.0, params = 0.0;
    for (int local = v - 1; local >= 0; --local) {  // the last chunk's backward finishes first
      const int c = local * s.pp + d;
      const auto cu = static_cast<std::size_t>(c);
      end = std::max(end, pipe.last_backward[cu]);
      update += chunk_update[cu];
      params += chunk_params[cu];
      if (s.dp == 1) continue;
      const int buckets = std::max(1, static_cast<int>(std::lround(layers)));
      const double bucket = chunk_params[cu] * grad_bytes / buckets;
      const double t0 = pipe.last_backward_start[cu], t1 = pipe.last_backward[cu];
      // ZeRO reduce-scatters the gradients (each replica keeps its shard), else all-reduce.
      const double t = collective_time(
          dpg, s.zero >= 1 ? Collective::kReduceScatter : Collective::kAllReduce, bucket);
      for (int k = 0; k < buckets; ++k) {
        const double ready = options_.overlap_data_parallel ? t0 + (t1 - t0) * (k + 1) / buckets
                                                            : t1;
        port = std::max(port, ready) + t;
      }
    }
    if (s.dp > 1 && s.zero >= 1) {
      // The optimizer updates 1/dp of the parameters, then every replica gathers them back.
      update /= s.dp;
      gather = collective_time(dpg, Collective::kAllGather, params * p);
    }
    const double reduced = std::max(end, port);
    const double total = reduced + update + gather;
    if (total > finish) {
      finish = total;
      r.critical_stage = d;
      TrainingBreakdown& bd = r.breakdown;
      const auto du = static_cast<std::size_t>(d);
      double tpc = 0.0;
      for (int local = 0; local < v; ++local) {
        tpc += chunk_tp_comm[static_cast<std::size_t>(local * s.pp + d)];
      }
      bd.tensor_comm = tpc * static_cast<double>(r.micro_batches);
      bd.compute = pipe.busy[du] - bd.tensor_comm;
      bd.data_comm = reduced - end + gather;
      bd.optimizer = update;
      // Idle inside the pipeline: waiting on neighbours' transfers or in fill and drain.
      const double idle = end - pipe.busy[du];
      bd.pipeline_comm =
          s.pp > 1 ? std::min(idle, 2.0 * send * static_cast<double>(r.micro_batches)) : 0.0;
      bd.pipeline_bubble = idle - bd.pipeline_comm;
    }
  }
  // Host: the first micro-batch's inputs cross the host link; the iteration synchronises once.
  const double h2d = host.host_to_device.si();
  const double input = h2d > 0.0 ? 8.0 * static_cast<double>(s.micro_batch * spec_.sequence) / h2d
                                 : 0.0;
  r.breakdown.host = input + host.synchronize.si() + host.iteration.si();
  r.iteration_time = finish + r.breakdown.host;
  r.mfu = r.model_flops / (r.iteration_time * system_.devices * peak_);
  r.tokens_per_second =
      static_cast<double>(spec_.global_batch * spec_.sequence) / r.iteration_time;
  return r;
}

}  // namespace pathfinder
