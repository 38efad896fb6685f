// pathfinder validate FILE... : check any input file -- technology library, template, software
// profile, workload, strategy, study or search -- print every problem, exit 2 if there is any.
// The kind is told by the keys a file has (core: a template, kind: a workload, ...).
#include <cstdio>
#include <string>
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

// Problems in one file; empty if it is fine.
std::vector<Diagnostic> validate_file(const std::string& path, const std::string& techlib_flag) {
  try {
    const ConfigNode root = ConfigNode::load_file(path);
    if (root.has("core")) {
      const ArchTemplate t = read_template(root);
      return check_template(t, load_techlib_for(t, techlib_flag));
    }
    if (root.has("logic") || root.has("memory") || root.has("network")) {
      TechLibrary lib;
      load_tech_file_into(root, lib);
      return {};
    }
    if (root.has("kind")) {
      (void)load_workload_file(path);
      return {};
    }
    if (root.has("host") || root.has("overlap")) {
      (void)read_software_profile(root);
      return {};
    }
    if (root.has("sweep") || root.has("points") || root.has("outputs")) {
      // The study and every template, workload and technology it names.
      const StudySpec s = load_study(path);
      (void)load_study_context(s, techlib_dir_for(load_template(s.templates.front().path),
                                                  techlib_flag));
      return {};
    }
    if (root.has("template") && root.has("workload")) {
      (void)load_search_study(path);
      return {};
    }
    for (const char* key : {"tp", "pp", "dp", "micro_batch", "schedule", "split"}) {
      if (root.has(key)) {
        (void)read_partial_strategy(root);
        return {};
      }
    }
    return {Diagnostic{SourceLoc{path, 1, 1, ""},
                       "expected a template (core:), technology library file (logic:, memory:, "
                       "network:), software profile (host:), workload (kind:), study (sweep:, "
                       "points:), search (template: and workload:) or strategy (tp:, pp:, ...)"}};
  } catch (const ConfigError& e) {
    return e.diagnostics();
  }
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
