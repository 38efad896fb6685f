#include "search/nlopt_search.hpp"

#include <nlopt.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <cmath>
#include <exception>
#include <memory>
#include <type_traits>
#include <vector>

#include "search/finite_difference.hpp"
#include "search/progress.hpp"

namespace pathfinder {
namespace {

struct OptDeleter {
  void operator()(nlopt_opt o) const { nlopt_destroy(o); }
};
using OptPtr = std::unique_ptr<std::remove_pointer_t<nlopt_opt>, OptDeleter>;

nlopt_algorithm nlopt_algorithm_of(SearchAlgorithm a) {
  switch (a) {
    case SearchAlgorithm::kCobyla:
      return NLOPT_LN_COBYLA;
    case SearchAlgorithm::kSlsqp:
      return NLOPT_LD_SLSQP;
    case SearchAlgorithm::kDirect:
      return NLOPT_GN_DIRECT_L;
    case SearchAlgorithm::kIsres:
      return NLOPT_GN_ISRES;
    case SearchAlgorithm::kPgd:
      break;
  }
  PF_ASSERT(false);
  return NLOPT_LN_COBYLA;
}

// One NLopt run: the callback's data.
struct Run {
  const Objective* f = nullptr;
  const SplitSpace* space = nullptr;
  SearchAlgorithm algorithm = SearchAlgorithm::kCobyla;
  nlopt_opt opt = nullptr;
  std::unique_ptr<FiniteDifference> fd;  // slsqp only
  Eigen::VectorXd full, projected;       // scratch: the point in the full space
  long budget = 0, evaluations = 0;
  int calls = 0;
  bool over_budget = false;
  std::exception_ptr error;
  double worst = -std::numeric_limits<double>::infinity();  // largest finite f seen
  Eigen::VectorXd best_x;                                   // best feasible point evaluated
  double best_f = std::numeric_limits<double>::infinity();
  detail::ProgressReporter* progress = nullptr;

  [[nodiscard]] double evaluate(const Eigen::VectorXd& x) {
    const double v = evaluate_objective(*f, x);
    ++evaluations;
    if (std::isfinite(v)) worst = std::max(worst, v);
    if (v < best_f && space->contains(x)) {
      best_f = v;
      best_x = x;
    }
    return v;
  }
  [[nodiscard]] double finite(double v) const {
    if (std::isfinite(v)) return v;
    return std::isfinite(worst) ? worst + std::abs(worst) + 1.0 : 1e30;
  }
  void set_free(const double* z) {
    const auto& free = space->free_coordinates();
    for (std::size_t j = 0; j < free.size(); ++j) full[free[j]] = z[j];
  }
};

double objective(unsigned n, const double* z, double* grad, void* data) {
  Run& run = *static_cast<Run*>(data);
  try {
    if (run.evaluations >= run.budget) {
      run.over_budget = true;
      nlopt_force_stop(run.opt);
      return run.finite(HUGE_VAL);
    }
    ++run.calls;
    const long before = run.evaluations;
    run.set_free(z);
    double value;
    if (run.algorithm == SearchAlgorithm::kDirect) {
      run.projected = run.full;
      run.space->project_in_place(run.projected);
      const double fp = run.evaluate(run.projected);
      value = fp + std::abs(fp) * (run.full - run.projected).norm();
    } else {
      value = run.evaluate(run.full);
    }
    if (grad != nullptr) {
      const auto& free = run.space->free_coordinates();
      if (std::isfinite(value)) {
        const long fd_before = run.fd->evaluations();
        const Eigen::VectorXd& g = run.fd->gradient(*run.f, run.full, value);
        run.evaluations += run.fd->evaluations() - fd_before;
        for (unsigned j = 0; j < n; ++j) grad[j] = g[free[j]];
      } else {
        for (unsigned j = 0; j < n; ++j) grad[j] = 0.0;
      }
    }
    run.progress->add(run.evaluations - before, run.best_f);
    return run.finite(value);
  } catch (...) {
    run.error = std::current_exception();
    nlopt_force_stop(run.opt);
    return HUGE_VAL;
  }
}

// Σ_{i in block} x_i − 1 ≤ 0 over the free coordinates z (fixed ones add their bound).
struct BlockSum {
  const SplitSpace* space = nullptr;
  int block = 0;
  double fixed = 0.0;
};

double block_sum(unsigned n, const double* z, double* grad, void* data) {
  const BlockSum& c = *static_cast<const BlockSum*>(data);
  const auto& free = c.space->free_coordinates();
  const int h = c.space->components();
  double s = c.fixed - 1.0;
  for (unsigned j = 0; j < n; ++j) {
    const bool in = free[j] / h == c.block;
    if (in) s += z[j];
    if (grad != nullptr) grad[j] = in ? 1.0 : 0.0;
  }
  return s;
}

// NLopt setters fail only on arguments this file got wrong.
void check(nlopt_result r) { PF_ASSERT(r > 0); }

StopReason stop_reason(nlopt_result r, const Run& run) {
  switch (r) {
    case NLOPT_FORCED_STOP:
    case NLOPT_MAXEVAL_REACHED:
      return StopReason::kBudget;
    case NLOPT_SUCCESS:
    case NLOPT_STOPVAL_REACHED:
    case NLOPT_FTOL_REACHED:
      return StopReason::kConverged;
    case NLOPT_XTOL_REACHED:
      return StopReason::kSmallStep;
    case NLOPT_ROUNDOFF_LIMITED:
      return StopReason::kRoundoff;
    default:
      return run.over_budget ? StopReason::kBudget : StopReason::kFailed;
  }
}

// One run from `start` (a full point) with `budget` evaluations.
RestartResult run_nlopt(const Objective& f, const SplitSpace& space, const SearchOptions& o,
                        const Eigen::VectorXd& start, long budget, unsigned long rng_seed,
                        detail::ProgressReporter& progress) {
  const auto& free = space.free_coordinates();
  const auto n = static_cast<unsigned>(free.size());
  OptPtr opt(nlopt_create(nlopt_algorithm_of(o.algorithm), n));
  PF_ASSERT(opt != nullptr);
  Run run;
  run.f = &f;
  run.space = &space;
  run.algorithm = o.algorithm;
  run.opt = opt.get();
  run.full = start;
  run.budget = budget;
  run.progress = &progress;
  if (o.algorithm == SearchAlgorithm::kSlsqp) {
    run.fd = std::make_unique<FiniteDifference>(space, o.fd_step);
  }
  std::vector<double> lb(n), ub(n), z(n);
  for (unsigned j = 0; j < n; ++j) {
    lb[j] = space.lower()[free[j]];
    ub[j] = space.upper()[free[j]];
    z[j] = start[free[j]];
  }
  check(nlopt_set_lower_bounds(run.opt, lb.data()));
  check(nlopt_set_upper_bounds(run.opt, ub.data()));
  check(nlopt_set_min_objective(run.opt, objective, &run));
  check(nlopt_set_maxeval(run.opt, static_cast<int>(std::min<long>(budget, 1L << 30))));
  std::vector<BlockSum> sums;
  sums.reserve(SplitSpace::kBudgets);
  const int h = space.components();
  if (o.algorithm != SearchAlgorithm::kDirect) {
    for (int b = 0; b < SplitSpace::kBudgets; ++b) {
      bool has_free = false;
      double fixed = 0.0;
      for (int i = b * h; i < (b + 1) * h; ++i) {
        if (space.lower()[i] < space.upper()[i])
          has_free = true;
        else
          fixed += space.lower()[i];
      }
      if (!has_free || !space.sum_can_bind(b)) continue;
      sums.push_back(BlockSum{&space, b, fixed});
      check(nlopt_add_inequality_constraint(run.opt, block_sum, &sums.back(), 1e-12));
    }
  }
  const bool local =
      o.algorithm == SearchAlgorithm::kCobyla || o.algorithm == SearchAlgorithm::kSlsqp;
  if (local) {
    if (o.tolerance > 0.0) check(nlopt_set_ftol_rel(run.opt, o.tolerance));
    if (o.step_tolerance > 0.0) check(nlopt_set_xtol_abs1(run.opt, o.step_tolerance));
  }
  if (o.algorithm == SearchAlgorithm::kIsres) nlopt_srand(rng_seed);

  double fz = 0.0;
  const nlopt_result status = nlopt_optimize(run.opt, z.data(), &fz);
  if (run.error) std::rethrow_exception(run.error);
  // NLopt's answer may sit a little over a budget: keep its projection if it is better.
  run.set_free(z.data());
  if (!space.contains(run.full)) {
    run.projected = space.project(run.full);
    static_cast<void>(run.evaluate(run.projected));
  }
  RestartResult r;
  r.start = start;
  r.x = run.best_x.size() > 0 ? run.best_x : start;
  r.f = run.best_f;
  r.steps = run.calls;
  r.evaluations = run.evaluations;
  r.stop = stop_reason(status, run);
  return r;
}

}  // namespace

long nlopt_budget(const SplitSpace& space, const SearchOptions& options) {
  if (options.max_evaluations > 0) return options.max_evaluations;
  return static_cast<long>(options.steps) *
         (2 * static_cast<long>(space.free_coordinates().size()) + 1);
}

SearchResult minimize_nlopt(const Objective& f, const SplitSpace& space,
                            const SearchOptions& options, const ProgressCallback& progress) {
  PF_ASSERT(options.algorithm != SearchAlgorithm::kPgd);
  options.validate(space.dim());
  const long budget = nlopt_budget(space, options);
  const SearchAlgorithm a = options.algorithm;
  const bool global = a == SearchAlgorithm::kDirect || a == SearchAlgorithm::kIsres;
  const int runs = global ? 1 : options.restarts;
  const long run_budget = global ? budget * options.restarts : budget;
  detail::ProgressReporter reporter(progress, budget * options.restarts);
  std::vector<RestartResult> restarts(static_cast<std::size_t>(runs));
  if (space.free_coordinates().empty()) {  // nothing to search: the one point
    Start s = draw_start(f, space, options, 0);
    restarts.assign(1, RestartResult{s.x, s.x, s.f, 0, s.evaluations, StopReason::kConverged});
  } else {
    tbb::parallel_for(0, runs, [&](int i) {
      RestartResult& r = restarts[static_cast<std::size_t>(i)];
      Start s;
      if (a == SearchAlgorithm::kDirect) {
        s.x = space.project((space.lower() + space.upper()) / 2.0);  // DIRECT ignores it
      } else {
        s = draw_start(f, space, options, i);
      }
      if (!global && !std::isfinite(s.f)) {
        r = RestartResult{s.x, s.x, s.f, 0, s.evaluations, StopReason::kNoFeasibleStart};
        reporter.add(budget, s.f);
        return;
      }
      // ISRES's generator: a stream apart from the start's draws.
      const auto seed = static_cast<unsigned long>(restart_rng(~options.seed, i)());
      tbb::this_task_arena::isolate(
          [&] { r = run_nlopt(f, space, options, s.x, run_budget, seed, reporter); });
      r.evaluations += s.evaluations;
      if (s.f < r.f) {  // a start the run never beat
        r.x = s.x;
        r.f = s.f;
      }
    });
  }
  reporter.finish();
  return summarize(options.algorithm, std::move(restarts));
}

}  // namespace pathfinder
