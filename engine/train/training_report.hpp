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

}  // namespace pathfinder
