// One function per subcommand; each registers its options on the CLI11 app and returns the
// exit code through the callback's result.
#pragma once

#include <CLI/CLI.hpp>

namespace pathfinder::cli {

void add_arch_command(CLI::App& app, int& exit_code);
void add_eval_command(CLI::App& app, int& exit_code);
// `rank`: eval --strategy search, every valid strategy for --devices ranked.
void add_rank_command(CLI::App& app, int& exit_code);
void add_validate_command(CLI::App& app, int& exit_code);
void add_search_command(CLI::App& app, int& exit_code);
void add_study_command(CLI::App& app, int& exit_code);
// `report DIR`: a study folder's outputs again from its results.csv.
void add_report_command(CLI::App& app, int& exit_code);
// `workload import`: a Hugging Face config.json as a workload file.
void add_workload_command(CLI::App& app, int& exit_code);

}  // namespace pathfinder::cli
