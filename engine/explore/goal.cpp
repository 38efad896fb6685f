#include "engine/explore/goal.hpp"

#include <limits>

#include "engine/config/enum_read.hpp"
#include "engine/core/enum_table.hpp"
#include "engine/core/error.hpp"
#include "engine/core/format.hpp"
#include "engine/core/text.hpp"

namespace pathfinder {
namespace {

constexpr enum_table::Table<GoalKind, 4> kGoals{{{GoalKind::kTime, "time"},
                                                 {GoalKind::kEnergy, "energy"},
                                                 {GoalKind::kEnergyDelay, "edp"},
                                                 {GoalKind::kCost, "cost"}}};
constexpr double kWorst = std::numeric_limits<double>::infinity();

}  // namespace

std::string_view to_string(GoalKind k) { return enum_table::name(kGoals, k); }
std::optional<GoalKind> parse_goal_kind(std::string_view s) { return enum_table::parse(kGoals, s); }
std::vector<std::string> valid_goal_kinds() { return enum_table::names(kGoals); }

std::string_view goal_unit(GoalKind k) {
  switch (k) {
    case GoalKind::kTime: return "s";
    case GoalKind::kEnergy: return "J";
    case GoalKind::kEnergyDelay: return "J s";
    case GoalKind::kCost: return "USD";
  }
  return "";
}

Goal read_goal(const ConfigNode& n) {
  Goal g;
  g.kind = read_enum<GoalKind>(n, "objective", parse_goal_kind, valid_goal_kinds, GoalKind::kTime);
  g.max_j_per_token = n.optional_positive<double>("max_j_per_token");
  g.max_usd_per_mtoken = n.optional_positive<double>("max_usd_per_mtoken");
  g.loc = n.has("objective")            ? n.loc_of("objective")
          : n.has("max_usd_per_mtoken") ? n.loc_of("max_usd_per_mtoken")
                                        : n.loc();
  return g;
}

GoalKind goal_kind_from(const std::string& text, const SourceLoc& where) {
  if (const auto k = parse_goal_kind(text)) return *k;
  throw ConfigError(Diagnostic{where, "expected one of " + join_alternatives(valid_goal_kinds()) +
                                          ", got \"" + text + "\"" +
                                          did_you_mean(text, valid_goal_kinds())});
}

std::string cost_model_missing(const Goal& g, const ArchSpec& spec) {
  return g.needs_cost() ? cost_model_missing(spec) : std::string();
}

std::string cost_model_missing(const ArchSpec& spec) {
  if (!spec.tmpl.cost) return "the template " + spec.tmpl.name + " has no cost section";
  if (!spec.logic.wafer_usd) return "the logic node " + spec.logic.name + " has no cost (wafer_usd)";
  if (!spec.memory.usd_per_gb) return "the memory " + spec.memory.name + " has no usd_per_gb";
  return {};
}

double measure(GoalKind kind, const TrainingResult& r) {
  if (!r.feasible || !(r.iteration_time > Time{})) return kWorst;
  switch (kind) {
    case GoalKind::kTime: return r.iteration_time.si();
    case GoalKind::kEnergy: return r.energy.joules.si();
    case GoalKind::kEnergyDelay: return r.energy.joules.si() * r.iteration_time.si();
    case GoalKind::kCost: return r.cost.modelled ? r.cost.usd : kWorst;
  }
  return kWorst;
}

std::string over_budget(const Goal& g, const TrainingResult& r) {
  // Per token when the workload has tokens, else per iteration.
  const bool tokens = r.energy.joules_per_token > Energy{};
  if (g.max_j_per_token) {
    const double j = (tokens ? r.energy.joules_per_token : r.energy.joules).si();
    if (j > *g.max_j_per_token) {
      return printf_string("%.4g J per %s, budget %.4g", j, tokens ? "token" : "iteration",
                           *g.max_j_per_token);
    }
  }
  if (g.max_usd_per_mtoken) {
    if (!r.cost.modelled) return "no cost model (the template has no cost section or prices)";
    const double usd = tokens ? 1e6 * r.cost.usd_per_token : r.cost.usd;
    if (usd > *g.max_usd_per_mtoken) {
      return printf_string("%.4g USD per %s, budget %.4g", usd,
                           tokens ? "million tokens" : "iteration", *g.max_usd_per_mtoken);
    }
  }
  return {};
}

double goal_value(const Goal& g, const TrainingResult& r) {
  if (!r.feasible) return kWorst;
  if ((g.max_j_per_token || g.max_usd_per_mtoken) && !over_budget(g, r).empty()) return kWorst;
  return measure(g.kind, r);
}

}  // namespace pathfinder
