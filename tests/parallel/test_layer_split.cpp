// Which layers each pipeline stage holds (engine/parallel/layer_split.hpp): Megatron's even
// split and nanotron's split by compute cost, worked out by hand.
#include <catch2/catch.hpp>

#include <vector>

#include "engine/parallel/layer_split.hpp"
#include "engine/parallel/memory_footprint.hpp"
#include "engine/parallel/strategy.hpp"
#include "tests/parallel/parallel_specs.hpp"

namespace pathfinder {
namespace {

std::vector<StageSpan> spans(const GptSpec& w, int stages, LayerSplit split) {
  std::vector<StageSpan> out(static_cast<std::size_t>(stages));
  gpt_stage_spans(w, split, out);
  for (int k = 0; k < stages; ++k) {  // one stage alone walks to the same span
    const StageSpan one = gpt_stage_span(w, stages, k, split);
    CHECK(one.first == out[static_cast<std::size_t>(k)].first);
    CHECK(one.count == out[static_cast<std::size_t>(k)].count);
  }
  return out;
}

}  // namespace

TEST_CASE("even: stage_layers' rule, the remainder after the first stage", "[parallel]") {
  GptSpec w = test::shipped_gpt("llama3_405b");  // 126 layers
  const std::vector<StageSpan> s = spans(w, 8, LayerSplit::kEven);
  // 126 = 8 x 15 + 6: stages 1-6 hold 16 (Llama 3 405B's 15, 16 x 6, 15).
  CHECK(s[0].first == 0);
  CHECK(s[0].count == 15);
  CHECK(s[1].first == 15);
  CHECK(s[1].count == 16);
  CHECK(s[7].first == 111);
  CHECK(s[7].count == 15);
}

TEST_CASE("even with multi-token prediction: NVIDIA's DeepSeek-V3 layouts", "[parallel]") {
  // DeepSeek-V3 (61 layers, one MTP module) as Megatron-Core's DeepSeek-V3 best-practice runs
  // place it (NVIDIA Megatron-MoE-ModelZoo best_practice/DeepSeekV3/run.sh, H100 and B200:
  // --mtp-num-layers 1 --pipeline-model-parallel-layout "Et|(tt|)*30mL", PP 8 x VPP 4): 61 + 3
  // places over 32 chunks, 2 each; the last chunk's 2 are fewer than the output layer's and
  // the module's 3, so it holds only them ("mL"), and the 61 layers go 1 (with the embedding,
  // "Et") then 2 on each of the 30 between ("tt").
  const GptSpec w = test::shipped_gpt("deepseek_v3");
  REQUIRE(w.mtp_depth == 1);
  const std::vector<StageSpan> s = spans(w, 32, LayerSplit::kEven);
  CHECK(s[0].first == 0);
  CHECK(s[0].count == 1);
  for (int k = 1; k <= 30; ++k) {
    CHECK(s[static_cast<std::size_t>(k)].first == 1 + 2 * (k - 1));
    CHECK(s[static_cast<std::size_t>(k)].count == 2);
  }
  CHECK(s[31].first == 61);
  CHECK(s[31].count == 0);
  // DeepSeek's own 16 stages: 4 places each; the last keeps one layer beside the three.
  const std::vector<StageSpan> d = spans(w, 16, LayerSplit::kEven);
  CHECK(d[15].count == 1);
  CHECK(d[15].first == 60);
  CHECK(d[14].count == 4);
}

TEST_CASE("by-cost: nanotron's build_model, the LM head's cost pulling layers forward",
          "[parallel]") {
  // Llama 3 8B: a layer costs 4·h·h + 3·f·h = 4·4096² + 3·14336·4096 = 243,269,632, the head
  // V·h = 128256·4096 = 525,336,576; total 32 layers + head = 8,309,964,800.
  const GptSpec w = test::shipped_gpt("llama3_8b");
  // pp2: stage 0 takes layers while the cumulative cost is at most total/2 = 4,154,982,400
  // (17 layers: 4,135,583,744) and the one that crosses it (18: 4,378,853,376): 18 and 14.
  std::vector<StageSpan> s = spans(w, 2, LayerSplit::kByCost);
  CHECK(s[0].first == 0);
  CHECK(s[0].count == 18);
  CHECK(s[1].first == 18);
  CHECK(s[1].count == 14);
  // pp4, thresholds at 1/4, 2/4, 3/4 of the total (2,077,491,200, 4,154,982,400,
  // 6,232,473,600): crossed by layers 9 (2,189,426,688), 18 and 26 (6,325,010,432): 9, 9, 8, 6.
  s = spans(w, 4, LayerSplit::kByCost);
  CHECK(s[0].count == 9);
  CHECK(s[1].first == 9);
  CHECK(s[1].count == 9);
  CHECK(s[2].first == 18);
  CHECK(s[2].count == 8);
  CHECK(s[3].first == 26);
  CHECK(s[3].count == 6);
  // Parameters follow the layers: stage 0 holds 18 layers of 218,112,000 and the token table
  // (525,336,576) = 4,451,352,576; stage 1 14 layers, the final RMSNorm (4,096) and the head =
  // 3,578,908,672; together the model card's 8,030,261,248.
  const Strategy pp2 = parse_strategy("tp1-pp2-dp1");
  CHECK(gpt_stage_parameters(w, pp2, 0, LayerSplit::kByCost) == 4451352576LL);
  CHECK(gpt_stage_parameters(w, pp2, 1, LayerSplit::kByCost) == 3578908672LL);
  // And the memory: stage 0 holds more weights than under the even split.
  MemoryModel by_cost;
  by_cost.layer_split = LayerSplit::kByCost;
  CHECK(gpt_stage_memory_footprint(w, pp2, 0, by_cost).weights.si() >
        gpt_stage_memory_footprint(w, pp2, 0).weights.si());
}

TEST_CASE("by-cost: stages the walk does not reach hold no layer", "[parallel]") {
  // 16 layers of 4·2048² + 3·8192·2048 = 67,108,864 and a 131072 x 2048 head on 32 stages: every
  // layer crosses the next 1/32 of the total (41,943,040), one stage each; 16-31 stay empty.
  GptSpec w = test::tiny_gpt();
  w.layers = 16;
  w.hidden = 2048;
  w.heads = 32;
  w.ffn = 8192;
  w.vocabulary = 131072;
  w.mlp = MlpKind::kSwiglu;
  const std::vector<StageSpan> s = spans(w, 32, LayerSplit::kByCost);
  for (int k = 0; k < 16; ++k) {
    CHECK(s[static_cast<std::size_t>(k)].first == k);
    CHECK(s[static_cast<std::size_t>(k)].count == 1);
  }
  CHECK(s[16].first == 16);
  CHECK(s[16].count == 0);
  CHECK(s[31].count == 0);
}

}  // namespace pathfinder
