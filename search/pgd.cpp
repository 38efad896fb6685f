#include "search/pgd.hpp"

#include <tbb/parallel_for.h>

#include <cmath>
#include <vector>

#include "search/finite_difference.hpp"
#include "search/progress.hpp"

namespace pathfinder {
namespace {

// d_b = g_b / ‖g_b‖ per budget block; false when every block's gradient is 0.
bool normalized_direction(const Eigen::VectorXd& g, int h, Eigen::VectorXd& d) {
  bool any = false;
  for (int b = 0; b < SplitSpace::kBudgets; ++b) {
    const double n = g.segment(b * h, h).norm();
    if (n > 0.0) {
      d.segment(b * h, h) = g.segment(b * h, h) / n;
      any = true;
    } else {
      d.segment(b * h, h).setZero();
    }
  }
  return any;
}

RestartResult run_restart(const Objective& f, const SplitSpace& space, const SearchOptions& o,
                          int index, detail::ProgressReporter& progress) {
  RestartResult r;
  Start start = draw_start(f, space, o, index);
  r.start = start.x;
  r.x = start.x;
  r.f = start.f;
  r.evaluations = start.evaluations;
  if (!std::isfinite(start.f)) {
    r.stop = StopReason::kNoFeasibleStart;
    progress.add(o.steps, r.f);
    return r;
  }

  FiniteDifference fd(space, o.fd_step);
  Eigen::VectorXd& x = r.x;
  double& fx = r.f;
  Eigen::VectorXd v = Eigen::VectorXd::Zero(space.dim());
  Eigen::VectorXd d(space.dim()), y(space.dim());
  std::vector<double> best(static_cast<std::size_t>(o.steps) + 1);  // best f after step t
  best[0] = fx;
  double lr = o.learning_rate;
  bool have_gradient = false;
  r.stop = StopReason::kBudget;
  for (int t = 1; t <= o.steps; ++t) {
    if (!have_gradient) {
      have_gradient = true;
      if (!normalized_direction(fd.gradient(f, x, fx), space.components(), d)) {
        r.stop = StopReason::kZeroGradient;
        break;
      }
    }
    v = o.momentum * v - lr * d;
    y = x + v;
    space.project_in_place(y);
    const double fy = evaluate_objective(f, y);
    ++r.evaluations;
    r.steps = t;
    bool stop = false;
    if (fy < fx) {
      v = y - x;
      x = y;
      fx = fy;
      have_gradient = false;
      stop = v.norm() < o.step_tolerance;
    } else {
      v.setZero();
      lr *= o.backtrack;
      stop = lr < o.step_tolerance;
    }
    if (stop) r.stop = StopReason::kSmallStep;
    const auto ut = static_cast<std::size_t>(t);
    best[ut] = fx;
    if (!stop && o.tolerance > 0.0 && t >= o.patience &&
        best[ut - static_cast<std::size_t>(o.patience)] - fx <= o.tolerance * std::abs(fx)) {
      r.stop = StopReason::kConverged;
      stop = true;
    }
    progress.add(1, fx);
    if (stop) break;
  }
  progress.add(o.steps - r.steps, fx);  // steps skipped by stopping early count as done
  r.evaluations += fd.evaluations();
  return r;
}

}  // namespace

SearchResult minimize_pgd(const Objective& f, const SplitSpace& space, const SearchOptions& options,
                          const ProgressCallback& progress) {
  options.validate(space.dim());
  std::vector<RestartResult> restarts(static_cast<std::size_t>(options.restarts));
  detail::ProgressReporter reporter(progress, static_cast<long>(options.restarts) * options.steps);
  tbb::parallel_for(0, options.restarts, [&](int i) {
    restarts[static_cast<std::size_t>(i)] = run_restart(f, space, options, i, reporter);
  });
  reporter.finish();
  return summarize(SearchAlgorithm::kPgd, std::move(restarts));
}

}  // namespace pathfinder
