#include "engine/config/node.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/core/file_io.hpp"
#include "engine/core/text.hpp"

namespace pathfinder {

struct ConfigNode::Impl {
  explicit Impl(YAML::Node n) : node(std::move(n)) {}
  Impl(YAML::Node n, std::shared_ptr<const std::string> t, std::vector<ConfigOverride> o)
      : node(std::move(n)), text(std::move(t)), overrides(std::move(o)) {}
  YAML::Node node;
  // A top-level node only: the text it was parsed from and the overrides applied to it.
  // with_overrides re-parses the text, since YAML::Clone drops the marks errors point at.
  std::shared_ptr<const std::string> text;
  std::vector<ConfigOverride> overrides;
};

struct ConfigNode::Sink {
  std::vector<Diagnostic> problems;
  std::set<std::string> key_paths;  // reported ones: the first problem at a key is kept
};

namespace {

SourceLoc loc_from_mark(const std::string& file, const YAML::Mark& m, std::string path) {
  SourceLoc loc{file, 0, 0, std::move(path)};
  if (m.line >= 0) {  // yaml-cpp marks are 0-based; a missing node has no mark (-1)
    loc.line = m.line + 1;
    loc.col = m.column + 1;
  }
  return loc;
}

std::string kind_of(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Scalar: return "\"" + n.Scalar() + "\"";
    default: return "nothing";
  }
}

// Limits on a document as its readers walk it, aliases expanded: each use of an alias is a
// walk through the anchored node again, so a few hundred bytes of aliases of aliases (the
// "billion laughs" attack) expand to billions of nodes, and an alias inside its own anchor
// (`a: &x {b: *x}`) to an endless tree.
constexpr int kMaxYamlDepth = 64;                // maps and lists inside each other
constexpr std::size_t kMaxYamlNodes = 1'000'000;  // nodes, every alias use counted again

struct DocumentWalk {
  const std::string& file;
  std::vector<YAML::Node> open;  // the maps and lists being walked, outermost first
  std::size_t nodes = 0;
};

// Rejects a recursive alias, a document nested deeper than kMaxYamlDepth or expanding to
// more than kMaxYamlNodes, and a repeated key: yaml-cpp keeps both entries of a repeated key
// and lookups see the first.
void check_document(const YAML::Node& n, DocumentWalk& w, const std::string& path) {
  const auto fail = [&](const YAML::Node& at, const std::string& message) {
    return ConfigError(Diagnostic{loc_from_mark(w.file, at.Mark(), path), message});
  };
  if (++w.nodes > kMaxYamlNodes) {
    throw fail(n, "the document expands to more than " + std::to_string(kMaxYamlNodes) +
                      " nodes, aliases counted at each use (the limit for a YAML input)");
  }
  if (!n.IsMap() && !n.IsSequence()) return;
  for (const YAML::Node& outer : w.open) {
    if (outer.is(n)) throw fail(n, "recursive alias: the node contains itself");
  }
  if (static_cast<int>(w.open.size()) >= kMaxYamlDepth) {
    throw fail(n, "nested deeper than " + std::to_string(kMaxYamlDepth) +
                      " maps and lists (the limit for a YAML input)");
  }
  w.open.push_back(n);
  if (n.IsMap()) {
    std::set<std::string> seen;
    for (const auto& kv : n) {
      if (!kv.first.IsScalar()) {  // `? [a]: b`, or `[]` alone after a map: a key that is no name
        throw ConfigError(Diagnostic{loc_from_mark(w.file, kv.first.Mark(), path),
                                     "expected a key (a name), got " + kind_of(kv.first)});
      }
      const std::string k = kv.first.Scalar();
      const std::string p = path.empty() ? k : path + "." + k;
      if (!seen.insert(k).second) {
        throw ConfigError(Diagnostic{loc_from_mark(w.file, kv.first.Mark(), p),
                                     "duplicate key (each key may appear once in a map)"});
      }
      check_document(kv.first, w, p);
      check_document(kv.second, w, p);
    }
  } else {
    std::size_t i = 0;
    for (const auto& e : n) check_document(e, w, path + "[" + std::to_string(i++) + "]");
  }
  w.open.pop_back();
}

}  // namespace

ConfigNode::ConfigNode(std::shared_ptr<const Impl> impl, std::shared_ptr<const std::string> file,
                       std::string path, std::shared_ptr<const Origins> origins,
                       std::shared_ptr<Sink> sink, bool stand_in)
    : impl_(std::move(impl)),
      file_(std::move(file)),
      path_(std::move(path)),
      origins_(std::move(origins)),
      read_(std::make_shared<std::set<std::string>>()),
      sink_(std::move(sink)),
      stand_in_(stand_in) {}

ConfigNode ConfigNode::stand_in(std::string path) const {
  return ConfigNode(std::make_shared<Impl>(Impl{YAML::Node(YAML::NodeType::Map)}), file_,
                    std::move(path), origins_, sink_, /*stand_in=*/true);
}

ConfigNode ConfigNode::collecting() const {
  return ConfigNode(impl_, file_, path_, origins_, std::make_shared<Sink>(), stand_in_);
}

std::vector<Diagnostic> ConfigNode::problems() const {
  return sink_ ? sink_->problems : std::vector<Diagnostic>{};
}

void ConfigNode::report(const ConfigError& e) const {
  if (!sink_) throw e;
  for (const Diagnostic& d : e.diagnostics()) {
    const bool seen = d.loc.key_path.empty()
                          ? std::any_of(sink_->problems.begin(), sink_->problems.end(),
                                        [&](const Diagnostic& p) { return p.str() == d.str(); })
                          : !sink_->key_paths.insert(d.loc.key_path).second;
    if (!seen) sink_->problems.push_back(d);
  }
}

SourceLoc ConfigNode::located(int mark_line, int mark_column, const std::string& path) const {
  if (origins_) {
    if (const auto it = origins_->find(path); it != origins_->end()) return it->second;
  }
  YAML::Mark m = YAML::Mark::null_mark();
  m.line = mark_line;
  m.column = mark_column;
  return loc_from_mark(*file_, m, path);
}

ConfigOverride parse_config_override(std::string_view text, std::string_view option) {
  const auto bad = [&](const std::string& why) {
    return ConfigError(Diagnostic{SourceLoc{"command line", 0, 0, std::string(option)},
                                  "expected key=value, got \"" + std::string(text) + "\" (" +
                                      why + ")"});
  };
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos) throw bad("no '='");
  ConfigOverride o{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)), "",
                   std::nullopt};
  o.origin = std::string(option) + " " + o.key;
  if (o.key.empty()) throw bad("no key before '='");
  if (o.value.empty()) throw bad("no value after '='");
  if (o.key.front() == '.' || o.key.back() == '.' || o.key.find("..") != std::string::npos) {
    throw bad("an empty part in the dotted key");
  }
  return o;
}

ConfigNode ConfigNode::with_overrides(const std::vector<ConfigOverride>& overrides) const {
  PF_ASSERT(path_.empty() && impl_->node.IsMap() && impl_->text);
  // Parsed again from the text (it parsed once, so it parses again): a tree with the file's
  // marks that the overrides can change without touching this node's.
  YAML::Node root = YAML::Load(*impl_->text);
  std::vector<ConfigOverride> all = impl_->overrides;
  all.insert(all.end(), overrides.begin(), overrides.end());
  auto origins = std::make_shared<Origins>();
  for (const ConfigOverride& o : all) {
    const SourceLoc at = o.at ? *o.at : SourceLoc{"command line", 0, 0, o.origin};
    YAML::Node map(root);  // reset(), never operator=, walks the tree: operator= writes through
    std::string path;
    std::size_t start = 0;
    for (std::size_t dot = o.key.find('.'); dot != std::string::npos;
         start = dot + 1, dot = o.key.find('.', start)) {
      const std::string part = o.key.substr(start, dot - start);
      path = path.empty() ? part : path + "." + part;
      YAML::Node next = map[part];
      if (!next.IsDefined() || next.IsNull()) {
        map[part] = YAML::Node(YAML::NodeType::Map);
        origins->emplace(path, at);
        next.reset(map[part]);
      } else if (!next.IsMap()) {
        throw ConfigError(Diagnostic{at, path + " is " + kind_of(next) + ", not a map"});
      }
      map.reset(next);
    }
    map[o.key.substr(start)] = YAML::Node(o.value);
    (*origins)[o.key] = at;
  }
  return ConfigNode(std::make_shared<Impl>(Impl{root, impl_->text, std::move(all)}), file_, "",
                    std::move(origins));
}

ConfigNode ConfigNode::load_string(const std::string& text, const std::string& name) {
  auto file = std::make_shared<const std::string>(name);
  try {
    auto impl = std::make_shared<Impl>(
        Impl{YAML::Load(text), std::make_shared<const std::string>(text), {}});
    DocumentWalk walk{name, {}, 0};
    check_document(impl->node, walk, "");
    if (!impl->node.IsMap()) {
      SourceLoc at = loc_from_mark(name, impl->node.Mark(), "");
      if (at.line == 0) at = SourceLoc{name, 1, 1, ""};
      throw ConfigError(Diagnostic{at, "expected a YAML map at the top level, got " +
                                           kind_of(impl->node)});
    }
    return ConfigNode(std::move(impl), std::move(file), "");
  } catch (const YAML::Exception& e) {
    throw ConfigError(
        Diagnostic{loc_from_mark(name, e.mark, ""), "malformed YAML: " + e.msg});
  }
}

ConfigNode ConfigNode::load_file(const std::string& path) {
  InputFile in = read_input_file(path);
  if (!in.text) {
    throw ConfigError(Diagnostic{SourceLoc{path, 0, 0, ""}, "cannot read file: " + in.error});
  }
  return load_string(*in.text, path);
}

const std::string& ConfigNode::file() const { return *file_; }

bool ConfigNode::has(std::string_view key) const {
  const YAML::Node& n = impl_->node;
  if (!n.IsMap()) return false;
  const YAML::Node c = static_cast<const YAML::Node&>(n)[std::string(key)];
  return c.IsDefined() && !c.IsNull();
}
bool ConfigNode::is_map() const { return impl_->node.IsMap(); }
bool ConfigNode::is_sequence() const { return impl_->node.IsSequence(); }
bool ConfigNode::is_scalar() const { return impl_->node.IsScalar(); }

std::string ConfigNode::child_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

SourceLoc ConfigNode::loc() const {
  const YAML::Mark m = impl_->node.Mark();
  return located(m.line, m.column, path_);
}

SourceLoc ConfigNode::loc_of(std::string_view key) const {
  const YAML::Node& n = impl_->node;
  if (n.IsMap()) {
    const YAML::Node c = n[std::string(key)];
    if (c.IsDefined()) return located(c.Mark().line, c.Mark().column, child_path(key));
  }
  SourceLoc l = loc();
  l.key_path = child_path(key);
  return l;
}

ConfigError ConfigNode::error(std::string message) const {
  return ConfigError(Diagnostic{loc(), std::move(message)});
}
ConfigError ConfigNode::error_at(std::string_view key, std::string message) const {
  return ConfigError(Diagnostic{loc_of(key), std::move(message)});
}

std::string ConfigNode::scalar_text() const {
  return impl_->node.IsScalar() ? impl_->node.Scalar() : std::string();
}

std::string ConfigNode::quoted(std::string_view key) const {
  const YAML::Node& n = impl_->node;
  if (!n.IsMap()) return "nothing";
  const YAML::Node c = n[std::string(key)];
  return c.IsDefined() ? kind_of(c) : "nothing";
}

void ConfigNode::report_missing(std::string_view key, const std::string& hint) const {
  const YAML::Node& n = impl_->node;
  if (n.IsMap()) {
    for (const auto& kv : n) {
      const std::string k = kv.first.as<std::string>();
      if (read_->count(k) != 0 || closest_match(k, {std::string(key)}).empty()) continue;
      report(ConfigError(Diagnostic{
          located(kv.first.Mark().line, kv.first.Mark().column, child_path(k)),
          "unknown key" + did_you_mean(k, {std::string(key)})}));
      return;
    }
  }
  SourceLoc l = loc();
  l.key_path = child_path(key);
  report(ConfigError(Diagnostic{l, "missing required key " + hint}));
}

std::optional<ConfigNode> ConfigNode::child_for_value(std::string_view key, bool required,
                                                      const std::string& expected) const {
  read_->insert(std::string(key));
  if (stand_in_) return required ? std::optional(stand_in(child_path(key))) : std::nullopt;
  const YAML::Node& n = impl_->node;
  // Copy-construct: assigning to a YAML::Node writes through it (yaml-cpp reference semantics).
  const YAML::Node c = n.IsMap() ? n[std::string(key)] : YAML::Node(YAML::NodeType::Undefined);
  if (!c.IsDefined() || c.IsNull()) {
    if (!required) return std::nullopt;
    report_missing(key, "(expected " + expected + ")");
    return stand_in(child_path(key));
  }
  return ConfigNode(std::make_shared<Impl>(Impl{c}), file_, child_path(key), origins_, sink_);
}

ConfigNode ConfigNode::child(std::string_view key) const {
  auto c = child_for_value(key, true, "a map");
  if (!c->is_map()) {
    report(c->error("expected a map, got " + kind_of(c->impl_->node)));
    return stand_in(c->path_);
  }
  return *c;
}

std::optional<ConfigNode> ConfigNode::optional_child(std::string_view key) const {
  auto c = child_for_value(key, false, "a map");
  if (c && !c->is_map()) {
    report(c->error("expected a map, got " + kind_of(c->impl_->node)));
    return stand_in(c->path_);
  }
  return c;
}

std::vector<ConfigNode> ConfigNode::items(std::string_view key) const {
  auto c = child_for_value(key, true, "a list");
  if (c->stand_in_) return {};
  if (!c->is_sequence()) {
    report(c->error("expected a list, got " + kind_of(c->impl_->node)));
    return {};
  }
  std::vector<ConfigNode> out;
  std::size_t i = 0;
  for (const auto& e : c->impl_->node) {
    out.push_back(ConfigNode(std::make_shared<Impl>(Impl{e}), file_,
                             c->path_ + "[" + std::to_string(i++) + "]", origins_, sink_));
  }
  return out;
}

std::vector<ConfigNode> ConfigNode::optional_items(std::string_view key) const {
  if (!has(key)) {
    read_->insert(std::string(key));
    return {};
  }
  return items(key);
}

std::vector<std::pair<std::string, ConfigNode>> ConfigNode::entries() const {
  std::vector<std::pair<std::string, ConfigNode>> out;
  if (!impl_->node.IsMap()) {
    report(error("expected a map, got " + kind_of(impl_->node)));
    return out;
  }
  for (const auto& kv : impl_->node) {
    const std::string k = kv.first.as<std::string>();
    read_->insert(k);
    out.emplace_back(k, ConfigNode(std::make_shared<Impl>(Impl{kv.second}), file_, child_path(k),
                                   origins_, sink_));
  }
  return out;
}

void ConfigNode::finish() const {
  if (!impl_->node.IsMap()) return;
  std::vector<std::string> known(read_->begin(), read_->end());
  for (const auto& kv : impl_->node) {
    const std::string k = kv.first.as<std::string>();
    if (read_->count(k) != 0) continue;
    report(ConfigError(Diagnostic{located(kv.first.Mark().line, kv.first.Mark().column,
                                          child_path(k)),
                                  "unknown key" + did_you_mean(k, known)}));
  }
}

double ConfigNode::as_quantity(const DimVec& dim) const {
  const std::string expected = describe_dimension(dim);
  if (stand_in_) return 1.0;
  if (!impl_->node.IsScalar()) {
    report(error("expected " + expected + ", got " + kind_of(impl_->node)));
    return 1.0;
  }
  std::string why;
  const std::string text = impl_->node.Scalar();
  auto p = parse_quantity(text, &why);
  if (!p || !(p->dim == dim)) {
    std::string msg = "expected " + expected + ", got \"" + text + "\"";
    if (!p && why == "no unit") msg += " (a bare number needs a unit)";
    else if (!p) msg += " (" + why + ")";
    else msg += " (" + dimension_noun(p->dim) + ")";
    report(error(msg));
    return 1.0;
  }
  // The same physical-size bound as parse_typed_quantity (quantity.hpp).
  const double a = std::abs(p->si);
  if (a != 0.0 && (a > kMaxQuantity || a < kMinQuantity)) {
    report(error("expected " + expected + " of a physical size (between 1e-24 and 1e24 " +
                 si_unit_string(dim) + "), got \"" + text + "\""));
    return 1.0;
  }
  return p->si;
}

double ConfigNode::as_double() const {
  if (stand_in_) return 1.0;
  if (!impl_->node.IsScalar()) {
    report(error("expected a number, got " + kind_of(impl_->node)));
    return 1.0;
  }
  const std::string text = impl_->node.Scalar();
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) {
    report(error("expected a number, got \"" + text + "\""));
    return 1.0;
  }
  return v;
}

long long ConfigNode::as_integer() const {
  if (stand_in_) return 1;
  if (!impl_->node.IsScalar()) {
    report(error("expected a whole number, got " + kind_of(impl_->node)));
    return 1;
  }
  const std::string text = impl_->node.Scalar();
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE) {
    report(error("expected a whole number, got \"" + text + "\""));
    return 1;
  }
  return v;
}

bool ConfigNode::as_bool() const {
  if (stand_in_) return false;
  const std::string text = impl_->node.IsScalar() ? impl_->node.Scalar() : "";
  if (text == "true") return true;
  if (text == "false") return false;
  report(error("expected true or false, got " + kind_of(impl_->node)));
  return false;
}

std::string ConfigNode::as_string() const {
  if (stand_in_) return {};
  if (!impl_->node.IsScalar()) {
    report(error("expected a string, got " + kind_of(impl_->node)));
    return {};
  }
  return impl_->node.Scalar();
}

namespace {
bool has_control(const std::string& text) {
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return true;
  }
  return false;
}
std::string control_message(const std::string& text) {
  return "expected text without control characters (newline, tab, ...), got \"" +
         escape_for_message(text) + "\"";
}
}  // namespace

std::string escape_for_message(std::string_view s) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      default:
        if (u < 0x20 || u == 0x7f) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\x";
          out += kHex[u >> 4];
          out += kHex[u & 15];
        } else {
          out += c;
        }
    }
  }
  return out;
}

void check_single_line(const ConfigNode& n, const std::string& text) {
  if (has_control(text)) n.report(n.error(control_message(text)));
}

void check_single_line(const ConfigNode& map, std::string_view key, const std::string& text) {
  if (has_control(text)) map.report(map.error_at(key, control_message(text)));
}

}  // namespace pathfinder
