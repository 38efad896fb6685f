#include "engine/cli/load.hpp"

#include <cstdlib>
#include <filesystem>
#include <utility>

#include "engine/techlib/techlib_loader.hpp"

namespace pathfinder::cli {

std::string techlib_dir_for(const std::string& template_path, const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("PATHFINDER_TECHLIB"); env != nullptr && *env != '\0') return env;
  const std::filesystem::path p(template_path);
  return (p.parent_path() / ".." / "techlib").lexically_normal().string();
}

TechLibrary load_techlib_for(const std::string& template_path, const std::string& flag) {
  return load_tech_library_dir(techlib_dir_for(template_path, flag));
}

void add_machine_options(CLI::App& cmd, MachineOptions& opt) {
  cmd.add_option("--tech", opt.overrides.logic, "Logic node replacing the template's (e.g. N5)");
  cmd.add_option("--memory", opt.overrides.memory, "Main-memory technology (e.g. HBM3)");
  cmd.add_option("--network", opt.overrides.network,
                 "Inter-package link technology (e.g. NDR-x8)");
  cmd.add_option("--techlib", opt.techlib, "Technology library directory");
}

LoadedTemplate load_template_for(const std::string& template_path, const MachineOptions& opt) {
  // The template first: a missing template is the error to report, not the techlib beside it.
  ArchTemplate t = apply_overrides(load_template(template_path), opt.overrides);
  return {std::move(t), load_techlib_for(template_path, opt.techlib)};
}

}  // namespace pathfinder::cli
