// Did a split search converge? A KKT-style check at its result (issue 15). At a minimum of the
// iteration time over C_A x C_P x C_R (search/split_space.hpp) no feasible move of budget
// share helps: within a binding budget, moving share from a component that can give (above its
// lower bound) to one that can take (below its upper bound) saves nothing, which is the KKT
// condition that the sensitivities of the components not at a bound are equal; within a budget
// with slack, giving a component more saves nothing. The check tries each such move of `step`
// (a fraction of the budget) directly, rather than trusting finite-difference gradients at the
// roofline's kinks, and reports the best one.
#pragma once

#include <Eigen/Core>
#include <string>

#include "engine/parallel/strategy.hpp"
#include "engine/explore/design_evaluator.hpp"
#include "search/split_space.hpp"

namespace pathfinder {

struct ConvergenceCheck {
  bool converged = true;
  double saving = 0.0;  // the best move's saving, a fraction of the iteration time (>= 0)
  // The best move when it saves anything: "1% of power from L2 to core saves 0.81%"; "".
  std::string move;
  int moves_tried = 0;
};

// The moves of `step` (or less, up to a bound) of each budget; converged when none saves more
// than `tolerance` of the iteration time. f(split) must be finite.
[[nodiscard]] ConvergenceCheck check_convergence(const DesignEvaluator& e, const SplitSpace& space,
                                                 const Eigen::VectorXd& split, const Strategy& s,
                                                 double step = 0.01, double tolerance = 1e-3);

}  // namespace pathfinder
