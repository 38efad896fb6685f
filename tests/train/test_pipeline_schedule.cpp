// Pipeline schedules against their closed forms (Narayanan et al. 2021, §2.2).
#include <catch2/catch.hpp>

#include <algorithm>

#include "engine/train/pipeline_schedule.hpp"
#include "engine/core/units.hpp"

namespace pathfinder {
namespace {

PipelineInput uniform(PipelineSchedule s, int p, int v, int m, double f, double b, double send = 0) {
  PipelineInput in;
  in.schedule = s;
  in.stages = p;
  in.chunks = v;
  in.micro_batches = m;
  const auto n = static_cast<std::size_t>(p * v);
  in.forward.assign(n, seconds(f / v));
  in.backward.assign(n, seconds(b / v));
  in.send_forward.assign(n, seconds(send));
  in.send_backward.assign(n, seconds(send));
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
        CHECK(r.makespan.si() == Approx((m + p - 1) * 3.0));
        CHECK(r.bubble_fraction(0) == Approx((p - 1.0) / (m + p - 1.0)).margin(1e-12));
        CHECK(r.busy[0].si() == Approx(3.0 * m));
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
      CHECK(r.makespan.si() == Approx(m * 3.0 + (p - 1) * 3.0 / v));
    }
  }
}

TEST_CASE("transfers between stages add to the fill and drain", "[train]") {
  // GPipe, p stages, send time c each way: the forwards finish on the last stage at
  // (m + p - 1)tf + (p - 1)c, the backwards mirror it: (m + p - 1)(tf + tb) + 2(p - 1)c.
  const PipelineResult g =
      simulate_pipeline(uniform(PipelineSchedule::kGpipe, 4, 1, 8, 1.0, 2.0, 0.1));
  CHECK(g.makespan.si() == Approx(11 * 3.0 + 2 * 3 * 0.1));
  CHECK(g.last_backward[0].si() == Approx(g.makespan.si()));
  // 1F1B waits on the round trip in its steady state too: at least the fill and drain, at most
  // one extra round trip per micro-batch.
  const PipelineResult o =
      simulate_pipeline(uniform(PipelineSchedule::kOneFOneB, 4, 1, 8, 1.0, 2.0, 0.1));
  CHECK(o.makespan.si() >= 11 * 3.0 + 2 * 3 * 0.1 - 1e-9);
  CHECK(o.makespan.si() <= 11 * 3.0 + (2 * 3 + 2 * 8) * 0.1 + 1e-9);
}

TEST_CASE("1F1B keeps at most p micro-batches in flight on the first stage", "[train]") {
  // Equal makespan to GPipe with uniform stages, but the warm-up is p - 1 forwards: the first
  // backward on device 0 starts after p forwards, not m.
  PipelineInput in = uniform(PipelineSchedule::kOneFOneB, 4, 1, 16, 1.0, 2.0);
  const PipelineResult a = simulate_pipeline(in);
  in.schedule = PipelineSchedule::kGpipe;
  const PipelineResult b = simulate_pipeline(in);
  CHECK(a.makespan.si() == Approx(b.makespan.si()));
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("long pipelines extend the periodic steady state exactly", "[train]") {
  // Uneven stages (heavier first and last, as with the embedding and the head) and transfers:
  // the extrapolated result equals a full simulation for every schedule.
  for (PipelineSchedule sched :
       {PipelineSchedule::kGpipe, PipelineSchedule::kOneFOneB, PipelineSchedule::kInterleaved}) {
    for (int p : {2, 3, 4}) {
      const int v = sched == PipelineSchedule::kInterleaved ? 2 : 1;
      PipelineInput in;
      in.schedule = sched;
      in.stages = p;
      in.chunks = v;
      for (int c = 0; c < p * v; ++c) {
        in.forward.push_back(seconds(1.0 + 0.3 * (c == 0) + 0.1 * c));
        in.backward.push_back(seconds(2.0 + 0.5 * (c == p * v - 1) + 0.05 * c));
        in.send_forward.push_back(seconds(0.07));
        in.send_backward.push_back(seconds(0.05));
      }
      for (int m : {5 * p, 8 * p, 20 * p}) {
        in.micro_batches = m;
        const PipelineResult fast = simulate_pipeline(in);
        const PipelineResult full = simulate_pipeline_exhaustively(in);
        INFO("schedule " << static_cast<int>(sched) << " p " << p << " m " << m);
        CHECK(fast.makespan.si() == Approx(full.makespan.si()).epsilon(1e-12));
        for (std::size_t d = 0; d < full.busy.size(); ++d) {
          CHECK(fast.busy[d].si() == Approx(full.busy[d].si()).epsilon(1e-12));
        }
        for (std::size_t c = 0; c < full.last_backward.size(); ++c) {
          CHECK(fast.last_backward[c].si() == Approx(full.last_backward[c].si()).epsilon(1e-12));
          CHECK(fast.last_backward_start[c].si() ==
                Approx(full.last_backward_start[c].si()).epsilon(1e-12));
        }
      }
    }
  }
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("pipeline_tasks: every pass once, as the exhaustive simulation times it", "[train]") {
  // GPipe, 2 stages, 3 micro-batches, tf = 1, tb = 2, sends 0.5: stage 1's first forward
  // starts when stage 0's ends plus the send, at 1.5; the makespan is
  // (m + p - 1)(tf + tb) + 2(p - 1)c = 4 x 3 + 1 = 13.
  const PipelineInput in = uniform(PipelineSchedule::kGpipe, 2, 1, 3, 1.0, 2.0, 0.5);
  const std::vector<PipelineTask> tasks = pipeline_tasks(in);
  REQUIRE(tasks.size() == 2 * 2 * 3);
  double makespan = 0.0;
  for (const PipelineTask& t : tasks) {
    CHECK(t.device == t.chunk);
    CHECK(t.end.si() - t.start.si() == Approx(t.backward ? 2.0 : 1.0));
    makespan = std::max(makespan, t.end.si());
    if (t.device == 1 && !t.backward && t.micro_batch == 0) CHECK(t.start.si() == Approx(1.5));
  }
  CHECK(makespan == Approx(13.0));
  CHECK(makespan == Approx(simulate_pipeline_exhaustively(in).makespan.si()));
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("a scratch's kept results answer only for the very same input", "[train]") {
  // (m + p - 1)(tf + tb) for uniform 1F1B: 4 stages, 8 micro-batches, 1 + 2 -> 33, device 0
  // busy 8 x 3 = 24; its backward 0.5 longer -> busy 8 x 1 + 8 x 2.5 = 28.
  PipelineScratch scratch;
  PipelineResult r;
  const PipelineInput a = uniform(PipelineSchedule::kOneFOneB, 4, 1, 8, 1.0, 2.0);
  PipelineInput b = a;
  b.backward[0] = seconds(2.5);
  PipelineInput more = a;
  more.micro_batches = 12;  // (12 + 3) x 3 = 45
  for (int round = 0; round < 3; ++round) {  // the later rounds from the kept results
    simulate_pipeline(a, scratch, r);
    CHECK(r.makespan.si() == Approx(33.0));
    CHECK(r.busy[0].si() == Approx(24.0));
    simulate_pipeline(b, scratch, r);
    CHECK(r.makespan.si() == Approx(simulate_pipeline_exhaustively(b).makespan.si()));
    CHECK(r.busy[0].si() == Approx(28.0));
    simulate_pipeline(more, scratch, r);
    CHECK(r.makespan.si() == Approx(45.0));
  }
  // More inputs than kept: the oldest falls out and is simulated again, correctly.
  for (int m = 1; m <= 6; ++m) {
    PipelineInput x = a;
    x.micro_batches = m;
    simulate_pipeline(x, scratch, r);
    CHECK(r.makespan.si() == Approx((m + 3) * 3.0));
  }
  simulate_pipeline(a, scratch, r);
  CHECK(r.makespan.si() == Approx(33.0));
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("DualPipe: its Table 2 bubble, (p/2 - 1)(F + 2B - 3W), against 1F1B's (p - 1)(F + B)",
          "[train]") {
  // DeepSeek-V3 technical report Table 2 with F&B = F + B: uniform stages F 1, B 2 of which the
  // weight gradients W 1, no sends. Every device runs m/2 micro-batches through each of its two
  // stages: m(F + B) = 3m busy; the bubble (p/2 - 1)(1 + 4 - 3) = 2(p/2 - 1).
  for (const int p : {2, 4, 8, 16}) {
    for (const int m : {2 * p, 4 * p, 120}) {
      if (m % 2 != 0) continue;
      PipelineInput in = uniform(PipelineSchedule::kDualPipe, p, 2, m, 2.0, 4.0);  // F 1, B 2
      in.weight_gradients.assign(static_cast<std::size_t>(2 * p), seconds(1.0));
      const PipelineResult r = simulate_pipeline(in);
      INFO("p " << p << " m " << m);
      CHECK(r.busy[0].si() == Approx(3.0 * m));
      CHECK(r.makespan.si() == Approx(3.0 * m + 2.0 * (p / 2 - 1)));
      // Every chunk's last backward closes the schedule.
      for (const Time t : r.last_backward) CHECK(t.si() == Approx(r.makespan.si()));
      CHECK(r.last_backward_start[0].si() == Approx(r.makespan.si() - 2.0));
      // 1F1B on the same stages: (m + p - 1)(F + B); DualPipe never slower.
      const PipelineResult one = simulate_pipeline(uniform(PipelineSchedule::kOneFOneB, p, 1, m, 1.0, 2.0));
      CHECK(one.makespan.si() == Approx(3.0 * (m + p - 1)));
      CHECK(r.makespan <= one.makespan);
      // The exhaustive entry point answers the same.
      CHECK(simulate_pipeline_exhaustively(in).makespan.si() == Approx(r.makespan.si()));
    }
  }
  // Without weight gradients split off (W 0) each slot is F + 2B; sends add two per slot.
  PipelineInput in = uniform(PipelineSchedule::kDualPipe, 8, 2, 32, 2.0, 4.0, 0.25);
  CHECK(simulate_pipeline(in).makespan.si() == Approx(3.0 * 32 + 3.0 * (1.0 + 4.0 + 0.5)));
  // The busiest device paces the rest: device 1's second stage twice as long.
  in.forward[8 + 1] = seconds(2.0);
  const PipelineResult uneven = simulate_pipeline(in);
  CHECK(uneven.busy[1].si() == Approx(16.0 * (1.0 + 2.0 + 2.0 + 2.0)));
  CHECK(uneven.makespan.si() == Approx(16.0 * 7.0 + 3.0 * (1.5 + 4.0 + 0.5)));
}

}  // namespace pathfinder
