// Shared loading for the subcommands: the technology library next to a template, and the
// options that pick a template's technologies (arch and eval take the same ones).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "engine/arch/arch_template.hpp"
#include "engine/arch/template_loader.hpp"
#include "engine/techlib/tech_library.hpp"

namespace pathfinder::cli {

// --techlib if given, else $PATHFINDER_TECHLIB, else <template dir>/../techlib.
[[nodiscard]] std::string techlib_dir_for(const std::string& template_path,
                                          const std::string& flag);
[[nodiscard]] TechLibrary load_techlib_for(const std::string& template_path,
                                           const std::string& flag);

// --tech, --memory, --network and --techlib.
struct MachineOptions {
  TechOverrides overrides;
  std::string techlib;
};
void add_machine_options(CLI::App& cmd, MachineOptions& opt);

// A template with the overrides applied, and the technology library it is bound against.
struct LoadedTemplate {
  ArchTemplate tmpl;
  TechLibrary lib;
};
[[nodiscard]] LoadedTemplate load_template_for(const std::string& template_path,
                                               const MachineOptions& opt);

}  // namespace pathfinder::cli
