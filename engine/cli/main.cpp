// pathfinder: design-space exploration for distributed deep-learning training systems.
// Exit codes: 0 success, 2 bad input (config or command line), 1 internal error.
#include <cstdio>
#include <exception>

#include "engine/cli/commands.hpp"
#include "engine/cli/mpi_session.hpp"
#include "engine/core/error.hpp"

namespace {

int run(int argc, char** argv) {
  CLI::App app{"Pathfinder: technology, architecture and parallelism pathfinding for DL training"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("pathfinder ") + PATHFINDER_VERSION);
  int exit_code = 0;
  pathfinder::cli::add_arch_command(app, exit_code);
  pathfinder::cli::add_eval_command(app, exit_code);
  pathfinder::cli::add_rank_command(app, exit_code);
  pathfinder::cli::add_validate_command(app, exit_code);
  pathfinder::cli::add_search_command(app, exit_code);
  pathfinder::cli::add_study_command(app, exit_code);
  pathfinder::cli::add_report_command(app, exit_code);
  pathfinder::cli::add_workload_command(app, exit_code);
  if (argc > 1 && argv[1][0] != '-' && app.get_subcommands([&](CLI::App* sub) {
                                            return sub->get_name() == argv[1];
                                          }).empty()) {
    std::fprintf(stderr,
                 "pathfinder: error: unknown subcommand \"%s\" (expected arch, eval, rank, report, search, study, validate or workload)\n",
                 argv[1]);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, as every other input error: "command line: error: --devices: ...".
    const bool sub = argc > 1 && argv[1][0] != '-';
    std::fprintf(stderr, "command line: error: %s (pathfinder %s%s--help)\n", e.what(),
                 sub ? argv[1] : "", sub ? " " : "");
    return 2;
  } catch (const pathfinder::ConfigError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pathfinder: internal error: %s\n", e.what());
    return 1;
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  const pathfinder::cli::MpiSession mpi(&argc, &argv);
  const int code = run(argc, argv);
  // Under mpirun, a rank that fails ends the others rather than leave them at a barrier.
  if (code != 0) pathfinder::cli::mpi_abort_others(code);
  return code;
}
