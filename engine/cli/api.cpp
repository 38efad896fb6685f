#include "engine/cli/api.hpp"

#include <oneapi/tbb/global_control.h>

#include <algorithm>
#include <optional>

#include "engine/arch/generator.hpp"
#include "engine/arch/micro_arch_report.hpp"
#include "engine/cli/load.hpp"
#include "engine/cli/search_setup.hpp"
#include "engine/cli/validate_file.hpp"
#include "engine/config/node.hpp"
#include "engine/core/file_io.hpp"
#include "engine/explore/design_evaluator.hpp"
#include "engine/explore/goal.hpp"
#include "engine/explore/ranking_report.hpp"
#include "engine/explore/search_study.hpp"
#include "engine/graph/workload_loader.hpp"
#include "engine/parallel/strategy_check.hpp"
#include "engine/perf/perf_report.hpp"
#include "engine/study/study_outputs.hpp"
#include "engine/study/study_runner.hpp"
#include "engine/train/training_model.hpp"
#include "engine/train/training_report.hpp"

namespace pathfinder::api {
namespace {

using cli::command_line;

// The machine's options as the CLI takes them; workload --set values into `workload`.
cli::MachineOptions machine_options(const Machine& m, std::vector<ConfigOverride>* workload) {
  cli::MachineOptions o;
  o.techlib = m.techlib;
  o.software = m.software;
  if (!m.tech.empty()) o.overrides.logic = m.tech;
  if (!m.memory.empty()) o.overrides.memory = m.memory;
  if (!m.network.empty()) o.overrides.network = m.network;
  if (!m.nic.empty()) o.overrides.nic = m.nic;
  for (const std::string& s : m.sets) {
    ConfigOverride c = parse_config_override(s);
    if (cli::route_machine_set(o, c)) continue;
    if (workload == nullptr) {
      throw ConfigError(Diagnostic{command_line("--set " + c.key),
                                   "not a template or techlib. key"});
    }
    workload->push_back(std::move(c));
  }
  return o;
}

nlohmann::ordered_json inputs(const cli::LoadedTemplate& in, const Evaluation& e,
                              const Workload& w) {
  return {{"template", in.tmpl.name},   {"template_file", e.machine.template_path},
          {"workload", w.name},         {"workload_file", e.workload_path},
          {"software", in.software.name}, {"pathfinder", PATHFINDER_VERSION}};
}

}  // namespace

nlohmann::ordered_json validate(const std::vector<std::string>& paths, const std::string& techlib) {
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const std::string& f : paths) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    const std::vector<Diagnostic> diags = cli::validate_file(f, techlib);
    for (const Diagnostic& d : diags) {
      list.push_back({{"file", d.loc.file}, {"line", d.loc.line}, {"col", d.loc.col},
                      {"key", d.loc.key_path}, {"message", d.message}});
    }
    files.push_back({{"file", f}, {"ok", diags.empty()}, {"problems", list}});
  }
  return files;
}

nlohmann::ordered_json arch(const Machine& m) {
  const cli::LoadedTemplate in = cli::load_template_for(m.template_path, machine_options(m, nullptr));
  nlohmann::ordered_json j = to_json(generate_micro_arch(in.lib, in.tmpl));
  j["inputs"] = {{"template", in.tmpl.name},
                 {"template_file", m.template_path},
                 {"logic", in.tmpl.logic},
                 {"pathfinder", PATHFINDER_VERSION}};
  return j;
}

nlohmann::ordered_json evaluate(const Evaluation& e) {
  std::vector<ConfigOverride> workload_sets;
  const cli::LoadedTemplate in =
      cli::load_template_for(e.machine.template_path, machine_options(e.machine, &workload_sets));
  const ArchSpec spec = bind_template(in.lib, in.tmpl);
  const TrainingOptions training = TrainingOptions::from(in.software);
  const Workload w = load_workload(e.workload_path, workload_sets);
  if (e.devices < 0) {
    throw ConfigError(Diagnostic{command_line("devices"), "expected 0 (the strategy's) or more"});
  }
  Strategy strategy = trivial_strategy(w.spec);
  if (!e.strategy.empty() || e.devices > 0) {
    const bool file = e.strategy.ends_with(".yaml") || e.strategy.ends_with(".yml");
    const PartialStrategy p = e.strategy.empty() ? PartialStrategy{}
                              : file ? read_partial_strategy(ConfigNode::load_file(e.strategy))
                                     : parse_partial_strategy(e.strategy);
    strategy = complete_strategy(p, w.spec, e.devices, command_line("devices"));
    validate_strategy(strategy, w.spec, strategy.devices(), command_line("strategy"));
  }
  MicroArch a = generate_micro_arch(spec, ResourceSplit::from_template(in.tmpl));
  reject_unsupported_operands(w.spec, a);
  nlohmann::ordered_json j;
  if (!a.feasible) {
    j = infeasible_json(a, w);
  } else {
    const TrainingResult r = evaluate_training(spec, a, w.spec, strategy, training);
    j = nlohmann::ordered_json::parse(to_json(r, r.strategy.devices()).dump());
  }
  j["inputs"] = inputs(in, e, w);
  return j;
}

nlohmann::ordered_json rank(const Evaluation& e, const std::string& objective, int top) {
  if (e.devices < 1) {
    throw ConfigError(Diagnostic{command_line("devices"), "ranking needs the devices (>= 1)"});
  }
  if (top < 1) throw ConfigError(Diagnostic{command_line("top"), "must be >= 1"});
  std::vector<ConfigOverride> workload_sets;
  const cli::LoadedTemplate in =
      cli::load_template_for(e.machine.template_path, machine_options(e.machine, &workload_sets));
  const ArchSpec spec = bind_template(in.lib, in.tmpl);
  const Workload w = load_workload(e.workload_path, workload_sets);
  Goal goal;
  goal.loc = command_line("objective");
  goal.kind = goal_kind_from(objective, goal.loc);
  if (const std::string why = cost_model_missing(goal, spec); !why.empty()) {
    throw ConfigError(Diagnostic{goal.loc, "a cost needs a cost model: " + why});
  }
  const DesignEvaluator ev(spec, w.spec, e.devices, TrainingOptions::from(in.software), goal);
  RankingCounts counts;
  const std::vector<RankedStrategy> ranked = rank_strategies(
      ev, ResourceSplit::from_template(in.tmpl).values(), nullptr, nullptr,
      best_first_ranks(goal) ? std::max<std::size_t>(static_cast<std::size_t>(top), 2) : 0,
      false, &counts);
  nlohmann::ordered_json j =
      ranking_json(ranked, static_cast<std::size_t>(top), goal.kind, &counts);
  j["inputs"] = inputs(in, e, w);
  return j;
}

nlohmann::ordered_json search(const std::string& search_file, int restarts, int steps,
                              int threads, const std::string& objective) {
  if (restarts < 0 || steps < 0) {
    throw ConfigError(Diagnostic{command_line(restarts < 0 ? "restarts" : "steps"),
                                 "expected 0 (the file's) or more"});
  }
  if (threads < 0 || threads > cli::kMaxThreads) {
    throw ConfigError(Diagnostic{command_line("threads"), "expected 0 (all cores) to 1024"});
  }
  cli::SearchRequest r;
  r.file = search_file;
  r.restarts = restarts;
  r.steps = steps;
  r.objective = objective;
  const cli::PreparedSearch p = cli::prepare_search(r);
  std::optional<oneapi::tbb::global_control> limit;
  if (threads > 0) {
    limit.emplace(oneapi::tbb::global_control::max_allowed_parallelism,
                  static_cast<std::size_t>(threads));
  }
  const DesignEvaluator e(p.spec, p.workload, p.study.devices, p.training, p.study.goal);
  const StudyOutcome o = run_search_study(p.study, e);
  nlohmann::ordered_json j = outcome_json(o, e);
  j["study"] = p.study.name;
  if (o.search.feasible()) {
    ResourceSplit split(static_cast<int>(p.spec.tmpl.split.size()));
    split.values() = o.search.x;
    j["micro_architecture"] = to_json(generate_micro_arch(p.spec, split));
  }
  j["inputs"] = {{"study_file", search_file},          {"template", p.spec.tmpl.name},
                 {"template_file", p.study.template_path}, {"workload_file", p.study.workload_path},
                 {"devices", p.study.devices},           {"software", p.software.name},
                 {"pathfinder", PATHFINDER_VERSION}};
  return j;
}

nlohmann::ordered_json study(const std::string& study_file, const std::string& out_dir,
                             int threads) {
  if (threads < 0 || threads > cli::kMaxThreads) {
    throw ConfigError(Diagnostic{command_line("threads"), "expected 0 (all cores) to 1024"});
  }
  const StudySpec s = load_study(study_file);
  const std::string out = out_dir.empty() ? "results/" + s.name : out_dir;
  std::optional<oneapi::tbb::global_control> limit;
  if (threads > 0) {
    limit.emplace(oneapi::tbb::global_control::max_allowed_parallelism,
                  static_cast<std::size_t>(threads));
  }
  StudyRunOptions o;
  o.out_dir = out;
  o.techlib_dir = cli::techlib_dir_for(load_template(s.templates.front().path), "");
  const FolderLock lock(out);
  const StudyRun run = run_study(s, o);
  const StudyOutputs outputs =
      write_study_outputs(s, run.table, {out, "pathfinder.study(\"" + study_file + "\")", "gnuplot"});
  nlohmann::ordered_json j = study_run_json(s, run, outputs);
  j["inputs"] = {{"study_file", study_file}, {"out", out}, {"pathfinder", PATHFINDER_VERSION}};
  return j;
}

}  // namespace pathfinder::api
