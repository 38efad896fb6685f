#include "engine/cli/validate_file.hpp"

#include <algorithm>
#include <iterator>
#include <optional>
#include <tuple>

#include "engine/arch/template_loader.hpp"
#include "engine/cli/load.hpp"
#include "engine/config/node.hpp"
#include "engine/explore/search_study.hpp"
#include "engine/graph/workload_loader.hpp"
#include "engine/parallel/strategy.hpp"
#include "engine/software/software_profile.hpp"
#include "engine/study/study_runner.hpp"
#include "engine/study/study_spec.hpp"
#include "engine/techlib/techlib_loader.hpp"

namespace pathfinder::cli {
namespace {

constexpr const char* kStrategyKeys[] = {"tp", "pp", "dp", "micro_batch", "schedule", "split"};

// Problems in one file, as found (validate_file.hpp).
std::vector<Diagnostic> problems_of(const std::string& path, const std::string& techlib_flag) {
  std::optional<ConfigNode> root;
  try {
    root = ConfigNode::load_file(path).collecting();
    const ConfigNode& r = *root;
    if (r.has("core")) {
      const ArchTemplate t = read_template(r);
      if (!r.problems().empty()) return r.problems();
      return check_template(t, load_techlib_for(t, techlib_flag));
    }
    if (r.has("logic") || r.has("memory") || r.has("network")) {
      TechLibrary lib;
      load_tech_file_into(r, lib);
    } else if (r.has("kind")) {
      (void)read_workload_file(r);
    } else if (r.has("host") || r.has("overlap")) {
      (void)read_software_profile(r);
    } else if (r.has("sweep") || r.has("points") || r.has("outputs")) {
      // The study and every template, workload and technology it names.
      const StudySpec s = read_study(r);
      if (!r.problems().empty()) return r.problems();
      (void)load_study_context(s, techlib_dir_for(load_template(s.templates.front().path),
                                                  techlib_flag));
    } else if (r.has("template") && r.has("workload")) {
      (void)read_search_study(r);
    } else if (std::any_of(std::begin(kStrategyKeys), std::end(kStrategyKeys),
                           [&](const char* k) { return r.has(k); })) {
      (void)read_partial_strategy(r);
    } else {
      return {Diagnostic{SourceLoc{path, 1, 1, ""},
                         "expected a template (core:), technology library file (logic:, memory:, "
                         "network:), software profile (host:), workload (kind:), study (sweep:, "
                         "points:), search (template: and workload:) or strategy (tp:, pp:, ...)"}};
    }
    return r.problems();
  } catch (const ConfigError& e) {
    if (!root) return e.diagnostics();
    root->report(e);  // after the per-key problems found before it
    return root->problems();
  }
}

}  // namespace

std::vector<Diagnostic> validate_file(const std::string& path, const std::string& techlib_flag) {
  std::vector<Diagnostic> d = problems_of(path, techlib_flag);
  std::stable_sort(d.begin(), d.end(), [&](const Diagnostic& a, const Diagnostic& b) {
    return std::tuple(a.loc.file != path, a.loc.line, a.loc.col) <
           std::tuple(b.loc.file != path, b.loc.line, b.loc.col);
  });
  return d;
}

}  // namespace pathfinder::cli
