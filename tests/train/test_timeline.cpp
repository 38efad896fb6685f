// One evaluated iteration as a timeline (engine/train/timeline.hpp): the passes where the
// schedule runs them, every stage ending at the iteration time, its parts the breakdown's.
#include "engine/train/timeline.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "engine/graph/workload_loader.hpp"
#include "engine/train/training_model.hpp"
#include "tests/train/train_fixtures.hpp"

namespace pathfinder {
namespace {

struct Traced {
  TrainingResult r;
  Timeline t;
};

Traced trace(const std::string& strategy, const std::string& software = "megatron-lm") {
  const test::ShippedSystem& a = test::shipped_system("a100");
  const WorkloadSpec w = load_workload(test::source_path("studies/workloads/gpt3_1.3b.yaml")).spec;
  const Strategy s = parse_strategy(strategy);
  TrainingOptions o = TrainingOptions::from(test::shipped_software(software));
  o.parallelism = ParallelismSupport{};  // ZeRO-3 too, which Megatron-LM's code does not offer
  TrainingModel m(a.spec, a.arch, w, s.devices(), o);
  Traced x;
  const std::optional<Timeline> t = m.timeline(s, x.r);
  REQUIRE(t.has_value());
  x.t = *t;
  // The timeline is the evaluation's: the same iteration as evaluate gives.
  CHECK(m.evaluate(s).iteration_time.si() == x.r.iteration_time.si());
  return x;
}

// Per stage: the passes (count and busy time), the last span's end, overlaps on the compute
// track, and the time each category takes.
void check_stages(const Traced& x, int passes_per_stage) {
  REQUIRE(x.r.feasible);
  REQUIRE(x.t.stages == static_cast<int>(x.r.stages.size()));
  CHECK(x.t.iteration_time == x.r.iteration_time);
  for (int d = 0; d < x.t.stages; ++d) {
    INFO("stage " << d);
    std::vector<const TraceSpan*> compute;
    double last = 0.0, busy = 0.0, step = 0.0, host = 0.0;
    int passes = 0;
    for (const TraceSpan& s : x.t.spans) {
      if (s.stage != d) continue;
      CHECK(s.duration.si() > 0.0);
      CHECK(s.start.si() >= 0.0);
      last = std::max(last, s.start.si() + s.duration.si());
      if (s.track == TraceTrack::kCompute) compute.push_back(&s);
      if (s.micro_batch >= 0 && s.track == TraceTrack::kCompute) {
        ++passes;
        busy += s.duration.si();
      }
      if (s.track == TraceTrack::kStep) step += s.duration.si();
      if (s.track == TraceTrack::kHost) host += s.duration.si();
    }
    const TrainingBreakdown& b = x.r.stages[static_cast<std::size_t>(d)];
    CHECK(passes == passes_per_stage);
    CHECK(busy == Approx(x.r.device_busy[static_cast<std::size_t>(d)].si()).epsilon(1e-12));
    CHECK(step == Approx(b.gradient_sync.si() + b.optimizer.si()).epsilon(1e-12));
    CHECK(host == Approx(b.host.si()).epsilon(1e-9));
    // Every stage's timeline ends where the iteration does, after its host share.
    CHECK(last == Approx(x.r.iteration_time.si()).epsilon(1e-12));
    // One device computes one thing at a time.
    std::sort(compute.begin(), compute.end(),
              [](const TraceSpan* p, const TraceSpan* q) { return p->start.si() < q->start.si(); });
    for (std::size_t i = 1; i < compute.size(); ++i) {
      CHECK(compute[i]->start.si() >= compute[i - 1]->start.si() + compute[i - 1]->duration.si() -
                                     1e-12 * x.r.iteration_time.si());
    }
  }
}

}  // namespace

TEST_CASE("timeline: 1F1B on 2 stages, every pass where the schedule runs it", "[train][trace]") {
  // GPT-3 1.3B, global batch 512 over dp2 x mb4: 64 micro-batches per pipeline, 2 x 64 passes
  // per stage.
  const Traced x = trace("tp2-pp2-dp2-mb4-1f1b");
  REQUIRE(x.r.micro_batches == 64);
  check_stages(x, 2 * 64);
  // Stage 1's first forward waits for stage 0's and the activations' send (the send track
  // holds it): it starts at F0's end plus the send time.
  std::map<std::pair<int, int>, const TraceSpan*> first_forward, act_send;
  for (const TraceSpan& s : x.t.spans) {
    if (s.micro_batch != 0) continue;
    if (s.track == TraceTrack::kCompute && s.category == std::string("forward")) {
      first_forward[{s.stage, 0}] = &s;
    }
    if (s.track == TraceTrack::kSendForward) act_send[{s.stage, 0}] = &s;
  }
  const TraceSpan& f0 = *first_forward.at({0, 0});
  const TraceSpan& send = *act_send.at({0, 0});
  CHECK(f0.start.si() == 0.0);
  CHECK(f0.name == "F 0");
  CHECK(send.start.si() == Approx(f0.start.si() + f0.duration.si()));
  CHECK(first_forward.at({1, 0})->start.si() == Approx(send.start.si() + send.duration.si()));
}

TEST_CASE("timeline: 16 devices, the spans by kind sum to the stage's breakdown",
          "[train][trace]") {
  // tp2-pp4-dp2, 2 sequences a micro-batch: 512 / (2 x 2) = 128 micro-batches, 2 x 128 passes
  // a stage. Per stage: passes = compute + embedding/head + tensor comm (device busy); the
  // exposed data-parallel span = data_comm; step spans = gradient sync + optimizer; host = host;
  // what is left of the iteration is the pipeline's bubble and waits on its neighbours.
  const Traced x = trace("tp2-pp4-dp2-mb2");
  REQUIRE(x.r.strategy.devices() == 16);
  check_stages(x, 2 * 128);
  for (int d = 0; d < 4; ++d) {
    INFO("stage " << d);
    double passes = 0.0, exposed = 0.0, step = 0.0, host = 0.0;
    for (const TraceSpan& s : x.t.spans) {
      if (s.stage != d) continue;
      if (s.micro_batch >= 0 && s.track == TraceTrack::kCompute) passes += s.duration.si();
      if (s.track == TraceTrack::kDataParallel && s.name.find("exposed") != std::string::npos) {
        exposed += s.duration.si();
      }
      if (s.track == TraceTrack::kStep) step += s.duration.si();
      if (s.track == TraceTrack::kHost) host += s.duration.si();
    }
    const TrainingBreakdown& b = x.r.stages[static_cast<std::size_t>(d)];
    const double eps = 1e-9 * x.r.iteration_time.si();
    CHECK(passes == Approx(b.compute.si() + b.embedding_head.si() + b.tensor_comm.si()).margin(eps));
    CHECK(exposed == Approx(b.data_comm.si()).margin(eps));
    CHECK(step == Approx(b.gradient_sync.si() + b.optimizer.si()).margin(eps));
    CHECK(host == Approx(b.host.si()).margin(eps));
    CHECK(x.r.iteration_time.si() - passes - exposed - step - host ==
          Approx(b.pipeline_bubble.si() + b.pipeline_comm.si()).margin(eps));
  }
}

TEST_CASE("timeline: interleaved chunks, and ZeRO-3 on one stage", "[train][trace]") {
  // 24 layers over pp2 x v2 chunks: 4 x 64 passes per stage, named by chunk.
  const Traced i = trace("tp2-pp2-dp2-mb4-interleaved-v2");
  check_stages(i, 2 * 2 * 64);
  CHECK(std::any_of(i.t.spans.begin(), i.t.spans.end(),
                    [](const TraceSpan& s) { return s.name == "B 5 c1"; }));
  // ZeRO-3 (dp8, 1 stage): its gathers and reduce-scatters are inside the passes.
  const Traced z = trace("tp1-pp1-dp8-mb4-zero3");
  check_stages(z, 2 * 16);
}

}  // namespace pathfinder
