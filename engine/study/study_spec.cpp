#include "engine/study/study_spec.hpp"

#include "engine/explore/pareto.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <map>

#include "engine/config/node.hpp"
#include "engine/core/text.hpp"
#include "engine/explore/search_study.hpp"
#include "engine/software/software_profile.hpp"

namespace pathfinder {
namespace {

constexpr std::array<std::pair<StudySearch, std::string_view>, 3> kSearches{{
    {StudySearch::kNone, "none"},
    {StudySearch::kStrategy, "strategy"},
    {StudySearch::kArchitecture, "architecture"},
}};

constexpr std::array<std::pair<AxisKind, std::string_view>, 17> kAxes{{
    {AxisKind::kLogic, "logic"},
    {AxisKind::kMemory, "memory"},
    {AxisKind::kNetwork, "network"},
    {AxisKind::kNic, "nic"},
    {AxisKind::kDevices, "devices"},
    {AxisKind::kNodesPerPackage, "nodes_per_package"},
    {AxisKind::kPower, "budget.power"},
    {AxisKind::kPowerLimit, "budget.power_limit"},
    {AxisKind::kChipArea, "budget.chip_area"},
    {AxisKind::kNodeArea, "budget.node_area"},
    {AxisKind::kPerimeter, "budget.perimeter"},
    {AxisKind::kStrategy, "strategy"},
    {AxisKind::kTemplate, "template"},
    {AxisKind::kWorkload, "workload"},
    {AxisKind::kSoftware, "software"},
    {AxisKind::kSearch, "search"},
    {AxisKind::kLabel, "label"},
}};

template <class Table>
std::vector<std::string> names_of(const Table& table) {
  std::vector<std::string> out;
  for (const auto& [value, name] : table) out.emplace_back(name);
  return out;
}
template <class Table, class E>
std::string_view name_in(const Table& table, E e) {
  for (const auto& [value, name] : table) {
    if (value == e) return name;
  }
  return "?";
}
template <class Table>
auto value_in(const Table& table, std::string_view s) -> std::optional<typename Table::value_type::first_type> {
  for (const auto& [value, name] : table) {
    if (name == s) return value;
  }
  return std::nullopt;
}

std::string beside(const std::string& study, const std::string& relative) {
  return (std::filesystem::path(study).parent_path() / relative).lexically_normal().string();
}

// A strategy string's problems, reported where the string stands.
PartialStrategy located_strategy(const std::string& text, const SourceLoc& where) {
  try {
    return parse_partial_strategy(text);
  } catch (const ConfigError& e) {
    throw ConfigError(Diagnostic{where, e.diagnostics().front().message});
  }
}

StudySearch located_search(const ConfigNode& n) {
  const std::string text = n.as<std::string>();
  const auto mode = parse_study_search(text);
  if (!mode) {
    throw n.error("unknown search \"" + text + "\" (expected " +
                  join_alternatives(valid_study_searches()) + ")" +
                  did_you_mean(text, valid_study_searches()));
  }
  return *mode;
}

// A positive quantity of dimension Q, as SI.
template <class Q>
double positive_quantity(const ConfigNode& item, const char* noun) {
  const double v = item.as<Q>().si();
  if (!(v > 0.0)) {
    throw item.error(std::string("expected a positive ") + noun + ", got \"" + item.scalar_text() + "\"");
  }
  return v;
}

AxisValue read_axis_value(AxisKind kind, const ConfigNode& item) {
  AxisValue v;
  v.loc = item.loc();
  if (!item.is_scalar()) throw item.error("expected a single value, got a list or map");
  v.text = item.scalar_text();
  check_single_line(item, v.text);  // a value is a CSV cell, a table cell and a plot label
  switch (kind) {
    case AxisKind::kLogic:
    case AxisKind::kMemory:
    case AxisKind::kNetwork:
    case AxisKind::kNic:
      v.text = item.as<std::string>();
      if (v.text.empty()) throw item.error("expected a technology name, got \"\"");
      break;
    case AxisKind::kDevices:
    case AxisKind::kNodesPerPackage:
      v.number = item.as<int>();
      if (v.number <= 0) throw item.error("expected a positive whole number, got \"" + v.text + "\"");
      break;
    case AxisKind::kPower:
    case AxisKind::kPowerLimit: v.number = positive_quantity<Power>(item, "power"); break;
    case AxisKind::kChipArea:
    case AxisKind::kNodeArea: v.number = positive_quantity<Area>(item, "area"); break;
    case AxisKind::kPerimeter: v.number = positive_quantity<Length>(item, "length"); break;
    case AxisKind::kStrategy: v.strategy = located_strategy(v.text, v.loc); break;
    case AxisKind::kTemplate:
    case AxisKind::kWorkload:
      v.text = item.as<std::string>();
      if (v.text.empty()) throw item.error("expected a file path, got \"\"");
      break;
    case AxisKind::kSoftware:
      v.text = item.as<std::string>();
      if (v.text.empty()) throw item.error("expected a software profile name or file, got \"\"");
      break;
    case AxisKind::kSearch: v.search = located_search(item); break;
    case AxisKind::kLabel:
      v.text = item.as<std::string>();
      if (v.text.empty()) throw item.error("expected a label, got \"\"");
      break;
  }
  return v;
}

// 0.3 kW repeats 300 W; strategies compare by what they mean, files by their normal path.
bool same_value(AxisKind kind, const AxisValue& a, const AxisValue& b) {
  if (a.strategy && b.strategy) return *a.strategy == *b.strategy;
  if (a.strategy || b.strategy) return false;
  if (kind == AxisKind::kTemplate || kind == AxisKind::kWorkload || kind == AxisKind::kSoftware) {
    return std::filesystem::path(a.text).lexically_normal() ==
           std::filesystem::path(b.text).lexically_normal();
  }
  return a.number != 0.0 || b.number != 0.0 ? a.number == b.number : a.text == b.text;
}

[[noreturn]] void throw_unknown_axis(const ConfigNode& map, const std::string& key) {
  const std::vector<std::string> known = valid_axis_kinds();
  throw map.error_at(key, "unknown axis (expected " + join_alternatives(known) + ")" +
                              did_you_mean(key, known));
}

StudyAxis read_axis(const ConfigNode& sweep, const std::string& key) {
  const auto kind = parse_axis_kind(key);
  if (!kind) throw_unknown_axis(sweep, key);
  if (*kind == AxisKind::kLabel) {
    throw sweep.error_at(key, "a label names explicit points: give it under points:");
  }
  StudyAxis a;
  a.kind = *kind;
  a.loc = sweep.loc_of(key);
  for (const ConfigNode& item : sweep.items(key)) {
    AxisValue v = read_axis_value(a.kind, item);
    for (const AxisValue& seen : a.values) {
      if (same_value(a.kind, seen, v)) {
        throw ConfigError(Diagnostic{v.loc, "\"" + v.text + "\" repeats \"" + seen.text +
                                                "\" (line " + std::to_string(seen.loc.line) + ")"});
      }
    }
    a.values.push_back(std::move(v));
  }
  if (a.values.empty()) throw sweep.error_at(key, "expected at least one value");
  return a;
}

std::string axis_list(const StudySpec& s) {
  std::vector<std::string> names;
  for (const StudyAxis& a : s.axes) names.push_back(a.name());
  return names.empty() ? "none" : join_alternatives(names);
}

// An axis named by a plot key, with a did-you-mean over the study's axes.
const StudyAxis& plot_axis(const StudySpec& s, const ConfigNode& n, const std::string& key) {
  const std::string name = n.require<std::string>(key);
  if (const StudyAxis* a = s.find_axis(name)) return *a;
  std::vector<std::string> names;
  for (const StudyAxis& a : s.axes) names.push_back(a.name());
  throw n.error_at(key, "\"" + name + "\" is not an axis of this study (axes: " + axis_list(s) +
                            ")" + did_you_mean(name, names));
}

std::size_t axis_index(const StudySpec& s, const std::string& name) {
  for (std::size_t k = 0; k < s.axes.size(); ++k) {
    if (s.axes[k].name() == name) return k;
  }
  return s.axes.size();
}

// With explicit points: the points the plot selects must differ in x or series.
void check_plot_points(const StudySpec& s, const PlotSpec& p) {
  const std::size_t x = axis_index(s, p.x), series = axis_index(s, p.series);
  std::map<std::pair<std::string, std::string>, std::vector<const AxisValue*>> seen;
  for (std::size_t i = 0; i < s.point_count(); ++i) {
    const std::vector<const AxisValue*> v = point_values(s, i);
    const bool selected = std::all_of(p.where.begin(), p.where.end(), [&](const auto& w) {
      return v[axis_index(s, w.first)]->text == w.second;
    });
    if (!selected) continue;
    const std::string series_text = series < v.size() ? v[series]->text : "";
    const auto [it, fresh] = seen.emplace(std::make_pair(v[x]->text, series_text), v);
    if (fresh) continue;
    std::size_t k = 0;
    while (it->second[k]->text == v[k]->text) ++k;
    const std::string name = s.axes[k].name();
    throw ConfigError(Diagnostic{
        p.loc, "two points fall on " + p.x + " \"" + v[x]->text + "\"" +
                   (p.series.empty() ? "" : ", " + p.series + " \"" + series_text + "\"") +
                   ": they differ in " + name + " (\"" + it->second[k]->text + "\" and \"" +
                   v[k]->text + "\"); make it the series or fix it with where: {" + name + ": " +
                   it->second[k]->text + "}"});
  }
}

PlotSpec read_plot(const StudySpec& s, const ConfigNode& n) {
  PlotSpec p;
  p.loc = n.loc();
  const std::string kind = n.require<std::string>("plot");
  if (kind == "line") p.kind = PlotKind::kLine;
  else if (kind == "bars") p.kind = PlotKind::kBars;
  else n.report(n.error_at("plot", "unknown plot \"" + kind + "\" (expected line or bars)" +
                                       did_you_mean(kind, {"line", "bars"})));
  p.x = plot_axis(s, n, "x").name();
  p.y = n.require<std::string>("y");
  const std::vector<std::string>& ys = numeric_result_columns();
  if (std::find(ys.begin(), ys.end(), p.y) == ys.end()) {
    n.report(n.error_at("y", "\"" + p.y + "\" is not a numeric result column (expected " +
                                 join_alternatives(ys) + ")" + did_you_mean(p.y, ys)));
  }
  if (n.has("series")) p.series = plot_axis(s, n, "series").name();
  else (void)n.optional<std::string>("series");
  if (p.series == p.x && !p.series.empty()) throw n.error_at("series", "series and x are the same axis");
  p.name = n.get_or<std::string>("name", p.y + "_vs_" + p.x);
  std::replace(p.name.begin(), p.name.end(), '.', '_');
  // The name is a file name in the output folder, a gnuplot string and a Markdown link.
  const bool plain_name = !p.name.empty() && p.name.front() != '-' &&
                          std::all_of(p.name.begin(), p.name.end(), [](char c) {
                            return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' ||
                                   c == '-' || c == '+';
                          });
  if (!plain_name) {
    throw n.error_at("name", "expected a file name of letters, digits, '_', '-' and '+' (not "
                             "starting with '-'), got \"" + escape_for_message(p.name) + "\"");
  }
  p.title = n.get_or<std::string>("title", s.name + ": " + p.y + " vs " + p.x);
  check_single_line(n, "title", p.title);
  p.log_x = n.get_or<bool>("log_x", false);
  p.log_y = n.get_or<bool>("log_y", false);
  if (auto where = n.optional_child("where")) {
    for (const auto& [axis, value] : where->entries()) {
      const StudyAxis* a = s.find_axis(axis);
      if (a == nullptr) throw where->error_at(axis, "\"" + axis + "\" is not an axis of this study (axes: " + axis_list(s) + ")");
      const std::string text = value.scalar_text();
      const bool known = std::any_of(a->values.begin(), a->values.end(),
                                     [&](const AxisValue& v) { return v.text == text; });
      if (!known) throw where->error_at(axis, "\"" + text + "\" is not a value of the " + axis + " axis");
      p.where.emplace_back(axis, text);
    }
  }
  n.finish();
  if (!s.points.empty()) {
    check_plot_points(s, p);
    return p;
  }
  // Every other axis must hold one value, or a plot would mix points.
  for (const StudyAxis& a : s.axes) {
    const std::string name = a.name();
    const bool fixed = std::any_of(p.where.begin(), p.where.end(),
                                   [&](const auto& w) { return w.first == name; });
    if (name == p.x || name == p.series || fixed || a.values.size() == 1) continue;
    throw ConfigError(Diagnostic{p.loc, "the " + name + " axis has " + std::to_string(a.values.size()) +
                                            " values but is neither x nor series: make it the series "
                                            "or fix it with where: {" + name + ": " + a.values.front().text + "}"});
  }
  return p;
}

// The explicit points (points:), before the keys: their axes in order of first use, each
// point's cells (nullopt: the point does not set that axis; fill_points fills those in).
struct PointsRead {
  std::vector<StudyAxis> axes;  // values: filled in by fill_points
  std::vector<std::vector<std::optional<AxisValue>>> cells;  // per point, per axis
  std::vector<SourceLoc> locs;
};

PointsRead read_points(const ConfigNode& root) {
  PointsRead r;
  if (!root.has("points")) return r;
  const std::vector<ConfigNode> items = root.items("points");
  if (items.empty()) throw root.error_at("points", "expected at least one point");
  for (const ConfigNode& n : items) {
    if (!n.is_map()) throw n.error("expected a map of axis: value");
    std::vector<std::optional<AxisValue>> cells(r.axes.size());
    const auto entries = n.entries();
    if (entries.empty()) throw n.error("expected at least one axis: value");
    for (const auto& [key, node] : entries) {
      const auto kind = parse_axis_kind(key);
      if (!kind) throw_unknown_axis(n, key);
      std::size_t k = 0;
      while (k < r.axes.size() && r.axes[k].kind != *kind) ++k;
      if (k == r.axes.size()) {
        StudyAxis a;
        a.kind = *kind;
        a.loc = n.loc_of(key);
        r.axes.push_back(a);
        cells.resize(r.axes.size());
      }
      cells[k] = read_axis_value(*kind, node);
    }
    r.cells.push_back(std::move(cells));
    r.locs.push_back(n.loc());
  }
  for (auto& cells : r.cells) cells.resize(r.axes.size());
  return r;
}

// A setting every point needs (template, workload, devices, search): the key, a sweep axis or
// the explicit points; exactly one of key and sweep axis, and a key some point falls back on.
// Returns whether the key is there.
bool check_keyed_setting(const StudySpec& s, const ConfigNode& root, const PointsRead& points,
                         AxisKind kind, bool required) {
  const std::string name(to_string(kind));
  const bool key = root.has(name);
  const bool swept = std::any_of(s.axes.begin() + static_cast<long>(s.point_axes), s.axes.end(),
                                 [&](const StudyAxis& a) { return a.kind == kind; });
  if (swept && key) throw root.error_at(name, "given both here and as a sweep axis; keep one");
  std::size_t k = 0;
  while (k < points.axes.size() && points.axes[k].kind != kind) ++k;
  if (k == points.axes.size()) {  // not set by points
    if (!swept && !key && required) {
      root.report_missing(name, "(or give a " + name + " axis)");
    }
    return key;
  }
  std::optional<std::size_t> omitted;
  for (std::size_t i = 0; i < points.cells.size() && !omitted; ++i) {
    if (!points.cells[i][k]) omitted = i;
  }
  if (key && !omitted) {
    throw root.error_at(name, "every point sets its " + name + "; drop this key");
  }
  if (!key && omitted && required) {
    throw ConfigError(Diagnostic{points.locs[*omitted], "sets no " + name + " and the study has no " +
                                                            name + ": key"});
  }
  return key;
}

// The explicit points' cells into s's first axes: each axis's distinct values (a cell a point
// leaves unset is the study key's value, marked unset; it merges with an equal value a point
// sets, since both do the same), each point's value indices. A point repeating another is an
// error.
void fill_points(StudySpec& s, const PointsRead& r, const std::string& strategy_text) {
  for (std::size_t k = 0; k < r.axes.size(); ++k) {
    StudyAxis& a = s.axes[k];
    AxisValue unset;
    unset.unset = true;
    unset.loc = a.loc;
    switch (a.kind) {
      case AxisKind::kTemplate:
        if (!s.templates.empty()) unset.text = s.templates.front().text;
        break;
      case AxisKind::kWorkload:
        if (!s.workloads.empty()) unset.text = s.workloads.front().text;
        break;
      case AxisKind::kSoftware: unset.text = s.softwares.front().text; break;
      case AxisKind::kDevices:
        if (s.devices) {
          unset.text = std::to_string(*s.devices);
          unset.number = *s.devices;
        }
        break;
      case AxisKind::kSearch:
        if (s.search) {
          unset.text = std::string(to_string(*s.search));
          unset.search = s.search;
        }
        break;
      case AxisKind::kStrategy:
        unset.text = strategy_text;
        unset.strategy = s.strategy;
        break;
      default: break;
    }
    for (std::size_t i = 0; i < r.cells.size(); ++i) {
      if (s.points.size() <= i) s.points.push_back(ExplicitPoint{{}, r.locs[i]});
      const AxisValue& v = r.cells[i][k] ? *r.cells[i][k] : unset;
      std::size_t j = 0;
      while (j < a.values.size() && !same_value(a.kind, a.values[j], v)) ++j;
      if (j == a.values.size()) a.values.push_back(v);
      s.points[i].values.push_back(j);
    }
  }
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (s.points[i].values == s.points[j].values) {
        throw ConfigError(Diagnostic{s.points[i].loc, "repeats the point at line " +
                                                          std::to_string(s.points[j].loc.line)});
      }
    }
  }
}

// Which strategy settings go with which search, at every point: search none needs a fixed
// strategy (the point's, a strategy axis or the key), search strategy must have none.
void check_searches(const StudySpec& s, const ConfigNode& root) {
  const auto point_axis = [&](AxisKind kind) {
    std::size_t k = 0;
    while (k < s.point_axes && s.axes[k].kind != kind) ++k;
    return k;
  };
  const auto swept = [&](AxisKind kind) -> const StudyAxis* {
    for (std::size_t k = s.point_axes; k < s.axes.size(); ++k) {
      if (s.axes[k].kind == kind) return &s.axes[k];
    }
    return nullptr;
  };
  const std::size_t point_strategy = point_axis(AxisKind::kStrategy);
  const std::size_t point_search = point_axis(AxisKind::kSearch);
  const StudyAxis* swept_strategy = swept(AxisKind::kStrategy);
  const StudyAxis* swept_search = swept(AxisKind::kSearch);
  bool architecture = false, architecture_free = false;
  const std::size_t n = s.points.empty() ? 1 : s.points.size();
  for (std::size_t i = 0; i < n; ++i) {
    const ExplicitPoint* e = s.points.empty() ? nullptr : &s.points[i];
    const auto cell = [&](std::size_t k) -> const AxisValue* {
      if (e == nullptr || k >= s.point_axes) return nullptr;
      const AxisValue& v = s.axes[k].values[e->values[k]];
      return v.unset ? nullptr : &v;
    };
    std::optional<SourceLoc> fixed;  // where the point's fixed strategy comes from
    if (const AxisValue* v = cell(point_strategy)) fixed = v->loc;
    else if (swept_strategy != nullptr) fixed = swept_strategy->loc;
    else if (s.strategy) fixed = root.loc_of("strategy");
    std::vector<std::pair<StudySearch, SourceLoc>> modes;  // and where its searches come from
    bool from_key = false;
    if (const AxisValue* v = cell(point_search)) {
      modes.emplace_back(*v->search, v->loc);
    } else if (swept_search != nullptr) {
      for (const AxisValue& value : swept_search->values) modes.emplace_back(*value.search, value.loc);
    } else {
      modes.emplace_back(*s.search, e != nullptr ? e->loc : root.loc_of("search"));
      from_key = true;
    }
    for (const auto& [mode, loc] : modes) {
      if (mode == StudySearch::kNone && !fixed) {
        throw ConfigError(Diagnostic{loc, "search: none evaluates a fixed strategy: give strategy: or a "
                                          "strategy axis"});
      }
      if (mode == StudySearch::kStrategy && fixed) {
        const std::string at = from_key ? "" : " (line " + std::to_string(loc.line) + ")";
        throw ConfigError(Diagnostic{*fixed, "search: strategy" + at + " ranks every strategy at each "
                                             "point; drop the fixed strategy (or use search: none)"});
      }
      architecture = architecture || mode == StudySearch::kArchitecture;
      architecture_free = architecture_free || (mode == StudySearch::kArchitecture && !fixed);
    }
  }
  if (root.has("shortlist") && !architecture_free) {
    throw root.error_at("shortlist", "only used by search: architecture without a fixed strategy");
  }
  if (root.has("optimizer") && !architecture) {
    throw root.error_at("optimizer", "only used by search: architecture");
  }
}

bool names_a_file(const std::string& choice) {
  return choice.find('/') != std::string::npos || choice.ends_with(".yaml");
}

// Every template, workload and software profile the axes name, each once (the keys' come
// first), and each value's index among them. A profile's name stays a name.
void register_files(StudySpec& s) {
  for (StudyAxis& a : s.axes) {
    if (a.kind != AxisKind::kTemplate && a.kind != AxisKind::kWorkload &&
        a.kind != AxisKind::kSoftware) {
      continue;
    }
    std::vector<StudyFile>& files = a.kind == AxisKind::kTemplate   ? s.templates
                                    : a.kind == AxisKind::kWorkload ? s.workloads
                                                                    : s.softwares;
    for (AxisValue& v : a.values) {
      if (v.unset) continue;  // the key's, index 0
      const bool file = a.kind != AxisKind::kSoftware || names_a_file(v.text);
      const std::string path = file ? beside(s.file, v.text) : v.text;
      v.file = 0;
      while (v.file < files.size() && files[v.file].path != path) ++v.file;
      if (v.file == files.size()) files.push_back(StudyFile{path, v.text, v.loc});
    }
  }
}

}  // namespace

std::string_view to_string(StudySearch s) { return name_in(kSearches, s); }
std::optional<StudySearch> parse_study_search(std::string_view s) { return value_in(kSearches, s); }
std::vector<std::string> valid_study_searches() { return names_of(kSearches); }

std::string_view to_string(AxisKind k) { return name_in(kAxes, k); }
std::optional<AxisKind> parse_axis_kind(std::string_view s) { return value_in(kAxes, s); }
std::vector<std::string> valid_axis_kinds() { return names_of(kAxes); }
bool is_numeric_axis(AxisKind k) { return k == AxisKind::kDevices || k == AxisKind::kNodesPerPackage; }

std::string_view to_string(PlotKind k) { return k == PlotKind::kLine ? "line" : "bars"; }

const std::vector<std::string>& numeric_result_columns() {
  static const std::vector<std::string> columns{
      "iteration_s",   "mfu",         "tokens_per_s",     "compute_s",  "embedding_head_s",
      "tensor_comm_s", "pipeline_comm_s", "pipeline_bubble_s", "data_comm_s", "gradient_sync_s",
      "optimizer_s",   "host_s",      "peak_tflops",      "memory_bandwidth_gbs",
      "memory_gb_per_device", "memory_used_gb", "gemm_intensity", "energy_j", "j_per_token", "chip_j_per_token",
      "device_power_w", "peak_device_power_w", "gflop_per_j", "usd", "usd_per_mtoken"};
  return columns;
}

const StudyAxis* StudySpec::find_axis(AxisKind k) const {
  for (const StudyAxis& a : axes) {
    if (a.kind == k) return &a;
  }
  return nullptr;
}
const StudyAxis* StudySpec::find_axis(std::string_view axis) const {
  const auto k = parse_axis_kind(axis);
  return k ? find_axis(*k) : nullptr;
}

std::size_t StudySpec::point_count() const {
  std::size_t n = points.empty() ? 1 : points.size();
  for (std::size_t k = point_axes; k < axes.size(); ++k) n *= axes[k].values.size();
  return n;
}

bool StudySpec::searches(StudySearch mode) const {
  if (const StudyAxis* a = find_axis(AxisKind::kSearch)) {
    return std::any_of(a->values.begin(), a->values.end(),
                       [&](const AxisValue& v) { return v.search == mode; });
  }
  return search == mode;
}

std::vector<const AxisValue*> point_values(const StudySpec& s, std::size_t index) {
  std::size_t sweep = 1;
  for (std::size_t k = s.point_axes; k < s.axes.size(); ++k) sweep *= s.axes[k].values.size();
  std::vector<const AxisValue*> out(s.axes.size());
  if (!s.points.empty()) {
    const ExplicitPoint& e = s.points[index / sweep];
    for (std::size_t k = 0; k < s.point_axes; ++k) out[k] = &s.axes[k].values[e.values[k]];
  }
  std::size_t rest = index % sweep;
  for (std::size_t k = s.axes.size(); k-- > s.point_axes;) {  // last axis fastest
    const std::vector<AxisValue>& values = s.axes[k].values;
    out[k] = &values[rest % values.size()];
    rest /= values.size();
  }
  return out;
}

StudySpec read_study(const ConfigNode& root) {
  StudySpec s;
  s.file = root.file();
  s.name = root.require<std::string>("name");
  check_single_line(root, "name", s.name);
  // The name is the default output folder, results/<name>.
  if (s.name.empty() || s.name.find('/') != std::string::npos || s.name.front() == '.') {
    throw root.error_at("name", "expected a name without \"/\", not starting with \".\", got \"" +
                                    s.name + "\"");
  }
  s.question = root.require<std::string>("question");
  if (s.question.empty()) throw root.error_at("question", "expected the question the study answers");
  check_single_line(root, "question", s.question);
  PointsRead points = read_points(root);
  s.axes = points.axes;
  s.point_axes = s.axes.size();
  if (auto sweep = root.optional_child("sweep")) {
    for (const auto& [key, node] : sweep->entries()) {
      StudyAxis a = read_axis(*sweep, key);
      for (std::size_t k = 0; k < s.point_axes; ++k) {
        if (s.axes[k].kind == a.kind) {
          throw sweep->error_at(key, "also set by points (line " + std::to_string(s.axes[k].loc.line) +
                                         "); an axis is either swept or set by points");
        }
      }
      s.axes.push_back(std::move(a));
    }
  }
  for (const AxisKind kind : {AxisKind::kTemplate, AxisKind::kWorkload}) {
    if (!check_keyed_setting(s, root, points, kind, true)) continue;
    const std::string key(to_string(kind));
    const std::string text = root.require<std::string>(key);
    check_single_line(root, key, text);
    std::vector<StudyFile>& files = kind == AxisKind::kTemplate ? s.templates : s.workloads;
    files.push_back(StudyFile{beside(s.file, text), text, root.loc_of(key)});
    (kind == AxisKind::kTemplate ? s.template_path : s.workload_path) = files.back().path;
  }
  s.check_memory = root.get_or<bool>("check_memory", true);
  s.goal = read_goal(root);
  s.softwares.push_back(StudyFile{"", kDefaultSoftwareProfile, root.loc()});
  if (check_keyed_setting(s, root, points, AxisKind::kSoftware, false)) {
    const std::string sw = root.require<std::string>("software");
    check_single_line(root, "software", sw);
    s.software = names_a_file(sw) ? beside(s.file, sw) : sw;
    s.software_loc = root.loc_of("software");
    s.softwares.front() = StudyFile{s.software, sw, s.software_loc};
  }
  if (check_keyed_setting(s, root, points, AxisKind::kDevices, true)) {
    s.devices = root.require_positive<int>("devices");
  }
  if (check_keyed_setting(s, root, points, AxisKind::kSearch, true)) {
    const std::string search = root.require<std::string>("search");
    const auto mode = parse_study_search(search);
    if (!mode) {
      throw root.error_at("search", "unknown search \"" + search + "\" (expected " +
                                        join_alternatives(valid_study_searches()) + ")" +
                                        did_you_mean(search, valid_study_searches()));
    }
    s.search = *mode;
  }
  std::string strategy_text;
  if (check_keyed_setting(s, root, points, AxisKind::kStrategy, false)) {
    strategy_text = root.require<std::string>("strategy");
    check_single_line(root, "strategy", strategy_text);
    s.strategy = located_strategy(strategy_text, root.loc_of("strategy"));
  }
  fill_points(s, points, strategy_text);
  check_searches(s, root);
  s.shortlist = root.optional_positive<int>("shortlist").value_or(3);
  if (auto n = root.optional_child("optimizer")) {
    s.optimizer = read_search_options(*n);
    s.optimizer.validate();
  }
  if (root.has("pareto")) {
    const std::vector<ConfigNode> items = root.items("pareto");
    std::string text;
    for (const ConfigNode& n : items) text += (text.empty() ? "" : ",") + n.as<std::string>();
    s.pareto = parse_pareto(text, root.loc_of("pareto"));  // two different measures
  }
  register_files(s);
  for (const ConfigNode& n : root.optional_items("outputs")) {
    s.outputs.push_back(read_plot(s, n));
    for (std::size_t i = 0; i + 1 < s.outputs.size(); ++i) {
      if (s.outputs[i].name == s.outputs.back().name) {
        throw n.error("a second plot named \"" + s.outputs.back().name + "\" (give name:)");
      }
    }
  }
  root.finish();
  return s;
}

StudySpec load_study(const std::string& path) { return read_study(ConfigNode::load_file(path)); }

}  // namespace pathfinder
