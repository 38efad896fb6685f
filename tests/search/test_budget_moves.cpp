// Budget moves: the KKT check as a search step, on objectives with known minima.
#include "search/budget_moves.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

namespace pathfinder {

TEST_CASE("a budget move goes where the objective falls most", "[search]") {
  // Two components, only the area block matters: f = 1/a0 + 1/a1 with a0 + a1 <= 1 is least at
  // a0 = a1 = 0.5. From (0.3, 0.7) the best 1% move gives area from component 1 to component 0:
  // f falls by 1/0.3 - 1/0.31 - (1/0.69 - 1/0.7) = 0.1075 - 0.0207.
  const SplitSpace space = SplitSpace::simplex(2);
  const Objective f = [](const Eigen::VectorXd& x) { return 1.0 / x[0] + 1.0 / x[1]; };
  Eigen::VectorXd x(6);
  x << 0.3, 0.7, 0.5, 0.5, 0.5, 0.5;
  int tried = 0;
  const BudgetMove m = best_budget_move(f, space, x, 0.01, &tried);
  CHECK(m.budget == 0);
  CHECK(m.from == 1);
  CHECK(m.to == 0);
  CHECK(m.amount == Approx(0.01));
  CHECK(m.f == Approx(1.0 / 0.31 + 1.0 / 0.69));
  // Area block full: 2 receivers x 1 donor; power and perimeter blocks likewise (no slack):
  // 2 moves per block.
  CHECK(tried == 6);
}

TEST_CASE("unused budget is a move of its own", "[search]") {
  // f = 1/a0 with a0 + a1 = 0.6: giving a0 the unused 0.4 (in 1% steps) is the best move.
  const SplitSpace space = SplitSpace::simplex(2);
  const Objective f = [](const Eigen::VectorXd& x) { return 1.0 / x[0]; };
  Eigen::VectorXd x(6);
  x << 0.3, 0.3, 0.5, 0.5, 0.5, 0.5;
  const BudgetMove m = best_budget_move(f, space, x, 0.01);
  CHECK(m.from == -1);
  CHECK(m.to == 0);
  CHECK(m.f == Approx(1.0 / 0.31));
}

TEST_CASE("polishing reaches a kinked minimum a gradient cannot", "[search]") {
  // f = max(1/a0, 2/a1): least where 1/a0 = 2/a1 on a0 + a1 = 1, a0 = 1/3 (f = 3). The kink is
  // where gradient steps stall; 1% moves reach it within one step (f(0.33, 0.67) = 3.03).
  const SplitSpace space = SplitSpace::simplex(2);
  const Objective f = [](const Eigen::VectorXd& x) { return std::max(1.0 / x[0], 2.0 / x[1]); };
  Eigen::VectorXd x(6);
  x << 0.6, 0.4, 0.5, 0.5, 0.5, 0.5;
  const PolishResult p = polish_split(f, space, x, f(x), 0.01, 1e-3, 100);
  CHECK(p.f <= 3.0 * 1.011);
  CHECK(p.f < f(x));
  CHECK(p.x[0] == Approx(1.0 / 3.0).margin(0.01));
  CHECK(p.moves == Approx(27).margin(1));  // 0.6 -> 0.33 in 1% moves
  // Never worse, and a limit of 0 moves leaves the point as it was.
  const PolishResult none = polish_split(f, space, x, f(x), 0.01, 1e-3, 0);
  CHECK(none.x == x);
  CHECK(none.f == f(x));
}

}  // namespace pathfinder
