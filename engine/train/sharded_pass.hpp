// One micro-batch's forward or backward pass over a chunk's layers with ZeRO stage 3 /
// fully sharded data parallelism: each layer's parameters live sharded over the data-parallel
// group and are all-gathered before the layer runs, on every micro-batch and in both passes,
// then freed; each layer's gradients are reduce-scattered after its backward, on every
// micro-batch (Rajbhandari et al. 2020, "ZeRO", §5.3 and §7; Zhao et al. 2023, "PyTorch FSDP",
// VLDB, §3-4; DeepSpeed stage 3 reduce-scatters every micro-batch, as FSDP without no_sync).
//
// Two streams per device, in issue order:
//   compute  layer i starts when layer i-1 has ended and its own gather has arrived;
//   comm     one stream for gathers and reduce-scatters. FSDP issues them on separate CUDA
//            streams, but both cross the same data-parallel links, so together they take the
//            sum of their times: one in-order stream models that. The gather of layer i+1 is
//            issued when layer i's compute starts, one layer ahead: in the backward FSDP's
//            default BACKWARD_PRE prefetch; in the forward the host runs ahead of the device
//            and its rate limiter (limit_all_gathers, default on) holds the gathers to one
//            layer ahead (forward_prefetch makes that explicit). Layer i's reduce-scatter is
//            issued when its compute ends.
// So the first gather is always exposed, the last reduce-scatter too, and in between the pass
// takes max(compute chain, comm chain) roughly. With full recomputation the backward's gather
// serves the recomputed forward as well (FSDP's pre-backward unshard precedes the checkpointed
// forward's re-run; one gather per layer per backward). The pass ends when both streams are
// idle; the next pass on the device starts from idle streams (its first gather would queue
// behind the reduce-scatter in flight on the same stream anyway). While the communication
// stream runs beside a layer's compute it holds SMs the compute then lacks: each second of that
// overlap lengthens the compute by `contention` seconds (collective_contention, stage_times.hpp).
// Fixed-size state, no allocation: it runs in the evaluator's per-chunk loop.
#pragma once

#include "engine/core/units.hpp"

namespace pathfinder {

class ShardedPass {
 public:
  explicit ShardedPass(double contention = 0.0) : contention_(contention) {}
  // The next layer in execution order (forward: first to last; backward: last to first):
  // its parameters' all-gather, its kernels, its gradients' reduce-scatter (0 in a forward).
  void layer(Time gather, Time compute, Time reduce_scatter = Time{});
  // From the pass's start (both streams idle) to both streams idle again.
  [[nodiscard]] Time span() const;
  [[nodiscard]] Time compute() const { return compute_sum_; }
  // What the communication adds to the compute chain.
  [[nodiscard]] Time exposed() const { return span() - compute_sum_; }

 private:
  Time comm_free_;      // when the communication stream has drained what was issued
  Time compute_start_;  // the latest layer's compute start and end
  Time compute_end_;
  Time pending_;        // the latest layer's reduce-scatter, issued at compute_end_
  Time compute_sum_;
  double contention_ = 0.0;
  bool first_ = true;
  // The latest layer's compute end once the communication beside it, up to `comm_end`, has
  // slowed it.
  [[nodiscard]] Time contended_end(Time comm_end) const;
};

}  // namespace pathfinder
