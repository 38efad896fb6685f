// Output of a distributed training evaluation: table, CSV or JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine/train/gpt_training.hpp"

namespace pathfinder {

[[nodiscard]] nlohmann::json to_json(const TrainingResult& r, int devices);
[[nodiscard]] std::string to_csv(const TrainingResult& r, int devices);
[[nodiscard]] std::string format_table(const TrainingResult& r, int devices,
                                       const std::string& title);
// One layer's kernels as timed (GptTraining::layer_kernels): a table, or a JSON array of
// {pass, kernel, kind, stream, start_s, time_s}.
[[nodiscard]] std::string layer_kernels_table(const GptTraining::LayerKernels& k);
[[nodiscard]] nlohmann::json layer_kernels_json(const GptTraining::LayerKernels& k);

}  // namespace pathfinder
