// pathfinder validate FILE... : check any input file -- technology library, template, software
// profile, workload, strategy, study or search -- print every problem, exit 2 if there is any.
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/cli/commands.hpp"
#include "engine/cli/load.hpp"
#include "engine/cli/validate_file.hpp"

namespace pathfinder::cli {

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
