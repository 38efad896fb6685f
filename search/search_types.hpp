// What every split search shares (design.md §5): the objective, the optimizer choice, Options
// with documented defaults and validation, progress, and the result with its reports.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/error.hpp"
#include "search/split_space.hpp"

namespace pathfinder {

// f(x) for a point of a SplitSpace, e.g. the iteration time in seconds. +inf (or NaN, read as
// +inf) marks an infeasible design. Called concurrently from several threads: it must be
// thread-safe (evaluate() is pure, design.md §2). During finite differences it may see points
// up to fd_step over a Σ ≤ 1 budget (never outside the box); it may return +inf there.
using Objective = std::function<double(const Eigen::VectorXd&)>;

// f(x) with NaN read as +inf.
[[nodiscard]] inline double evaluate_objective(const Objective& f, const Eigen::VectorXd& x) {
  const double v = f(x);
  return v == v ? v : std::numeric_limits<double>::infinity();
}

enum class SearchAlgorithm {
  kPgd,     // projected gradient descent with momentum (paper eq. 6), pgd.hpp
  kCobyla,  // NLopt LN_COBYLA: local, derivative-free, Σ ≤ 1 as inequality constraints
  kSlsqp,   // NLopt LD_SLSQP: local, finite-difference gradient, Σ ≤ 1 as constraints
  kDirect,  // NLopt GN_DIRECT_L: global, box only, Σ ≤ 1 by projection + penalty
  kIsres,   // NLopt GN_ISRES: global, stochastic, Σ ≤ 1 as inequality constraints
};
[[nodiscard]] std::string_view to_string(SearchAlgorithm a);  // pgd, cobyla, slsqp, direct, isres
[[nodiscard]] std::optional<SearchAlgorithm> parse_search_algorithm(std::string_view s);
[[nodiscard]] std::vector<std::string> valid_search_algorithms();
// Like parse_search_algorithm, but throws ConfigError at `where`:
//   unknown optimizer "cobila" (expected pgd, cobyla, slsqp, direct or isres); did you mean
//   "cobyla"?
[[nodiscard]] SearchAlgorithm search_algorithm_from(std::string_view s, const SourceLoc& where);

enum class StopReason {
  kBudget,           // step (PGD) or evaluation (NLopt) budget spent
  kConverged,        // best f improved by < tolerance·|f| over `patience` steps (NLopt: ftol)
  kSmallStep,        // accepted step or step length below step_tolerance (NLopt: xtol)
  kZeroGradient,     // every budget block's gradient is 0: stationary
  kNoFeasibleStart,  // no start with a finite objective within start_draws draws
  kRoundoff,         // NLopt: roundoff limited
  kFailed,           // NLopt: generic failure
};
[[nodiscard]] std::string_view to_string(StopReason r);

// Bounds on the work a search may be asked for: restarts each hold a result and run in
// parallel, steps bound every restart's evaluations. Far above the paper's S = 10, T = 100.
inline constexpr int kMaxRestarts = 10'000;
inline constexpr int kMaxSteps = 1'000'000;

// Defaults: the paper's T = 100 and S = 10 (§7), the reference's lr 1 and β 0.9
// (deepflow-reference.md §3.11). Every field is checked by problems().
struct SearchOptions {
  SearchAlgorithm algorithm = SearchAlgorithm::kPgd;
  // S: independent starts, run in parallel; the best is returned. In [1, kMaxRestarts].
  int restarts = 10;
  // T: PGD steps per restart, rejected trial steps included. In [1, kMaxSteps].
  int steps = 100;
  // Initial PGD step length in budget fractions (the gradient is normalized per budget
  // block, so this is how far one step moves each block before projection). > 0.
  double learning_rate = 1.0;
  // β, the momentum of v ← β·v − lr·d. In [0, 1).
  double momentum = 0.9;
  // After a step that does not lower f: lr ← backtrack·lr and v ← 0. In (0, 1).
  double backtrack = 0.5;
  // h, the finite-difference step in budget fractions (0.001 of a 826 mm² die is 0.83 mm²).
  // Central differences; one-sided at the box or where one side is +inf. In (0, 0.5].
  double fd_step = 1e-3;
  // Converged when the best f fell by less than tolerance·|f| over the last `patience`
  // steps. NLopt: ftol_rel. ≥ 0 (0: never).
  double tolerance = 1e-6;
  int patience = 10;  // ≥ 1
  // Stop when an accepted step or the learning rate is shorter (budget fractions); NLopt:
  // xtol_abs. ≥ 0.
  double step_tolerance = 1e-9;
  // NLopt evaluations per restart (DIRECT and ISRES: restarts × this in one run). 0: what
  // PGD may spend, steps × (2·free coordinates + 1). ≥ 0.
  long max_evaluations = 0;
  // Draws per restart until the start has a finite objective. ≥ 1.
  int start_draws = 100;
  // After the search, at most this many greedy 1% budget moves, each taken while it saves
  // more than 0.1% (budget_moves.hpp: the KKT check as a pattern search, which finishes what
  // a gradient step cannot at a roofline kink). In [0, 1000]; 0: none.
  int polish_moves = 30;
  // Restart i draws from restart_rng(seed, i) (split_space.hpp).
  std::uint64_t seed = 1;
  // Restart 0 starts here (projected) instead of a draw, e.g. the template's split. Must
  // have the space's dimension and finite values.
  std::optional<Eigen::VectorXd> initial;

  // Every invalid field, each message naming field, value and rule:
  //   search options: error: momentum: expected a number in [0, 1), got 1.5
  [[nodiscard]] std::vector<Diagnostic> problems() const;
  // Throws ConfigError listing problems(); `dim` (when > 0) also checks `initial`.
  void validate(int dim = 0) const;
};

// Reported while a search runs; `step` counts steps (PGD) or evaluations (NLopt) over all
// restarts, out of at most `total`.
struct SearchProgress {
  long step = 0;
  long total = 0;
  double best_f = std::numeric_limits<double>::infinity();
};
// Called only on the thread that started the search, never concurrently; it may run less
// often than every step. Does not affect the result.
using ProgressCallback = std::function<void(const SearchProgress&)>;

struct RestartResult {
  Eigen::VectorXd start;  // the (projected) start
  Eigen::VectorXd x;      // the best point of this restart (start when none was feasible)
  double f = std::numeric_limits<double>::infinity();
  int steps = 0;         // PGD steps taken; NLopt: objective calls
  long evaluations = 0;  // objective evaluations, finite differences included
  StopReason stop = StopReason::kBudget;
};

struct SearchResult {
  SearchAlgorithm algorithm = SearchAlgorithm::kPgd;
  Eigen::VectorXd x;  // best feasible point over all restarts (ties: lowest restart)
  double f = std::numeric_limits<double>::infinity();
  int best_restart = -1;  // -1: no restart found a finite objective
  std::vector<RestartResult> restarts;
  long evaluations = 0;  // over all restarts
  long steps = 0;        // over all restarts

  [[nodiscard]] bool feasible() const { return best_restart >= 0; }
  // "pgd: f 0.8213 from restart 3 of 10; 16830 evaluations, 812 steps"
  [[nodiscard]] std::string brief_report() const;
  // The brief line, then one line per restart: f, steps, evaluations, why it stopped.
  [[nodiscard]] std::string full_report() const;
};

// Where restart `index` starts: options.initial (projected) for restart 0 when given and
// feasible, else draws from restart_rng(seed, index) until f is finite, at most start_draws
// of them. When none is feasible, x is the first point tried and f = +inf.
struct Start {
  Eigen::VectorXd x;
  double f = std::numeric_limits<double>::infinity();
  long evaluations = 0;
};
[[nodiscard]] Start draw_start(const Objective& f, const SplitSpace& space,
                               const SearchOptions& options, int index);

// The result over these restarts: totals, and the best picked serially (lowest f, ties to the
// lowest index), so the same for any thread count.
[[nodiscard]] SearchResult summarize(SearchAlgorithm algorithm,
                                     std::vector<RestartResult> restarts);

}  // namespace pathfinder
