// pathfinder search STUDY.yaml [--optimizer pgd|cobyla|slsqp|direct|isres] [--restarts S]
//                              [--steps T] [--threads N] [--out PREFIX] [--techlib DIR]
//                              [--set KEY=VALUE]... [--format table|json] [--start FILE]
//                              [--objective time|energy|edp|cost]
//                              [--pareto A,B [--pareto-points K]]
// Searches how a template's area, power and perimeter budgets are split (and, with
// `strategy: search`, the parallelism) for the study's workload; prints the best split, its
// iteration time against the template's own split, the sensitivities, and writes PREFIX.yaml
// (a `split:` block) and PREFIX.csv (one row per strategy searched). Progress goes to stderr
// when it is a terminal.
#include <oneapi/tbb/global_control.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/arch/generator.hpp"
#include "engine/arch/micro_arch_report.hpp"
#include "engine/arch/template_loader.hpp"
#include "engine/cli/commands.hpp"
#include "engine/cli/load.hpp"
#include "engine/cli/search_setup.hpp"
#include "engine/core/file_io.hpp"
#include "engine/core/text.hpp"
#include "engine/parallel/strategy_check.hpp"
#include "engine/explore/pareto.hpp"
#include "engine/explore/pareto_search.hpp"
#include "engine/explore/search_study.hpp"
#include "engine/graph/workload_loader.hpp"

namespace pathfinder::cli {
void add_search_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string study, optimizer, out, techlib, software, format = "table", start, objective,
        pareto;
    int restarts = 0, steps = 0, threads = 0, pareto_points = 5;
    std::vector<std::string> sets;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "search", "Search the budget split (and the parallelism) of a study for its workload");
  cmd->add_option("study", opt->study, "Search study YAML")->required();
  cmd->add_option("--optimizer", opt->optimizer, "pgd, cobyla, slsqp, direct or isres");
  cmd->add_option("--restarts", opt->restarts, "Restarts (S), 1 to 10000");
  cmd->add_option("--steps", opt->steps, "Steps per restart (T), 1 to 1000000");
  cmd->add_option("--threads", opt->threads, "Worker threads, 1 to 1024 (default: all cores)");
  cmd->add_option("--out", opt->out, "Write PREFIX.yaml and PREFIX.csv");
  cmd->add_option("--techlib", opt->techlib, techlib_help());
  cmd->add_option("--software", opt->software,
                  "Software profile name or file, replacing the study's software: key");
  cmd->add_option("--set", opt->sets,
                  "Set a workload, template or technology key as eval does (--set micro_batch=2, "
                  "--set budget.power=300W, --set techlib.network.NVLink3.nominal_lane_rate="
                  "100Gb/s); after the file's budget:")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("--format", opt->format, "Output format")
      ->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--objective", opt->objective,
                  "Minimize time (default), energy, edp or cost, replacing the study's "
                  "objective: key");
  cmd->add_option("--pareto", opt->pareto,
                  "Instead of one objective, the Pareto front of two (time,energy, "
                  "energy,cost, ...): a weighted search per point; --out writes PREFIX.csv");
  cmd->add_option("--pareto-points", opt->pareto_points,
                  "With --pareto: weighted searches, 2 to 101 (default 5)");
  cmd->add_option("--start", opt->start,
                  "Start from the split in FILE's split: block (a previous --out PREFIX.yaml) "
                  "instead of the template's: continue an unconverged search with more steps");
  cmd->callback([opt, cmd, &exit_code] {
    if (cmd->count("--restarts") > 0) {
      check_option_range("--restarts", opt->restarts, 1, kMaxRestarts);
    }
    if (cmd->count("--steps") > 0) check_option_range("--steps", opt->steps, 1, kMaxSteps);
    if (cmd->count("--threads") > 0) check_option_range("--threads", opt->threads, 1, kMaxThreads);
    const PreparedSearch prepared =
        prepare_search(SearchRequest{opt->study, opt->optimizer, opt->restarts, opt->steps,
                                     opt->techlib, opt->software, opt->objective, opt->start,
                                     opt->sets});
    const SearchStudy& study = prepared.study;
    const ArchSpec& spec = prepared.spec;
    const WorkloadSpec& workload = prepared.workload;
    const SoftwareProfile& software = prepared.software;
    const TrainingOptions& training = prepared.training;
    std::optional<oneapi::tbb::global_control> threads;
    if (opt->threads > 0) {
      threads.emplace(oneapi::tbb::global_control::max_allowed_parallelism,
                      static_cast<std::size_t>(opt->threads));
    }
    std::optional<std::array<GoalKind, 2>> pareto;
    if (!opt->pareto.empty()) {
      const SourceLoc at = command_line("--pareto");
      pareto = parse_pareto(opt->pareto, at);
      check_option_range("--pareto-points", opt->pareto_points, 2, 101);
      if (const std::string why = pareto_cost_missing(*pareto, spec); !why.empty()) {
        throw ConfigError(Diagnostic{at, "a cost needs a cost model: " + why});
      }
    }
    const DesignEvaluator e(spec, workload, study.devices, training, study.goal);
    ProgressCallback progress;
    if (isatty(fileno(stderr)) != 0 && opt->format == "table") {
      const std::string unit(goal_unit(study.goal.kind));
      progress = [unit](const SearchProgress& p) {
        std::fprintf(stderr, "\rstep %ld/%ld  best %.6g %s   ", p.step, p.total, p.best_f,
                     unit.c_str());
        std::fflush(stderr);
      };
    }
    // One writer per output folder (as study): PREFIX's folder is locked before the search.
    std::optional<FolderLock> lock;
    if (!opt->out.empty()) {
      const std::filesystem::path dir = std::filesystem::path(opt->out).parent_path();
      lock.emplace(dir.empty() ? std::string(".") : dir.string());
    }
    if (pareto) {
      const ParetoSearch p = pareto_search(study, e, *pareto, opt->pareto_points);
      std::string text;
      if (opt->format == "json") {
        nlohmann::ordered_json j = pareto_search_json(p, e);
        j["study"] = study.name;
        text = j.dump(2) + "\n";
      } else {
        text = study.name + " (" + spec.tmpl.name + ", " + std::to_string(study.devices) +
               " devices)\n" + format_pareto_search(p, e);
      }
      std::fputs(text.c_str(), stdout);
      if (!opt->out.empty()) write_file_atomically(opt->out + ".csv", pareto_search_csv(p, e));
      exit_code = 0;
      return;
    }
    const StudyOutcome o = run_search_study(study, e, progress);
    if (progress) std::fputs("\n", stderr);
    std::optional<MicroArch> arch;  // the micro-architecture the searched split builds
    if (o.search.feasible()) {
      ResourceSplit split(static_cast<int>(spec.tmpl.split.size()));
      split.values() = o.search.x;
      arch = generate_micro_arch(spec, split);
    }
    std::string text;
    if (opt->format == "json") {
      nlohmann::ordered_json j = outcome_json(o, e);
      j["study"] = study.name;
      if (arch) j["micro_architecture"] = to_json(*arch);
      j["inputs"] = {{"study_file", opt->study},         {"template", spec.tmpl.name},
                     {"template_file", study.template_path}, {"workload_file", study.workload_path},
                     {"devices", study.devices},         {"software", software.name},
                     {"pathfinder", PATHFINDER_VERSION}};
      text = j.dump(2) + "\n";
    } else {
      text = study.name + " (" + spec.tmpl.name + ", " + std::to_string(study.devices) +
             " devices)\n" + format_outcome(o, e);
      if (arch) text += "\n" + format_table(*arch);
    }
    std::fputs(text.c_str(), stdout);
    if (!opt->out.empty()) {
      write_file_atomically(opt->out + ".yaml", outcome_yaml(o, e));
      write_file_atomically(opt->out + ".csv", outcome_csv(o));
    }
    exit_code = 0;
  });
}

}  // namespace pathfinder::cli
