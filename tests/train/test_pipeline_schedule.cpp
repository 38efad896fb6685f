// Pipeline schedules against their closed forms (Narayanan et al. 2021, §2.2).
#include <catch2/catch.hpp>

#include "engine/train/pipeline_schedule.hpp"

namespace pathfinder {
namespace {

PipelineInput uniform(PipelineSchedule s, int p, int v, int m, double f, double b, double send = 0) {
  PipelineInput in;
  in.schedule = s;
  in.stages = p;
  in.chunks = v;
  in.micro_batches = m;
  const auto n = static_cast<std::size_t>(p * v);
  in.forward.assign(n, f / v);
  in.backward.assign(n, b / v);
  in.send_forward.assign(n, send);
  in.send_backward.assign(n, send);
  return in;
}

}  // namespace

TEST_CASE("GPipe and 1F1B take (m + p - 1)(tf + tb) with uniform stages", "[train]") {
  // Bubble (p - 1)/(m + p - 1) of the makespan on every device.
  for (PipelineSchedule s : {PipelineSchedule::kGpipe, PipelineSchedule::kOneFOneB}) {
    for (int p : {1, 2, 4, 8}) {
      for (int m : {1, 3, 8, 32}) {
        const PipelineResult r = simulate_pipeline(uniform(s, p, 1, m, 1.0, 2.0));
        INFO("p " << p << " m " << m);
        CHECK(r.makespan == Approx((m + p - 1) * 3.0));
        CHECK(r.bubble_fraction(0) == Approx((p - 1.0) / (m + p - 1.0)).margin(1e-12));
        CHECK(r.busy[0] == Approx(3.0 * m));
      }
    }
  }
}

TEST_CASE("interleaving v chunks divides the bubble by v", "[train]") {
  // Narayanan et al.: bubble time (p - 1)(tf + tb)/v; makespan m(tf + tb) + that.
  for (int v : {2, 4}) {
    for (int p : {2, 4}) {
      const int m = 4 * p;
      const PipelineResult r =
          simulate_pipeline(uniform(PipelineSchedule::kInterleaved, p, v, m, 1.0, 2.0));
      INFO("p " << p << " v " << v);
      CHECK(r.makespan == Approx(m * 3.0 + (p - 1) * 3.0 / v));
    }
  }
}

TEST_CASE("transfers between stages add to the fill and drain", "[train]") {
  // GPipe, p stages, send time c each way: the forwards finish on the last stage at
  // (m + p - 1)tf + (p - 1)c, the backwards mirror it: (m + p - 1)(tf + tb) + 2(p - 1)c.
  const PipelineResult g =
      simulate_pipeline(uniform(PipelineSchedule::kGpipe, 4, 1, 8, 1.0, 2.0, 0.1));
  CHECK(g.makespan == Approx(11 * 3.0 + 2 * 3 * 0.1));
  CHECK(g.last_backward[0] == Approx(g.makespan));
  // 1F1B waits on the round trip in its steady state too: at least the fill and drain, at most
  // one extra round trip per micro-batch.
  const PipelineResult o =
      simulate_pipeline(uniform(PipelineSchedule::kOneFOneB, 4, 1, 8, 1.0, 2.0, 0.1));
  CHECK(o.makespan >= 11 * 3.0 + 2 * 3 * 0.1 - 1e-9);
  CHECK(o.makespan <= 11 * 3.0 + (2 * 3 + 2 * 8) * 0.1 + 1e-9);
}

TEST_CASE("1F1B keeps at most p micro-batches in flight on the first stage", "[train]") {
  // Equal makespan to GPipe with uniform stages, but the warm-up is p - 1 forwards: the first
  // backward on device 0 starts after p forwards, not m.
  PipelineInput in = uniform(PipelineSchedule::kOneFOneB, 4, 1, 16, 1.0, 2.0);
  const PipelineResult a = simulate_pipeline(in);
  in.schedule = PipelineSchedule::kGpipe;
  const PipelineResult b = simulate_pipeline(in);
  CHECK(a.makespan == Approx(b.makespan));
}

}  // namespace pathfinder
