// pathfinder validate FILE... : check any input file -- technology library, template, software
// profile, workload, strategy, study or search -- print every problem, exit 2 if there is any.
// The kind is told by the keys a file has (core: a template, kind: a workload, ...).
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/arch/template_loader.hpp"
#include "engine/cli/commands.hpp"
#include "engine/cli/load.hpp"
#include "engine/config/node.hpp"
#include "engine/parallel/strategy.hpp"
#include "engine/explore/search_study.hpp"
#include "engine/graph/workload_loader.hpp"
#include "engine/software/software_profile.hpp"
#include "engine/study/study_runner.hpp"
#include "engine/study/study_spec.hpp"
#include "engine/techlib/techlib_loader.hpp"

namespace pathfinder::cli {
namespace {

constexpr const char* kStrategyKeys[] = {"tp", "pp", "dp", "micro_batch", "schedule", "split"};


// Problems in one file; empty if it is fine. The file is read once in a collecting pass, which
// records every per-key problem (missing, unknown, wrong kind, unit or sign) and goes on; a
// reader's cross-key check ends the pass, and the semantic checks that compare values (a
// template against its technology library, a study's files) run only on a file without per-key
// problems, since stand-in values would make them report problems that are not there.
std::vector<Diagnostic> problems_of(const std::string& path, const std::string& techlib_flag) {
  std::optional<ConfigNode> root;
  try {
    root = ConfigNode::load_file(path).collecting();
    const ConfigNode& r = *root;
    if (r.has("core")) {
      const ArchTemplate t = read_template(r);
      if (!r.problems().empty()) return r.problems();
      return check_template(t, load_techlib_for(t, techlib_flag));
    }
    if (r.has("logic") || r.has("memory") || r.has("network")) {
      TechLibrary lib;
      load_tech_file_into(r, lib);
    } else if (r.has("kind")) {
      (void)read_workload_file(r);
    } else if (r.has("host") || r.has("overlap")) {
      (void)read_software_profile(r);
    } else if (r.has("sweep") || r.has("points") || r.has("outputs")) {
      // The study and every template, workload and technology it names.
      const StudySpec s = read_study(r);
      if (!r.problems().empty()) return r.problems();
      (void)load_study_context(s, techlib_dir_for(load_template(s.templates.front().path),
                                                  techlib_flag));
    } else if (r.has("template") && r.has("workload")) {
      (void)read_search_study(r);
    } else if (std::any_of(std::begin(kStrategyKeys), std::end(kStrategyKeys),
                           [&](const char* k) { return r.has(k); })) {
      (void)read_partial_strategy(r);
    } else {
      return {Diagnostic{SourceLoc{path, 1, 1, ""},
                         "expected a template (core:), technology library file (logic:, memory:, "
                         "network:), software profile (host:), workload (kind:), study (sweep:, "
                         "points:), search (template: and workload:) or strategy (tp:, pp:, ...)"}};
    }
    return r.problems();
  } catch (const ConfigError& e) {
    if (!root) return e.diagnostics();
    root->report(e);  // after the per-key problems found before it
    return root->problems();
  }
}

// In file order (a reader may meet an unknown key only when it finishes its map), this file's
// before those of the files it names.
std::vector<Diagnostic> validate_file(const std::string& path, const std::string& techlib_flag) {
  std::vector<Diagnostic> d = problems_of(path, techlib_flag);
  std::stable_sort(d.begin(), d.end(), [&](const Diagnostic& a, const Diagnostic& b) {
    return std::tuple(a.loc.file != path, a.loc.line, a.loc.col) <
           std::tuple(b.loc.file != path, b.loc.line, b.loc.col);
  });
  return d;
}

}  // namespace

void add_validate_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::vector<std::string> files;
    std::string techlib, format = "table";
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("validate", "Check configuration files and list every problem");
  cmd->add_option("files", opt->files,
                  "Any input files: templates, technology-library files, software profiles, "
                  "workloads, strategies, studies, searches")
      ->required();
  cmd->add_option("--techlib", opt->techlib, techlib_help());
  cmd->add_option("--format", opt->format,
                  "table: 'FILE: ok' on stdout, problems on stderr; json: one object per file "
                  "with its problems (file, line, col, key, message) on stdout")
      ->check(CLI::IsMember({"table", "json"}));
  cmd->callback([opt, &exit_code] {
    std::size_t problems = 0;
    nlohmann::ordered_json files = nlohmann::ordered_json::array();
    for (const auto& f : opt->files) {
      const auto diags = validate_file(f, opt->techlib);
      problems += diags.size();
      if (opt->format == "json") {
        nlohmann::ordered_json list = nlohmann::ordered_json::array();
        for (const auto& d : diags) {
          list.push_back({{"file", d.loc.file}, {"line", d.loc.line}, {"col", d.loc.col},
                          {"key", d.loc.key_path}, {"message", d.message}});
        }
        files.push_back({{"file", f}, {"ok", diags.empty()}, {"problems", list}});
        continue;
      }
      for (const auto& d : diags) std::fprintf(stderr, "%s\n", d.str().c_str());
      if (diags.empty()) std::printf("%s: ok\n", f.c_str());
    }
    if (opt->format == "json") std::printf("%s\n", files.dump(2).c_str());
    exit_code = problems == 0 ? 0 : 2;
  });
}

}  // namespace pathfinder::cli
