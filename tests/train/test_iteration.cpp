// The iteration from per-chunk costs (engine/train/iteration.hpp): the lower bound the
// strategy search prunes with, against the simulated iteration it bounds.
#include <catch2/catch.hpp>

#include "engine/core/units.hpp"
#include "engine/system/collectives.hpp"
#include "engine/train/iteration.hpp"
#include "tests/train/train_fixtures.hpp"

namespace pathfinder {
namespace {

// `stages` chunks, one per device, with these per-micro-batch passes; `send` each way between
// neighbours; the host's per-iteration costs only.
IterationInput pipeline(PipelineSchedule schedule, const std::vector<std::pair<double, double>>& passes,
                        int micro_batches, double send) {
  IterationInput in;
  in.schedule = schedule;
  in.stages = static_cast<int>(passes.size());
  in.micro_batches = micro_batches;
  for (const auto& [f, b] : passes) {
    ChunkCosts c;
    c.forward = seconds(f);
    c.backward = seconds(b);
    in.chunks.push_back(c);
  }
  in.send = seconds(send);
  in.host.synchronize = units::seconds * 0.5;
  return in;
}

}  // namespace

TEST_CASE("iteration_lower_bound: one stage is exact, the busiest stage with its way there",
          "[train]") {
  // One stage: m (f + b) + the host's 0.5 s = 4 x 3 + 0.5 = 12.5 s, which the iteration is.
  {
    const IterationInput in = pipeline(PipelineSchedule::kOneFOneB, {{1.0, 2.0}}, 4, 0.0);
    TrainingResult r;
    assemble_iteration(in, r);
    CHECK(iteration_lower_bound(in).si() == Approx(12.5));
    CHECK(r.iteration_time.si() == Approx(12.5));
  }
  // Two stages, 1F1B, the second the busier (1.5 + 2.5 = 4 s a micro-batch): its first
  // forward waits for stage 0's (1 s) and the send (0.1 s), its last gradient goes back the
  // same way (0.1 + 2 s): 1.1 + 4 x 4 + 2.1 + 0.5 = 19.7 s. 1F1B with the bottleneck last runs
  // exactly so: the bound is the iteration.
  {
    const IterationInput in =
        pipeline(PipelineSchedule::kOneFOneB, {{1.0, 2.0}, {1.5, 2.5}}, 4, 0.1);
    TrainingResult r;
    assemble_iteration(in, r);
    CHECK(iteration_lower_bound(in).si() == Approx(19.7));
    CHECK(r.iteration_time.si() == Approx(19.7));
  }
  // GPipe, the busier stage first: stage 0's 4 x 4 = 16 s of work, or stage 1's 4 x 3 = 12 s
  // after stage 0's first forward and the send (1.6 s) and before its last gradient's way back
  // (2.6 s), 16.2 s: the bound is 16.2 + 0.5 = 16.7 s; GPipe's fill and drain make the
  // iteration longer.
  {
    const IterationInput in =
        pipeline(PipelineSchedule::kGpipe, {{1.5, 2.5}, {1.0, 2.0}}, 4, 0.1);
    TrainingResult r;
    assemble_iteration(in, r);
    CHECK(iteration_lower_bound(in).si() == Approx(16.7));
    CHECK(r.iteration_time.si() > iteration_lower_bound(in).si());
  }
}

TEST_CASE("ZeRO-1 gradients: reduce-scattered or all-reduced, during or after the backward",
          "[train]") {
  // One stage, 4 micro-batches of 1 + 2 s, 1e9 parameters in 4 gradient buckets (fp32, 4 B)
  // over dp8 on one DGX A100's NVSwitch; after the step the bf16 (2 B) parameters are gathered.
  const test::ShippedSystem& sys = test::shipped_system("a100");
  const SystemGraph g = make_system_graph(sys.spec, sys.arch, 8);
  const GroupPlacement dp8 = place_group(g, 8, 1);
  IterationInput in = pipeline(PipelineSchedule::kOneFOneB, {{1.0, 2.0}}, 4, 0.0);
  in.chunks[0].parameters = 1e9;
  in.chunks[0].buckets = 4;
  in.data_group = &dp8;
  in.dp = 8;
  in.zero = 1;
  in.gradient_bytes = bytes(4.0);
  in.parameter_bytes = bytes(2.0);
  const double rs = collective_time(dp8, Collective::kReduceScatter, bytes(1e9)).si();
  const double ar = collective_time(dp8, Collective::kAllReduce, bytes(1e9)).si();
  const double ag = collective_time(dp8, Collective::kAllGather, bytes(2e9)).si();
  const auto run = [&](bool all_reduce, bool overlap) {
    in.zero_all_reduce = all_reduce;
    in.overlap_data_parallel = overlap;
    TrainingResult r;
    assemble_iteration(in, r);
    return r;
  };
  // After the backward (nanotron's ZeRO-1, sync_gradients_across_dp): 4 x 3 s of passes, every
  // bucket's all-reduce, the gather, the host's 0.5 s.
  const TrainingResult after = run(true, false);
  CHECK(after.breakdown.data_comm.si() == Approx(4.0 * ar + ag).epsilon(1e-12));
  CHECK(after.iteration_time.si() == Approx(12.0 + 4.0 * ar + ag + 0.5).epsilon(1e-12));
  // Reduce-scattered instead: each member receives only its share's sum, half the ring's steps.
  const TrainingResult scattered = run(false, false);
  CHECK(scattered.breakdown.data_comm.si() == Approx(4.0 * rs + ag).epsilon(1e-12));
  CHECK(ar > 1.9 * rs);
  // During the last backward (DDP buckets): never slower than after it.
  CHECK(run(true, true).iteration_time.si() <= after.iteration_time.si());
  CHECK(run(false, true).iteration_time.si() <= scattered.iteration_time.si());
  // The buckets' collectives holding half the SMs (contention 1): the last backward [10, 12]
  // runs beside buckets 0-2 (ready at 10.5, 11, 11.5, each rs long) and is 3·rs longer; bucket
  // 3 starts at 12, beside nothing. The step's gather and the host follow.
  in.contention = 1.0;
  const TrainingResult contended = run(false, true);
  CHECK(contended.iteration_time.si() == Approx(12.0 + 3.0 * rs + ag + 0.5).epsilon(1e-12));
  CHECK(contended.iteration_time.si() <= scattered.iteration_time.si());
  // FP8 parameters (Megatron-Core's --fp8-param-gather): 0.8e9 of the 1e9 parameters gathered
  // at 1 byte, the other 0.2e9 at 2: 1.2e9 bytes instead of 2e9.
  in.contention = 0.0;
  in.chunks[0].quantized_parameters = 0.8e9;
  in.quantized_parameter_bytes = bytes(1.0);
  const double ag8 = collective_time(dp8, Collective::kAllGather, bytes(1.2e9)).si();
  CHECK(run(false, false).breakdown.data_comm.si() == Approx(4.0 * rs + ag8).epsilon(1e-12));
  CHECK(ag8 < 0.65 * ag);
}

}  // namespace pathfinder
