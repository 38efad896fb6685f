// pathfinder arch TEMPLATE [--tech N] [--memory M] [--network L] [--techlib DIR]
//                 [--set KEY=VALUE]... [--format table|yaml|json]
#include <cstdio>
#include <string>

#include "engine/arch/generator.hpp"
#include "engine/arch/micro_arch_report.hpp"
#include "engine/cli/commands.hpp"
#include "engine/cli/load.hpp"

namespace pathfinder::cli {

void add_arch_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string template_path, format = "table";
    std::vector<std::string> sets;
    MachineOptions machine;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("arch", "Derive the micro-architecture of a template");
  cmd->add_option("template,--template", opt->template_path, "Architecture template YAML (positional or --template)")->required();
  add_machine_options(*cmd, opt->machine);
  cmd->add_option("--format", opt->format, "Output format")
      ->check(CLI::IsMember({"table", "yaml", "json"}));
  cmd->add_option("--set", opt->sets,
                  "Set a template or technology key, e.g. --set budget.power=300W, --set "
                  "techlib.network.NVLink3.nominal_lane_rate=100Gb/s (repeatable; dotted keys); "
                  "checked as the file's own values")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd->callback([opt, &exit_code] {
    for (const std::string& s : opt->sets) {
      ConfigOverride o = parse_config_override(s);
      if (o.key.rfind("techlib.", 0) == 0) (void)route_machine_set(opt->machine, std::move(o));
      else opt->machine.template_overrides.push_back(std::move(o));
    }
    const LoadedTemplate in = load_template_for(opt->template_path, opt->machine);
    const MicroArch a = generate_micro_arch(in.lib, in.tmpl);
    std::string out;
    if (opt->format == "table") {
      out = format_table(a);
    } else {  // self-describing: what was generated, by which version
      nlohmann::ordered_json j = to_json(a);
      j["inputs"] = {{"template", in.tmpl.name},
                     {"template_file", opt->template_path},
                     {"logic", in.tmpl.logic},
                     {"pathfinder", PATHFINDER_VERSION}};
      out = opt->format == "json" ? j.dump(2) + "\n" : to_yaml(j);
    }
    std::fputs(out.c_str(), stdout);
    exit_code = 0;
  });
}

}  // namespace pathfinder::cli
