// Moves of budget share between components: the KKT condition of the split problem made
// checkable, and a pattern search that polishes a gradient search's result with it.
//
// At a minimum of f over C_A x C_P x C_R (split_space.hpp) no feasible move of share helps:
// within a budget, moving share from a component above its lower bound to one below its upper
// bound saves nothing (the sensitivities of the components off their bounds are equal, the
// KKT condition with multiplier tau), and with unused budget (sum < 1) giving a component more
// saves nothing. Each move is evaluated directly rather than predicted from finite-difference
// gradients, which mislead at the kinks a roofline model has everywhere.
#pragma once

#include <Eigen/Core>
#include <limits>

#include "search/search_types.hpp"
#include "search/split_space.hpp"

namespace pathfinder {

struct BudgetMove {
  int budget = -1;  // 0 area, 1 power, 2 perimeter; -1: no move was possible
  int from = -1;    // the donor coordinate; -1: unused budget
  int to = -1;      // the receiver coordinate
  double amount = 0.0;  // the share moved (a fraction of the budget)
  double f = std::numeric_limits<double>::infinity();  // f after the move
  Eigen::VectorXd x;    // the point after the move
};

// Every move of min(step, what the bounds and the unused budget allow) of each budget, in a
// fixed order (budget, receiver, then unused budget before each donor); the one with the lowest
// f (the first on ties). `tried` counts the evaluations. f must be thread-safe only if callers
// share it; this calls it serially.
[[nodiscard]] BudgetMove best_budget_move(const Objective& f, const SplitSpace& space,
                                          const Eigen::VectorXd& x, double step, int* tried = nullptr);

struct PolishResult {
  Eigen::VectorXd x;
  double f = std::numeric_limits<double>::infinity();
  int moves = 0;         // moves taken
  long evaluations = 0;
};

// Greedy pattern search from (x, fx): take the best move while it saves more than `tolerance`
// of f, at most max_moves times. Never returns a worse point; deterministic.
[[nodiscard]] PolishResult polish_split(const Objective& f, const SplitSpace& space,
                                        const Eigen::VectorXd& x, double fx, double step = 0.01,
                                        double tolerance = 1e-3, int max_moves = 30);

}  // namespace pathfinder
