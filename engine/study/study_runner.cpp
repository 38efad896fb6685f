#include "engine/study/study_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <variant>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>

#include "engine/arch/arch_spec.hpp"
#include "engine/core/format.hpp"
#include "engine/parallel/strategy_check.hpp"
#include "engine/explore/design_evaluator.hpp"
#include "engine/explore/search_study.hpp"
#include "engine/graph/workload_loader.hpp"
#include "engine/techlib/techlib_loader.hpp"

namespace pathfinder {
namespace {

using Clock = std::chrono::steady_clock;

std::string messages_of(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const Diagnostic& d : ds) {
    if (!out.empty()) out += "; ";
    out += d.loc.key_path.empty() ? d.message : d.loc.key_path + ": " + d.message;
  }
  return out;
}

PointResult infeasible(std::string reason, std::optional<Strategy> s = std::nullopt) {
  PointResult r;
  r.reason = std::move(reason);
  r.strategy = std::move(s);
  return r;
}

// A design evaluated at the chosen split, as the point's result.
PointResult evaluated(DesignEvaluation d) {
  PointResult r;
  r.feasible = d.training.feasible;
  r.reason = d.training.reason;
  r.strategy = d.training.strategy;
  r.design = std::move(d);
  return r;
}

// The split x (ResourceSplit layout) in the template's budget units, per component.
std::vector<ComponentBudget> budgets_of(const ArchTemplate& t, const Eigen::VectorXd& x) {
  const int h = static_cast<int>(t.split.size());
  std::vector<ComponentBudget> out;
  if (x.size() != 3 * h) return out;
  for (int i = 0; i < h; ++i) {
    out.push_back({t.split[static_cast<std::size_t>(i)].name, x[i] * t.budget.chip_area,
                   x[h + i] * t.budget.power, x[2 * h + i] * t.budget.perimeter});
  }
  return out;
}

PointResult with_split(PointResult r, const ArchTemplate& t, const Eigen::VectorXd& x) {
  if (r.design.arch.feasible) r.split = budgets_of(t, x);
  return r;
}

// The point's strategy as written, or none.
std::optional<Strategy> written(const StudyPoint& p) {
  return p.strategy ? std::optional<Strategy>(p.strategy->strategy) : std::nullopt;
}

PointResult search_point(const StudySpec& s, const DesignEvaluator& e, const StudyPoint& p) {
  const Eigen::VectorXd split = ResourceSplit::from_template(e.spec().tmpl).values();
  std::optional<Strategy> strategy;
  if (p.strategy) {
    try {
      strategy = complete_strategy(*p.strategy, e.workload(), e.devices(), strategy_source());
    } catch (const ConfigError& err) {  // dp does not fit this point's devices
      return infeasible(messages_of(err.diagnostics()), written(p));
    }
    const std::vector<Diagnostic> problems = check_strategy(*strategy, e.workload(), e.devices());
    if (!problems.empty()) return infeasible(messages_of(problems), strategy);
  }
  switch (p.search) {
    case StudySearch::kNone:
      return with_split(evaluated(e.evaluate(split, *strategy)), e.spec().tmpl, split);
    case StudySearch::kStrategy: {
      ArchFigures arch;
      // The best only: strategies recomputing more than a fitting twin are never it.
      std::vector<RankedStrategy> ranked =
          rank_strategies(e, split, nullptr, &arch, 1, /*skip_dominated=*/true);
      if (ranked.empty()) {
        return infeasible("no valid strategy for " + std::to_string(e.devices()) + " devices");
      }
      return with_split(evaluated({std::move(arch), std::move(ranked.front().result)}),
                        e.spec().tmpl, split);
    }
    case StudySearch::kArchitecture: {
      SearchStudy joint;
      joint.devices = p.devices;
      joint.strategy = strategy;
      joint.shortlist = s.shortlist;
      joint.check_memory = s.check_memory;
      joint.options = s.optimizer;
      joint.goal = s.goal;
      StudyOutcome o = run_search_study(joint, e);
      if (!o.search.feasible()) {
        return infeasible(o.at_template.reason.empty() ? "the search found no feasible design"
                                                       : o.at_template.reason,
                          strategy);
      }
      PointResult r = with_split(evaluated(std::move(o.best)), e.spec().tmpl, o.search.x);
      r.convergence = o.convergence;
      return r;
    }
  }
  return infeasible("unknown search");
}

void append(std::string& text, const std::string& key, const std::string& value) {
  text += key + ' ' + value + '\n';
}

// Everything besides the axis values that a row depends on.
std::string settings_text(const StudySpec& s, const std::string& techlib_dir,
                          const std::vector<SoftwareProfile>& software) {
  std::string t = "pathfinder study results v1\n";
  append(t, "devices", s.devices ? std::to_string(*s.devices) : "axis");
  append(t, "check_memory", s.check_memory ? "true" : "false");
  append(t, "software", s.software.empty() ? kDefaultSoftwareProfile : s.software);
  append(t, "search", s.search ? std::string(to_string(*s.search)) : "axis");
  // (a time objective without budgets, the default, adds nothing: earlier results stay valid)
  if (s.goal.kind != GoalKind::kTime) append(t, "objective", std::string(to_string(s.goal.kind)));
  if (s.goal.max_j_per_token) append(t, "max_j_per_token", printf_string("%.17g", *s.goal.max_j_per_token));
  if (s.goal.max_usd_per_mtoken) {
    append(t, "max_usd_per_mtoken", printf_string("%.17g", *s.goal.max_usd_per_mtoken));
  }
  for (const auto* sets : {&s.set_template, &s.set_workload, &s.set_techlib}) {
    for (const ConfigOverride& o : *sets) append(t, "set " + o.origin, o.value);
  }
  if (s.strategy) {
    append(t, "strategy", to_string(s.strategy->strategy) +
                              (s.strategy->has_micro_batch ? "" : " mb:workload") +
                              (s.strategy->has_dp ? "" : " dp:devices"));
  }
  if (s.searches(StudySearch::kArchitecture)) {
    const SearchOptions& o = s.optimizer;
    append(t, "shortlist", std::to_string(s.shortlist));
    append(t, "optimizer",
           printf_string("%s %d %d %.17g %.17g %.17g %.17g %.17g %d %.17g %ld %d %llu %d",
                         std::string(to_string(o.algorithm)).c_str(), o.restarts, o.steps,
                         o.learning_rate, o.momentum, o.backtrack, o.fd_step, o.tolerance,
                         o.patience, o.step_tolerance, o.max_evaluations, o.start_draws,
                         static_cast<unsigned long long>(o.seed), o.polish_moves));
  }
  std::vector<std::filesystem::path> files;
  for (const std::vector<StudyFile>* list : {&s.templates, &s.workloads}) {
    for (const StudyFile& f : *list) files.emplace_back(f.path);
  }
  for (const SoftwareProfile& p : software) files.emplace_back(p.file);
  std::vector<std::filesystem::path> lib;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(techlib_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".yaml") lib.push_back(it->path());
  }
  std::sort(lib.begin(), lib.end());
  files.insert(files.end(), lib.begin(), lib.end());
  for (const auto& f : files) {
    append(t, "file " + f.filename().string(), hex64(fnv1a(read_text_file(f.string()).value_or(""))));
  }
  return t;
}

// Every technology a sweep or point names exists in the library and fits every template (its
// SRAM macros), reported at the value.
void check_sweep_technologies(const StudySpec& s, const StudyContext& c) {
  std::vector<Diagnostic> problems;
  std::set<std::string> seen;
  for (const StudyAxis& a : s.axes) {
    if (a.kind != AxisKind::kLogic && a.kind != AxisKind::kMemory &&
        a.kind != AxisKind::kNetwork && a.kind != AxisKind::kNic) {
      continue;
    }
    for (const AxisValue& v : a.values) {
      if (v.unset) continue;
      StudyPoint p;
      (a.kind == AxisKind::kLogic    ? p.tech.logic
       : a.kind == AxisKind::kMemory ? p.tech.memory
       : a.kind == AxisKind::kNic    ? p.tech.nic
                                     : p.tech.network) = v.text;
      for (const ArchTemplate& base : c.templates) {
        ArchTemplate t = apply_overrides(base, p.tech);
        t.logic_loc = t.main_memory.technology_loc = v.loc;
        if (t.scale_out) t.scale_out->nic_loc = v.loc;
        for (NetworkSpec& n : t.networks) n.technology_loc = v.loc;
        for (MemoryLevelSpec& l : t.levels) l.technology_loc = v.loc;
        for (Diagnostic& d : check_template(t, c.lib)) {
          if (seen.insert(d.str()).second) problems.push_back(std::move(d));
        }
      }
    }
  }
  if (!problems.empty()) throw ConfigError(std::move(problems));
}

// load(): a file the study names (template, workload), its problems reported at the key or
// sweep value naming it: "cannot read template \"x.yaml\": ..." for a missing file, else a
// line saying the file is invalid followed by the file's own diagnostics.
template <class Load>
auto located_load(const StudyFile& f, const std::string& noun, const Load& load) {
  try {
    return load();
  } catch (const ConfigError& e) {
    const std::vector<Diagnostic>& ds = e.diagnostics();
    const std::string prefix = "cannot read file";
    if (ds.size() == 1 && ds.front().loc.file == f.path && ds.front().loc.line == 0 &&
        ds.front().message.rfind(prefix, 0) == 0) {
      throw ConfigError(Diagnostic{f.loc, "cannot read " + noun + " \"" + f.text + "\"" +
                                              ds.front().message.substr(prefix.size())});
    }
    std::vector<Diagnostic> out{Diagnostic{f.loc, noun + " \"" + f.text + "\" is invalid:"}};
    out.insert(out.end(), ds.begin(), ds.end());
    throw ConfigError(std::move(out));
  }
}

std::string key_of(const std::vector<std::string>& values, const std::string& settings) {
  std::string k;
  for (const std::string& v : values) k += v + '\x1f';
  return k + settings;
}

// A stored row as result_row writes it (columns in study_columns order): feasible 0 or 1;
// every number finite, >= 0 and printed as result_row prints it ("%.9g"); a feasible row has
// its strategy and every training figure, an infeasible one no training figure. Anything else (a cell edited
// by hand, a torn or foreign row) is recomputed rather than trusted.
bool valid_row(const std::vector<std::string>& row, std::size_t axes) {
  const std::string& feasible = row[axes];
  if (feasible != "0" && feasible != "1") return false;
  const bool ok = feasible == "1";
  if (ok && row[axes + 2].empty()) return false;  // chosen_strategy
  const std::size_t first = axes + 3;
  const std::size_t count = numeric_result_columns().size();
  for (std::size_t k = 0; k < count; ++k) {
    const std::string& cell = row[first + k];
    const std::string& name = numeric_result_columns()[k];
    // Written for every feasible row: all but the architecture's figures and gemm_intensity.
    const bool training = name != "peak_tflops" && name != "memory_bandwidth_gbs" &&
                          name != "memory_gb_per_device" && name != "gemm_intensity";
    if (cell.empty()) {
      if (ok && training) return false;
      continue;
    }
    if (!ok && (training || name == "gemm_intensity")) return false;
    char* end = nullptr;
    const double v = std::strtod(cell.c_str(), &end);
    if (end != cell.c_str() + cell.size() || !std::isfinite(v) || v < 0.0 ||
        printf_string("%.9g", v) != cell) {
      return false;
    }
  }
  // converged: empty, or 0/1 on a feasible row.
  const std::string& converged = row[row.size() - 3];
  if (!converged.empty() && (!ok || (converged != "0" && converged != "1"))) return false;
  // The split: empty, or a number as result_row prints it; never on an infeasible row.
  for (std::size_t k = first + count; k + 3 < row.size(); ++k) {
    const std::string& cell = row[k];
    if (cell.empty()) continue;
    char* end = nullptr;
    const double v = std::strtod(cell.c_str(), &end);
    if (!ok || end != cell.c_str() + cell.size() || !std::isfinite(v) || v < 0.0 ||
        printf_string("%.9g", v) != cell) {
      return false;
    }
  }
  return true;
}

// Resume: the stored rows of this study's settings, matched to points by axis values (columns
// by name, so a reordered sweep keeps its rows). Counts reused, invalid (valid_row) and
// dropped rows into run.
std::vector<std::optional<std::vector<std::string>>> stored_rows(
    const StudyTable& old, const std::vector<std::string>& columns,
    const std::vector<StudyPoint>& points, const std::string& settings, StudyRun& run) {
  std::vector<std::optional<std::vector<std::string>>> rows(points.size());
  std::vector<std::size_t> from;  // the stored column of each column
  for (const std::string& name : columns) {
    if (const auto f = old.column(name)) from.push_back(*f);
  }
  if (from.size() < columns.size()) {  // another study's table
    run.dropped += old.rows.size();
    return rows;
  }
  std::map<std::string, std::size_t> index;
  for (const StudyPoint& p : points) index.emplace(key_of(p.values, settings), p.index);
  const std::size_t axes = points.front().values.size();
  for (const auto& stored : old.rows) {
    std::vector<std::string> row;
    for (const std::size_t f : from) row.push_back(stored[f]);
    const std::vector<std::string> values(row.begin(), row.begin() + static_cast<long>(axes));
    const auto it = index.find(key_of(values, row.back()));
    if (it == index.end() || rows[it->second]) {
      ++run.dropped;
      continue;
    }
    if (!valid_row(row, axes)) {
      ++run.invalid;
      continue;
    }
    rows[it->second] = std::move(row);
    ++run.reused;
  }
  return rows;
}

}  // namespace

std::vector<StudyPoint> enumerate_points(const StudySpec& s) {
  const std::size_t n = s.point_count();
  std::vector<StudyPoint> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    StudyPoint p;
    p.index = i;
    p.devices = s.devices.value_or(0);
    p.strategy = s.strategy;
    p.search = s.search.value_or(StudySearch::kNone);
    const std::vector<const AxisValue*> chosen = point_values(s, i);
    for (std::size_t k = 0; k < s.axes.size(); ++k) {
      const AxisValue& v = *chosen[k];
      p.values.push_back(v.text);
      if (v.unset) continue;  // the study's key, or the template's
      switch (s.axes[k].kind) {
        case AxisKind::kLogic: p.tech.logic = v.text; break;
        case AxisKind::kMemory: p.tech.memory = v.text; break;
        case AxisKind::kNetwork: p.tech.network = v.text; break;
        case AxisKind::kNic: p.tech.nic = v.text; break;
        case AxisKind::kDevices: p.devices = static_cast<int>(v.number); break;
        case AxisKind::kNodesPerPackage: p.nodes_per_package = static_cast<int>(v.number); break;
        case AxisKind::kPower: p.power = Power::from_si(v.number); break;
        case AxisKind::kPowerLimit: p.power_limit = Power::from_si(v.number); break;
        case AxisKind::kChipArea: p.chip_area = Area::from_si(v.number); break;
        case AxisKind::kNodeArea: p.node_area = Area::from_si(v.number); break;
        case AxisKind::kPerimeter: p.perimeter = Length::from_si(v.number); break;
        case AxisKind::kStrategy: p.strategy = v.strategy; break;
        case AxisKind::kTemplate: p.tmpl = v.file; break;
        case AxisKind::kWorkload: p.workload = v.file; break;
        case AxisKind::kSoftware: p.software = v.file; break;
        case AxisKind::kSearch: p.search = *v.search; break;
        case AxisKind::kLabel: break;
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

ArchTemplate point_template(const ArchTemplate& base, const StudyPoint& p) {
  ArchTemplate t = apply_overrides(base, p.tech);
  Budget& b = t.budget;
  if (p.chip_area) {
    const double inferred = 4.0 * std::sqrt(b.chip_area.si());
    if (std::abs(b.perimeter.si() - inferred) <= 1e-9 * inferred) b.perimeter = 4.0 * sqrt(*p.chip_area);
    b.chip_area = *p.chip_area;
  }
  if (p.node_area) b.node_area = *p.node_area;
  if (p.power) b.power = *p.power;
  if (p.power_limit) b.power_limit = *p.power_limit;
  if (p.perimeter) b.perimeter = *p.perimeter;
  if (p.nodes_per_package) {
    const int nodes = t.nodes_per_package * t.packages, npp = *p.nodes_per_package;
    if (nodes % npp != 0) {
      SourceLoc loc = t.system_loc;
      loc.key_path = "system";
      throw ConfigError(Diagnostic{loc, std::to_string(npp) + " nodes per package do not divide "
                                        "the scale-up domain of " + std::to_string(nodes) + " nodes"});
    }
    t.nodes_per_package = npp;
    t.packages = nodes / npp;
  }
  return t;
}

StudyContext load_study_context(const StudySpec& s, const std::string& techlib_dir) {
  StudyContext c;
  c.lib = load_tech_library_dir(techlib_dir, s.set_techlib);
  // A profile's name is looked up beside the study's first template, then among the shipped.
  c.softwares.push_back(software_for(s.software, s.templates.front().path, s.software_loc));
  for (std::size_t i = 1; i < s.softwares.size(); ++i) {
    const StudyFile& f = s.softwares[i];
    c.softwares.push_back(software_for(f.path, s.templates.front().path, f.loc));
  }
  for (const StudyFile& f : s.templates) {
    c.templates.push_back(located_load(f, "template", [&] {
      ArchTemplate t = load_template(f.path, s.set_template);
      (void)bind_template(c.lib, t);  // the template's own problems first
      return t;
    }));
  }
  check_sweep_technologies(s, c);
  for (const StudyFile& f : s.workloads) {
    c.workloads.push_back(located_load(f, "workload", [&] { return load_workload_file(f.path, s.set_workload).spec; }));
  }
  c.settings = hex64(fnv1a(settings_text(s, techlib_dir, c.softwares)));
  return c;
}

PointResult evaluate_point(const StudySpec& s, const StudyContext& c, const StudyPoint& p) {
  try {
    const SoftwareProfile& software = c.softwares.at(p.software);
    const ArchSpec spec = bind_template(
        c.lib, point_template(with_software(c.templates.at(p.tmpl), software), p));
    TrainingOptions options = TrainingOptions::from(software);
    options.check_memory = s.check_memory;
    if (const std::string why = cost_model_missing(s.goal, spec); !why.empty()) {
      return infeasible("a cost goal needs a cost model: " + why, written(p));
    }
    const DesignEvaluator e(spec, c.workloads.at(p.workload), p.devices, options, s.goal);
    return search_point(s, e, p);
  } catch (const ConfigError& e) {  // a system the point cannot build
    return infeasible(messages_of(e.diagnostics()), written(p));
  }
}

std::vector<std::string> split_components(const StudyContext& c) {
  std::vector<std::string> names;
  for (const ArchTemplate& t : c.templates) {
    for (const ComponentShare& share : t.split) {
      if (std::find(names.begin(), names.end(), share.name) == names.end()) names.push_back(share.name);
    }
  }
  return names;
}

std::vector<std::string> study_columns(const StudySpec& s, const StudyContext& ctx) {
  std::vector<std::string> c;
  for (const StudyAxis& a : s.axes) c.push_back(a.name());
  for (const char* name : {"feasible", "reason", "chosen_strategy"}) c.emplace_back(name);
  for (const std::string& name : numeric_result_columns()) c.push_back(name);
  for (const char* budget : {"area_mm2.", "power_w.", "perimeter_mm."}) {
    for (const std::string& name : split_components(ctx)) c.push_back(budget + name);
  }
  for (const char* name : {"converged", "convergence", "settings"}) c.emplace_back(name);
  return c;
}

std::vector<std::string> result_row(const StudyPoint& p, const PointResult& r,
                                    const std::string& settings,
                                    const std::vector<std::string>& components) {
  std::vector<std::string> row = p.values;
  row.push_back(r.feasible ? "1" : "0");
  row.push_back(r.reason);
  row.push_back(r.strategy ? to_string(*r.strategy) : "");
  const TrainingResult& t = r.design.training;
  const ArchFigures& a = r.design.arch;
  const TrainingBreakdown& b = t.breakdown;
  const auto num = [](double v) { return printf_string("%.9g", v); };
  for (double v : {t.iteration_time.si(), t.mfu, t.tokens_per_second, b.compute.si(),
                   b.embedding_head.si(), b.tensor_comm.si(), b.pipeline_comm.si(),
                   b.pipeline_bubble.si(), b.data_comm.si(), b.gradient_sync.si(),
                   b.optimizer.si(), b.host.si()}) {
    row.push_back(r.feasible ? num(v) : "");
  }
  for (double v : {a.peak_flops.si() / 1e12, a.memory_bandwidth.si() / 1e9,
                   a.memory_capacity.si() / 1e9}) {
    row.push_back(a.feasible ? num(v) : "");
  }
  row.push_back(r.feasible ? num(t.memory.total().si() / 1e9) : "");
  row.push_back(r.feasible && t.local_gemm ? num(t.local_gemm->intensity) : "");
  const EnergyReport& e = t.energy;
  row.push_back(r.feasible ? num(e.joules.si()) : "");
  row.push_back(r.feasible && e.joules_per_token > Energy{} ? num(e.joules_per_token.si()) : "");
  row.push_back(r.feasible && e.joules_per_token > Energy{}
                    ? num((e.chip_joules * e.joules_per_token / e.joules).si())
                    : "");
  for (double v : {e.device_power.si(), e.peak_device_power.si(), e.flop_per_joule / 1e9}) {
    row.push_back(r.feasible ? num(v) : "");
  }
  const CostReport& cost = t.cost;
  row.push_back(r.feasible && cost.modelled ? num(cost.usd) : "");
  row.push_back(r.feasible && cost.usd_per_token > 0.0 ? num(1e6 * cost.usd_per_token) : "");
  for (int budget = 0; budget < 3; ++budget) {
    for (const std::string& name : components) {
      const auto it = std::find_if(r.split.begin(), r.split.end(),
                                   [&](const ComponentBudget& x) { return x.name == name; });
      if (!r.feasible || it == r.split.end()) {
        row.emplace_back();
        continue;
      }
      row.push_back(num(budget == 0   ? it->area.si() * 1e6
                        : budget == 1 ? it->power.si()
                                      : it->perimeter.si() * 1e3));
    }
  }
  const bool checked = r.feasible && r.convergence;
  row.push_back(checked ? (r.convergence->converged ? "1" : "0") : "");
  row.push_back(checked && !r.convergence->converged ? r.convergence->move : "");
  row.push_back(settings);
  return row;
}

StudyRun run_study(const StudySpec& s, const StudyRunOptions& o) {
  const StudyContext c = load_study_context(s, o.techlib_dir);
  const std::vector<StudyPoint> points = enumerate_points(s);
  StudyRun run;
  run.points = points.size();
  run.table.columns = study_columns(s, c);
  const std::vector<std::string> components = split_components(c);
  run.csv_path = (std::filesystem::path(o.out_dir) / "results.csv").string();

  PF_ASSERT(o.shards >= 1 && o.shard >= 1 && o.shard <= o.shards);
  const auto in_shard = [&](std::size_t i) {
    return i % static_cast<std::size_t>(o.shards) == static_cast<std::size_t>(o.shard - 1);
  };
  std::vector<std::optional<std::vector<std::string>>> rows(points.size());
  if (const auto text = read_text_file(run.csv_path)) {
    rows = stored_rows(parse_csv(*text, &run.dropped), run.table.columns, points, c.settings, run);
  }
  for (const std::string& dir : o.merge_from) {
    const std::string path = (std::filesystem::path(dir) / "results.csv").string();
    const std::optional<std::string> text = read_text_file(path);
    if (!text) {
      throw ConfigError(Diagnostic{SourceLoc{path, 0, 0, ""},
                                   "cannot read file: a folder to merge holds a study's "
                                   "results.csv"});
    }
    auto more = stored_rows(parse_csv(*text, &run.dropped), run.table.columns, points,
                            c.settings, run);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!more[i]) continue;
      if (rows[i]) {  // the same point twice (identical when the runs are deterministic)
        --run.reused;
        ++run.dropped;
        continue;
      }
      rows[i] = std::move(more[i]);
    }
  }

  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!in_shard(i)) {
      if (rows[i]) {  // another shard's: not this shard's results
        rows[i].reset();
        --run.reused;
        ++run.dropped;
      }
      continue;
    }
    ++run.shard_points;
    if (!rows[i] && o.merge_from.empty()) todo.push_back(i);
  }
  if (o.max_points > 0 && todo.size() > o.max_points) todo.resize(o.max_points);

  std::mutex mutex;
  const Clock::time_point start = Clock::now();
  Clock::time_point last_write = start;
  Clock::duration write_cost{};
  StudyProgress progress{run.reused, run.shard_points, 0, todo.size(), 0.0};
  const auto write = [&] {  // under the mutex
    const Clock::time_point t0 = Clock::now();
    StudyTable t{run.table.columns, {}};
    for (const auto& r : rows) {
      if (r) t.rows.push_back(*r);
    }
    write_file_atomically(run.csv_path, to_csv(t));
    last_write = Clock::now();
    write_cost = last_write - t0;
  };
  if (o.progress) o.progress(progress);
  oneapi::tbb::parallel_for(
      oneapi::tbb::blocked_range<std::size_t>(0, todo.size(), 1),
      [&](const oneapi::tbb::blocked_range<std::size_t>& range) {
        for (std::size_t k = range.begin(); k != range.end(); ++k) {
          if (o.stop && o.stop()) return;
          const StudyPoint& p = points[todo[k]];
          std::vector<std::string> row = result_row(p, evaluate_point(s, c, p), c.settings, components);
          const std::lock_guard<std::mutex> lock(mutex);
          rows[p.index] = std::move(row);
          ++progress.done;
          ++progress.run_done;
          // Every finished point is saved at once unless writes would take over 5% of the run.
          if (Clock::now() - last_write >= 20 * write_cost) write();
          progress.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
          if (o.progress) o.progress(progress);
        }
      },
      oneapi::tbb::simple_partitioner());
  write();
  run.evaluated = progress.run_done;
  for (auto& r : rows) {
    if (r) run.table.rows.push_back(std::move(*r));
  }
  return run;
}

}  // namespace pathfinder
