#include "tests/fuzz/fuzz_target.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <string>

#include "engine/arch/generator.hpp"
#include "engine/arch/template_loader.hpp"
#include "engine/config/node.hpp"
#include "engine/parallel/strategy_check.hpp"
#include "engine/explore/search_study.hpp"
#include "engine/graph/hf_config.hpp"
#include "engine/graph/workload_loader.hpp"
#include "engine/software/software_profile.hpp"
#include "engine/study/study_runner.hpp"
#include "engine/study/study_table.hpp"
#include "engine/techlib/techlib_loader.hpp"
#include "engine/train/training_model.hpp"

namespace pathfinder::fuzz {
namespace {

const std::string kSource = PATHFINDER_SOURCE_DIR;

// Inputs are read as if they were a file in the folder their seeds come from, so the seeds'
// relative paths (../templates/a100.yaml) resolve.
ConfigNode parse(std::string_view input, const char* folder) {
  return ConfigNode::load_string(std::string(input), kSource + "/" + folder + "/fuzz-input.yaml");
}


const TechLibrary& shipped_lib() {
  static const TechLibrary lib = load_tech_library_dir(kSource + "/techlib");
  return lib;
}

struct Machine {
  ArchSpec spec;
  MicroArch arch;
};
const Machine& a100() {
  static const Machine m = [] {
    Machine x{bind_template(shipped_lib(), load_template(kSource + "/templates/a100.yaml")), {}};
    x.arch = generate_micro_arch(x.spec, ResourceSplit::from_template(x.spec.tmpl));
    return x;
  }();
  return m;
}
const WorkloadSpec& gpt_small() {
  static const WorkloadSpec w = load_workload(kSource + "/studies/workloads/gpt3_1.3b.yaml").spec;
  return w;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw FuzzFailure(what);
}
void finite(double v, const char* what) {
  require(std::isfinite(v) && v >= 0.0, std::string(what) + " is not a finite number >= 0");
}

void check_arch(const MicroArch& a) {
  if (!a.feasible) {
    require(!a.infeasible_reason.empty(), "an infeasible micro-architecture without a reason");
    return;
  }
  finite(a.core.peak.si(), "peak FLOP/s");
  finite(a.core.frequency.si(), "frequency");
  finite(a.main_memory.bandwidth.si(), "main-memory bandwidth");
  finite(a.main_memory.capacity.si(), "main-memory capacity");
  for (const auto& l : a.levels) finite(l.bandwidth.si(), "level bandwidth");
  for (const auto& n : a.networks) finite(n.bandwidth.si(), "link bandwidth");
  finite(a.total.power_used.si(), "power");
}

void check_training(const TrainingResult& r) {
  if (!r.feasible) {
    require(!r.reason.empty(), "an infeasible training result without a reason");
    return;
  }
  finite(r.iteration_time.si(), "iteration time");
  require(r.iteration_time.si() > 0.0, "a feasible iteration of 0 s");
  finite(r.mfu, "MFU");
  finite(r.tokens_per_second, "tokens/s");
  for (const auto& [name, v] : r.breakdown.parts()) finite(v.si(), name);
}

TrainingResult evaluate(const Machine& m, const WorkloadSpec& w, const Strategy& s,
                        const TrainingOptions& o = {}) {
  return evaluate_training(m.spec, m.arch, w, s, o);
}

void check_error(const ConfigError& e);

// The collecting read of `pathfinder validate` (ConfigNode::collecting) on the same input: it
// never crashes, every problem it lists is one located line, and it agrees with the throwing
// read the library uses: no problem when that read succeeds, else the same first problem.
template <class Read>
void check_collecting(std::string_view in, const char* folder, Read read) {
  const ConfigNode text = parse(in, folder);  // malformed YAML: the caller's ConfigError
  std::optional<Diagnostic> first;
  try {
    read(text);
  } catch (const ConfigError& e) {
    check_error(e);
    first = e.diagnostics().front();
  }
  const ConfigNode root = text.collecting();
  try {
    read(root);
  } catch (const ConfigError& e) {
    root.report(e);
  }
  const std::vector<Diagnostic> found = root.problems();
  if (!found.empty()) check_error(ConfigError(found));
  if (first.has_value() != !found.empty()) {
    require(false, first ? "the collecting read missed: " + first->str()
                         : "the collecting read alone found: " + found.front().str());
  }
  if (first) {
    require(found.front().str() == first->str(),
            "the collecting read's first problem " + found.front().str() + " is not " + first->str());
  }
}

void workload(std::string_view in) {
  check_collecting(in, "studies/workloads", [](const ConfigNode& r) { (void)read_workload_file(r); });
  const WorkloadFile f = read_workload_file(parse(in, "studies/workloads"));
  check_training(evaluate(a100(), f.spec, trivial_strategy(f.spec)));
  Strategy s = parse_strategy("tp2-pp2-dp2-mb1-1f1b");  // a distributed evaluation too
  if (const GptSpec* g = std::get_if<GptSpec>(&f.spec)) {
    if (g->micro_batch > (1 << 20)) return;
    s.micro_batch = static_cast<int>(g->micro_batch);
  }
  if (is_valid_strategy(s, f.spec, 8)) check_training(evaluate(a100(), f.spec, s));
}

// A config.json imported, then evaluated as the workload target does.
void hf_config(std::string_view in) {
  workload(import_hf_config(std::string(in), "config.json", ImportChoices{}));
}

void arch_template(std::string_view in) {
  check_collecting(in, "templates", [](const ConfigNode& r) { (void)read_template(r); });
  const ArchTemplate t = read_template(parse(in, "templates"));
  const ArchSpec spec = bind_template(shipped_lib(), t);
  const MicroArch a = generate_micro_arch(spec, ResourceSplit::from_template(t));
  check_arch(a);
  if (a.feasible) check_training(evaluate({spec, a}, gpt_small(), trivial_strategy(gpt_small())));
}

void techlib(std::string_view in) {
  check_collecting(in, "techlib", [](const ConfigNode& r) {
    TechLibrary l;
    load_tech_file_into(r, l);
  });
  TechLibrary file;
  load_tech_file_into(parse(in, "techlib"), file);
  // The shipped library with this file's technologies in place of those of the same name.
  TechLibrary lib = shipped_lib();
  const auto merge = [](auto& into, const auto& from) {
    for (const auto& x : from) {
      auto it = std::find_if(into.begin(), into.end(), [&](const auto& y) { return y.name == x.name; });
      if (it != into.end()) *it = x;
    }
  };
  merge(lib.logic, file.logic);
  merge(lib.memory, file.memory);
  merge(lib.network, file.network);
  const ArchSpec spec = bind_template(lib, load_template(kSource + "/templates/a100.yaml"));
  const MicroArch a = generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl));
  check_arch(a);
  if (a.feasible) check_training(evaluate({spec, a}, gpt_small(), trivial_strategy(gpt_small())));
}

void strategy(std::string_view in) {
  const bool yaml = in.find(':') != std::string_view::npos;
  if (yaml) {
    check_collecting(in, "tests/data/strategies",
                     [](const ConfigNode& r) { (void)read_partial_strategy(r); });
  }
  const PartialStrategy p = yaml ? read_partial_strategy(parse(in, "tests/data/strategies"))
                                 : parse_partial_strategy(in);
  const Strategy s = complete_strategy(p, gpt_small(), 0, strategy_source());
  if (!check_strategy(s, gpt_small(), s.devices()).empty()) return;
  if (s.devices() > 65536) return;  // a system graph that large is not built per input
  check_training(evaluate(a100(), gpt_small(), s));
}

void overrides(std::string_view in) {
  std::vector<ConfigOverride> tmpl, work, lib;
  std::size_t start = 0;
  while (start < in.size()) {
    const std::size_t end = std::min(in.find('\n', start), in.size());
    ConfigOverride o = parse_config_override(in.substr(start, end - start));
    start = end + 1;
    if (o.key.rfind("techlib.", 0) == 0) {
      o.key.erase(0, 8);
      lib.push_back(std::move(o));
    } else if (is_template_section(o.key.substr(0, o.key.find('.')))) {
      tmpl.push_back(std::move(o));
    } else {
      work.push_back(std::move(o));
    }
  }
  const WorkloadSpec w = load_workload(kSource + "/studies/workloads/gpt3_1.3b.yaml", work).spec;
  const ArchSpec spec = bind_template(load_tech_library_dir(kSource + "/techlib", lib),
                                      load_template(kSource + "/templates/a100.yaml", tmpl));
  const MicroArch a = generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl));
  check_arch(a);
  if (a.feasible) check_training(evaluate({spec, a}, w, trivial_strategy(w)));
}

void software(std::string_view in) {
  check_collecting(in, "templates/software", [](const ConfigNode& r) { (void)read_software_profile(r); });
  const SoftwareProfile sw = read_software_profile(parse(in, "templates/software"));
  const ArchSpec spec = bind_template(
      shipped_lib(), with_software(load_template(kSource + "/templates/a100.yaml"), sw));
  const MicroArch a = generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl));
  check_arch(a);
  if (!a.feasible) return;
  Strategy s = parse_strategy("tp2-pp2-dp2-mb1-1f1b-sp-recompute=selective");
  check_training(evaluate({spec, a}, gpt_small(), s, TrainingOptions::from(sw)));
}

void study(std::string_view in) {
  check_collecting(in, "studies", [](const ConfigNode& r) { (void)read_study(r); });
  const StudySpec s = read_study(parse(in, "studies"));
  const StudyContext c = load_study_context(s, kSource + "/techlib");
  if (s.point_count() > 4096) return;  // enumerated lazily by the runner; not per input here
  const std::vector<StudyPoint> points = enumerate_points(s);
  if (points.empty() || points.front().search != StudySearch::kNone) return;
  const PointResult r = evaluate_point(s, c, points.front());
  if (r.feasible) check_training(r.design.training);
  else require(!r.reason.empty(), "an infeasible study point without a reason");
  for (const std::string& cell : result_row(points.front(), r, c.settings, split_components(c))) {
    require(cell.find('\n') == std::string::npos || cell == r.reason,
            "a study cell with a line break");
  }
}

void search(std::string_view in) {
  check_collecting(in, "studies", [](const ConfigNode& r) { (void)read_search_study(r); });
  const SearchStudy s = read_search_study(parse(in, "studies"));
  // Everything the search command reads and checks before it searches (the search itself is
  // PGD over the same evaluations the other targets cover).
  (void)load_template(s.template_path, s.budget);
  const WorkloadSpec w = load_workload(s.workload_path).spec;
  if (s.written_strategy) (void)complete_strategy(*s.written_strategy, w, s.devices, s.strategy_loc);
}

void csv(std::string_view in) {
  std::size_t dropped = 0;
  const StudyTable t = parse_csv(in, &dropped);
  for (const auto& row : t.rows) require(row.size() == t.columns.size(), "a CSV row of the wrong width");
}

// One line, and located: a file with a position, or the command line with the option.
void check_error(const ConfigError& e) {
  require(!e.diagnostics().empty(), "a ConfigError without a diagnostic");
  for (const Diagnostic& d : e.diagnostics()) {
    const std::string line = d.str();
    require(line.find('\n') == std::string::npos, "a multi-line message: " + line);
    require(!d.loc.file.empty(), "an unlocated message: " + line);
    require(d.loc.line > 0 || d.loc.file == "command line" || d.loc.file.ends_with(".yaml") ||
                d.loc.file.ends_with(".yml") || d.message.find("cannot read") != std::string::npos ||
                d.loc.file == "split space" || d.loc.file == "search options" ||
                // a strategy string's problems (the CLI reports them at --strategy)
                d.loc.file == strategy_source().file,
            "a message without a position: " + line);
  }
}

}  // namespace

const std::vector<TargetInfo>& targets() {
  static const std::vector<TargetInfo> t{
      {Target::kTemplate, "template", "templates"},
      {Target::kTechlib, "techlib", "techlib"},
      {Target::kWorkload, "workload", "studies/workloads"},
      {Target::kStrategy, "strategy", "tests/data/strategies"},
      {Target::kOverride, "override", ""},
      {Target::kSoftware, "software", "templates/software"},
      {Target::kStudy, "study", "studies;tests/data/studies"},
      {Target::kSearch, "search", "studies"},
      {Target::kCsv, "csv", ""},
      {Target::kHfConfig, "hf_config", "tests/data/hf_configs"},
  };
  return t;
}

void run_one(Target t, std::string_view input) {
  try {
    switch (t) {
      case Target::kTemplate: arch_template(input); break;
      case Target::kTechlib: techlib(input); break;
      case Target::kWorkload: workload(input); break;
      case Target::kStrategy: strategy(input); break;
      case Target::kOverride: overrides(input); break;
      case Target::kSoftware: software(input); break;
      case Target::kStudy: study(input); break;
      case Target::kSearch: search(input); break;
      case Target::kCsv: csv(input); break;
      case Target::kHfConfig: hf_config(input); break;
    }
  } catch (const ConfigError& e) {
    check_error(e);
  } catch (const FuzzFailure&) {
    throw;
  } catch (const std::exception& e) {
    throw FuzzFailure(std::string("unexpected exception: ") + e.what());
  }
}

}  // namespace pathfinder::fuzz
