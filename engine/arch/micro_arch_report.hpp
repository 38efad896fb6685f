// Writers for MicroArch: JSON (and YAML from the same tree) and a human table. Every number's
// unit is in its key (peak_tflops, capacity_gib).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine/arch/micro_arch.hpp"

namespace pathfinder {

[[nodiscard]] nlohmann::ordered_json to_json(const MicroArch& a);
// Block-style YAML of a JSON tree (objects, arrays, scalars).
[[nodiscard]] std::string to_yaml(const nlohmann::ordered_json& j);
[[nodiscard]] std::string format_table(const MicroArch& a);

}  // namespace pathfinder
