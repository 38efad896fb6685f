// pathfinder arch TEMPLATE [--tech N] [--memory M] [--network L] [--format table|yaml|json]
#include <cstdio>
#include <string>

#include "engine/arch/generator.hpp"
#include "engine/arch/micro_arch_report.hpp"
#include "engine/arch/template_loader.hpp"
#include "engine/cli/commands.hpp"
#include "engine/cli/load.hpp"

namespace pathfinder::cli {

void add_arch_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string template_path, techlib, format = "table";
    TechOverrides overrides;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("arch", "Derive the micro-architecture of a template");
  cmd->add_option("template", opt->template_path, "Architecture template YAML")->required();
  cmd->add_option("--tech", opt->overrides.logic, "Logic node replacing the template's (e.g. N5)");
  cmd->add_option("--memory", opt->overrides.memory, "Main-memory technology (e.g. HBM3)");
  cmd->add_option("--network", opt->overrides.network,
                  "Inter-package link technology (e.g. NDR-x8)");
  cmd->add_option("--techlib", opt->techlib, "Technology library directory");
  cmd->add_option("--format", opt->format, "Output format")
      ->check(CLI::IsMember({"table", "yaml", "json"}));
  cmd->callback([opt, &exit_code] {
    const ArchTemplate t = apply_overrides(load_template(opt->template_path), opt->overrides);
    const TechLibrary lib = load_techlib_for(opt->template_path, opt->techlib);
    const MicroArch a = generate_micro_arch(lib, t);
    std::string out;
    if (opt->format == "json") out = to_json(a).dump(2) + "\n";
    else if (opt->format == "yaml") out = to_yaml(to_json(a));
    else out = format_table(a);
    std::fputs(out.c_str(), stdout);
    exit_code = 0;
  });
}

}  // namespace pathfinder::cli
