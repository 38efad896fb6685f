#include "engine/parallel/layer_split.hpp"

#include "engine/core/error.hpp"
#include "engine/parallel/strategy.hpp"

namespace pathfinder {
namespace {

using I64 = std::int64_t;

// nanotron's block costs (get_block_compute_costs of its Llama: 4·a·d_qkv·h + 3·d_ff·h per
// decoder layer, vocab·h for the LM head; its GPT-style models count 2·d_ff·h).
double layer_cost(const GptSpec& w) {
  const double mlp = w.mlp == MlpKind::kGelu ? 2.0 : 3.0;
  return 4.0 * static_cast<double>(w.attention_width()) * static_cast<double>(w.hidden) +
         mlp * static_cast<double>(w.ffn) * static_cast<double>(w.hidden);
}

// The by-cost walk: calls visit(layer, stage) for each layer in order. The comparison is
// c·stages > total·(k + 1), exact in doubles for every model here (sums under 2^53).
template <typename Visit>
void walk_by_cost(const GptSpec& w, int stages, Visit&& visit) {
  const double cost = layer_cost(w);
  const double total = static_cast<double>(w.layers) * cost +
                       static_cast<double>(w.vocabulary) * static_cast<double>(w.hidden);
  double cumulative = 0.0;
  int k = 0;
  for (I64 layer = 0; layer < w.layers; ++layer) {
    visit(layer, k);
    cumulative += cost;
    if (cumulative * stages > total * (k + 1) && k + 1 < stages) ++k;
  }
}

// The even split. With multi-token prediction (GptSpec::mtp_depth) the output layer and each
// module's block and head pass count as a layer each, all on the last stage, which holds that
// many fewer of the model's layers (Megatron-Core's account_for_loss_in_pipeline_split, with its
// MTP layers on the last stage). Where its share of places is no more than those, it holds none
// of the model's layers and the stages before it split them evenly: NVIDIA's DeepSeek-V3 runs
// on 8 x 4 chunks, "Et|(tt|)*30mL" (Megatron-MoE-ModelZoo best_practice/DeepSeekV3/run.sh).
StageSpan even_span(const GptSpec& w, int stages, int stage) {
  const I64 reserved = w.mtp_depth > 0 ? 1 + 2 * w.mtp_depth : 0;
  const I64 slots = w.layers + reserved;
  if (reserved == 0 || stages == 1) {
    return {stage_first_layer(w.layers, stages, stage), stage_layers(w.layers, stages, stage)};
  }
  if (stage_layers(slots, stages, stages - 1) <= reserved) {
    if (stage == stages - 1) return {w.layers, 0};
    return {stage_first_layer(w.layers, stages - 1, stage),
            stage_layers(w.layers, stages - 1, stage)};
  }
  const I64 first = stage_first_layer(slots, stages, stage);
  return {first, stage == stages - 1 ? w.layers - first : stage_layers(slots, stages, stage)};
}

}  // namespace

void gpt_stage_spans(const GptSpec& w, LayerSplit split, std::span<StageSpan> out) {
  const auto stages = static_cast<int>(out.size());
  PF_ASSERT(stages >= 1 && w.layers >= 1);
  if (split == LayerSplit::kEven) {
    for (int k = 0; k < stages; ++k) out[static_cast<std::size_t>(k)] = even_span(w, stages, k);
    return;
  }
  // Stages the walk does not reach start after the last layer and hold none.
  for (StageSpan& s : out) s = {w.layers, 0};
  walk_by_cost(w, stages, [&](I64 layer, int k) {
    StageSpan& s = out[static_cast<std::size_t>(k)];
    if (s.count == 0) s.first = layer;
    ++s.count;
  });
}

StageSpan gpt_stage_span(const GptSpec& w, int stages, int stage, LayerSplit split) {
  PF_ASSERT(stages >= 1 && stage >= 0 && stage < stages && w.layers >= 1);
  if (split == LayerSplit::kEven) return even_span(w, stages, stage);
  StageSpan s{w.layers, 0};
  walk_by_cost(w, stages, [&](I64 layer, int k) {
    if (k != stage) return;
    if (s.count == 0) s.first = layer;
    ++s.count;
  });
  return s;
}

}  // namespace pathfinder
