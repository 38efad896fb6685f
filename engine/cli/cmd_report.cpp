// pathfinder report DIR [--study FILE]
// Rewrites a study folder's summary.md, report.html and plots from its results.csv, for the
// study that wrote it (recorded in DIR/.study) or --study; evaluates nothing. For a folder
// whose results were joined or edited by hand, or after a study's plots: were changed.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "engine/cli/commands.hpp"
#include "engine/core/error.hpp"
#include "engine/core/file_io.hpp"
#include "engine/study/study_outputs.hpp"
#include "engine/study/study_spec.hpp"
#include "engine/study/study_table.hpp"

namespace pathfinder::cli {

void add_report_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string dir, study;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Rewrite a study folder's report.html, summary.md and plots from its results.csv");
  cmd->add_option("dir", opt->dir, "The study's output folder (its --out)")->required();
  cmd->add_option("--study", opt->study,
                  "The study file (default: the one recorded in DIR/.study by the run)");
  cmd->callback([opt, &exit_code] {
    const std::string csv = (std::filesystem::path(opt->dir) / "results.csv").string();
    const std::optional<std::string> text = read_text_file(csv);
    if (!text) {
      throw ConfigError(Diagnostic{SourceLoc{csv, 0, 0, ""},
                                   "cannot read file: expected a study's output folder"});
    }
    std::string study_file = opt->study;
    if (study_file.empty()) {
      const std::string recorded = (std::filesystem::path(opt->dir) / ".study").string();
      const std::optional<std::string> path = read_text_file(recorded);
      if (!path || path->find('\n') != path->size() - 1) {
        throw ConfigError(Diagnostic{SourceLoc{recorded, 0, 0, ""},
                                     "no study recorded in this folder: give --study FILE"});
      }
      study_file = path->substr(0, path->size() - 1);
    }
    const StudySpec s = load_study(study_file);
    const StudyTable t = parse_csv(*text);
    for (const StudyAxis& a : s.axes) {
      if (!t.column(a.name())) {
        throw ConfigError(Diagnostic{SourceLoc{csv, 1, 1, ""},
                                     "no \"" + a.name() + "\" column: not the results of study \"" +
                                         s.name + "\" (" + study_file + ")"});
      }
    }
    for (const char* c : {"feasible", "reason", "iteration_s"}) {
      if (!t.column(c)) {
        throw ConfigError(Diagnostic{SourceLoc{csv, 1, 1, ""},
                                     std::string("no \"") + c + "\" column: not a study's results"});
      }
    }
    const FolderLock lock(opt->dir);
    const StudyOutputs o =
        write_study_outputs(s, t, {opt->dir, "pathfinder report " + opt->dir, "gnuplot"});
    std::printf("%s: %zu rows of %s\nwrote", s.name.c_str(), t.rows.size(), csv.c_str());
    for (std::size_t i = 0; i < o.files.size(); ++i) {
      std::printf("%s %s", i == 0 ? "" : ",", o.files[i].c_str());
    }
    std::printf("\n");
    for (const std::string& w : o.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    exit_code = 0;
  });
}

}  // namespace pathfinder::cli
