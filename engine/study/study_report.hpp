// A study's results as one self-contained HTML page, OUT/report.html (issue 17): the question
// and its answer (the best row by the study's objective), each of its plots as an inline SVG
// chart (a marker per point, its value shown on hover; a legend whose check boxes show and hide
// the series), the feasible rows ranked by the objective with the reasons the others were
// dropped, and the leading rows' time breakdowns as stacked bars. Nothing beside it, nothing
// fetched: it opens as a mail attachment. Every text from the inputs is HTML-escaped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/study/study_spec.hpp"
#include "engine/study/study_table.hpp"

namespace pathfinder {

// & < > " ' as character references: safe in element text and in quoted attributes.
[[nodiscard]] std::string html_escape(std::string_view s);

// `checks`: the study's warnings (study_checks.hpp); `command`: how it was run.
[[nodiscard]] std::string study_report_html(const StudySpec& s, const StudyTable& t,
                                            const std::vector<std::string>& checks,
                                            const std::string& command);

}  // namespace pathfinder
