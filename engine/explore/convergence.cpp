#include "engine/explore/convergence.hpp"

#include <algorithm>
#include <cmath>

#include "engine/core/format.hpp"

namespace pathfinder {

ConvergenceCheck check_convergence(const DesignEvaluator& e, const SplitSpace& space,
                                   const Eigen::VectorXd& split, const Strategy& s, double step,
                                   double tolerance) {
  ConvergenceCheck out;
  const double f0 = e.time(split, s);
  if (!std::isfinite(f0) || f0 <= 0.0) return out;
  const int h = space.components();
  const std::vector<int>& free = space.free_coordinates();
  const auto name = [&](int k) { return space.names()[static_cast<std::size_t>(k % h)]; };
  const auto consider = [&](const Eigen::VectorXd& y, const std::string& what) {
    ++out.moves_tried;
    const double saving = (f0 - e.time(y, s)) / f0;
    if (std::isfinite(saving) && saving > out.saving) {
      out.saving = saving;
      out.move = what + printf_string(" saves %.2f%%", 100.0 * saving);
    }
  };
  for (int b = 0; b < SplitSpace::kBudgets; ++b) {
    const double slack = 1.0 - split.segment(b * h, h).sum();
    const std::string budget(SplitSpace::kBudgetNames[static_cast<std::size_t>(b)]);
    for (int i : free) {  // the receiver
      if (i / h != b) continue;
      const double room = space.upper()[i] - split[i];
      if (room <= 0.0) continue;
      if (slack > 1e-9) {  // unused budget: give it
        Eigen::VectorXd y = split;
        const double amount = std::min({step, room, slack});
        y[i] += amount;
        consider(y, printf_string("%.2g%% more of the %s budget to %s", 100.0 * amount,
                                  budget.c_str(), name(i).c_str()));
      }
      for (int j : free) {  // the donor
        if (j / h != b || j == i) continue;
        const double amount = std::min({step, room, split[j] - space.lower()[j]});
        if (amount <= 0.0) continue;
        Eigen::VectorXd y = split;
        y[i] += amount;
        y[j] -= amount;
        consider(y, printf_string("%.2g%% of %s from %s to %s", 100.0 * amount, budget.c_str(),
                                  name(j).c_str(), name(i).c_str()));
      }
    }
  }
  out.converged = out.saving <= tolerance;
  return out;
}

}  // namespace pathfinder
