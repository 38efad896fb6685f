#include "engine/explore/pareto.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/core/error.hpp"
#include "engine/core/format.hpp"
#include "engine/core/text.hpp"

namespace pathfinder {

std::vector<std::size_t> non_dominated(const std::vector<std::array<double, 2>>& points) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (std::isfinite(points[i][0]) && std::isfinite(points[i][1])) order.push_back(i);
  }
  // By the first measure, then the second, then index: a sweep keeps each point that beats
  // every earlier one on the second measure.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    if (points[x][0] != points[y][0]) return points[x][0] < points[y][0];
    return points[x][1] < points[y][1];
  });
  std::vector<std::size_t> front;
  for (const std::size_t i : order) {
    if (front.empty() || points[i][1] < points[front.back()][1]) front.push_back(i);
  }
  return front;
}

std::vector<std::size_t> pareto_front(const std::vector<RankedStrategy>& ranked, GoalKind a,
                                      GoalKind b) {
  std::vector<std::array<double, 2>> points;
  points.reserve(ranked.size());
  for (const RankedStrategy& r : ranked) points.push_back({measure(a, r.result), measure(b, r.result)});
  return non_dominated(points);
}

std::array<GoalKind, 2> parse_pareto(const std::string& text, const SourceLoc& where) {
  const auto comma = text.find(',');
  const auto fail = [&](const std::string& why) {
    return ConfigError(Diagnostic{where, "expected two of " + join_alternatives(valid_goal_kinds()) +
                                             " separated by a comma, got \"" + text + "\"" + why});
  };
  if (comma == std::string::npos) throw fail("");
  const auto a = parse_goal_kind(text.substr(0, comma));
  const auto b = parse_goal_kind(text.substr(comma + 1));
  if (!a || !b) throw fail("");
  if (*a == *b) throw fail(" (the same measure twice)");
  return {*a, *b};
}

std::string pareto_cost_missing(const std::array<GoalKind, 2>& m, const ArchSpec& spec) {
  const bool cost = m[0] == GoalKind::kCost || m[1] == GoalKind::kCost;
  return cost ? cost_model_missing(spec) : std::string();
}

namespace {

std::string shown(GoalKind k, double v) {
  return k == GoalKind::kTime ? format_seconds(v) : printf_string("%.4g %s", v, std::string(goal_unit(k)).c_str());
}

}  // namespace

std::string format_pareto(const std::vector<RankedStrategy>& ranked,
                          const std::vector<std::size_t>& front,
                          const std::array<GoalKind, 2>& m) {
  std::string out = printf_string("Pareto front of %s and %s: %zu of %zu strategies\n",
                                  std::string(to_string(m[0])).c_str(),
                                  std::string(to_string(m[1])).c_str(), front.size(), ranked.size());
  int width = 8;
  for (const std::size_t i : front) {
    width = std::max(width, static_cast<int>(to_string(ranked[i].strategy).size()));
  }
  out += printf_string("%-*s %14s %14s %12s %10s\n", width, "strategy",
                       std::string(to_string(m[0])).c_str(), std::string(to_string(m[1])).c_str(),
                       "iteration", "J/token");
  for (const std::size_t i : front) {
    const TrainingResult& r = ranked[i].result;
    out += printf_string("%-*s %14s %14s %12s %10.4g\n", width, to_string(ranked[i].strategy).c_str(),
                         shown(m[0], measure(m[0], r)).c_str(), shown(m[1], measure(m[1], r)).c_str(),
                         format_seconds(r.iteration_time.si()).c_str(),
                         r.energy.joules_per_token.si());
  }
  return out;
}

nlohmann::ordered_json pareto_json(const std::vector<RankedStrategy>& ranked,
                                   const std::vector<std::size_t>& front,
                                   const std::array<GoalKind, 2>& m) {
  nlohmann::ordered_json j;
  j["measures"] = {std::string(to_string(m[0])), std::string(to_string(m[1]))};
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const std::size_t i : front) {
    const TrainingResult& r = ranked[i].result;
    rows.push_back({{"strategy", to_string(ranked[i].strategy)},
                    {std::string(to_string(m[0])), measure(m[0], r)},
                    {std::string(to_string(m[1])), measure(m[1], r)},
                    {"iteration_s", r.iteration_time.si()},
                    {"joules_per_token", r.energy.joules_per_token.si()}});
  }
  j["front"] = rows;
  return j;
}

}  // namespace pathfinder
