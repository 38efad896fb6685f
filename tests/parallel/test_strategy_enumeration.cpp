// Tests for engine/parallel/strategy_enumeration.hpp: counts worked out by hand, agreement with a
// brute-force filter of every strategy in a box, options that narrow, and speed.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>

#include "engine/parallel/strategy_check.hpp"
#include "engine/parallel/strategy_enumeration.hpp"
#include "tests/parallel/parallel_specs.hpp"

using namespace pathfinder;
using pathfinder::test::shipped_gpt;
using pathfinder::test::shipped_workload;
using pathfinder::test::tiny_gpt;

namespace {

std::set<std::string> names(const std::vector<Strategy>& v) {
  std::set<std::string> out;
  for (const auto& s : v) out.insert(to_string(s));
  return out;
}

}  // namespace

TEST_CASE("tiny GPT on 8 devices: 348 strategies, counted by hand", "[dist][golden]") {
  // tiny_gpt: 4 layers, 4 heads, h 64, f 256, s 32, V 128, global batch 4.
  // tp | 4 heads -> {1, 2, 4}; pp | 4 layers -> {1, 2, 4}; dp | 4 -> {1, 2, 4}; tp·pp·dp = 8:
  //   (tp, pp, dp) = (1,2,4) (1,4,2) (2,1,4) (2,2,2) (2,4,1) (4,1,2) (4,2,1).
  // Per shape: mb | 4/dp (m = 4/(dp·mb) micro-batches); schedules: pp = 1 -> 1f1b only, else
  // gpipe, 1f1b and interleaved with v | 4/pp, v >= 2, when m % pp == 0; sp x2 when tp > 1;
  // ZeRO x4 when dp > 1; recompute x3.
  //   (1,2,4): mb 1 (m 1: no interleaving)            2 schedules x 4 zero x 3   =  24
  //   (1,4,2): mb 1, 2 (4/4 = 1 layer: no v >= 2)     2 x 2 x 4 x 3              =  48
  //   (2,1,4): mb 1                                   1 x 2 sp x 4 x 3           =  24
  //   (2,2,2): mb 1 (m 2: 3 schedules), mb 2 (m 1: 2) 5 x 2 x 4 x 3              = 120
  //   (2,4,1): mb 1, 2, 4, no v                       3 x 2 x 2 x 1 x 3          =  36
  //   (4,1,2): mb 1, 2                                2 x 2 x 4 x 3              =  48
  //   (4,2,1): mb 1 (m 4: 3), mb 2 (m 2: 3), mb 4 (2)  8 x 2 x 1 x 3              =  48
  //                                                                              = 348
  const std::vector<Strategy> all = enumerate_strategies(tiny_gpt(), 8);
  CHECK(all.size() == 348);
  CHECK(names(all).size() == all.size());  // no duplicates
  for (const auto& s : all) {
    INFO(to_string(s));
    CHECK(check_strategy(s, tiny_gpt(), 8).empty());
    CHECK(parse_strategy(to_string(s)) == s);
  }
  CHECK(all.front() == parse_strategy("tp1-pp2-dp4-mb1-gpipe"));
}

TEST_CASE("enumeration equals a brute-force filter of every strategy in a box",
          "[dist][property]") {
  const GptSpec g = tiny_gpt();
  for (const int devices : {1, 4, 6, 8}) {
    std::vector<Strategy> brute;
    for (int tp = 1; tp <= 8; ++tp) {
      for (int pp = 1; pp <= 8; ++pp) {
        for (int dp = 1; dp <= 8; ++dp) {
          for (int mb = 1; mb <= 4; ++mb) {  // mb0 is represented by mb = global_batch/dp
            for (const auto sched : {PipelineSchedule::kGpipe, PipelineSchedule::kOneFOneB,
                                     PipelineSchedule::kInterleaved}) {
              if (pp == 1 && sched != PipelineSchedule::kOneFOneB) continue;
              for (int v = 1; v <= 4; ++v) {
                for (const bool sp : {false, true}) {
                  if (sp && tp == 1) continue;
                  for (int zero = 0; zero <= (dp > 1 ? 3 : 0); ++zero) {
                    for (const auto r :
                         {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
                      const Strategy s{.tp = tp,
                                       .pp = pp,
                                       .dp = dp,
                                       .micro_batch = mb,
                                       .schedule = sched,
                                       .virtual_stages = v,
                                       .sequence_parallel = sp,
                                       .zero = zero,
                                       .recompute = r};
                      if (is_valid_strategy(s, g, devices)) brute.push_back(s);
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
    INFO("devices " << devices);
    CHECK(names(enumerate_strategies(g, devices)) == names(brute));
  }
}

TEST_CASE("the paper's LSTM LM on 64 devices: 79 shapes, 253 with ZeRO stages", "[dist][golden]") {
  // B 16384, D 16384, V 800000 = 2^8·5^5, 2 layers; 64 = 2^6 devices, every degree a power of 2.
  // Stages: pp <= 2 split the 2 layers (pp 1, 2); pp > 2 give the embedding and softmax a stage
  // each and need (pp − 2) | 2 (pp 4; pp 3 does not divide 64). Every kp1, kp2 <= 64 divides
  // B/dp >= 256, 4D and V. RC: (kp1, kp2, dp) exponents summing to 6, 5, 4 for pp 1, 2, 4:
  // C(8,2) + C(7,2) + C(6,2) = 28 + 21 + 15 = 64, of which dp = 1 in 7 + 6 + 5 = 18.
  // CR (kp1 > 1): 6 + 5 + 4 = 15, of which dp = 1 in 3.
  // ZeRO stages x4 when dp > 1: (18 + 46·4) + (3 + 12·4) = 202 + 51 = 253.
  const WorkloadSpec lm = shipped_workload("lstm_lm");
  CHECK(enumerate_strategies(lm, 64).size() == 253);
  EnumerateOptions no_zero;
  no_zero.zero_stages = {0};
  const auto shapes = enumerate_strategies(lm, 64, no_zero);
  CHECK(shapes.size() == 79);
  for (const auto& s : shapes) CHECK(s.micro_batch == 0);
  no_zero.kernel_splits = {KernelSplit::kColumnRow};
  CHECK(enumerate_strategies(lm, 64, no_zero).size() == 6 + 1 + 5 + 1 + 4 + 1);  // with CR-1
}

TEST_CASE("a GEMM on 8 devices: RC-1-8, RC-2-4, RC-4-2, RC-8-1 and CR-8", "[dist][golden]") {
  CHECK(names(enumerate_strategies(shipped_workload("gemm"), 8)) ==
        std::set<std::string>{"RC-1-8-d1-p1", "RC-2-4-d1-p1", "RC-4-2-d1-p1", "RC-8-1-d1-p1",
                              "CR-8-d1-p1"});
}

TEST_CASE("options narrow the enumeration", "[dist]") {
  const GptSpec g = tiny_gpt();
  EnumerateOptions o;
  o.schedules = {PipelineSchedule::kOneFOneB};
  o.recompute = {Recompute::kNone};
  o.zero_stages = {0};
  o.sequence_parallel = false;
  // The 7 shapes of the hand count with their micro-batch sizes: 1 + 2 + 1 + 2 + 3 + 2 + 3.
  CHECK(enumerate_strategies(g, 8, o).size() == 14);
  o.max_micro_batch = 1;
  CHECK(enumerate_strategies(g, 8, o).size() == 7);
  // 6 = 2·3 devices, 6 layers, batch 12: pp3 or dp3 fit, but no power-of-two factorization.
  GptSpec g6 = g;
  g6.layers = 6;
  g6.global_batch = 12;
  CHECK_FALSE(enumerate_strategies(g6, 6, o).empty());
  o.powers_of_two = true;
  CHECK(enumerate_strategies(g6, 6, o).empty());
  // On 8: tp | 4 heads, pp <= 6 layers (uneven stages allowed) and dp | 12, powers of two:
  // (tp, pp, dp) = (1,2,4) (1,4,2) (2,1,4) (2,2,2) (2,4,1) (4,1,2) (4,2,1), mb 1 each.
  CHECK(enumerate_strategies(g6, 8, o).size() == 7);
  CHECK(enumerate_strategies(g, 0).empty());
}

// Its speed is bench/bench_search.cpp's (BM_StrategySearchGpt3 enumerates and ranks this space).
TEST_CASE("GPT-3 175B on 1024 devices: over 10,000 strategies, every one valid", "[dist]") {
  const GptSpec g = shipped_gpt("gpt3_175b");
  const auto all = enumerate_strategies(g, 1024);
  CHECK(all.size() > 10000);
  CHECK(std::all_of(all.begin(), all.end(),
                    [&](const Strategy& x) { return is_valid_strategy(x, g, 1024); }));
}

namespace pathfinder {

TEST_CASE("context parallel degrees are enumerated where attention is fused", "[dist]") {
  // Llama 3 8B (flash attention, s 8192) on 8 devices: cp 2, 4, 8 join tp, pp and dp, each
  // strategy valid and distinct.
  EnumerateOptions o;
  o.recompute = {Recompute::kNone};
  o.zero_stages = {1};
  const GptSpec llama = test::shipped_gpt("llama3_8b");
  const std::vector<Strategy> all = enumerate_strategies(llama, 8, o);
  int with_cp = 0;
  for (const Strategy& s : all) {
    CHECK(is_valid_strategy(s, llama, 8));
    if (s.cp > 1) ++with_cp;
  }
  CHECK(with_cp > 0);
  CHECK(std::any_of(all.begin(), all.end(), [](const Strategy& s) { return s.cp == 8; }));
  o.context_parallel = false;
  const std::size_t without = enumerate_strategies(llama, 8, o).size();
  CHECK(without + static_cast<std::size_t>(with_cp) == all.size());
  // GPT-3 175B's unfused attention: no cp, though allowed.
  o.context_parallel = true;
  for (const Strategy& s : enumerate_strategies(test::shipped_gpt("gpt3_175b"), 64, o)) {
    CHECK(s.cp == 1);
  }
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("expert parallel degrees are enumerated for mixtures of experts", "[dist]") {
  EnumerateOptions o;
  o.recompute = {Recompute::kNone};
  o.zero_stages = {1};
  o.context_parallel = false;
  const GptSpec mixtral = test::shipped_gpt("mixtral_8x7b");  // 8 experts
  const std::vector<Strategy> all = enumerate_strategies(mixtral, 16, o);
  std::set<int> eps;
  for (const Strategy& s : all) {
    CHECK(is_valid_strategy(s, mixtral, 16));
    eps.insert(s.ep);
  }
  CHECK(eps == std::set<int>{1, 2, 4, 8});  // 16 does not divide 8 experts
  for (const Strategy& s : enumerate_strategies(test::shipped_gpt("llama3_8b"), 8, o)) {
    CHECK(s.ep == 1);
    CHECK(s.etp == 0);
  }
  // Whole experts beside tp > 1: the expert group of tensor and data ranks, so ep reaches
  // tp·dp (16 devices, tp2 x dp8 holds ep 8 = the experts), each with and without etp1.
  std::size_t whole = 0, split = 0;
  for (const Strategy& s : all) {
    if (s.tp == 1) {
      CHECK(s.etp == 0);
    } else {
      (s.etp == 1 ? whole : split) += 1;
      CHECK(s.sequence_parallel);  // Megatron-Core's MoE with tp > 1
    }
  }
  CHECK(whole > split);  // ep | tp·dp admits more degrees than ep | dp
  CHECK(std::any_of(all.begin(), all.end(), [](const Strategy& s) {
    return s.etp == 1 && s.tp == 2 && s.dp == 4 && s.ep == 8;
  }));
  CHECK(std::none_of(all.begin(), all.end(),
                     [](const Strategy& s) { return s.etp == 1 && s.ep == 1; }));
}

TEST_CASE("recomputed module sets are enumerated where the model has their modules", "[dist]") {
  EnumerateOptions o;
  o.recompute = {Recompute::kSelective};
  o.zero_stages = {1};
  o.context_parallel = false;
  o.expert_parallel = false;
  const auto sets = [&](const GptSpec& g) {
    std::set<unsigned> out;
    for (const Strategy& s : enumerate_strategies(g, 8, o)) {
      CHECK(s.recompute == Recompute::kSelective);
      out.insert(s.recompute_modules);
    }
    return out;
  };
  // A dense model without latent attention: the attention core only.
  CHECK(sets(test::shipped_gpt("llama3_8b")) == std::set<unsigned>{0});
  // Mixtral (experts, no MLA): Qwen3's moe_act+layernorm beside it.
  CHECK(sets(test::shipped_gpt("mixtral_8x7b")) ==
        std::set<unsigned>{0, kRecomputeMoeAct | kRecomputeLayernorm});
  // DeepSeek-V3 (MLA and experts): DeepSeek's own set, every norm and MLA up-projection.
  GptSpec d = test::shipped_gpt("deepseek_v3");
  d.layers = 8;
  d.dense_layers = 1;
  d.mtp_depth = 0;
  CHECK(sets(d) == std::set<unsigned>{0, kRecomputeMlaUpProj | kRecomputeLayernorm});
}

}  // namespace pathfinder
