// The iteration from per-chunk costs (engine/train/iteration.hpp): the lower bound the
// strategy search prunes with, against the simulated iteration it bounds.
#include <catch2/catch.hpp>

#include "engine/core/units.hpp"
#include "engine/train/iteration.hpp"

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

}  // namespace pathfinder
