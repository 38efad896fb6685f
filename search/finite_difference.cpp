#include "search/finite_difference.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

namespace pathfinder {

FiniteDifference::FiniteDifference(const SplitSpace& space, double step)
    : space_(&space), h_(step), free_(space.free_coordinates()) {
  PF_ASSERT(step > 0.0);
  const std::size_t slots = 2 * free_.size();
  point_.assign(slots, Eigen::VectorXd::Zero(space.dim()));
  at_.assign(slots, 0.0);
  value_.assign(slots, 0.0);
  calls_.assign(slots, 0);
  retry_.reserve(free_.size());
  grad_ = Eigen::VectorXd::Zero(space.dim());
}

void FiniteDifference::evaluate_side(const Objective& f, const Eigen::VectorXd& x, double fx, int k,
                                     double h) {
  const auto s = static_cast<std::size_t>(k);
  const int i = free_[s / 2];
  const double t = (k % 2 == 0) ? std::max(x[i] - h, space_->lower()[i])
                                : std::min(x[i] + h, space_->upper()[i]);
  at_[s] = t;
  if (t == x[i]) {
    value_[s] = fx;  // at a bound: this side is x itself
    return;
  }
  Eigen::VectorXd& p = point_[s];
  p = x;
  p[i] = t;
  value_[s] = evaluate_objective(f, p);
  ++calls_[s];
}

// The difference for pair j from its two slots, written to grad_; false when no side is usable.
bool FiniteDifference::combine(int j, const Eigen::VectorXd& x, double fx) {
  const auto s = static_cast<std::size_t>(2 * j);
  const int i = free_[s / 2];
  const double xm = at_[s], fm = value_[s], xp = at_[s + 1], fp = value_[s + 1];
  const double x0 = x[i];
  double g = 0.0;
  if (std::isfinite(fm) && std::isfinite(fp) && xp > xm) {
    g = (fp - fm) / (xp - xm);
  } else if (std::isfinite(fp) && xp > x0) {
    g = (fp - fx) / (xp - x0);
  } else if (std::isfinite(fm) && xm < x0) {
    g = (fx - fm) / (x0 - xm);
  } else {
    return false;
  }
  grad_[i] = g;
  return true;
}

const Eigen::VectorXd& FiniteDifference::gradient(const Objective& f, const Eigen::VectorXd& x,
                                                  double fx) {
  PF_ASSERT(x.size() == space_->dim() && std::isfinite(fx));
  const int pairs = static_cast<int>(free_.size());
  std::fill(calls_.begin(), calls_.end(), 0L);
  tbb::parallel_for(tbb::blocked_range<int>(0, 2 * pairs), [&](const tbb::blocked_range<int>& r) {
    for (int k = r.begin(); k != r.end(); ++k) evaluate_side(f, x, fx, k, h_);
  });
  retry_.clear();
  for (int j = 0; j < pairs; ++j) {
    if (!combine(j, x, fx)) retry_.push_back(j);
  }
  if (!retry_.empty()) {
    tbb::parallel_for(0, static_cast<int>(retry_.size()), [&](int r) {
      const int j = retry_[static_cast<std::size_t>(r)];
      double h = h_;
      for (int attempt = 0; attempt < 3; ++attempt) {
        h /= 4.0;
        evaluate_side(f, x, fx, 2 * j, h);
        evaluate_side(f, x, fx, 2 * j + 1, h);
        if (combine(j, x, fx)) return;
      }
      grad_[free_[static_cast<std::size_t>(j)]] = 0.0;
    });
  }
  for (long c : calls_) evaluations_ += c;
  return grad_;
}

}  // namespace pathfinder
