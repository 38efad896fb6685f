#include "engine/study/study_spec.hpp"

#include <algorithm>
#include <array>
#include <filesystem>

#include "engine/config/node.hpp"
#include "engine/core/text.hpp"
#include "engine/explore/search_study.hpp"

namespace pathfinder {
namespace {

constexpr std::array<std::pair<StudySearch, std::string_view>, 3> kSearches{{
    {StudySearch::kNone, "none"},
    {StudySearch::kStrategy, "strategy"},
    {StudySearch::kArchitecture, "architecture"},
}};

constexpr std::array<std::pair<AxisKind, std::string_view>, 10> kAxes{{
    {AxisKind::kLogic, "logic"},
    {AxisKind::kMemory, "memory"},
    {AxisKind::kNetwork, "network"},
    {AxisKind::kDevices, "devices"},
    {AxisKind::kNodesPerPackage, "nodes_per_package"},
    {AxisKind::kPower, "budget.power"},
    {AxisKind::kChipArea, "budget.chip_area"},
    {AxisKind::kNodeArea, "budget.node_area"},
    {AxisKind::kPerimeter, "budget.perimeter"},
    {AxisKind::kStrategy, "strategy"},
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
Strategy located_strategy(const std::string& text, const SourceLoc& where) {
  try {
    return parse_strategy(text);
  } catch (const ConfigError& e) {
    throw ConfigError(Diagnostic{where, e.diagnostics().front().message});
  }
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
  switch (kind) {
    case AxisKind::kLogic:
    case AxisKind::kMemory:
    case AxisKind::kNetwork:
      v.text = item.as<std::string>();
      if (v.text.empty()) throw item.error("expected a technology name, got \"\"");
      break;
    case AxisKind::kDevices:
    case AxisKind::kNodesPerPackage:
      v.number = item.as<int>();
      if (v.number <= 0) throw item.error("expected a positive whole number, got \"" + v.text + "\"");
      break;
    case AxisKind::kPower: v.number = positive_quantity<Power>(item, "power"); break;
    case AxisKind::kChipArea:
    case AxisKind::kNodeArea: v.number = positive_quantity<Area>(item, "area"); break;
    case AxisKind::kPerimeter: v.number = positive_quantity<Length>(item, "length"); break;
    case AxisKind::kStrategy: v.strategy = located_strategy(v.text, v.loc); break;
  }
  return v;
}

// 0.3 kW repeats 300 W; strategies compare by what they mean.
bool same_value(const AxisValue& a, const AxisValue& b) {
  if (a.strategy && b.strategy) return *a.strategy == *b.strategy;
  return a.number != 0.0 ? a.number == b.number : a.text == b.text;
}

StudyAxis read_axis(const ConfigNode& sweep, const std::string& key) {
  const auto kind = parse_axis_kind(key);
  if (!kind) {
    const std::vector<std::string> known = valid_axis_kinds();
    throw sweep.error_at(key, "unknown axis (expected " + join_alternatives(known) + ")" +
                                  did_you_mean(key, known));
  }
  StudyAxis a;
  a.kind = *kind;
  a.loc = sweep.loc_of(key);
  for (const ConfigNode& item : sweep.items(key)) {
    AxisValue v = read_axis_value(a.kind, item);
    for (const AxisValue& seen : a.values) {
      if (same_value(seen, v)) {
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

PlotSpec read_plot(const StudySpec& s, const ConfigNode& n) {
  PlotSpec p;
  p.loc = n.loc();
  const std::string kind = n.require<std::string>("plot");
  if (kind == "line") p.kind = PlotKind::kLine;
  else if (kind == "bars") p.kind = PlotKind::kBars;
  else throw n.error_at("plot", "unknown plot \"" + kind + "\" (expected line or bars)" + did_you_mean(kind, {"line", "bars"}));
  p.x = plot_axis(s, n, "x").name();
  p.y = n.require<std::string>("y");
  const std::vector<std::string>& ys = numeric_result_columns();
  if (std::find(ys.begin(), ys.end(), p.y) == ys.end()) {
    throw n.error_at("y", "\"" + p.y + "\" is not a numeric result column (expected " +
                              join_alternatives(ys) + ")" + did_you_mean(p.y, ys));
  }
  if (n.has("series")) p.series = plot_axis(s, n, "series").name();
  else (void)n.optional<std::string>("series");
  if (p.series == p.x && !p.series.empty()) throw n.error_at("series", "series and x are the same axis");
  p.name = n.get_or<std::string>("name", p.y + "_vs_" + p.x);
  std::replace(p.name.begin(), p.name.end(), '.', '_');
  if (p.name.empty() || p.name.find('/') != std::string::npos) {
    throw n.error_at("name", "expected a file name without \"/\", got \"" + p.name + "\"");
  }
  p.title = n.get_or<std::string>("title", s.name + ": " + p.y + " vs " + p.x);
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

// Which strategy settings go with which search.
void check_strategy_keys(const StudySpec& s, const ConfigNode& root) {
  const StudyAxis* axis = s.find_axis(AxisKind::kStrategy);
  if (s.strategy && axis != nullptr) {
    throw root.error_at("strategy", "given both here and as the sweep's strategy axis; keep one");
  }
  const bool fixed = s.strategy || axis != nullptr;
  if (s.search == StudySearch::kNone && !fixed) {
    throw root.error_at("search", "search: none evaluates a fixed strategy: give strategy: or a "
                                  "strategy axis");
  }
  if (s.search == StudySearch::kStrategy && fixed) {
    const SourceLoc where = s.strategy ? root.loc_of("strategy") : axis->loc;
    throw ConfigError(Diagnostic{where, "search: strategy ranks every strategy at each point; "
                                        "drop the fixed strategy (or use search: none)"});
  }
  if (root.has("shortlist") && (s.search != StudySearch::kArchitecture || fixed)) {
    throw root.error_at("shortlist", "only used by search: architecture without a fixed strategy");
  }
  if (root.has("optimizer") && s.search != StudySearch::kArchitecture) {
    throw root.error_at("optimizer", "only used by search: architecture");
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
      "iteration_s",   "mfu",         "tokens_per_s",     "compute_s",
      "tensor_comm_s", "pipeline_comm_s", "pipeline_bubble_s", "data_comm_s",
      "optimizer_s",   "host_s",      "peak_tflops",      "memory_bandwidth_gbs",
      "memory_gb_per_device", "memory_used_gb"};
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
  std::size_t n = 1;
  for (const StudyAxis& a : axes) n *= a.values.size();
  return n;
}

StudySpec read_study(const ConfigNode& root) {
  StudySpec s;
  s.file = root.file();
  s.name = root.require<std::string>("name");
  s.question = root.require<std::string>("question");
  if (s.question.empty()) throw root.error_at("question", "expected the question the study answers");
  s.template_path = beside(s.file, root.require<std::string>("template"));
  s.workload_path = beside(s.file, root.require<std::string>("workload"));
  s.check_memory = root.get_or<bool>("check_memory", true);
  if (auto sweep = root.optional_child("sweep")) {
    for (const auto& [key, node] : sweep->entries()) s.axes.push_back(read_axis(*sweep, key));
  }
  const bool device_axis = s.find_axis(AxisKind::kDevices) != nullptr;
  if (device_axis && root.has("devices")) {
    throw root.error_at("devices", "given both here and as a sweep axis; keep one");
  }
  if (!device_axis) s.devices = root.require_positive<int>("devices");
  const std::string search = root.require<std::string>("search");
  const auto mode = parse_study_search(search);
  if (!mode) {
    throw root.error_at("search", "unknown search \"" + search + "\" (expected " +
                                      join_alternatives(valid_study_searches()) + ")" +
                                      did_you_mean(search, valid_study_searches()));
  }
  s.search = *mode;
  if (auto text = root.optional<std::string>("strategy")) {
    s.strategy = located_strategy(*text, root.loc_of("strategy"));
  }
  check_strategy_keys(s, root);
  s.shortlist = root.optional_positive<int>("shortlist").value_or(3);
  if (auto n = root.optional_child("optimizer")) {
    s.optimizer = read_search_options(*n);
    s.optimizer.validate();
  }
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
