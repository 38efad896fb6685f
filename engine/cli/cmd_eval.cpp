// pathfinder eval --template T --workload W [--tech N] [--memory M] [--network L]
//                 [--techlib DIR] [--format table|csv|json] [--all-kernels]
//                 [--set KEY=VALUE]... [--micro-batch N] [--global-batch N] [--sequence N]
//                 [--devices N] [--strategy "tp8-pp8-dp16-mb1-1f1b-recompute=selective" | FILE]
//                 [--isolated]
// Times one training iteration of a workload on the template's micro-architecture with the
// training entry point (engine/train/training_model.hpp): with --strategy or --devices,
// distributed over the system; without, on one device (the trivial strategy), its kernels
// listed above the iteration; with --isolated, one GEMM call as a per-call benchmark measures it. An infeasible micro-architecture or a strategy that
// does not fit in memory is a result: reported, exit 0.
#include <algorithm>
#include <cstdio>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/arch/arch_spec.hpp"
#include "engine/arch/generator.hpp"
#include "engine/cli/commands.hpp"
#include "engine/cli/load.hpp"
#include "engine/config/node.hpp"
#include "engine/core/file_io.hpp"
#include "engine/core/format.hpp"
#include "engine/core/text.hpp"
#include "engine/parallel/strategy_check.hpp"
#include "engine/explore/design_evaluator.hpp"
#include "engine/explore/goal.hpp"
#include "engine/explore/pareto.hpp"
#include "engine/explore/ranking_report.hpp"
#include "engine/graph/workload_loader.hpp"
#include "engine/perf/graph_timing.hpp"
#include "engine/perf/kernel_timer.hpp"
#include "engine/perf/perf_machine.hpp"
#include "engine/perf/perf_report.hpp"
#include "engine/train/chrome_trace.hpp"
#include "engine/train/training_model.hpp"
#include "engine/train/training_report.hpp"

namespace pathfinder::cli {

namespace {

// The strategy as written: none (data parallelism over --devices), a YAML file or a string.
PartialStrategy written_strategy(const std::string& text) {
  if (text.empty()) return {};
  const bool file = text.ends_with(".yaml") || text.ends_with(".yml");
  return file ? read_partial_strategy(ConfigNode::load_file(text)) : parse_partial_strategy(text);
}

// A training result as the command prints it: the entry point's report.
std::string training_report(const TrainingResult& r, const Workload& w, const MicroArch& arch,
                            const std::string& format) {
  const int devices = r.strategy.devices();
  if (format == "json") return to_json(r, devices).dump(2) + "\n";
  if (format == "csv") return to_csv(r, devices);
  return format_table(r, devices, w.name + " on " + arch.name);
}

// One device, no strategy: the same evaluation (the trivial strategy), with the kernels of its
// one stage -- the workload's whole graph -- timed and listed above the iteration's report.
std::string single_device_report(const TrainingResult& r, const Workload& w,
                                 const MicroArch& arch, KernelTimer& timer,
                                 const std::string& format, bool all_kernels) {
  const GraphTiming g = time_workload(w, timer);
  const std::size_t critical = static_cast<std::size_t>(r.critical_stage);
  const IterationFigures it{r.feasible, r.iteration_time,
                            critical < r.device_busy.size() ? r.device_busy[critical] : Time{}};
  if (format == "csv") return to_csv(w, g, timer);  // the kernel rows
  if (format == "json") {
    nlohmann::ordered_json j = to_json(arch, w, g, timer, it);
    j["training"] = nlohmann::ordered_json::parse(to_json(r, 1).dump());
    return j.dump(2) + "\n";
  }
  return format_table(arch, w, g, timer, it, all_kernels) + "\n" +
         training_report(r, w, arch, format);
}

// eval --help's footer: the strategy grammar (engine/parallel/strategy.hpp) and the exit status.
constexpr const char* kFooter =
    R"(Strategy (--strategy): tokens joined by '-', in any order, each at most once:
  tpN        tensor-parallel degree (Megatron-LM column/row split)       default 1
  ppN        pipeline stages, each a contiguous range of layers          default 1
  dpN        data-parallel replicas          default --devices/(tp*cp*pp), else 1
  cpN        context parallel: each sequence split over N devices, keys and values
             passed around their ring (GPT, flash attention)            default 1
  ulysses    with cpN: by all-to-all instead (DeepSpeed-Ulysses): heads over the N
             devices for the whole sequence, e.g. tp2-cp4-ulysses
  epN        expert parallel: a mixture of experts' experts over N of the cp x dp
             ranks, tokens sent to them and back by all-to-all (not a device factor)
                                                                          default 1
  etp1       whole experts beside tpN: each rank sends its own tokens' rows; the
             expert group is N of the tp x cp x dp ranks (Megatron-Core's
             --expert-tensor-parallel-size 1)           default: experts split over tp
  mbN        sequences per micro-batch; mb0 = the whole per-replica batch
                                      default the workload's micro_batch (GPT), else 1
  gpipe | 1f1b | interleaved | dualpipe   pipeline schedule                default 1f1b
  vN         model chunks per device, with interleaved only (e.g. interleaved-v2)
  dualpipe   DeepSeek-V3's bidirectional schedule: device d holds stages d and pp-1-d,
             even pp, at least 2 x pp micro-batches; a profile must list it
  sp         sequence parallelism (Korthikanti et al. 2022)
  zero0..zero3                 ZeRO stage                                 default zero0
  recompute=none|selective|full  activation recomputation                 default none
  recompute=MOD+MOD  selective by module (Megatron-Core's --recompute-modules), of
             core_attn (= selective), mla_up_proj, mlp, moe, moe_act, layernorm,
             shared_experts; e.g. recompute=mla_up_proj+mlp
 or the paper's notation (DeepFlow, LSTM and GEMM workloads), optionally followed by
 the tokens above: RC-{kp1}-{kp2}-d{dp}-p{lp} or CR-{kp1}-d{dp}-p{lp} (micro-batch 0).
 A YAML file (*.yaml) holds the same as a string or as a map of tp, tp2, pp, dp,
 cp, ulysses, ep, etp, micro_batch, schedule, virtual_stages, sequence_parallel, zero,
 recompute, split.
 --devices N with a strategy that leaves dp out derives dp = N/(tp*cp*pp); with dp
 written, tp*cp*pp*dp must equal N.
--strategy search --devices N ranks every valid strategy on the template's design and prints
 the best --top N (default 5) with their breakdowns side by side, the gap to the best, a
 reason per row, and how many strategies were dropped and why. By time, only those that can
 be among the best are timed (by a lower bound of their time), and none that recomputes more
 than a twin that fits (never faster); with --pareto or --objective energy/cost every one is.
Examples:
  --strategy tp8-pp8-dp16-mb1-1f1b-sp-zero1-recompute=selective
  --strategy search --devices 1024 --top 10
  --strategy tp8-pp8 --devices 1024                  (dp16, the workload's micro_batch)
  --strategy tp4-pp8-interleaved-v3-recompute=full --devices 512
  --strategy RC-4-2-d8-p2        --strategy CR-8-d8-p1
  --set micro_batch=4 --set global_batch=512         (workload keys, checked as in the file)
Exit status: 0 when the workload was evaluated, including an infeasible design or a
strategy that does not fit in memory (reported as "infeasible: <reason>"; JSON
"feasible": false, "reason", times null); 2 for bad input (a file, a key, an option or a
strategy), with one located message per problem; 1 for an internal error.)";

// eval, or (rank) eval --strategy search with --devices required.
void add_command(CLI::App& app, int& exit_code, bool rank) {
  struct Options {
    std::string template_path, workload_path, format = "table";
    bool all_kernels = false, isolated = false;
    int devices = 0;
    int top = 5;
    std::string strategy, trace;
    std::vector<std::string> sets;
    std::string micro_batch, global_batch, sequence;
    TrainingOptions training;
    MachineOptions machine;
    std::string objective, pareto;
    double max_j_per_token = 0.0, max_usd_per_mtoken = 0.0;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd =
      rank ? app.add_subcommand("rank", "Rank every valid parallelism strategy of a workload on "
                                        "--devices of a template's design (eval --strategy search)")
           : app.add_subcommand("eval", "Time one training iteration of a workload on a "
                                        "template's micro-architecture");
  if (rank) opt->strategy = "search";
  cmd->footer(rank ? std::string() : std::string(kFooter));
  cmd->add_option("template,--template", opt->template_path, "Architecture template YAML (positional or --template)")->required();
  cmd->add_option("--workload", opt->workload_path, "Workload YAML (studies/workloads/)")
      ->required();
  add_machine_options(*cmd, opt->machine);
  cmd->add_option("--format", opt->format, "Output format")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  if (!rank) {
    cmd->add_flag("--all-kernels", opt->all_kernels,
                  "One device: one row per kernel instead of one per kernel name across layers. "
                  "With a strategy: also the first stage's layer kernel by kernel as timed "
                  "(pass, kind, stream, start, time; table and JSON)");
  }
  cmd->add_option("--set", opt->sets,
                  "Set a workload, template or technology key, e.g. --set micro_batch=4, --set "
                  "budget.power=300W, --set techlib.network.NVLink3.nominal_lane_rate=100Gb/s "
                  "(repeatable; dotted keys; a key starting with a template section goes to the "
                  "template, one starting techlib. to the technology library); checked as the "
                  "file's own values")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("--micro-batch", opt->micro_batch, "Same as --set micro_batch=N (GPT)");
  cmd->add_option("--global-batch", opt->global_batch, "Same as --set global_batch=N (GPT)");
  cmd->add_option("--sequence", opt->sequence, "Same as --set sequence=N (GPT, LSTM)");
  CLI::Option* devices = cmd->add_option(
      "--devices", opt->devices,
      rank ? "Devices to train on" : "Devices to train on (default: the strategy's); derives dp "
                                     "when the strategy leaves it out");
  if (rank) {
    devices->required();
    cmd->add_option("--top", opt->top, "How many ranked strategies to print (default 5)");
  }
  const std::string ranking = rank ? "" : "With --strategy search: ";
  cmd->add_option("--objective", opt->objective,
                  ranking + "rank by time (default), energy (J per iteration), edp (energy x "
                            "time) or cost (USD per iteration; needs the template's cost section)");
  cmd->add_option("--max-j-per-token", opt->max_j_per_token,
                  ranking + "drop strategies above this energy per token (J)");
  cmd->add_option("--max-usd-per-mtoken", opt->max_usd_per_mtoken,
                  ranking + "drop strategies above this cost per million tokens (USD)");
  cmd->add_option("--pareto", opt->pareto,
                  ranking + "also print the strategies on the Pareto front of two measures, "
                            "e.g. time,energy or time,cost");
  if (!rank) {
    cmd->add_option("--strategy", opt->strategy,
                    "Parallelism, e.g. tp8-pp8-dp16-mb1-1f1b-recompute=selective, or a YAML "
                    "file (grammar below)");
    cmd->add_option("--top", opt->top,
                    "With --strategy search: how many ranked strategies to print");
    cmd->add_option("--trace", opt->trace,
                    "Also write the iteration's timeline to this file as Chrome/Perfetto "
                    "trace-event JSON (chrome://tracing, ui.perfetto.dev): per pipeline stage, "
                    "every micro-batch's passes, the sends, the gradient reduction, the step, "
                    "the host (GPT-family workloads)");
    cmd->add_flag("--isolated", opt->isolated,
                  "GEMM workloads: time one call as a per-call benchmark does (host dispatch + "
                  "launch latency + device + synchronize, burst clocks) instead of an iteration");
  }
  CLI::Option* tp_overlap =
      cmd->add_option("--tp-overlap", opt->training.tensor_comm_overlap,
                      "Fraction of tensor-parallel communication hidden behind compute "
                      "(default: the software profile's)")
          ->check(CLI::Range(0.0, 1.0));
  CLI::Option* dp_overlap =
      cmd->add_flag("--dp-overlap,!--no-dp-overlap", opt->training.overlap_data_parallel,
                    "Reduce data-parallel gradients (ZeRO-1/2's too) during (or, no-, after) the "
                    "backward pass (default: the software profile's)");
  cmd->add_flag("!--no-memory-check", opt->training.check_memory,
                "Time strategies whose footprint exceeds main memory (as the paper's studies)");
  cmd->callback([opt, cmd, &exit_code, tp_overlap, dp_overlap] {
    if (cmd->count("--devices") > 0) check_option_range("--devices", opt->devices, 1, 1 << 24);
    check_option_range("--top", opt->top, 1, 1000);
    // Every input is read and checked before anything is evaluated or printed.
    // --set goes to the template when its key starts with a template section (budget.power,
    // network.inter_package.max_utilization), else to the workload (micro_batch).
    std::vector<ConfigOverride> overrides;
    for (const std::string& s : opt->sets) {
      ConfigOverride o = parse_config_override(s);
      if (!route_machine_set(opt->machine, o)) overrides.push_back(std::move(o));
    }
    for (const auto& [text, key, option] :
         {std::tuple{&opt->micro_batch, "micro_batch", "--micro-batch"},
          std::tuple{&opt->global_batch, "global_batch", "--global-batch"},
          std::tuple{&opt->sequence, "sequence", "--sequence"}}) {
      if (text->empty()) continue;
      ConfigOverride o = parse_config_override(std::string(key) + "=" + *text);
      o.origin = option;
      overrides.push_back(std::move(o));
    }
    const LoadedTemplate in = load_template_for(opt->template_path, opt->machine);
    const ArchSpec spec = bind_template(in.lib, in.tmpl);
    // The software profile's overlaps, unless the command line sets them.
    TrainingOptions training = TrainingOptions::from(in.software);
    training.check_memory = opt->training.check_memory;
    if (tp_overlap->count() > 0) {
      training.tensor_comm_overlap = opt->training.tensor_comm_overlap;
      training.tensor_comm_chunked = false;
    }
    if (dp_overlap->count() > 0) {
      training.overlap_data_parallel = opt->training.overlap_data_parallel;
      training.overlap_zero_gradients = opt->training.overlap_data_parallel;
    }
    const Workload w = load_workload(opt->workload_path, overrides);
    const bool distribute = !opt->strategy.empty() || opt->devices > 0;
    if (opt->isolated && !std::holds_alternative<GemmSpec>(w.spec)) {
      throw ConfigError(Diagnostic{
          command_line("--isolated"),
          "times one GEMM call; \"" + w.name + "\" is a " +
              std::string(to_string(kind_of(w.spec))) + " workload (a training iteration)"});
    }
    if (opt->isolated && distribute) {
      throw ConfigError(Diagnostic{command_line("--isolated"),
                                   "times one call on one device; leave out --strategy and "
                                   "--devices"});
    }
    const bool search = opt->strategy == "search";
    // What the ranking minimizes and its budgets (engine/explore/goal.hpp): a strategy search's.
    Goal goal;
    std::optional<std::array<GoalKind, 2>> pareto;
    for (const char* o : {"--objective", "--max-j-per-token", "--max-usd-per-mtoken", "--pareto"}) {
      if (cmd->count(o) > 0 && !search) {
        throw ConfigError(Diagnostic{command_line(o), "applies to a strategy search: add "
                                                      "--strategy search (or use rank)"});
      }
    }
    if (!opt->objective.empty()) {
      goal.loc = command_line("--objective");
      goal.kind = goal_kind_from(opt->objective, goal.loc);
    }
    if (cmd->count("--max-j-per-token") > 0) {
      check_option_positive("--max-j-per-token", opt->max_j_per_token);
      goal.max_j_per_token = opt->max_j_per_token;
    }
    if (cmd->count("--max-usd-per-mtoken") > 0) {
      check_option_positive("--max-usd-per-mtoken", opt->max_usd_per_mtoken);
      goal.max_usd_per_mtoken = opt->max_usd_per_mtoken;
      if (goal.kind != GoalKind::kCost) goal.loc = command_line("--max-usd-per-mtoken");
    }
    if (const std::string why = cost_model_missing(goal, spec); !why.empty()) {
      throw ConfigError(Diagnostic{goal.loc, "a cost needs a cost model: " + why});
    }
    if (!opt->pareto.empty()) {
      pareto = parse_pareto(opt->pareto, command_line("--pareto"));
      if (const std::string why = pareto_cost_missing(*pareto, spec); !why.empty()) {
        throw ConfigError(Diagnostic{command_line("--pareto"), "a cost needs a cost model: " + why});
      }
    }
    if (search && opt->devices <= 0) {
      throw ConfigError(Diagnostic{command_line("--strategy"),
                                   "search ranks every strategy for --devices N devices; give "
                                   "--devices"});
    }
    if (!opt->trace.empty() && (search || opt->isolated)) {
      throw ConfigError(Diagnostic{command_line("--trace"),
                                   "traces one evaluated iteration; leave out " +
                                       std::string(search ? "--strategy search" : "--isolated")});
    }
    if (search && opt->isolated) {
      throw ConfigError(Diagnostic{command_line("--isolated"),
                                   "times one call on one device; leave out --strategy search"});
    }
    // Without --strategy or --devices: one device, the trivial strategy (training_model.hpp).
    Strategy strategy = trivial_strategy(w.spec);
    if (distribute && !search) {
      // A strategy string's problems are the option's; a file's carry the file's location.
      const bool file = opt->strategy.ends_with(".yaml") || opt->strategy.ends_with(".yml");
      const SourceLoc where = opt->strategy.empty() ? strategy_source()
                              : file                ? SourceLoc{opt->strategy, 0, 0, ""}
                                                    : command_line("--strategy");
      try {
        strategy = complete_strategy(written_strategy(opt->strategy), w.spec, opt->devices,
                                     command_line("--devices"));
      } catch (const ConfigError& e) {
        const Diagnostic& d = e.diagnostics().front();
        if (file || d.loc.key_path != strategy_source().key_path) throw;
        throw ConfigError(Diagnostic{where, d.message});
      }
      validate_strategy(strategy, w.spec, strategy.devices(), where);
    }

    MicroArch arch = generate_micro_arch(spec, ResourceSplit::from_template(in.tmpl));
    reject_unsupported_operands(w.spec, arch);
    std::string out;
    if (!arch.feasible) {
      if (!opt->trace.empty()) {
        std::fprintf(stderr, "--trace: no trace written: the design is infeasible\n");
      }
      if (opt->format == "json") out = infeasible_json(arch, w).dump(2) + "\n";
      else if (opt->format == "csv") out = infeasible_csv(arch);
      else out = format_infeasible_table(arch, w);
    } else if (opt->isolated) {
      KernelTimer timer(make_perf_machine(spec, arch, PerfMode::kBurst));
      if (opt->format == "json") out = isolated_call_json(arch, w, timer).dump(2) + "\n";
      else if (opt->format == "csv") out = isolated_call_csv(w, timer);
      else out = format_isolated_call(arch, w, timer);
    } else if (search) {
      const DesignEvaluator e(spec, w.spec, opt->devices, training, goal);
      const auto top = static_cast<std::size_t>(opt->top);
      // Under the time goal only the strategies that can be among the top rows (and the
      // runner-up the best's reason names) are timed; a Pareto front needs every one.
      RankingCounts counts;
      const std::vector<RankedStrategy> ranked = rank_strategies(
          e, ResourceSplit::from_template(in.tmpl).values(), nullptr, nullptr,
          pareto || !best_first_ranks(goal) ? 0 : std::max<std::size_t>(top, 2), true, &counts);
      const std::vector<std::size_t> front =
          pareto ? pareto_front(ranked, (*pareto)[0], (*pareto)[1]) : std::vector<std::size_t>{};
      if (opt->format == "json") {
        nlohmann::ordered_json j = ranking_json(ranked, top, goal.kind, &counts);
        if (pareto) j["pareto"] = pareto_json(ranked, front, *pareto);
        out = j.dump(2) + "\n";
      } else if (opt->format == "csv") {
        out = ranking_csv(ranked, top);
      } else {
        out = format_ranking(ranked, top,
                             w.name + " on " + std::to_string(opt->devices) + " x " + arch.name,
                             goal.kind, &counts);
        if (pareto) out += "\n" + format_pareto(ranked, front, *pareto);
      }
    } else {
      TrainingResult r;
      // Kept for what reads the model again: the trace and --all-kernels' layer.
      std::optional<TrainingModel> model;
      if (opt->trace.empty() && !(distribute && opt->all_kernels)) {
        r = evaluate_training(spec, arch, w.spec, strategy, training);
      } else {
        model.emplace(spec, arch, w.spec, strategy.devices(), training);
        r = model->evaluate(strategy);
      }
      if (!opt->trace.empty()) {
        // Two passes per micro-batch, chunk and stage, one event each: beyond what trace
        // viewers open (and hundreds of MB of JSON).
        constexpr double kMaxTracePasses = 500'000;
        const double passes = 2.0 * static_cast<double>(r.micro_batches) * strategy.pp *
                              (strategy.schedule == PipelineSchedule::kInterleaved
                                   ? strategy.virtual_stages
                                   : 1);
        if (r.feasible && passes > kMaxTracePasses) {
          throw ConfigError(Diagnostic{
              command_line("--trace"),
              printf_string("%.0f passes (2 x %lld micro-batches x stages x chunks): more than "
                            "%.0f, beyond what trace viewers open; trace a smaller global batch "
                            "(--global-batch)",
                            passes, static_cast<long long>(r.micro_batches), kMaxTracePasses)});
        }
        if (strategy.schedule == PipelineSchedule::kDualPipe && strategy.pp > 1) {
          throw ConfigError(Diagnostic{
              command_line("--trace"),
              "the dualpipe schedule is timed by the DeepSeek-V3 report's bubble formula, not "
              "pass by pass: there is no timeline to trace (trace a 1f1b or interleaved "
              "strategy)"});
        }
        const std::optional<Timeline> t = model->timeline(strategy, r);
        if (!t) {
          throw ConfigError(Diagnostic{command_line("--trace"),
                                       std::string(std::holds_alternative<GemmSpec>(w.spec)
                                                       ? "a GEMM workload"
                                                       : "the LSTM workload") +
                                           " is timed without a pipeline timeline; traces are "
                                           "for GPT-family workloads"});
        }
        if (!r.feasible) {
          std::fprintf(stderr, "--trace: no trace written: the design is infeasible\n");
        } else {
          write_file_atomically(opt->trace,
                                chrome_trace(*t, {{"template", in.tmpl.name},
                                                  {"workload", w.name},
                                                  {"strategy", to_string(strategy)},
                                                  {"software", in.software.name},
                                                  {"pathfinder", PATHFINDER_VERSION}})
                                        .dump(1) +
                                    "\n");
        }
      }
      if (distribute) {
        out = training_report(r, w, arch, opt->format);
        // --all-kernels: one layer's kernels as timed, after the report (table and JSON).
        if (opt->all_kernels && r.feasible && opt->format != "csv") {
          if (const auto layer = model->layer_kernels(strategy)) {
            if (opt->format == "json") {
              nlohmann::ordered_json j = nlohmann::ordered_json::parse(out);
              j["layer_kernels"] = layer_kernels_json(*layer);
              out = j.dump(2) + "\n";
            } else {
              out += layer_kernels_table(*layer);
            }
          }
        }
      } else {
        KernelTimer timer(make_perf_machine(spec, arch));
        // The kernel table shows the graph the iteration was timed on: the software profile's
        // FP8 linear layers, attention kernel and loss included.
        Workload shown = w;
        if (const auto* gpt = std::get_if<GptSpec>(&w.spec)) {
          shown.graph = build_gpt_graph(*gpt, software_partition(training, gpt->precision));
        }
        out = single_device_report(r, shown, arch, timer, opt->format, opt->all_kernels);
      }
    }
    if (opt->format == "json") {  // self-describing: what was evaluated, by which version
      nlohmann::ordered_json j = nlohmann::ordered_json::parse(out);
      j["inputs"] = {{"template", in.tmpl.name},   {"template_file", opt->template_path},
                     {"workload", w.name},         {"workload_file", opt->workload_path},
                     {"software", in.software.name}, {"pathfinder", PATHFINDER_VERSION}};
      out = j.dump(2) + "\n";
    }
    std::fputs(out.c_str(), stdout);
    exit_code = 0;
  });
}

}  // namespace

void add_eval_command(CLI::App& app, int& exit_code) { add_command(app, exit_code, false); }
void add_rank_command(CLI::App& app, int& exit_code) { add_command(app, exit_code, true); }

}  // namespace pathfinder::cli
