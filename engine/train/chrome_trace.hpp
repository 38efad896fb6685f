// A timeline (timeline.hpp) as Chrome / Perfetto trace-event JSON ("JSON Object Format" of the
// Trace Event Format: complete events, ph "X", times in microseconds): one process per pipeline
// stage, one thread per track, named by metadata events, so chrome://tracing, ui.perfetto.dev
// or any trace viewer shows where the iteration's time goes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/train/timeline.hpp"

namespace pathfinder {

// `about`: what was evaluated (template, workload, strategy, version), kept under otherData.
[[nodiscard]] nlohmann::ordered_json chrome_trace(
    const Timeline& t, const std::vector<std::pair<std::string, std::string>>& about);

}  // namespace pathfinder
