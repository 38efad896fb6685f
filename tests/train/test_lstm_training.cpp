// The paper's LSTM language model over many devices: kernel (RC/CR), data and layer parallelism.
#include <catch2/catch.hpp>

#include <cstdio>

#include "engine/perf/graph_timing.hpp"
#include "engine/train/lstm_training.hpp"
#include "tests/train/train_fixtures.hpp"

namespace pathfinder {
namespace {

// The reference's shipped V100 configuration's LM (B 64 there; 4096 here so it spreads):
// D 4096, V 40000, 1 layer... with 2 layers for pipelining, 10 steps.
LstmSpec small_lm() { return LstmSpec{4096, 10, 4096, 40000, 2, DataType::kFp16, Optimizer::kSgd}; }

LstmTraining model(const LstmSpec& w, int devices) {
  const test::ShippedSystem& s = test::shipped_system("a100");
  return LstmTraining(w, make_perf_machine(s.spec, s.arch),
                      make_system_graph(s.spec, s.arch, devices), s.arch.core.peak.si());
}

}  // namespace

TEST_CASE("one device: the distributed model reduces to the single-device iteration",
          "[train]") {
  // Same kernels, one stream: the forward and backward spans back to back, the update, the
  // host's fixed costs. Differences: one launch latency between the passes.
  const LstmSpec w = small_lm();
  LstmTraining m = model(w, 1);
  const TrainingResult r = m.evaluate(parse_strategy("RC-1-1-d1-p1"));
  REQUIRE(r.feasible);
  const test::ShippedSystem& s = test::shipped_system("a100");
  KernelTimer timer(make_perf_machine(s.spec, s.arch));
  const GraphTiming g = time_workload(make_workload("lm", w), timer);
  CHECK(r.iteration_time == Approx(g.iteration_time).epsilon(0.01));
}

TEST_CASE("kernel, data and layer parallelism of the LSTM LM on 64 A100s", "[train]") {
  const LstmSpec w = small_lm();
  LstmTraining m = model(w, 64);
  std::printf("\nLSTM LM B 4096, D 4096, V 40000, 2 layers, 10 steps on 64 A100s\n");
  double dp_only = 0.0;
  for (const char* text : {"RC-1-1-d64-p1", "RC-2-2-d16-p1", "RC-8-1-d8-p1", "CR-4-d16-p1",
                           "CR-8-d8-p1", "RC-2-1-d16-p2", "RC-1-1-d16-p4"}) {
    const Strategy s = parse_strategy(text);
    const TrainingResult r = m.evaluate(s);
    INFO(text);
    REQUIRE(r.feasible);
    const TrainingBreakdown& b = r.breakdown;
    std::printf("  %-14s %8.2f ms  compute %7.2f  kernel comm %6.2f  bubble %6.2f  dp %6.2f\n",
                text, r.iteration_time * 1e3, b.compute * 1e3, b.tensor_comm * 1e3,
                (b.pipeline_bubble + b.pipeline_comm) * 1e3, b.data_comm * 1e3);
    CHECK(b.total() == Approx(r.iteration_time));
    if (s.tp * s.tp2 > 1) CHECK(b.tensor_comm > 0.0);
    if (s.pp > 1) CHECK(b.pipeline_bubble + b.pipeline_comm > 0.0);
    if (text == std::string("RC-1-1-d64-p1")) dp_only = r.iteration_time;
  }
  // Data parallelism alone splits the batch 64 ways with no kernel communication: each device
  // computes 1/64 of the work, the least any strategy can give it.
  CHECK(dp_only > 0.0);
}

TEST_CASE("the paper's case-study LM does not fit one device per replica", "[train]") {
  // Hidden 16K, vocabulary 800K: 30.5e9 parameters; data parallelism alone keeps all of them.
  const LstmSpec w{16384, 20, 16384, 800000, 2, DataType::kFp16, Optimizer::kSgd};
  LstmTraining m = model(w, 512);
  const TrainingResult r = m.evaluate(parse_strategy("RC-1-1-d512-p1"));
  CHECK_FALSE(r.feasible);
  CHECK(r.memory.weights.si() > 60e9);  // 30.5e9 x 2 bytes
  // Kernel parallelism over 64 devices shards the weights: it fits.
  const TrainingResult k = m.evaluate(parse_strategy("RC-8-8-d8-p1"));
  CHECK(k.feasible);
}

}  // namespace pathfinder
