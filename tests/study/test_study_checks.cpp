// The summary's checks: unconverged split searches and non-monotone budget sweeps.
#include <catch2/catch.hpp>

#include "engine/config/node.hpp"
#include "engine/study/study_checks.hpp"
#include "tests/study/study_fixtures.hpp"

namespace pathfinder {
namespace {

StudySpec power_sweep() {
  return read_study(ConfigNode::load_string(
      "name: s\nquestion: q\ntemplate: " + test::source_path("templates/a100.yaml") +
          "\nworkload: " + test::source_path("studies/workloads/gpt3_1.3b.yaml") +
          "\ndevices: 8\nsearch: architecture\nsweep:\n  logic: [N7, N5]\n"
          "  budget.power: [300 W, 350 W, 400 W]\n",
      "s.yaml"));
}

// Columns as the runner writes them (the ones the checks read); rows: logic, power, time,
// converged, convergence.
StudyTable table(const std::vector<std::array<std::string, 5>>& rows) {
  StudyTable t;
  t.columns = {"logic", "budget.power", "feasible", "iteration_s", "converged", "convergence"};
  for (const auto& r : rows) t.rows.push_back({r[0], r[1], "1", r[2], r[3], r[4]});
  return t;
}

}  // namespace

TEST_CASE("a monotone, converged sweep has nothing to report", "[study]") {
  const StudyTable t = table({{"N7", "300 W", "2.0", "1", ""},
                              {"N7", "350 W", "1.9", "1", ""},
                              {"N7", "400 W", "1.9", "1", ""},
                              {"N5", "300 W", "1.5", "1", ""},
                              {"N5", "350 W", "1.503", "1", ""},  // +0.2%: within 0.5%
                              {"N5", "400 W", "1.4", "1", ""}});
  CHECK(study_checks(power_sweep(), t).empty());
}

TEST_CASE("a larger budget that is slower, and unconverged searches, are flagged", "[study]") {
  // N5 at 400 W takes 1.6 s against 1.5 s at 350 W: 6.7% slower with more power.
  const StudyTable t = table({{"N7", "300 W", "2.0", "1", ""},
                              {"N7", "350 W", "1.9", "0", "1% of power from L2 to core saves 0.81%"},
                              {"N7", "400 W", "1.9", "1", ""},
                              {"N5", "300 W", "1.5", "1", ""},
                              {"N5", "350 W", "1.5", "1", ""},
                              {"N5", "400 W", "1.6", "0", "1% of area from L1 to core saves 2.00%"}});
  const std::vector<std::string> c = study_checks(power_sweep(), t);
  REQUIRE(c.size() == 2);
  CHECK(c[0] == "2 of 6 split searches did not converge (column converged; rerun with more steps "
                "or restarts), e.g. logic N7, budget.power 350 W: 1% of power from L2 to core saves 0.81%");
  CHECK(c[1].rfind("non-monotone budget.power: 400 W is 6.7% slower than 350 W (logic N5)", 0) == 0);
}

}  // namespace pathfinder
