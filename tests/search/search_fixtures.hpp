// Known-answer split problems for the search tests: three components (core, memory, network)
// with work w over each budget; time = work / resource, summed (smooth) or the slowest term
// per budget (max, non-smooth), and a dense grid search to compare with.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "engine/core/error.hpp"
#include "search/split_space.hpp"

namespace pathfinder::test {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Bounds: the network keeps ≥ 5 % of the area, the core ≤ 50 % of the power, the core has no
// perimeter (hi = 0: fixed).
inline SplitSpace three_components() {
  Eigen::VectorXd lo = Eigen::VectorXd::Zero(9), hi = Eigen::VectorXd::Ones(9);
  lo[2] = 0.05;  // area.network
  hi[3] = 0.5;   // power.core
  hi[6] = 0.0;   // perimeter.core
  return SplitSpace(3, lo, hi, {"core", "memory", "network"});
}

struct Weights {
  Eigen::VectorXd w;  // 9 works in the point's layout; 0: the term is absent
};

// Smooth: f(x) = Σ_k w_k / x_k over the terms with w_k > 0; +inf when such an x_k ≤ 0.
// Per block, min Σ w_i/x_i s.t. Σ x_i = 1 has x_i ∝ √w_i (Lagrange: w_i/x_i² = λ) and value
// (Σ √w_i)².
//   area      w = (4, 1, 2.25):   √w = (2, 1, 1.5) → x = (0.444, 0.222, 0.333), 4.5² = 20.25
//             (area.network ≥ 0.05 does not bind)
//   power     w = (6.25, 1, 1):  √w ∝ (2.5, 1, 1) would give the core 0.556 > 0.5, so the
//             bound binds: core 0.5, the other two split 0.5 ∝ (1, 1) → 0.25 each;
//             6.25/0.5 + 1/0.25 + 1/0.25 = 20.5
//   perimeter w = (0, 1, 0.25):  √w = (1, 0.5) → x = (0.667, 0.333), 1.5² = 2.25
//   optimum 20.25 + 20.5 + 2.25 = 43
inline Weights smooth_weights() {
  Weights s;
  s.w.resize(9);
  s.w << 4, 1, 2.25, 6.25, 1, 1, 0, 1, 0.25;
  return s;
}
inline Eigen::VectorXd smooth_optimum() {
  Eigen::VectorXd x(9);
  x << 2 / 4.5, 1 / 4.5, 1.5 / 4.5, 0.5, 0.25, 0.25, 0, 2.0 / 3, 1.0 / 3;
  return x;
}
constexpr double kSmoothOptimum = 43.0;

// Block b's term; +inf when a resource with work is ≤ 0.
inline double smooth_block(const Eigen::VectorXd& w, int b, const Eigen::VectorXd& x) {
  double f = 0.0;
  for (int i = 3 * b; i < 3 * b + 3; ++i) {
    if (w[i] == 0.0) continue;
    if (x[i] <= 0.0) return kInf;
    f += w[i] / x[i];
  }
  return f;
}
inline double smooth_time(const Eigen::VectorXd& w, const Eigen::VectorXd& x) {
  return smooth_block(w, 0, x) + smooth_block(w, 1, x) + smooth_block(w, 2, x);
}

// Non-smooth: f(x) = Σ_blocks max_{i in block} w_i / x_i (each budget's slowest component).
// Per block the optimum equalizes the terms: x_i = w_i / Σ w, value Σ w.
//   area      w = (4, 1, 2.25) → x = (0.552, 0.138, 0.310), 7.25
//   power     w = (1, 2, 1)    → x = (0.25, 0.5, 0.25), 4 (core ≤ 0.5 does not bind)
//   perimeter w = (0, 1, 0.25) → x = (0.8, 0.2), 1.25
//   optimum 7.25 + 4 + 1.25 = 12.5
inline Weights max_weights() {
  Weights s;
  s.w.resize(9);
  s.w << 4, 1, 2.25, 1, 2, 1, 0, 1, 0.25;
  return s;
}
inline Eigen::VectorXd max_optimum() {
  Eigen::VectorXd x(9);
  x << 4 / 7.25, 1 / 7.25, 2.25 / 7.25, 0.25, 0.5, 0.25, 0, 0.8, 0.2;
  return x;
}
constexpr double kMaxOptimum = 12.5;

inline double max_block(const Eigen::VectorXd& w, int b, const Eigen::VectorXd& x) {
  double m = 0.0;
  for (int i = 3 * b; i < 3 * b + 3; ++i) {
    if (w[i] == 0.0) continue;
    if (x[i] <= 0.0) return kInf;
    m = std::max(m, w[i] / x[i]);
  }
  return m;
}
inline double max_time(const Eigen::VectorXd& w, const Eigen::VectorXd& x) {
  return max_block(w, 0, x) + max_block(w, 1, x) + max_block(w, 2, x);
}

struct GridResult {
  Eigen::VectorXd x;
  double f = kInf;
  long points = 0;
};

// Dense grid search with the given step over every feasible point whose free coordinates are
// multiples of the step (fixed ones at their bound). Both objectives are sums of per-block
// terms, so the joint minimum is the sum of the per-block minima and each block is searched
// on its own: `block_term(b, x)` is block b's term at a full point x.
inline GridResult grid_search(const SplitSpace& space,
                              const std::function<double(int, const Eigen::VectorXd&)>& block_term,
                              double step = 0.005) {
  GridResult out;
  out.x = space.lower();
  out.f = 0.0;
  const int h = space.components();
  for (int b = 0; b < 3; ++b) {
    Eigen::VectorXd x = space.lower(), best_x = x;
    double best = kInf;
    // Depth-first over the block's coordinates.
    std::function<void(int, double)> walk = [&](int i, double sum) {
      if (i == (b + 1) * h) {
        ++out.points;
        const double v = block_term(b, x);
        if (v < best) {
          best = v;
          best_x = x;
        }
        return;
      }
      const double lo = space.lower()[i], hi = space.upper()[i];
      if (lo == hi) {
        x[i] = lo;
        walk(i + 1, sum + lo);
        return;
      }
      for (long k = static_cast<long>(std::ceil(lo / step - 1e-9));; ++k) {
        const double v = static_cast<double>(k) * step;
        if (v > hi + 1e-12 || sum + v > 1.0 + 1e-12) break;
        x[i] = v;
        walk(i + 1, sum + v);
      }
    };
    walk(b * h, 0.0);
    out.f += best;
    out.x.segment(b * h, h) = best_x.segment(b * h, h);
  }
  return out;
}

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no ConfigError thrown>";
}

}  // namespace pathfinder::test
