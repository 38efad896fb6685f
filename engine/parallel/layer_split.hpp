// Which of a GPT model's layers each pipeline stage (or model chunk) holds.
//   even     stage_layers' rule (strategy.hpp): layers/stages each, the remainder on the stages
//            after the first (Megatron-LM); with multi-token prediction the output layer and
//            each module's block and head pass take a layer's place on the last stage, which
//            holds none of the model's layers where its share is no more than those
//   by-cost  nanotron's build_model (src/nanotron/models/base.py): the pipeline blocks in order
//            (token embedding, the decoder layers, final norm, LM head, loss) each on the
//            current stage, which moves on once the blocks' cumulative cost exceeds
//            (stage + 1)/stages of the total; a layer costs 4·a·d·h + 3·f·h (2·f·h for an
//            ungated MLP), the head V·h, the rest nothing (get_block_compute_costs). The heavy
//            head pulls layers forward: Llama 3 8B over 2 stages holds 18 and 14 layers.
//            Stages the walk does not reach hold no layer; the head stays on the last.
#pragma once

#include <cstdint>
#include <span>

#include "engine/graph/workload.hpp"
#include "engine/parallel/memory_model.hpp"

namespace pathfinder {

struct StageSpan {
  std::int64_t first = 0;  // the stage's first layer (0-based)
  std::int64_t count = 0;  // its layers
};

// Every stage's span, stages = out.size() (>= 1, at most w.layers for kEven).
void gpt_stage_spans(const GptSpec& w, LayerSplit split, std::span<StageSpan> out);

// Stage `stage` of `stages` alone.
[[nodiscard]] StageSpan gpt_stage_span(const GptSpec& w, int stages, int stage, LayerSplit split);

}  // namespace pathfinder
