// What a study's plots show (engine/study/plot_data.hpp).
#include "engine/study/plot_data.hpp"

#include <catch2/catch.hpp>

#include "engine/study/study_runner.hpp"
#include "tests/study/study_fixtures.hpp"

namespace pathfinder {

TEST_CASE("plot_data: y by x value and series, feasible points only", "[study]") {
  const StudySpec s = test::fixture_study("study_small");
  StudyRun run = run_study(s, test::run_options(test::fresh_dir("plot-data")));
  REQUIRE(run.table.rows.size() == 4);
  // Point order: logic outermost (N7, N5), memory fastest (HBM2e, HBM3).
  const PlotSpec& p = s.outputs.front();  // iteration_s by logic, series memory
  PlotData d = plot_data(s, p, run.table);
  CHECK(d.x_labels == std::vector<std::string>{"N7", "N5"});
  CHECK(d.series == std::vector<std::string>{"HBM2e", "HBM3"});
  CHECK(*d.y[1][0] == *run.table.number(2, "iteration_s"));  // N5, HBM2e
  CHECK(has_points(d, 0));
  // An infeasible row is no point.
  run.table.rows[2][*run.table.column("feasible")] = "0";
  d = plot_data(s, p, run.table);
  CHECK_FALSE(d.y[1][0].has_value());
  CHECK(d.y[1][1].has_value());
}

TEST_CASE("axis labels carry units, MFU plotted in percent, better is up for throughput",
          "[study]") {
  CHECK(axis_label("iteration_s") == "iteration time (s)");
  CHECK(axis_label("usd_per_mtoken") == "cost per million tokens (USD)");
  CHECK(axis_label("unknown_column") == "unknown_column");
  CHECK(shown("template", "../../templates/h100.yaml") == "h100");
  CHECK(shown("logic", "N5") == "N5");
  CHECK(plotted("mfu", 0.425) == Approx(42.5));
  CHECK(plotted("iteration_s", 0.425) == 0.425);
  CHECK(larger_is_better("tokens_per_s"));
  CHECK_FALSE(larger_is_better("j_per_token"));
}

}  // namespace pathfinder
