// Shared loading for the subcommands: the technology library next to a template, and the
// options that pick a template's technologies (arch and eval take the same ones).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "engine/arch/arch_template.hpp"
#include "engine/arch/template_loader.hpp"
#include "engine/software/software_profile.hpp"
#include "engine/techlib/tech_library.hpp"

namespace pathfinder::cli {

// The technology library directory for a template, the first of:
//   1. --techlib DIR (flag), the explicit choice for this run;
//   2. the template's own `techlib:` key, relative to the template file;
//   3. $PATHFINDER_TECHLIB, when set and not empty;
//   4. techlib/ beside the template's folder (<template dir>/../techlib), when it exists;
//   5. the shipped library: the source tree's techlib/, compiled in.
// Throws ConfigError at the template's key when the key names no directory.
[[nodiscard]] std::string techlib_dir_for(const ArchTemplate& t, const std::string& flag);
// With `overrides` (techlib --set values) applied to the files defining their technologies.
[[nodiscard]] TechLibrary load_techlib_for(const ArchTemplate& t, const std::string& flag,
                                           const std::vector<ConfigOverride>& overrides = {});
// The text `--help` shows for --techlib: the search order above.
[[nodiscard]] std::string techlib_help();

// The most worker threads --threads may ask for: each TBB worker holds a stack and scratch
// memory, and no machine this runs on has more cores.
inline constexpr int kMaxThreads = 1024;

// Where a problem with a command-line option is reported: `command line: error: OPTION: ...`.
[[nodiscard]] SourceLoc command_line(const std::string& option);
// Throws ConfigError at `command line` naming the option unless min <= value <= max:
//   command line: error: --threads: expected a whole number in [1, 1024], got 99999999
void check_option_range(const char* option, long long value, long long min, long long max);
// A positive, finite number for `option`, else a ConfigError at the option.
void check_option_positive(const char* option, double value);

// --tech, --memory, --network and --techlib.
struct MachineOptions {
  TechOverrides overrides;
  std::string techlib;
  std::string software;  // --software: a profile's name or file; empty: the default
  std::vector<ConfigOverride> template_overrides;  // --set on template keys
  // --set techlib.SECTION.TECHNOLOGY.FIELD=VALUE, the "techlib." prefix removed
  std::vector<ConfigOverride> techlib_overrides;
};
// A --set for the machine: techlib.X.Y.Z to the technology library, a key in a template section
// to the template; true when taken, false when the key belongs to neither (a workload key).
bool route_machine_set(MachineOptions& opt, ConfigOverride o);
void add_machine_options(CLI::App& cmd, MachineOptions& opt);

// A template with the overrides applied, and the technology library it is bound against.
// The template carries the software profile's host costs (with_software).
struct LoadedTemplate {
  ArchTemplate tmpl;
  TechLibrary lib;
  SoftwareProfile software;
};
[[nodiscard]] LoadedTemplate load_template_for(const std::string& template_path,
                                               const MachineOptions& opt);

}  // namespace pathfinder::cli
