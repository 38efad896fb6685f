#include "engine/train/iteration.hpp"

#include <algorithm>

#include "engine/core/format.hpp"
#include "engine/system/collectives.hpp"

namespace pathfinder {

bool reject_if_out_of_memory(TrainingResult& r, bool check) {
  if (!check || r.memory.total() <= r.memory_capacity) return false;
  r.feasible = false;
  r.reason = printf_string("needs %.2f GB per device (stage %d), has %.2f GB",
                           r.memory.total().si() / 1e9, r.memory.stage,
                           r.memory_capacity.si() / 1e9);
  return true;
}

namespace {

// When a bucket started at `start` ends: a fluid transfer doing 1/shared of itself per second
// until `until`, 1/full after (shared >= full).
Time fluid_end(Time start, Time full, Time shared, Time until) {
  if (start >= until) return start + full;
  if (start + shared <= until) return start + shared;
  return until + (1.0 - (until - start) / shared) * full;
}

// Micro-batches through each chunk: all of them, or DualPipe's half per direction.
double micro_batches_per_chunk(const IterationInput& in) {
  const double micro = static_cast<double>(in.micro_batches);
  return in.schedule == PipelineSchedule::kDualPipe ? 0.5 * micro : micro;
}

// The host's share: the first micro-batch's inputs over the host link, one synchronisation,
// the fixed per-iteration work.
Time host_time(const IterationInput& in) {
  const Bandwidth h2d = in.host.host_to_device;
  return (h2d > Bandwidth{} ? in.input_bytes / h2d : Time{}) + in.host.synchronize +
         in.host.iteration;
}

}  // namespace

void fill_pipeline_input(const IterationInput& in, PipelineInput& pi) {
  const int P = in.stages;
  pi.schedule = in.schedule;
  pi.stages = P;
  pi.chunks = in.chunks_per_stage;
  pi.micro_batches = in.micro_batches;
  pi.forward.clear();
  pi.backward.clear();
  pi.weight_gradients.clear();
  pi.send_forward.clear();
  pi.send_backward.clear();
  for (const ChunkCosts& c : in.chunks) {
    pi.forward.push_back(c.forward);
    pi.backward.push_back(c.backward);
    pi.weight_gradients.push_back(c.weight_gradients);
    pi.send_forward.push_back(P > 1 ? in.send : Time{});
    pi.send_backward.push_back(P > 1 ? in.send : Time{});
  }
}

Time iteration_lower_bound(const IterationInput& in) {
  const int P = in.stages, v = in.chunks_per_stage;
  const double per_chunk = micro_batches_per_chunk(in);
  const bool dual = in.schedule == PipelineSchedule::kDualPipe;  // no fill counted: its bubble
  const Time send = P > 1 ? in.send : Time{};
  Time way, bound;  // way: chunks 0 .. d-1 there and back, with their sends
  for (int d = 0; d < P; ++d) {
    Time work;
    for (int local = 0; local < v; ++local) {
      const ChunkCosts& c = in.chunks[static_cast<std::size_t>(local * P + d)];
      work += c.forward + c.backward;
    }
    bound = std::max(bound, (dual ? Time{} : way) + per_chunk * work);
    const ChunkCosts& first = in.chunks[static_cast<std::size_t>(d)];
    way += first.forward + first.backward + 2.0 * send;
  }
  return bound + host_time(in);
}

void assemble_iteration(const IterationInput& in, TrainingResult& r, IterationScratch* scratch) {
  const int P = in.stages, v = in.chunks_per_stage;
  IterationScratch own;
  IterationScratch& s = scratch != nullptr ? *scratch : own;
  PipelineInput& pi = s.pipeline;
  fill_pipeline_input(in, pi);
  r.stage_forward = in.chunks.front().forward;
  r.stage_backward = in.chunks.front().backward;
  simulate_pipeline(pi, s.simulation, s.result);
  const PipelineResult& pipe = s.result;
  r.device_busy.resize(pipe.busy.size());
  for (std::size_t d = 0; d < pipe.busy.size(); ++d) r.device_busy[d] = pipe.busy[d];
  const double micro = static_cast<double>(in.micro_batches);
  const double per_chunk = micro_batches_per_chunk(in);
  const bool dual = in.schedule == PipelineSchedule::kDualPipe;
  const bool reduce = in.data_group != nullptr && in.dp > 1;

  // Per device: its chunks' buckets reduced on the data-parallel port as they become ready
  // (ZeRO reduce-scatters, else all-reduce), then the optimizer step over its share and (ZeRO
  // 1-2) the gather of the updated parameters. ZeRO-3 reduced inside the chunks' passes.
  const bool buckets_after = reduce && !in.sharded;
  const GroupPlacement* shared_group =
      in.data_group_shared != nullptr ? in.data_group_shared : in.data_group;
  const Collective kind = in.zero >= 1 && !in.zero_all_reduce ? Collective::kReduceScatter
                                                               : Collective::kAllReduce;
  const GroupPlacement* experts_group =
      in.expert_data_group != nullptr ? in.expert_data_group : in.data_group;
  Time finish;
  // Reused from an earlier evaluation into the same result: no allocation once sized.
  r.stages.assign(static_cast<std::size_t>(P), TrainingBreakdown{});
  r.critical_stage = 0;
  for (int d = 0; d < P; ++d) {
    Time port, end, update, gather, tpc, dpc, outside, sync;
    Time beside;  // the reduction's time beside the last backward
    double params = 0.0, experts = 0.0, quantized = 0.0;
    Activity work, step;  // this device's, over the iteration
    for (int local = 0; local < v; ++local) {
      const auto cu = static_cast<std::size_t>(local * P + d);
      end = std::max(end, pipe.last_backward[cu]);
    }
    for (int local = v - 1; local >= 0; --local) {  // the last chunk's backward finishes first
      const auto cu = static_cast<std::size_t>(local * P + d);
      const ChunkCosts& c = in.chunks[cu];
      update += c.update;
      params += c.parameters;
      experts += c.expert_parameters;
      quantized += c.quantized_parameters;
      tpc += c.tensor_comm;
      dpc += c.data_comm;
      outside += c.outside_layers;
      sync += c.sync;
      work.add(c.activity, per_chunk);
      step.add(c.step);
      if (P > 1 && in.pipeline_group != nullptr) {
        // Activations forward from every chunk but the model's last, gradients back from every
        // chunk but its first.
        // (DualPipe's second chunk on device d is stage P - 1 - d, running the other way.)
        const int index = dual ? (local == 0 ? d : P - 1 - d) : local * P + d;
        const int last = dual ? P - 1 : P * v - 1;
        const double sends = (index != last ? 1.0 : 0.0) + (index != 0 ? 1.0 : 0.0);
        work.add_link_bytes(link_bytes(*in.pipeline_group, Collective::kSendRecv, in.send_bytes),
                            per_chunk * sends);
      }
      if (!buckets_after) continue;
      work.add_link_bytes(link_bytes(*in.data_group, kind,
                                     (c.parameters - c.expert_parameters) * in.gradient_bytes));
      work.add_link_bytes(link_bytes(*experts_group, kind, c.expert_parameters * in.gradient_bytes));
      const int buckets = std::max(1, c.buckets);
      const Bytes bytes = (c.parameters - c.expert_parameters) * in.gradient_bytes / buckets;
      // The experts' share over their own group, after the bucket's dense share.
      const Bytes expert_bytes = c.expert_parameters * in.gradient_bytes / buckets;
      const Time te =
          expert_bytes > Bytes{} ? collective_time(*experts_group, kind, expert_bytes) : Time{};
      const Time t = collective_time(*in.data_group, kind, bytes) + te;
      // Sharing the ports is never faster than having them alone.
      const Time ts =
          in.overlap_data_parallel
              ? std::max(t, collective_time(*shared_group, kind, bytes) + te)
              : t;
      const Time t0 = pipe.last_backward_start[cu];
      const Time t1 = pipe.last_backward[cu];
      if (!in.overlap_data_parallel) {
        // After the backward: every bucket ready at its end, nothing beside it.
        for (int k = 0; k < buckets; ++k) port = fluid_end(std::max(port, end), t, ts, end);
        continue;
      }
      for (int k = 0; k < buckets; ++k) {
        const Time start = std::max(port, t0 + (t1 - t0) * (k + 1) / buckets);
        port = fluid_end(start, t, ts, end);
        if (start < end) beside += std::min(port, end) - start;
      }
    }
    if (reduce && in.zero >= 1) {
      // Each member updates its 1/dp share: the step's kernels shrink with it.
      update /= in.dp;
      const double share = 1.0 / in.dp;
      step.core *= share;
      step.on_chip *= share;
      step.main_memory *= share;
    }
    if (buckets_after && in.zero >= 1) {
      // Quantized weights (the routed experts' all of them) gathered at their own size.
      const Bytes expert_bytes = quantized > 0.0 ? in.quantized_parameter_bytes : in.parameter_bytes;
      const Bytes dense = (params - experts) * in.parameter_bytes +
                          std::max(0.0, quantized - experts) *
                              (in.quantized_parameter_bytes - in.parameter_bytes);
      gather = collective_time(*in.data_group, Collective::kAllGather, dense) +
               collective_time(*experts_group, Collective::kAllGather, experts * expert_bytes);
      work.add_link_bytes(link_bytes(*in.data_group, Collective::kAllGather, dense));
      work.add_link_bytes(
          link_bytes(*experts_group, Collective::kAllGather, experts * expert_bytes));
    }
    // The backward beside the reduction ran on the SMs the collective left it.
    const Time reduced = std::max(end + beside * in.contention, port);
    // Megatron's step: the tied embedding's gradients, then the gradient norm (clipping) and
    // the overflow check, then the update (and ZeRO's gather).
    const Time synced = sync + in.gradient_norm;
    const Time total = reduced + synced + update + gather;
    const auto du = static_cast<std::size_t>(d);
    TrainingBreakdown& b = r.stages[du];
    b.work = work;
    b.step = step;
    b.tensor_comm = tpc * per_chunk;
    const Time sharded_comm = dpc * per_chunk;
    const Time busy = pipe.busy[du];
    b.embedding_head = outside * per_chunk;
    b.compute = busy - b.tensor_comm - sharded_comm - b.embedding_head;
    b.data_comm = reduced - end + gather + sharded_comm;
    b.gradient_sync = synced;
    b.optimizer = update;
    // Idle inside the pipeline: waiting on neighbours' transfers, or in the fill and drain
    // (rounding can leave +-1e-16 when the stage never waits: below 1e-12 of the stage's time
    // it is none).
    const Time gap = end - busy;
    const Time idle = gap > 1e-12 * end ? gap : Time{};
    b.pipeline_comm = P > 1 ? std::min(idle, 2.0 * in.send * micro) : Time{};
    b.pipeline_bubble = idle - b.pipeline_comm;
    // The device's own end of the step; the host part follows below.
    b.host = total;
    if (total <= finish) continue;
    finish = total;
    r.critical_stage = d;
  }
  // Host: the first micro-batch's inputs cross the host link; the iteration synchronises once.
  // Every stage waits for the slowest before the next iteration's first forward (the host's
  // synchronisation): the wait is idle, counted as bubble, so each stage sums to the iteration.
  const Time host = host_time(in);
  for (TrainingBreakdown& b : r.stages) {
    b.pipeline_bubble += finish - b.host;
    b.host = host;
  }
  r.breakdown = r.stages[static_cast<std::size_t>(r.critical_stage)];
  r.iteration_time = finish + host;
}

}  // namespace pathfinder
