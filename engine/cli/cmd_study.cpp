// pathfinder study STUDY.yaml [--out DIR] [--threads N] [--max-points N] [--techlib DIR]
// Runs a study (studies/README.md): every point of its sweep in parallel, into DIR/results.csv
// (default results/<study name>), then DIR/summary.md and the study's plots. Rerun after an
// interruption, it evaluates only the points not yet in results.csv. A progress bar with ETA
// goes to stderr when it is a terminal.
#include <oneapi/tbb/global_control.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/cli/commands.hpp"
#include "engine/cli/load.hpp"
#include "engine/cli/mpi_session.hpp"
#include "engine/core/file_io.hpp"
#include "engine/study/study_checks.hpp"
#include "engine/study/study_outputs.hpp"
#include "engine/study/study_runner.hpp"

namespace pathfinder::cli {

void add_study_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string study, out, techlib, software, format = "table", shard;
    std::vector<std::string> sets, merge;
    int threads = 0;
    std::size_t max_points = 0;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "study", "Run a study: a sweep of technologies, budgets and strategies, with CSV, summary and plots");
  cmd->add_option("study", opt->study, "Study YAML (studies/*.yaml)")->required();
  cmd->add_option("--out", opt->out, "Output folder (default: results/<study name>)");
  cmd->add_option("--threads", opt->threads, "Worker threads, 1 to 1024 (default: all cores)");
  cmd->add_option("--max-points", opt->max_points,
                  "Evaluate at most N unfinished points, then stop (rerun to continue)");
  cmd->add_option("--shard", opt->shard,
                  "K/N: evaluate only the K-th of N round-robin shares of the points (one "
                  "machine's part of a sweep; results.csv only, join them with --merge)");
  cmd->add_option("--merge", opt->merge,
                  "Join the results.csv of these folders (the shards' --out) into --out, in point "
                  "order, and write the summary and plots; evaluates nothing")
      ->expected(1, 1 << 20);
  cmd->add_option("--techlib", opt->techlib, techlib_help());
  cmd->add_option("--software", opt->software,
                  "Software profile name or file, replacing the study's software: key");
  cmd->add_option("--set", opt->sets,
                  "Set a workload, template or technology key of every point as eval does "
                  "(--set micro_batch=2, --set budget.power=300W, --set "
                  "techlib.network.NVLink3.nominal_lane_rate=100Gb/s); part of the results' "
                  "settings, so a rerun with other values recomputes")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("--format", opt->format,
                  "table: the rows and files; json: counts, checks, the best row and the files")
      ->check(CLI::IsMember({"table", "json"}));
  cmd->callback([opt, cmd, &exit_code] {
    if (cmd->count("--threads") > 0) check_option_range("--threads", opt->threads, 1, kMaxThreads);
    if (cmd->count("--max-points") > 0) {
      check_option_range("--max-points", opt->max_points, 1, 1LL << 40);
    }
    int shard = 1, shards = 1;
    if (!opt->shard.empty()) {
      const std::size_t slash = opt->shard.find('/');
      const auto number = [](const std::string& t) -> long long {
        if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos) {
          return -1;
        }
        return std::stoll(t);
      };
      const long long k = slash == std::string::npos ? -1 : number(opt->shard.substr(0, slash));
      const long long n = slash == std::string::npos ? -1 : number(opt->shard.substr(slash + 1));
      if (k < 1 || n < 1 || k > n) {
        throw ConfigError(Diagnostic{
            command_line("--shard"),
            "expected K/N with 1 <= K <= N (the K-th of N shares), got \"" +
                escape_for_message(opt->shard) + "\""});
      }
      shard = static_cast<int>(k);
      shards = static_cast<int>(n);
    }
    if (shards > 1 && !opt->merge.empty()) {
      throw ConfigError(Diagnostic{command_line("--merge"),
                                   "joins finished shards; run it without --shard"});
    }
    if (!opt->merge.empty() && cmd->count("--max-points") > 0) {
      throw ConfigError(Diagnostic{command_line("--merge"),
                                   "evaluates nothing; leave out --max-points"});
    }
    StudySpec study = load_study(opt->study);
    MachineOptions machine;
    for (const std::string& text : opt->sets) {
      ConfigOverride o = parse_config_override(text);
      if (!route_machine_set(machine, o)) study.set_workload.push_back(std::move(o));
    }
    study.set_template = machine.template_overrides;
    study.set_techlib = machine.techlib_overrides;
    if (!opt->software.empty()) {
      if (const StudyAxis* axis = study.find_axis(AxisKind::kSoftware)) {
        throw ConfigError(Diagnostic{axis->loc, "the study sweeps software; --software would "
                                                "replace none of its points' profiles"});
      }
      study.software = opt->software;
      study.software_loc = command_line("--software");
      study.softwares.front() = StudyFile{study.software, study.software, study.software_loc};
    }
    const std::string out = opt->out.empty() ? "results/" + study.name : opt->out;
    std::optional<oneapi::tbb::global_control> threads;
    if (opt->threads > 0) {
      threads.emplace(oneapi::tbb::global_control::max_allowed_parallelism,
                      static_cast<std::size_t>(opt->threads));
    }
    StudyRunOptions run_options;
    run_options.out_dir = out;
    // The first template's library (the key's, else the template axis's first), found as
    // engine/cli/load.hpp says.
    run_options.techlib_dir = techlib_dir_for(
        load_template(study.templates.front().path, study.set_template), opt->techlib);
    run_options.max_points = opt->max_points;
    run_options.shard = shard;
    run_options.shards = shards;
    run_options.merge_from = opt->merge;
    const bool terminal = isatty(fileno(stderr)) != 0 && opt->format == "table";
    if (terminal) {
      run_options.progress = [](const StudyProgress& p) {
        std::fprintf(stderr, "\r%s   ", format_progress(p).c_str());
        std::fflush(stderr);
      };
    }
    // Under mpirun each rank evaluates its round-robin share into OUT/.ranks/RANK (resumable as
    // any run), then rank 0 joins them into OUT as --merge does.
    const MpiWorld world = mpi_world();
    if (world.size > 1) {
      if (shards > 1 || !opt->merge.empty()) {
        throw ConfigError(Diagnostic{command_line(shards > 1 ? "--shard" : "--merge"),
                                     "under mpirun the ranks are the shards; leave it out"});
      }
      std::vector<std::string> dirs;
      for (int r = 0; r < world.size; ++r) dirs.push_back(out + "/.ranks/" + std::to_string(r));
      StudyRunOptions mine = run_options;
      mine.out_dir = dirs[static_cast<std::size_t>(world.rank)];
      mine.shard = world.rank + 1;
      mine.shards = world.size;
      mine.progress = {};
      {
        const FolderLock rank_lock(mine.out_dir);
        (void)run_study(study, mine);
      }
      mpi_barrier();
      if (world.rank != 0) {
        exit_code = 0;
        return;
      }
      run_options.merge_from = dirs;
    }
    // One run per folder at a time (a second would interleave its rows and outputs); taking
    // the lock also clears the temporaries of a killed run.
    const FolderLock lock(out);
    const StudyRun run = run_study(study, run_options);
    if (terminal && run.evaluated > 0) std::fputs("\n", stderr);

    if (shards > 1) {  // one machine's part: its rows only; summary and plots after --merge
      if (opt->format == "json") {
        nlohmann::ordered_json j;
        j["study"] = study.name;
        j["shard"] = opt->shard;
        j["points"] = run.points;
        j["shard_points"] = run.shard_points;
        j["done"] = run.table.rows.size();
        j["evaluated"] = run.evaluated;
        j["reused"] = run.reused;
        j["complete"] = run.complete();
        j["files"] = {run.csv_path};
        j["inputs"] = {{"study_file", opt->study}, {"out", out}, {"pathfinder", PATHFINDER_VERSION}};
        std::printf("%s\n", j.dump(2).c_str());
      } else {
        std::printf("%s, shard %d/%d: %zu of its %zu points done (%zu evaluated now)\n",
                    study.name.c_str(), shard, shards, run.table.rows.size(), run.shard_points,
                    run.evaluated);
        if (!run.complete()) std::printf("unfinished: rerun the same command to continue\n");
        std::printf("wrote %s\njoin the shards: pathfinder study %s --merge DIR... --out DIR\n",
                    run.csv_path.c_str(), opt->study.c_str());
      }
      std::fflush(stdout);
      exit_code = 0;
      return;
    }
    std::string command = "pathfinder study " + opt->study + " --out " + out;
    if (!opt->techlib.empty()) command += " --techlib " + opt->techlib;
    if (!opt->software.empty()) command += " --software " + opt->software;
    for (const std::string& text : opt->sets) command += " --set " + text;
    const StudyOutputs outputs = write_study_outputs(study, run.table, {out, command, "gnuplot"});

    if (opt->format == "json") {
      nlohmann::ordered_json j = study_run_json(study, run, outputs);
      j["inputs"] = {{"study_file", opt->study}, {"out", out}, {"pathfinder", PATHFINDER_VERSION}};
      std::printf("%s\n", j.dump(2).c_str());
      std::fflush(stdout);
      exit_code = 0;
      return;
    }
    const std::vector<std::string> checks = study_checks(study, run.table);
    std::printf("%s: %s\n\n%s\n", study.name.c_str(), study.question.c_str(),
                format_rows(study, run.table, 20, false).c_str());
    for (const std::string& c : checks) std::printf("check: %s\n", c.c_str());
    if (!checks.empty()) std::printf("\n");
    if (world.size > 1) {
      std::printf("%zu of %zu points done (evaluated by %d MPI ranks in %s/.ranks",
                  run.table.rows.size(), run.points, world.size, out.c_str());
    } else if (opt->merge.empty()) {
      std::printf("%zu of %zu points done (%zu evaluated now, %zu from %s", run.table.rows.size(),
                  run.points, run.evaluated, run.reused, run.csv_path.c_str());
    } else {
      std::printf("%zu of %zu points done (joined from %s and %zu folders", run.table.rows.size(),
                  run.points, run.csv_path.c_str(), opt->merge.size());
    }
    if (run.dropped > 0) std::printf("; %zu stale rows dropped", run.dropped);
    if (run.invalid > 0) std::printf("; %zu invalid rows not reused", run.invalid);
    std::printf(")\n");
    if (!run.complete()) {
      std::printf(run_options.merge_from.empty()
                      ? "unfinished: rerun the same command to continue\n"
                      : "unfinished: %zu points in no merged folder; run their shards, or rerun "
                        "without --merge to evaluate them\n",
                  run.shard_points - run.table.rows.size());
    }
    std::printf("wrote %s", run.csv_path.c_str());
    for (const std::string& f : outputs.files) std::printf(", %s", f.c_str());
    std::printf("\n");
    std::fflush(stdout);
    for (const std::string& w : outputs.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    exit_code = 0;
  });
}

}  // namespace pathfinder::cli
