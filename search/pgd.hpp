// Projected gradient descent with momentum over a SplitSpace (paper §7, eq. 6; the reference's
// GD_search.py, deepflow-reference.md §3.11). Each of options.restarts restarts, in parallel:
//
//   x ← draw_start(restart i), v ← 0, lr ← learning_rate
//   repeat at most `steps` times:
//     g ← ∇f(x) by finite differences (finite_difference.hpp; reused after a rejected step)
//     d ← g normalized per budget block, d_b = g_b / ‖g_b‖ (0 where g_b = 0)
//     v ← β·v − lr·d;   y ← Π(x + v)   (Euclidean projection, SplitSpace::project)
//     f(y) < f(x): accept, v ← y − x (the step actually taken), x ← y
//     otherwise:   reject, v ← 0, lr ← backtrack·lr
//   until converged (best f fell by < tolerance·|f| over `patience` steps), a step or lr below
//   step_tolerance, or a zero gradient.
//
// Choices against the sources:
//   - Heavy-ball momentum on the step, v ← β·v − lr·d, as the issue states eq. 6. The paper
//     averages normalized parameters (M ← β·M + (1 − β)·W/‖W‖) and the reference averages
//     parameters after a normalized-gradient step; both then rescale instead of projecting.
//   - The gradient is normalized per block as the reference does, so lr is a length in budget
//     fractions and the search does not depend on f's unit (seconds or milliseconds).
//   - Backtracking (reject, halve lr, drop momentum) is added: with a fixed lr = 1 the iterates
//     would jump between faces of the simplex. It also makes each restart monotone: its
//     result is its last accepted point.
// Every restart is deterministic (its start depends on (seed, index) only and its gradient is
// thread-count independent) and the best is picked serially, so the result is bit-for-bit the
// same for any number of threads.
#pragma once

#include "search/search_types.hpp"
#include "search/split_space.hpp"

namespace pathfinder {

// Throws ConfigError when options.validate(space.dim()) does; options.algorithm is ignored.
[[nodiscard]] SearchResult minimize_pgd(const Objective& f, const SplitSpace& space,
                                        const SearchOptions& options,
                                        const ProgressCallback& progress = {});

}  // namespace pathfinder
