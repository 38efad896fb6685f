#include "engine/explore/convergence.hpp"

#include <cmath>

#include "engine/core/format.hpp"
#include "search/budget_moves.hpp"

namespace pathfinder {

ConvergenceCheck check_convergence(const DesignEvaluator& e, const SplitSpace& space,
                                   const Eigen::VectorXd& split, const Strategy& s, double step,
                                   double tolerance) {
  ConvergenceCheck out;
  const Objective f = [&](const Eigen::VectorXd& x) { return e.objective(x, s); };
  const double f0 = evaluate_objective(f, split);
  if (!std::isfinite(f0) || f0 <= 0.0) return out;
  const BudgetMove m = best_budget_move(f, space, split, step, &out.moves_tried);
  if (m.budget >= 0 && m.f < f0) {
    const int h = space.components();
    const auto name = [&](int k) { return space.names()[static_cast<std::size_t>(k % h)]; };
    const std::string budget(SplitSpace::kBudgetNames[static_cast<std::size_t>(m.budget)]);
    out.saving = (f0 - m.f) / f0;
    out.move = (m.from < 0 ? printf_string("%.2g%% more of the %s budget to %s", 100.0 * m.amount,
                                           budget, name(m.to))
                           : printf_string("%.2g%% of %s from %s to %s", 100.0 * m.amount, budget,
                                           name(m.from), name(m.to))) +
               printf_string(" saves %.2f%%", 100.0 * out.saving);
  }
  out.converged = out.saving <= tolerance;
  return out;
}

}  // namespace pathfinder
