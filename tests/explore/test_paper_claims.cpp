// The DeepFlow paper's §9.2 claim, on its case-study LM and node.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <utility>

#include "engine/parallel/strategy_enumeration.hpp"
#include "engine/train/lstm_training.hpp"
#include "tests/train/train_fixtures.hpp"

namespace pathfinder {

TEST_CASE("paper §9.2: strategy optimization alone beats naive data parallelism by 2x or more",
          "[explore]") {
  // Case-study LM: hidden 16K, batch 16K, vocabulary 800K, 2 layers, sequence 20, on 512 nodes
  // of 300 W and 850 mm² (templates/deepflow_case_study.yaml). The paper's strategy space:
  // RC/CR kernel parallelism x data x layer parallelism, no ZeRO. Like the paper (and its
  // reference code, which only prints an overflow), memory capacity is not enforced: naive
  // data parallelism keeps all 30.5e9 parameters on every node.
  const test::ShippedSystem& sys = test::shipped_system("deepflow_case_study");
  const LstmSpec w{16384, 20, 16384, 800000, 2, DataType::kFp16, Optimizer::kSgd};
  TrainingOptions o;
  o.check_memory = false;
  LstmTraining m(w, make_perf_machine(sys.spec, sys.arch),
                 make_system_graph(sys.spec, sys.arch, 512), sys.arch.core.peak, o);
  // The best strategy of the paper's space against naive data parallelism, {gain, winner}.
  const auto gain_of = [&](LstmTraining& t) {
    const TrainingResult naive = t.evaluate(parse_strategy("RC-1-1-d512-p1"));
    REQUIRE(naive.feasible);
    EnumerateOptions paper;
    paper.zero_stages = {0};
    double best = naive.iteration_time.si();
    Strategy winner = naive.strategy;
    for (const Strategy& s : enumerate_strategies(WorkloadSpec{t.spec()}, 512, paper)) {
      const TrainingResult r = t.evaluate(s);
      if (r.feasible && r.iteration_time.si() < best) {
        best = r.iteration_time.si();
        winner = s;
      }
    }
    std::printf("\npaper §9.2 (%s): naive data parallelism %.3f s, best %s %.3f s: %.2fx "
                "(paper: ~2x)\n", std::string(to_string(t.spec().batching)).c_str(),
                naive.iteration_time.si(), to_string(winner).c_str(), best,
                naive.iteration_time.si() / best);
    return std::pair{naive.iteration_time.si() / best, winner};
  };
  const auto [gain, winner] = gain_of(m);
  LstmSpec batched = w;
  batched.batching = LstmBatching::kSequence;
  LstmTraining mb(batched, make_perf_machine(sys.spec, sys.arch),
                  make_system_graph(sys.spec, sys.arch, 512), sys.arch.core.peak, o);
  const auto [gain_batched, winner_batched] = gain_of(mb);
  // The paper finds ~2x. Counted per step as the reference does, the naive design is bound
  // twice by bandwidth: every step streams all 30.5e9 parameters' weights from HBM for a batch
  // of 32 per node, and the 61 GB of gradients cross the 100 GB/s NDR ring after the backward
  // pass. CR-8 gives each node 1/8 of the weights (and 8x the batch), so both shrink ~8x, and
  // the gain comes out near 4x (3.98x measured). Batched over the sequence (softmax and weight
  // gradients once over S·B rows, as frameworks run it) the weights are read once per
  // iteration, which helps the naive design's 32-row GEMMs far more than CR-8's 256-row ones:
  // 3.05x measured. Asserted: at least the paper's 2x in both, less with sequence batching, and
  // the winner a column-row split with data parallelism, as in the paper's search.
  CHECK(gain_batched >= 2.0);
  CHECK(gain_batched < gain);
  CHECK(winner_batched.split == KernelSplit::kColumnRow);
  const TrainingResult naive = m.evaluate(parse_strategy("RC-1-1-d512-p1"));
  CHECK(gain >= 2.0);
  CHECK(winner.split == KernelSplit::kColumnRow);
  CHECK(winner.dp > 1);
  // The gradient reduction of CR-8-d64 moves 1/8 of the naive design's gradients over rings of
  // 64 instead of 512 on the same per-node NIC (it runs after the backward pass, alone on the
  // ports): ratio = (1/8)·(63/64)/(511/512) = 0.12331.
  const TrainingResult cr8 = m.evaluate(parse_strategy("CR-8-d64-p1"));
  REQUIRE(cr8.feasible);
  const double grads_cr8 = (2.0 * 800000 * 16384 + 8.0 * 16384.0 * 16384 * 2) * 2 / 8;
  const double grads_naive = grads_cr8 * 8;
  CHECK(grads_naive == Approx(61.0e9).epsilon(0.001));
  CHECK(cr8.breakdown.data_comm.si() / naive.breakdown.data_comm.si() ==
        Approx(0.125 * (63.0 / 64) / (511.0 / 512)).epsilon(0.01));
}

}  // namespace pathfinder
