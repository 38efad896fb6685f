// pathfinder eval --template T --workload W [--tech N] [--memory M] [--network L]
//                 [--techlib DIR] [--format table|csv|json] [--all-kernels]
//                 [--devices N] [--strategy "tp8-pp8-dp16-mb1-1f1b-recompute=selective" | FILE]
// Times one training iteration of a workload on the template's micro-architecture, kernel by
// kernel; with --strategy or --devices, distributed over the system (GPT workloads). An
// infeasible micro-architecture or a strategy that does not fit in memory is a result:
// reported, exit 0.
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
#include "engine/config/node.hpp"
#include "engine/dist/strategy_check.hpp"
#include "engine/system/system_graph.hpp"
#include "engine/train/distributed_gemm.hpp"
#include "engine/train/lstm_training.hpp"
#include "engine/train/training_report.hpp"

namespace pathfinder::cli {

namespace {

Strategy strategy_from(const std::string& text, int devices) {
  if (text.empty()) {
    Strategy s;
    s.dp = devices;  // data parallelism only
    return s;
  }
  const bool file = text.ends_with(".yaml") || text.ends_with(".yml");
  return file ? read_strategy(ConfigNode::load_file(text)) : parse_strategy(text);
}

std::string distributed(const ArchSpec& spec, const MicroArch& arch, const Workload& w,
                        const std::string& text, int devices, const std::string& format,
                        const TrainingOptions& options) {
  const Strategy s = strategy_from(text, devices);
  if (devices == 0) devices = s.devices();
  validate_strategy(s, w.spec, devices);
  const auto* gpt = std::get_if<GptSpec>(&w.spec);
  if (const auto* lstm = std::get_if<LstmSpec>(&w.spec)) {
    LstmTraining model(*lstm, make_perf_machine(spec, arch),
                       make_system_graph(spec, arch, devices), arch.core.peak.si(), options);
    const TrainingResult r = model.evaluate(s);
    if (format == "json") return to_json(r, devices).dump(2) + "\n";
    if (format == "csv") return to_csv(r, devices);
    return format_table(r, devices, w.name + " on " + arch.name);
  }
  if (const auto* gemm = std::get_if<GemmSpec>(&w.spec)) {
    KernelTimer timer(make_perf_machine(spec, arch));
    const DistributedGemmResult r =
        evaluate_distributed_gemm(*gemm, s, timer, make_system_graph(spec, arch, devices));
    if (format == "json") return to_json(r, s).dump(2) + "\n";
    return format_table(r, s);
  }
  GptTraining model(*gpt, make_perf_machine(spec, arch), make_system_graph(spec, arch, devices),
                    arch.core.peak.si(), options);
  const TrainingResult r = model.evaluate(s);
  if (format == "json") return to_json(r, devices).dump(2) + "\n";
  if (format == "csv") return to_csv(r, devices);
  return format_table(r, devices, w.name + " on " + arch.name);
}

}  // namespace

void add_eval_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string template_path, workload_path, format = "table";
    bool all_kernels = false;
    int devices = 0;
    std::string strategy;
    TrainingOptions training;
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
  cmd->add_option("--devices", opt->devices, "Devices to train on (default: the strategy's)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--strategy", opt->strategy,
                  "Parallelism, e.g. tp8-pp8-dp16-mb1-1f1b-recompute=selective, or a YAML file");
  cmd->add_option("--tp-overlap", opt->training.tensor_comm_overlap,
                  "Fraction of tensor-parallel communication hidden behind compute (default 0)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("!--no-dp-overlap", opt->training.overlap_data_parallel,
                "Start the data-parallel gradient reduction after the backward pass");
  cmd->add_flag("!--no-memory-check", opt->training.check_memory,
                "Time strategies whose footprint exceeds main memory (as the paper's studies)");
  cmd->callback([opt, &exit_code] {
    const LoadedTemplate in = load_template_for(opt->template_path, opt->machine);
    const ArchSpec spec = bind_template(in.lib, in.tmpl);
    const MicroArch arch = generate_micro_arch(spec, ResourceSplit::from_template(in.tmpl));
    const Workload w = load_workload(opt->workload_path);
    std::string out;
    if (arch.feasible && (!opt->strategy.empty() || opt->devices > 0)) {
      out = distributed(spec, arch, w, opt->strategy, opt->devices, opt->format, opt->training);
    } else if (!arch.feasible) {
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
