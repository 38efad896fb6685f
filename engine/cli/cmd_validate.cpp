// pathfinder validate FILE... : check technology-library files and templates, print every
// problem, exit 2 if there is any.
#include <cstdio>
#include <string>
#include <vector>

#include "engine/arch/template_loader.hpp"
#include "engine/cli/commands.hpp"
#include "engine/cli/load.hpp"
#include "engine/config/node.hpp"
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
    return {Diagnostic{SourceLoc{path, 1, 1, ""},
                       "expected a template (with core:) or a technology library file (with "
                       "logic:, memory: or network:)"}};
  } catch (const ConfigError& e) {
    return e.diagnostics();
  }
}

}  // namespace

void add_validate_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::vector<std::string> files;
    std::string techlib;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("validate", "Check configuration files and list every problem");
  cmd->add_option("files", opt->files, "Templates or technology-library files")->required();
  cmd->add_option("--techlib", opt->techlib, techlib_help());
  cmd->callback([opt, &exit_code] {
    std::size_t problems = 0;
    for (const auto& f : opt->files) {
      const auto diags = validate_file(f, opt->techlib);
      for (const auto& d : diags) std::fprintf(stderr, "%s\n", d.str().c_str());
      if (diags.empty()) std::printf("%s: ok\n", f.c_str());
      problems += diags.size();
    }
    exit_code = problems == 0 ? 0 : 2;
  });
}

}  // namespace pathfinder::cli
