#include "engine/cli/load.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "engine/core/error.hpp"
#include "engine/core/format.hpp"
#include "engine/techlib/techlib_loader.hpp"

namespace pathfinder::cli {

std::string techlib_dir_for(const ArchTemplate& t, const std::string& flag) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!flag.empty()) return flag;
  if (t.techlib) {
    if (!fs::is_directory(*t.techlib, ec)) {
      throw ConfigError(Diagnostic{t.techlib_loc, "no technology library directory at \"" +
                                                      *t.techlib + "\""});
    }
    return *t.techlib;
  }
  if (const char* env = std::getenv("PATHFINDER_TECHLIB"); env != nullptr && *env != '\0') return env;
  const fs::path beside =
      (fs::path(t.file).parent_path() / ".." / "techlib").lexically_normal();
  if (fs::is_directory(beside, ec)) return beside.string();
  return PATHFINDER_SHIPPED_TECHLIB;
}

SourceLoc command_line(const std::string& option) {
  return SourceLoc{"command line", 0, 0, option};
}

void check_option_range(const char* option, long long value, long long min, long long max) {
  if (value >= min && value <= max) return;
  throw ConfigError(Diagnostic{command_line(option),
                               "expected a whole number in [" + std::to_string(min) + ", " +
                                   std::to_string(max) + "], got " + std::to_string(value)});
}

void check_option_positive(const char* option, double value) {
  if (value > 0.0 && std::isfinite(value)) return;
  throw ConfigError(Diagnostic{command_line(option),
                               printf_string("expected a positive number, got %g", value)});
}

TechLibrary load_techlib_for(const ArchTemplate& t, const std::string& flag,
                            const std::vector<ConfigOverride>& overrides) {
  return load_tech_library_dir(techlib_dir_for(t, flag), overrides);
}

bool route_machine_set(MachineOptions& opt, ConfigOverride o) {
  if (o.key.rfind("techlib.", 0) == 0) {
    o.key.erase(0, std::string_view("techlib.").size());
    opt.techlib_overrides.push_back(std::move(o));
    return true;
  }
  if (!is_template_section(o.key.substr(0, o.key.find('.')))) return false;
  opt.template_overrides.push_back(std::move(o));
  return true;
}

std::string techlib_help() {
  return "Technology library directory. Without it: the template's techlib: key (relative to "
         "the template), then $PATHFINDER_TECHLIB, then techlib/ beside the template's folder, "
         "then the shipped library (" PATHFINDER_SHIPPED_TECHLIB ")";
}

void add_machine_options(CLI::App& cmd, MachineOptions& opt) {
  cmd.add_option("--tech", opt.overrides.logic, "Logic node replacing the template's (e.g. N5)");
  cmd.add_option("--memory", opt.overrides.memory, "Main-memory technology (e.g. HBM3)");
  cmd.add_option("--network", opt.overrides.network,
                 "Inter-package link technology (e.g. NDR-x8)");
  cmd.add_option("--nic", opt.overrides.nic,
                 "Scale-out NIC replacing the template's, with its bandwidth, measured "
                 "efficiency, latency and power (techlib nic: HDR200, NDR400, XDR800, RoCE400)");
  cmd.add_option("--techlib", opt.techlib, techlib_help());
  cmd.add_option("--software", opt.software,
                 "Software profile: a name (megatron-lm, megatron-core, nanotron, fsdp, "
                 "deepflow-reference; looked up in software/ beside the template, then the "
                 "shipped templates/software/) or a YAML file. Default: megatron-lm");
}

LoadedTemplate load_template_for(const std::string& template_path, const MachineOptions& opt) {
  // The template first: a missing template is the error to report, not the techlib beside it.
  ArchTemplate t =
      apply_overrides(load_template(template_path, opt.template_overrides), opt.overrides);
  TechLibrary lib = load_techlib_for(t, opt.techlib, opt.techlib_overrides);
  SoftwareProfile software =
      software_for(opt.software, template_path, command_line("--software"));
  t = with_software(std::move(t), software);
  return {std::move(t), std::move(lib), std::move(software)};
}

}  // namespace pathfinder::cli
