// NLopt optimizers beside PGD, for comparison (issue 5), on the same SplitSpace, objective,
// options and result. They run over the free coordinates only (fixed ones stay at their
// bound) with the box as NLopt bounds, and each gets an evaluation budget per restart:
// options.max_evaluations, or 0 → steps × (2·free + 1), what one PGD restart may spend.
//
//   cobyla  LN_COBYLA, local, derivative-free; each budget's Σ ≤ 1 an inequality constraint.
//   slsqp   LD_SLSQP, local; the finite-difference gradient of finite_difference.hpp (its
//           evaluations count against the budget); Σ ≤ 1 as inequality constraints.
//   direct  GN_DIRECT_L, global and deterministic, box only, on
//           f(Π(z)) + |f(Π(z))|·‖z − Π(z)‖ (projection plus a relative penalty for leaving
//           the Σ ≤ 1 set); every point it keeps is a projected one.
//   isres   GN_ISRES, global and stochastic; Σ ≤ 1 as inequality constraints; NLopt's
//           (thread-local) generator seeded from restart_rng(~seed, 0).
//
// The local ones run once per restart, from where PGD's restarts start (draw_start), and
// skip restarts without a feasible start. The global ones run once with restarts × budget
// evaluations: DIRECT is deterministic, and ISRES's population needs generations (on the
// smooth test problem, 10 runs of 1700 evaluations end 17 % above the optimum, one of 17000
// within 1 %). ISRES starts from draw_start(restart 0), DIRECT from the box centre. A +inf
// objective is passed to NLopt as the largest finite value seen in the run plus its magnitude plus
// 1 (1e30 before any), since NLopt's models need numbers. NLopt may return a point a little over a
// Σ ≤ 1 budget: the best point kept is the best feasible point evaluated (the final point is
// projected and evaluated when it is not feasible). Restarts run in parallel, each NLopt run inside
// tbb::this_task_arena::isolate so a thread waiting on nested parallel work never starts another
// run on its stack; every run is deterministic, so the result is the same for any thread count.
#pragma once

#include "search/search_types.hpp"
#include "search/split_space.hpp"

namespace pathfinder {

// options.algorithm must not be kPgd. Throws ConfigError when options.validate(space.dim())
// does.
[[nodiscard]] SearchResult minimize_nlopt(const Objective& f, const SplitSpace& space,
                                          const SearchOptions& options,
                                          const ProgressCallback& progress = {});

// The per-restart evaluation budget NLopt runs get (see above).
[[nodiscard]] long nlopt_budget(const SplitSpace& space, const SearchOptions& options);

}  // namespace pathfinder
