// Finite-difference gradient of an Objective over a SplitSpace's free coordinates (fixed ones
// get 0). Its evaluations run in parallel with oneTBB; each writes a pre-sized slot, so the
// gradient is bit-for-bit the same for any thread count.
//
// Coordinate i with step h: x⁻ = max(x_i − h, lo_i), x⁺ = min(x_i + h, hi_i) (the other
// coordinates as in x), and
//   g_i = (f(x⁺) − f(x⁻)) / (x⁺ − x⁻)   central inside the box, one-sided at a bound
//                                       (the side at x itself reuses f(x));
// where one side is +inf (an infeasible design), the one-sided difference on the other side,
// (f(x⁺) − f(x))/(x⁺ − x_i) or (f(x) − f(x⁻))/(x_i − x⁻); where both are, h is divided by 4 and
// the coordinate retried, at most 3 times (down to h/64), and then g_i = 0 (the search does
// not move along i). The points keep the box but may exceed a Σ ≤ 1 budget by h.
// Evaluations: at most 2 per free coordinate, plus retries.
#pragma once

#include <Eigen/Core>
#include <vector>

#include "search/search_types.hpp"
#include "search/split_space.hpp"

namespace pathfinder {

class FiniteDifference {
 public:
  // Sizes every buffer once; gradient() then does not allocate (beyond what f does).
  FiniteDifference(const SplitSpace& space, double step);

  // ∇f(x), given fx = f(x) (finite). The reference stays valid until the next call.
  [[nodiscard]] const Eigen::VectorXd& gradient(const Objective& f, const Eigen::VectorXd& x,
                                                double fx);
  // Objective evaluations made by every gradient() call so far.
  [[nodiscard]] long evaluations() const { return evaluations_; }
  [[nodiscard]] double step() const { return h_; }

 private:
  void evaluate_side(const Objective& f, const Eigen::VectorXd& x, double fx, int k, double h);
  [[nodiscard]] bool combine(int j, const Eigen::VectorXd& x, double fx);

  const SplitSpace* space_;
  double h_;
  std::vector<int> free_;               // free coordinate of pair j
  std::vector<Eigen::VectorXd> point_;  // slot k = 2j (x⁻) or 2j + 1 (x⁺)
  std::vector<double> at_, value_;      // the slot's coordinate value and f there
  std::vector<long> calls_;             // evaluations made for the slot (retries included)
  std::vector<int> retry_;              // pairs with no finite difference, in order
  Eigen::VectorXd grad_;
  long evaluations_ = 0;
};

}  // namespace pathfinder
