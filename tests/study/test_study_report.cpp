// A study's self-contained HTML report (engine/study/study_report.hpp); the browser test
// (tests/browser/report_test.mjs) opens the same page in Chromium.
#include "engine/study/study_report.hpp"

#include <catch2/catch.hpp>

#include "engine/core/format.hpp"
#include "engine/study/study_runner.hpp"
#include "tests/study/study_fixtures.hpp"

namespace pathfinder {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("html_escape: the five characters HTML gives meaning", "[study][report]") {
  CHECK(html_escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&#39;");
  CHECK(html_escape("N5, HBM3") == "N5, HBM3");
}

TEST_CASE("report.html: the answer, a marker per point, the ranking, escaped text",
          "[study][report]") {
  StudySpec s = test::fixture_study("study_small");
  const StudyRun run = run_study(s, test::run_options(test::fresh_dir("report")));
  REQUIRE(run.table.rows.size() == 4);
  // A name and question no page may run: they must arrive as text.
  s.name = "<script>alert(1)</script>";
  s.question = "does \"N5\" & <b>HBM3</b> win?";
  const std::string h = study_report_html(s, run.table, {"a check <i>"}, "pathfinder study x");
  CHECK(h.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(h.find("<script>alert") == std::string::npos);
  CHECK(h.find("<h1>&lt;script&gt;alert(1)&lt;/script&gt;</h1>") != std::string::npos);
  CHECK(h.find("does &quot;N5&quot; &amp; &lt;b&gt;HBM3&lt;/b&gt; win?") != std::string::npos);
  CHECK(h.find("<li>a check &lt;i&gt;</li>") != std::string::npos);
  // Self-contained: no external script, style sheet or image.
  CHECK(h.find("src=") == std::string::npos);
  CHECK(h.find("href=") == std::string::npos);
  // The answer: N5 with HBM3 is fastest; the runner-up's gap from the two rows' times.
  const double best = *run.table.number(3, "iteration_s");  // N5, HBM3: the last point
  const double second = *run.table.number(2, "iteration_s");  // N5, HBM2e
  REQUIRE(best < second);
  CHECK(h.find("<strong>Best by time: N5, HBM3</strong>") != std::string::npos);
  CHECK(h.find("the runner-up (N5, HBM2e) is " +
               printf_string("%.4g", 100.0 * (second / best - 1.0)) + "% worse") !=
        std::string::npos);
  CHECK(h.find("4 of 4 points feasible.") != std::string::npos);
  // Two plots of 4 points (2 logic x 2 memory), one best marker each; legends with a box a
  // series; four ranked rows; nine breakdown parts drawn for each of the four rows where
  // non-zero.
  CHECK(h.find("id=\"plot-iteration_s_vs_logic\" data-points=\"4\"") != std::string::npos);
  CHECK(h.find("id=\"plot-mfu_vs_memory\" data-points=\"4\"") != std::string::npos);
  CHECK(count(h, "class=\"point") == 8);
  CHECK(count(h, "class=\"point best\"") == 2);
  CHECK(count(h, "<input type=\"checkbox\" checked data-series=") == 4);
  CHECK(count(h, "<tr><td class=\"n\">") == 4);
  CHECK(count(h, "class=\"part\"") >= 4 * 3);  // compute, tensor comm and bubble at least
}

}  // namespace pathfinder
