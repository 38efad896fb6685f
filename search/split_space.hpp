// The search's parameter space: fractions of the area, power and perimeter budgets per
// component, one point x ∈ R^(3H) laid out [area(H) | power(H) | perimeter(H)] like
// ResourceSplit (engine/arch/arch_spec.hpp). Each budget block b is
//   C_b = { lo_i ≤ x_i ≤ hi_i for i in b,  Σ_{i in b} x_i ≤ 1 }
// (paper §7: C_A, C_P, C_R). A coordinate with lo = hi is fixed (e.g. hi = 0: the core has no
// perimeter) and the search never moves it.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/error.hpp"

namespace pathfinder {

class SplitSpace {
 public:
  static constexpr int kBudgets = 3;
  static constexpr std::array<std::string_view, kBudgets> kBudgetNames{"area", "power",
                                                                       "perimeter"};

  // lower and upper hold 3H bounds in the point's layout; names (H of them, or none: then
  // "c0", "c1", …) label messages. Throws ConfigError listing every problem: H < 1, wrong sizes,
  // a bound that is not a finite number in [0, 1], lo > hi, a block whose lower bounds sum
  // above 1. Messages name budget, component, value and rule:
  //   split space: error: area.l2: lower bound 0.6 exceeds upper bound 0.4
  SplitSpace(int components, Eigen::VectorXd lower, Eigen::VectorXd upper,
             std::vector<std::string> names = {});
  // Bounds [0, 1] everywhere: the three plain simplices {x ≥ 0, Σ x ≤ 1}.
  [[nodiscard]] static SplitSpace simplex(int components, std::vector<std::string> names = {});

  [[nodiscard]] int components() const { return h_; }
  [[nodiscard]] int dim() const { return kBudgets * h_; }
  [[nodiscard]] const Eigen::VectorXd& lower() const { return lo_; }
  [[nodiscard]] const Eigen::VectorXd& upper() const { return hi_; }
  [[nodiscard]] const std::vector<std::string>& names() const { return names_; }
  // "area.core": budget and component of coordinate k.
  [[nodiscard]] std::string coordinate_name(int k) const;
  // Coordinates with lo < hi, ascending: the ones a search moves.
  [[nodiscard]] const std::vector<int>& free_coordinates() const { return free_; }
  // True when block b's sum constraint can bind (its upper bounds sum above 1).
  [[nodiscard]] bool sum_can_bind(int b) const;

  // Exact Euclidean projection onto C_A × C_P × C_R (not rescaling), block by block: if x
  // clipped to the box sums to ≤ 1 that is it; otherwise x_i = clamp(x_i − τ, lo_i, hi_i) with
  // the τ where Σ_i clamp(x_i − τ, lo_i, hi_i) = 1 (the KKT conditions of
  // min ½‖y − x‖² s.t. the box and Σ y ≤ 1, multiplier τ > 0). The sum is non-increasing and
  // piecewise linear in τ with kinks at x_i − hi_i and x_i − lo_i; τ is interpolated exactly
  // between the two kinks that bracket 1. O(H²) per block (H is a handful of components), no
  // allocation. The result sums to 1 within a few ulps. x must be finite.
  [[nodiscard]] Eigen::VectorXd project(const Eigen::VectorXd& x) const;
  void project_in_place(Eigen::Ref<Eigen::VectorXd> x) const;

  // Inside the box and every Σ ≤ 1 + tol.
  [[nodiscard]] bool contains(const Eigen::VectorXd& x, double tol = 1e-12) const;

  // A point drawn uniformly from the feasible set, block by block: y = x − lo is uniform on
  // {0 ≤ y ≤ hi − lo, Σ y ≤ r} (r = 1 − Σ lo) by rejection from the smaller-volume of two
  // proposals — uniform in the box [0, hi − lo] (rejected when Σ y > r) or uniform on the
  // simplex {y ≥ 0, Σ y ≤ r} (a flat Dirichlet over the free coordinates plus a slack, rejected
  // when some y_i > hi_i − lo_i). After 256 rejections the last draw is projected (feasible,
  // no longer exactly uniform). Uses only rng() (no std:: distributions), so draws are the
  // same with every standard library.
  [[nodiscard]] Eigen::VectorXd sample(std::mt19937_64& rng) const;

 private:
  int h_ = 0;
  Eigen::VectorXd lo_, hi_;
  std::vector<std::string> names_;
  std::vector<int> free_;
};

// The generator of restart `index` of a search seeded with `seed`: mt19937_64 seeded with
// splitmix64(seed + (index + 1)·0x9E3779B97F4A7C15), so each restart's draws depend on
// (seed, index) only — never on the thread that runs it or on the other restarts.
[[nodiscard]] std::mt19937_64 restart_rng(std::uint64_t seed, int index);

// A double uniform in [0, 1) from the top 53 bits of one draw.
[[nodiscard]] inline double uniform01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

}  // namespace pathfinder
