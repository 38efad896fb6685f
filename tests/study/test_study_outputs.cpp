// What a study leaves behind: the CSV's form, summary.md, the plots and the progress line.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "engine/core/format.hpp"
#include "engine/study/study_outputs.hpp"
#include "tests/study/study_fixtures.hpp"

namespace pathfinder {

TEST_CASE("the CSV quotes what needs quoting and reads back what it wrote", "[study]") {
  StudyTable t{{"a", "reason", "x"}, {{"N7", "needs 3, has \"2\"", "1.5"}, {"N5", " edge ", ""}}};
  const std::string csv = to_csv(t);
  CHECK(csv == "a,reason,x\nN7,\"needs 3, has \"\"2\"\"\",1.5\nN5,\" edge \",\n");
  std::size_t dropped = 9;
  const StudyTable back = parse_csv(csv, &dropped);
  CHECK(back.columns == t.columns);
  CHECK(back.rows == t.rows);
  CHECK(dropped == 0);
  CHECK(back.number(0, "x") == 1.5);
  CHECK_FALSE(back.number(1, "x"));
  CHECK_FALSE(back.number(0, "reason"));
  // A record with the wrong cell count, and a torn last record, are not rows.
  CHECK(parse_csv("a,b\n1,2\n3\n4,\"5", &dropped).rows.size() == 1);
  CHECK(dropped == 1);
}

// Issue 14 item 7: line breaks became spaces, so a cell with one never matched itself again.
TEST_CASE("the CSV keeps line breaks inside quoted cells and skips a byte order mark",
          "[study][issue14]") {
  StudyTable t{{"label", "x"}, {{"two\nlines", "1"}, {"crlf\r\nend", "2"}}};
  const std::string csv = to_csv(t);
  CHECK(csv == "label,x\n\"two\nlines\",1\n\"crlf\r\nend\",2\n");
  std::size_t dropped = 9;
  CHECK(parse_csv(csv, &dropped).rows == t.rows);
  CHECK(dropped == 0);
  const StudyTable bom = parse_csv("\xEF\xBB\xBF" + csv);
  CHECK(bom.columns == t.columns);
  CHECK(bom.rows == t.rows);
}

TEST_CASE("a study writes its summary and plots", "[study]") {
  const StudySpec s = test::fixture_study("study_small");
  const std::string out = test::fresh_dir("outputs");
  const StudyRun run = run_study(s, test::run_options(out));
  const StudyOutputs o =
      write_study_outputs(s, run.table, {out, "pathfinder study small.yaml --out " + out, "gnuplot"});
  const std::string md = read_text_file(o.summary).value_or("");
  CHECK(md.find("# small-study\n") == 0);
  CHECK(md.find("**Question:** does N5 or HBM3 buy more for GPT-3 1.3B on 8 devices?") != std::string::npos);
  CHECK(md.find("Command: `pathfinder study small.yaml --out " + out + "`") != std::string::npos);
  CHECK(md.find("## Best point\n\nlogic N5, memory HBM3: `tp2-pp2-dp2-mb4-1f1b`") != std::string::npos);
  CHECK(md.find("| logic | memory | strategy | iteration | MFU | tokens/s |") != std::string::npos);
  CHECK(md.find("![small: iteration per logic node](iteration_s_vs_logic.svg)") != std::string::npos);
  const std::string script = read_text_file(out + "/iteration_s_vs_logic.gp").value_or("");
  CHECK(script.find("0 \"N7\" ") != std::string::npos);
  // log_y asked, but the times span less than a decade (5.9-9.0 s): a linear axis, tight.
  CHECK(script.find("set logscale y") == std::string::npos);
  CHECK(script.find("set yrange [5.5") != std::string::npos);
  // Short series names under a key titled with the axis; labels with units; the best marked.
  CHECK(script.find("title 'HBM3'") != std::string::npos);
  CHECK(script.find("set key below horizontal noenhanced title 'main-memory technology'") !=
        std::string::npos);
  CHECK(script.find("set ylabel 'iteration time (s)'") != std::string::npos);
  CHECK(script.find("set xlabel 'logic node'") != std::string::npos);
  CHECK(script.find("'best: N5, HBM3, ") != std::string::npos);  // the summary's best point
  CHECK(script.find("lc rgb 'red' title 'best'") != std::string::npos);
  // MFU is plotted in percent: the data block holds 100 x the CSV's fraction.
  const std::string mfu = read_text_file(out + "/mfu_vs_memory.gp").value_or("");
  CHECK(mfu.find("set ylabel 'MFU (%)'") != std::string::npos);
  const double best_mfu = *run.table.number(3, "mfu");
  CHECK(mfu.find(printf_string(" %.9g", 100.0 * best_mfu)) != std::string::npos);
  if (std::filesystem::exists("/usr/bin/gnuplot")) {
    CHECK(o.warnings.empty());
    for (const char* f : {"iteration_s_vs_logic.svg", "iteration_s_vs_logic.png", "mfu_vs_memory.svg",
                          "mfu_vs_memory.png"}) {
      CHECK(std::filesystem::file_size(out + "/" + f) > 1000);
    }
    CHECK(read_text_file(out + "/iteration_s_vs_logic.svg").value_or("").find("<svg") != std::string::npos);
  }
}

TEST_CASE("a study with explicit points and a template axis: summary and plot by label",
          "[study]") {
  const StudySpec s = test::fixture_study("study_axes");
  const std::string out = test::fresh_dir("outputs-axes");
  const StudyRun run = run_study(s, test::run_options(out));
  const StudyOutputs o = write_study_outputs(s, run.table, {out, "cmd", "/nonexistent/gnuplot"});
  const std::string md = read_text_file(o.summary).value_or("");
  CHECK(md.find("Template `../../../templates/a100.yaml`, `../../../templates/h100.yaml`, workload `" +
                test::source_path("studies/workloads/gpt3_1.3b.yaml") +
                "`, 8 devices, search: per point. 4 points, 4 feasible.") != std::string::npos);
  // The points' strategy axis heads one column, the strategy evaluated another.
  CHECK(md.find("| label | search | strategy | template | chosen strategy | iteration | MFU | "
                "tokens/s |") != std::string::npos);
  // The best point: ranked on the H100 (its strategy cell is empty: nothing fixed).
  CHECK(md.find("## Best point\n\nlabel ranked, search strategy, template ../../../templates/h100.yaml: `") !=
        std::string::npos);
  const std::string script = read_text_file(out + "/iteration_s_vs_label.gp").value_or("");
  CHECK(script.find("0 \"fixed\" ") != std::string::npos);
  CHECK(script.find("1 \"ranked\" ") != std::string::npos);
  CHECK(script.find("title 'h100'") != std::string::npos);  // the template's stem
  // Labels name their series themselves (no "label " prefix in the legend).
  const std::string by_template = read_text_file(out + "/iteration_s_vs_template.gp").value_or("");
  CHECK(by_template.find("title 'fixed'") != std::string::npos);
  CHECK(by_template.find("title 'ranked'") != std::string::npos);
  CHECK(by_template.find("label fixed") == std::string::npos);
}

TEST_CASE("without gnuplot a study still writes its summary, with a warning", "[study]") {
  const StudySpec s = test::fixture_study("study_small");
  const std::string out = test::fresh_dir("no-gnuplot");
  const StudyRun run = run_study(s, test::run_options(out));
  const StudyOutputs o = write_study_outputs(s, run.table, {out, "cmd", "/nonexistent/gnuplot"});
  REQUIRE(o.warnings.size() == 2);
  CHECK(o.warnings[0].find("iteration_s_vs_logic: gnuplot (\"/nonexistent/gnuplot\") not found") == 0);
  CHECK(read_text_file(o.summary).value_or("").find("## Warnings\n\n- iteration_s_vs_logic: ") !=
        std::string::npos);
}

// Issue 14 item 8: a killed run's files are cleared by the next, and every file appears whole.
TEST_CASE("study outputs clear a killed run's gnuplot folders and leave no temporaries",
          "[study][issue14]") {
  const StudySpec s = test::fixture_study("study_small");
  const std::string out = test::fresh_dir("stale");
  const StudyRun run = run_study(s, test::run_options(out));
  std::filesystem::create_directories(out + "/.gnuplot-Ab12Cd/inner");
  write_file_atomically(out + "/.gnuplot-Ab12Cd/inner/x.svg", "torn");
  std::filesystem::create_directories(out + "/.gnuplot-notmine");
  (void)write_study_outputs(s, run.table, {out, "cmd", "/nonexistent/gnuplot"});
  std::vector<std::string> names;
  for (const auto& f : std::filesystem::directory_iterator(out)) names.push_back(f.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{".gnuplot-notmine", ".study", "iteration_s_vs_logic.gp",
                                          "mfu_vs_memory.gp", "report.html", "results.csv",
                                          "summary.md"});
  // An output folder that is a file: an error at the path, nothing written.
  const std::string file = out + "/results.csv";
  try {
    (void)write_study_outputs(s, run.table, {file, "cmd", "/nonexistent/gnuplot"});
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == file + ": error: cannot create folder: Not a directory");
  }
}

TEST_CASE("the table shows the fastest rows when there are many", "[study]") {
  const StudySpec s = test::fixture_study("study_resume");
  const StudyRun run = run_study(s, test::run_options(test::fresh_dir("table")));
  const std::string all = format_rows(s, run.table, 20, false);
  CHECK(all.find("devices  budget.power  strategy") == 0);
  CHECK(all.find("infeasible: ") != std::string::npos);
  const std::string few = format_rows(s, run.table, 3, true);
  CHECK(few.find("(the 3 fastest of 18 points)") != std::string::npos);
  CHECK(few.find("infeasible") == std::string::npos);
  REQUIRE(best_row(run.table));
  CHECK(few.find(run.table.cell(*best_row(run.table), *run.table.column("chosen_strategy"))) != std::string::npos);
}

TEST_CASE("the progress line shows points and the time left", "[study]") {
  CHECK(format_progress({0, 10, 0, 10, 0.0}, 10) == "[..........]  0/10 points  ETA --");
  CHECK(format_progress({6, 10, 4, 8, 20.0}, 10) == "[######....]  6/10 points  ETA 20s");
  CHECK(format_progress({10, 10, 8, 8, 125.0}, 10) == "[##########]  10/10 points  2m05s");
}

}  // namespace pathfinder

namespace pathfinder {

// Issue 14 item 1: gnuplot runs `command` substitution inside double-quoted strings; every
// string of the script is single-quoted (literal), and summary.md escapes Markdown.
TEST_CASE("titles and labels reach the plot script and summary as literal text", "[study][issue14]") {
  const std::string out = test::fresh_dir("issue14_outputs");
  std::remove("/tmp/pathfinder-issue14-unit");
  StudySpec s = test::fixture_study("study_small");
  s.outputs.front().title = "`touch /tmp/pathfinder-issue14-unit` it's";
  const StudyRun run = run_study(s, test::run_options(out));
  const std::string script = plot_script(s, s.outputs.front(), run.table);
  CHECK(script.find("set title '`touch /tmp/pathfinder-issue14-unit` it''s' noenhanced\n") !=
        std::string::npos);
  const StudyOutputs o = write_study_outputs(s, run.table, {out, "cmd `x` | y", "gnuplot"});
  CHECK_FALSE(std::filesystem::exists("/tmp/pathfinder-issue14-unit"));
  const std::string md = read_text_file(o.summary).value_or("");
  CHECK(md.find("Command: ``cmd `x` | y``\n") != std::string::npos);
  CHECK(md.find("![\\`touch /tmp/pathfinder-issue14-unit\\` it's](iteration_s_vs_logic.svg)") !=
        std::string::npos);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("the summary's Pareto front and best point follow the measures' columns",
          "[study][pareto]") {
  // Four points: (time s, energy J, cost USD) = (10, 50, 3), (8, 60, 2), (12, 40, 4),
  // (11, 55, 5); the last is beaten by the first on time and energy. The third is infeasible
  // in the fifth row's copy.
  StudyTable t{{"feasible", "iteration_s", "energy_j", "usd"},
               {{"1", "10", "50", "3"}, {"1", "8", "60", "2"}, {"1", "12", "40", "4"},
                {"1", "11", "55", "5"}, {"0", "", "", ""}}};
  CHECK(pareto_rows(t, {GoalKind::kTime, GoalKind::kEnergy}) == std::vector<std::size_t>{1, 0, 2});
  // Time and cost agree: one point is best on both.
  CHECK(pareto_rows(t, {GoalKind::kTime, GoalKind::kCost}) == std::vector<std::size_t>{1});
  CHECK(best_row(t) == std::optional<std::size_t>(1));
  CHECK(best_row(t, GoalKind::kEnergy) == std::optional<std::size_t>(2));
  // Energy-delay: 500, 480, 480, 605 J s; of the two at 480 the first.
  CHECK(best_row(t, GoalKind::kEnergyDelay) == std::optional<std::size_t>(1));
  CHECK(best_row(t, GoalKind::kCost) == std::optional<std::size_t>(1));
}

}  // namespace pathfinder
