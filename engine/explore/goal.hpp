// What a search minimizes (issue 16): the iteration time (the default), the energy per
// iteration, the energy-delay product or the cost per iteration; optionally under a budget of
// joules per token or USD per million tokens (a workload without tokens: per iteration), over
// which a design is out with a reason. Strategy ranking, the split searches and the Pareto
// fronts all read one Goal.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/arch/arch_spec.hpp"
#include "engine/config/node.hpp"
#include "engine/train/training_result.hpp"

namespace pathfinder {

enum class GoalKind { kTime, kEnergy, kEnergyDelay, kCost };
[[nodiscard]] std::string_view to_string(GoalKind k);
[[nodiscard]] std::optional<GoalKind> parse_goal_kind(std::string_view s);
[[nodiscard]] std::vector<std::string> valid_goal_kinds();
// The measure's unit as printed: "s", "J", "J s", "USD".
[[nodiscard]] std::string_view goal_unit(GoalKind k);

struct Goal {
  GoalKind kind = GoalKind::kTime;
  std::optional<double> max_j_per_token;
  std::optional<double> max_usd_per_mtoken;
  SourceLoc loc;  // where it was given: the file's key or the command line (messages)
  // Whether it reads the cost model (a cost objective or budget).
  [[nodiscard]] bool needs_cost() const {
    return kind == GoalKind::kCost || max_usd_per_mtoken.has_value();
  }
};

// The keys `objective` (one of valid_goal_kinds, default time), `max_j_per_token` and
// `max_usd_per_mtoken` (positive) of a search or study file; strict, located.
[[nodiscard]] Goal read_goal(const ConfigNode& n);
// A measure's name as an option gives it (`--objective energy`); a ConfigError at `where`.
[[nodiscard]] GoalKind goal_kind_from(const std::string& text, const SourceLoc& where);
// `spec` without the cost model a cost needs: the reason, empty when it has one.
[[nodiscard]] std::string cost_model_missing(const ArchSpec& spec);
// A goal reading the cost model needs the template's cost section and its technologies'
// prices: the reason it cannot be met, empty when it can.
[[nodiscard]] std::string cost_model_missing(const Goal& g, const ArchSpec& spec);

// The measure of `kind` for a feasible result (its iteration time, joules, joules x seconds or
// USD per iteration); +inf when infeasible.
[[nodiscard]] double measure(GoalKind kind, const TrainingResult& r);
// Why a feasible result breaks the goal's budgets, empty when it keeps them.
[[nodiscard]] std::string over_budget(const Goal& g, const TrainingResult& r);
// What a search minimizes: measure(g.kind, r), +inf when infeasible or over a budget.
[[nodiscard]] double goal_value(const Goal& g, const TrainingResult& r);

}  // namespace pathfinder
