// pathfinder eval --template T --workload W [--tech N] [--memory M] [--network L]
//                 [--techlib DIR] [--format table|csv|json] [--all-kernels]
// Times one training iteration of a workload on the template's micro-architecture, kernel by
// kernel. An infeasible micro-architecture is a result: reported, exit 0.
#include <cstdio>
#include <string>

#include "engine/arch/arch_spec.hpp"
#include "engine/arch/generator.hpp"
#include "engine/cli/commands.hpp"
#include "engine/cli/load.hpp"
#include "engine/graph/workload_loader.hpp"
#include "engine/perf/graph_timing.hpp"
#include "engine/perf/kernel_timer.hpp"
#include "engine/perf/perf_machine.hpp"
#include "engine/perf/perf_report.hpp"

namespace pathfinder::cli {

void add_eval_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string template_path, workload_path, format = "table";
    bool all_kernels = false;
    MachineOptions machine;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "eval", "Time one training iteration of a workload on a template's micro-architecture");
  cmd->add_option("--template", opt->template_path, "Architecture template YAML")->required();
  cmd->add_option("--workload", opt->workload_path, "Workload YAML (studies/workloads/)")
      ->required();
  add_machine_options(*cmd, opt->machine);
  cmd->add_option("--format", opt->format, "Output format")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  cmd->add_flag("--all-kernels", opt->all_kernels,
                "Table: one row per kernel instead of one per kernel name across layers");
  cmd->callback([opt, &exit_code] {
    const LoadedTemplate in = load_template_for(opt->template_path, opt->machine);
    const ArchSpec spec = bind_template(in.lib, in.tmpl);
    const MicroArch arch = generate_micro_arch(spec, ResourceSplit::from_template(in.tmpl));
    const Workload w = load_workload(opt->workload_path);
    std::string out;
    if (!arch.feasible) {
      if (opt->format == "json") out = infeasible_json(arch, w).dump(2) + "\n";
      else if (opt->format == "csv") out = infeasible_csv(arch);
      else out = format_infeasible_table(arch, w);
    } else {
      KernelTimer timer(make_perf_machine(spec, arch));
      const GraphTiming g = time_workload(w, timer);
      if (opt->format == "json") out = to_json(arch, w, g, timer).dump(2) + "\n";
      else if (opt->format == "csv") out = to_csv(w, g, timer);
      else out = format_table(arch, w, g, timer, opt->all_kernels);
    }
    std::fputs(out.c_str(), stdout);
    exit_code = 0;
  });
}

}  // namespace pathfinder::cli
