#include "search/budget_moves.hpp"

#include <algorithm>
#include <cmath>

namespace pathfinder {

BudgetMove best_budget_move(const Objective& f, const SplitSpace& space, const Eigen::VectorXd& x,
                            double step, int* tried) {
  BudgetMove best;
  const int h = space.components();
  const std::vector<int>& free = space.free_coordinates();
  int count = 0;
  Eigen::VectorXd y = x;
  const auto consider = [&](int budget, int from, int to, double amount) {
    y = x;
    y[to] += amount;
    if (from >= 0) y[from] -= amount;
    ++count;
    const double fy = evaluate_objective(f, y);
    if (fy < best.f) best = BudgetMove{budget, from, to, amount, fy, y};
  };
  for (int b = 0; b < SplitSpace::kBudgets; ++b) {
    const double slack = 1.0 - x.segment(b * h, h).sum();
    for (int i : free) {  // the receiver
      if (i / h != b) continue;
      const double room = space.upper()[i] - x[i];
      if (room <= 0.0) continue;
      if (slack > 1e-9) consider(b, -1, i, std::min({step, room, slack}));
      for (int j : free) {  // the donor
        if (j / h != b || j == i) continue;
        const double amount = std::min({step, room, x[j] - space.lower()[j]});
        if (amount > 0.0) consider(b, j, i, amount);
      }
    }
  }
  if (tried != nullptr) *tried = count;
  return best;
}

PolishResult polish_split(const Objective& f, const SplitSpace& space, const Eigen::VectorXd& x,
                          double fx, double step, double tolerance, int max_moves) {
  PolishResult r{x, fx, 0, 0};
  if (!std::isfinite(fx)) return r;
  while (r.moves < max_moves) {
    int tried = 0;
    const BudgetMove m = best_budget_move(f, space, r.x, step, &tried);
    r.evaluations += tried;
    if (!(m.f < r.f * (1.0 - tolerance))) break;
    r.x = m.x;
    r.f = m.f;
    ++r.moves;
  }
  return r;
}

}  // namespace pathfinder
