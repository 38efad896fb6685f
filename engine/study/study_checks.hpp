// What a study's summary should warn about (issue 15): split searches that did not converge
// (the `converged` column, engine/explore/convergence.hpp), and sweeps that are not monotone
// where the axis implies it. A larger power, chip-area, node-area or perimeter budget never
// takes a design's options away (a split leaves any budget share unused, Σ x ≤ 1), so with
// every other axis held it should never be slower; a row that is says the search stopped
// short of the optimum or the model has a kink worth a look.
#pragma once

#include <string>
#include <vector>

#include "engine/study/study_spec.hpp"
#include "engine/study/study_table.hpp"

namespace pathfinder {

// One line per finding, as Markdown-safe plain text (cells quoted with md_code by the caller
// when needed): "3 of 12 split searches did not converge: logic N7, memory HBM2: 1% of power
// from L2 to core saves 0.81%", "power 350 W is 3.1% slower than 300 W (logic N7)". A budget
// step counts as non-monotone above `tolerance` (a fraction of the smaller budget's time).
[[nodiscard]] std::vector<std::string> study_checks(const StudySpec& s, const StudyTable& t,
                                                    double tolerance = 0.005);

}  // namespace pathfinder
