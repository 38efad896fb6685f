#include "engine/train/chrome_trace.hpp"

namespace pathfinder {

nlohmann::ordered_json chrome_trace(const Timeline& t,
                                    const std::vector<std::pair<std::string, std::string>>& about) {
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  for (int d = 0; d < t.stages; ++d) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", d},
                      {"args", {{"name", "stage " + std::to_string(d)}}}});
    events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", d},
                      {"args", {{"sort_index", d}}}});
    for (int k = 0; k < kTraceTracks; ++k) {
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", d}, {"tid", k},
                        {"args", {{"name", to_string(static_cast<TraceTrack>(k))}}}});
    }
  }
  for (const TraceSpan& s : t.spans) {
    nlohmann::ordered_json e = {{"ph", "X"},
                                {"name", s.name},
                                {"cat", s.category},
                                {"pid", s.stage},
                                {"tid", static_cast<int>(s.track)},
                                {"ts", s.start.si() * 1e6},
                                {"dur", s.duration.si() * 1e6}};
    if (s.micro_batch >= 0) e["args"] = {{"micro_batch", s.micro_batch}, {"chunk", s.chunk}};
    events.push_back(std::move(e));
  }
  nlohmann::ordered_json other = nlohmann::ordered_json::object();
  for (const auto& [k, v] : about) other[k] = v;
  other["iteration_s"] = t.iteration_time.si();
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}, {"otherData", other}};
}

}  // namespace pathfinder
