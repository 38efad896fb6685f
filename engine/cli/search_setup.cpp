#include "engine/cli/search_setup.hpp"

#include "engine/arch/template_loader.hpp"
#include "engine/cli/load.hpp"
#include "engine/config/node.hpp"
#include "engine/explore/goal.hpp"
#include "engine/graph/workload_loader.hpp"
#include "engine/parallel/strategy_check.hpp"

namespace pathfinder::cli {

PreparedSearch prepare_search(const SearchRequest& r) {
  PreparedSearch p{load_search_study(r.file), {}, {}, {}, {}};
  SearchStudy& study = p.study;
  MachineOptions machine;
  machine.template_overrides = study.budget;
  if (!r.start.empty()) {  // the previous split, as the template's own split: values
    const ConfigNode root = ConfigNode::load_file(r.start);
    for (const auto& [name, share] : root.child("split").entries()) {
      for (const char* budget : {"area", "power", "perimeter"}) {
        if (!share.has(budget)) continue;
        machine.template_overrides.push_back(ConfigOverride{
            "split." + name + "." + budget, share.require<std::string>(budget),
            "--start " + r.start, share.loc_of(budget)});
      }
    }
  }
  std::vector<ConfigOverride> workload_sets;
  for (const std::string& text : r.sets) {
    ConfigOverride o = parse_config_override(text);
    if (!route_machine_set(machine, o)) workload_sets.push_back(std::move(o));
  }
  if (!r.optimizer.empty()) {
    study.options.algorithm = search_algorithm_from(r.optimizer, command_line("--optimizer"));
  }
  if (r.restarts > 0) study.options.restarts = r.restarts;
  if (r.steps > 0) study.options.steps = r.steps;
  p.software =
      r.software.empty()
          ? software_for(study.software, study.template_path, study.software_loc)
          : software_for(r.software, study.template_path,
                         command_line("--software"));
  // A file the search names that cannot be read is reported at the key naming it.
  const auto located = [](const SourceLoc& key, const std::string& noun, const auto& load) {
    try {
      return load();
    } catch (const ConfigError& e) {
      const Diagnostic& d = e.diagnostics().front();
      if (e.diagnostics().size() == 1 && d.loc.line == 0 &&
          d.message.rfind("cannot read file", 0) == 0) {
        throw ConfigError(Diagnostic{key, "cannot read " + noun + " \"" + d.loc.file + "\"" +
                                              d.message.substr(std::string("cannot read file").size())});
      }
      throw;
    }
  };
  const ArchTemplate tmpl = with_software(
      located(study.template_loc, "template",
              [&] { return load_template(study.template_path, machine.template_overrides); }),
      p.software);
  const TechLibrary lib = load_techlib_for(tmpl, r.techlib, machine.techlib_overrides);
  p.spec = bind_template(lib, tmpl);
  p.training = TrainingOptions::from(p.software);
  p.training.check_memory = study.check_memory;
  p.workload = located(study.workload_loc, "workload", [&] {
    return load_workload(study.workload_path, workload_sets).spec;
  });
  if (study.written_strategy) {  // the workload's micro-batch and dp = devices/(tp·pp)
    study.strategy =
        complete_strategy(*study.written_strategy, p.workload, study.devices, study.strategy_loc);
  }
  if (!r.objective.empty()) {
    study.goal.loc = command_line("--objective");
    study.goal.kind = goal_kind_from(r.objective, study.goal.loc);
  }
  if (const std::string why = cost_model_missing(study.goal, p.spec); !why.empty()) {
    throw ConfigError(Diagnostic{study.goal.loc, "a cost needs a cost model: " + why});
  }
  return p;
}

}  // namespace pathfinder::cli
