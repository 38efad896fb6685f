#include "engine/explore/ranking_report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "engine/core/format.hpp"
#include "engine/core/text.hpp"

namespace pathfinder {
namespace {

std::size_t feasible_count(const std::vector<RankedStrategy>& ranked) {
  // rank_strategies puts the feasible ones first.
  return static_cast<std::size_t>(std::count_if(
      ranked.begin(), ranked.end(), [](const RankedStrategy& r) { return r.result.feasible; }));
}

std::string signed_seconds(double s) { return (s >= 0.0 ? "+" : "-") + format_seconds(std::abs(s)); }

}  // namespace

std::string reason_class(const std::string& reason) {
  if (reason.find("GB per device") != std::string::npos) return kNoMemoryClass;
  // Up to the first number: a digit that starts a word (a name's digits, deepseek-v3 or fp8,
  // are part of the class).
  const auto starts_number = [&](std::size_t i) {
    if (std::isdigit(static_cast<unsigned char>(reason[i])) == 0) return false;
    return i == 0 || std::isalnum(static_cast<unsigned char>(reason[i - 1])) == 0;
  };
  std::size_t end = 0;
  while (end < reason.size() && !starts_number(end)) ++end;
  std::string c = reason.substr(0, end);
  while (!c.empty() && (c.back() == ' ' || c.back() == '(' || c.back() == ',' || c.back() == '=')) {
    c.pop_back();
  }
  return c.empty() ? reason : c;
}

std::vector<std::pair<std::string, std::size_t>> by_count(
    const std::map<std::string, std::size_t>& counts) {
  std::vector<std::pair<std::string, std::size_t>> out(counts.begin(), counts.end());
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

std::vector<std::pair<std::string, std::size_t>> dropped_by_reason(
    const std::vector<RankedStrategy>& ranked) {
  std::map<std::string, std::size_t> counts;
  for (const RankedStrategy& r : ranked) {
    if (!r.result.feasible) ++counts[reason_class(r.result.reason)];
  }
  return by_count(counts);
}

std::string ranking_reason(const std::vector<RankedStrategy>& ranked, std::size_t row,
                           GoalKind by) {
  const TrainingResult& r = ranked.at(row).result;
  if (!r.feasible) return r.reason;
  const auto parts = r.breakdown.parts();
  if (row == 0) {
    const auto largest = *std::max_element(parts.begin(), parts.end(), [](const auto& a, const auto& b) {
      return a.second < b.second;
    });
    const std::string first =
        by == GoalKind::kTime ? std::string("fastest") : "lowest " + std::string(to_string(by));
    std::string out = printf_string("%s; largest part %s (%.0f%%)", first.c_str(), largest.first,
                                    100.0 * largest.second / r.iteration_time);
    if (ranked.size() > 1 && ranked[1].result.feasible) {
      const double gap = by == GoalKind::kTime
                             ? 0.0
                             : measure(by, ranked[1].result) / measure(by, r) - 1.0;
      const Time runner_up = ranked[1].result.iteration_time - r.iteration_time;
      out += "; runner-up " + (by == GoalKind::kTime
                                   ? signed_seconds(runner_up.si())
                                   : printf_string("%+.2f%% %s", 100.0 * gap,
                                                   std::string(to_string(by)).c_str()));
    }
    return out;
  }
  const auto best = ranked.front().result.breakdown.parts();
  std::array<std::pair<const char*, double>, best.size()> delta{};
  for (std::size_t i = 0; i < best.size(); ++i) {
    delta[i] = {parts[i].first, (parts[i].second - best[i].second).si()};
  }
  std::stable_sort(delta.begin(), delta.end(), [](const auto& a, const auto& b) {
    return std::abs(a.second) > std::abs(b.second);
  });
  std::string out = signed_seconds((r.iteration_time - ranked.front().result.iteration_time).si()) +
                    " vs #1: " + delta[0].first + " " + signed_seconds(delta[0].second);
  // A second part only when it matters: 1 us or 0.01% of #1's iteration, not rounding noise.
  const double first = ranked.front().result.iteration_time.si();
  if (std::abs(delta[1].second) > std::max(1e-6, 1e-4 * first)) {
    out += std::string(", ") + delta[1].first + " " + signed_seconds(delta[1].second);
  }
  return out;
}

RankingCounts count_ranking(const std::vector<RankedStrategy>& ranked) {
  RankingCounts c;
  c.strategies = c.timed = ranked.size();
  c.feasible = feasible_count(ranked);
  c.dropped = dropped_by_reason(ranked);
  return c;
}

std::string format_ranking(const std::vector<RankedStrategy>& ranked, std::size_t top,
                           const std::string& title, GoalKind by, const RankingCounts* counts) {
  const RankingCounts c = counts != nullptr ? *counts : count_ranking(ranked);
  const std::size_t fit = feasible_count(ranked);
  std::string out = printf_string("%s: %zu strategies ranked", title.c_str(), c.strategies);
  if (c.timed < c.strategies) {
    out += printf_string(" (%zu timed: no other can be among the best)", c.timed);
  }
  if (by != GoalKind::kTime) {
    out += printf_string(" by %s (%s per iteration)", std::string(to_string(by)).c_str(),
                         std::string(goal_unit(by)).c_str());
  }
  out += printf_string(", %zu feasible", c.feasible);
  const auto& dropped = c.dropped;
  if (!dropped.empty()) {
    out += "; dropped:";
    for (std::size_t i = 0; i < dropped.size(); ++i) {
      out += printf_string("%s %zu %s", i == 0 ? "" : ",", dropped[i].second,
                           dropped[i].first.c_str());
    }
  }
  out += "\n\n";
  if (fit == 0) return out + "no feasible strategy\n";
  const std::size_t n = std::min(top, fit);
  int width = 8;
  for (std::size_t i = 0; i < n; ++i) {
    width = std::max(width, static_cast<int>(to_string(ranked[i].strategy).size()));
  }
  out += printf_string("%-4s %-*s %12s %9s %6s %9s %9s  %s\n", "rank", width, "strategy",
                       "iteration", "vs #1", "MFU", "memory", "J/token", "why");
  const double best = ranked.front().result.iteration_time.si();
  for (std::size_t i = 0; i < n; ++i) {
    const TrainingResult& r = ranked[i].result;
    out += printf_string("%-4zu %-*s %12s %8.1f%% %5.1f%% %6.1f GB %9.4g  %s\n", i + 1, width,
                         to_string(ranked[i].strategy).c_str(),
                         format_seconds(r.iteration_time.si()).c_str(),
                         100.0 * (r.iteration_time.si() - best) / best, 100.0 * r.mfu,
                         r.memory.total().si() / 1e9, r.energy.joules_per_token.si(),
                         ranking_reason(ranked, i, by).c_str());
  }
  // The breakdowns side by side: one column per ranked strategy.
  out += printf_string("\n%-16s", "critical stage");
  for (std::size_t i = 0; i < n; ++i) out += printf_string(" %11s", ("#" + std::to_string(i + 1)).c_str());
  out += "\n";
  for (std::size_t p = 0; p < ranked.front().result.breakdown.parts().size(); ++p) {
    out += printf_string("%-16s", ranked.front().result.breakdown.parts()[p].first);
    for (std::size_t i = 0; i < n; ++i) {
      const Time part = ranked[i].result.breakdown.parts()[p].second;
      out += printf_string(" %11s", format_seconds(part.si()).c_str());
    }
    out += "\n";
  }
  out += printf_string("%-16s", "iteration");
  for (std::size_t i = 0; i < n; ++i) {
    out += printf_string(" %11s", format_seconds(ranked[i].result.iteration_time.si()).c_str());
  }
  return out + "\n";
}

std::string ranking_csv(const std::vector<RankedStrategy>& ranked, std::size_t top) {
  std::string out = "rank,strategy,iteration_s,gap_to_best_s,mfu,memory_gb";
  for (const auto& [name, v] : TrainingBreakdown{}.parts()) out += std::string(",") + name + "_s";
  out += ",why\n";
  const std::size_t n = std::min(top, feasible_count(ranked));
  const auto num = [](double v) { return printf_string("%.9g", v); };
  for (std::size_t i = 0; i < n; ++i) {
    const TrainingResult& r = ranked[i].result;
    out += std::to_string(i + 1) + "," + csv_field(to_string(ranked[i].strategy)) + "," +
           num(r.iteration_time.si()) + "," +
           num((r.iteration_time - ranked.front().result.iteration_time).si()) + "," + num(r.mfu) +
           "," +
           num(r.memory.total().si() / 1e9);
    for (const auto& [name, v] : r.breakdown.parts()) out += "," + num(v.si());
    out += "," + csv_field(ranking_reason(ranked, i)) + "\n";
  }
  return out;
}

nlohmann::ordered_json ranking_json(const std::vector<RankedStrategy>& ranked, std::size_t top,
                                    GoalKind by, const RankingCounts* counts) {
  nlohmann::ordered_json j;
  const RankingCounts c = counts != nullptr ? *counts : count_ranking(ranked);
  const std::size_t fit = feasible_count(ranked);
  j["ranked_by"] = std::string(to_string(by));
  j["ranked"] = c.strategies;
  j["timed"] = c.timed;
  j["feasible"] = c.feasible;
  nlohmann::ordered_json dropped = nlohmann::ordered_json::object();
  for (const auto& [reason, count] : c.dropped) dropped[reason] = count;
  j["dropped"] = dropped;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < std::min(top, fit); ++i) {
    const TrainingResult& r = ranked[i].result;
    nlohmann::ordered_json row;
    row["rank"] = i + 1;
    row["strategy"] = to_string(ranked[i].strategy);
    row["iteration_s"] = r.iteration_time.si();
    row["gap_to_best_s"] = (r.iteration_time - ranked.front().result.iteration_time).si();
    row["mfu"] = r.mfu;
    row["memory_gb"] = r.memory.total().si() / 1e9;
    row["joules"] = r.energy.joules.si();
    row["joules_per_token"] = r.energy.joules_per_token > Energy{}
                                  ? nlohmann::ordered_json(r.energy.joules_per_token.si())
                                  : nlohmann::ordered_json();
    if (r.cost.modelled) row["usd"] = r.cost.usd;
    row["why"] = ranking_reason(ranked, i, by);
    nlohmann::ordered_json b;
    for (const auto& [name, v] : r.breakdown.parts()) b[std::string(name) + "_s"] = v.si();
    row["breakdown"] = b;
    rows.push_back(row);
  }
  j["top"] = rows;
  return j;
}

}  // namespace pathfinder
