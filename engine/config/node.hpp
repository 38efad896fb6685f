// Strict YAML reading (design.md §4). The only code that sees yaml-cpp is node.cpp.
//
// A ConfigNode remembers its file and dotted key path, so every error names both:
//   templates/a100.yaml:14:17: error: memory.main.technology: expected …, got …
// Every key of a map must be read before finish(), which rejects the rest with a did-you-mean.
#pragma once

#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/config/quantity.hpp"
#include "engine/core/error.hpp"

namespace pathfinder {

template <class T>
struct is_quantity : std::false_type {};
template <class D>
struct is_quantity<Quantity<D>> : std::true_type {};

// A value given on the command line for a key of a file (`--set micro_batch=4`): the dotted key
// path, the value as the scalar text the file would hold, and what messages about it name.
struct ConfigOverride {
  std::string key;     // dotted for nested maps: "micro_batch", "host.dispatch"
  std::string value;   // read exactly as a scalar in the file: "4", "4096", "bf16", "12 us"
  std::string origin;  // "--set micro_batch", or a shorthand option such as "--micro-batch"
  // Where the value was written when it comes from another file (a search file's budget:);
  // unset: the command line, named by `origin`.
  std::optional<SourceLoc> at;
};

// "key=value" as a ConfigOverride with origin "<option> key". Throws ConfigError at
// `command line` naming the option for a missing '=', an empty key or value, or an empty part
// of a dotted key ("a..b").
[[nodiscard]] ConfigOverride parse_config_override(std::string_view text,
                                                   std::string_view option = "--set");

class ConfigNode {
 public:
  // Throws ConfigError for a missing or unreadable file and for malformed YAML.
  [[nodiscard]] static ConfigNode load_file(const std::string& path);
  [[nodiscard]] static ConfigNode load_string(const std::string& text, const std::string& name);

  // A copy of this top-level map with each override applied in order: an existing value is
  // replaced, a missing key (and any missing map on its dotted path) is created, and the
  // readers' checks then run on the result exactly as on the file. Problems with an overridden
  // value or key are reported at `command line` with the key path `--set key`:
  //   command line: error: --set micro_batch: expected a positive number, got "0"
  // Throws ConfigError when a dotted path runs through a value that is not a map.
  [[nodiscard]] ConfigNode with_overrides(const std::vector<ConfigOverride>& overrides) const;

  [[nodiscard]] bool has(std::string_view key) const;
  [[nodiscard]] bool is_map() const;
  [[nodiscard]] bool is_sequence() const;
  [[nodiscard]] bool is_scalar() const;

  template <class T>
  [[nodiscard]] T require(std::string_view key) const {
    return child_for_value(key, /*required=*/true, describe<T>())->template as<T>();
  }
  template <class T>
  [[nodiscard]] std::optional<T> optional(std::string_view key) const {
    auto c = child_for_value(key, /*required=*/false, describe<T>());
    if (!c) return std::nullopt;
    return c->template as<T>();
  }
  template <class T>
  [[nodiscard]] T get_or(std::string_view key, T fallback) const {
    auto v = optional<T>(key);
    return v ? *v : fallback;
  }
  // A value that must be > 0 (budgets, capacities, rates).
  template <class T>
  [[nodiscard]] T require_positive(std::string_view key) const {
    return as_sign_checked<T>(*child_for_value(key, true, describe<T>()), /*zero_ok=*/false);
  }
  // A value that must be >= 0 (overheads, latencies); fallback when the key is absent.
  template <class T>
  [[nodiscard]] T get_non_negative_or(std::string_view key, T fallback) const {
    const auto c = child_for_value(key, false, describe<T>());
    return c ? as_sign_checked<T>(*c, /*zero_ok=*/true) : fallback;
  }
  template <class T>
  [[nodiscard]] std::optional<T> optional_positive(std::string_view key) const {
    if (!has(key)) {
      (void)optional<T>(key);
      return std::nullopt;
    }
    return require_positive<T>(key);
  }

  // The value of this node.
  template <class T>
  [[nodiscard]] T as() const {
    if constexpr (is_quantity<T>::value) {
      return T::from_si(as_quantity(dim_of<typename T::dim_type>()));
    } else if constexpr (std::is_same_v<T, bool>) {
      return as_bool();
    } else if constexpr (std::is_same_v<T, std::string>) {
      return as_string();
    } else if constexpr (std::is_integral_v<T>) {
      const long long v = as_integer();
      if (v < static_cast<long long>(std::numeric_limits<T>::min()) ||
          (v > 0 && static_cast<unsigned long long>(v) >
                       static_cast<unsigned long long>(std::numeric_limits<T>::max()))) {
        report(error("expected a whole number in [" +
                     std::to_string(std::numeric_limits<T>::min()) + ", " +
                     std::to_string(std::numeric_limits<T>::max()) + "], got \"" +
                     scalar_text() + "\""));
        return T(1);
      }
      return static_cast<T>(v);
    } else {
      static_assert(std::is_same_v<T, double>, "unsupported config value type");
      return as_double();
    }
  }

  [[nodiscard]] ConfigNode child(std::string_view key) const;  // a required map
  [[nodiscard]] std::optional<ConfigNode> optional_child(std::string_view key) const;
  // A required or optional sequence under key; each element is a node.
  [[nodiscard]] std::vector<ConfigNode> items(std::string_view key) const;
  [[nodiscard]] std::vector<ConfigNode> optional_items(std::string_view key) const;
  // Entries of this map, in file order; marks every key as read.
  [[nodiscard]] std::vector<std::pair<std::string, ConfigNode>> entries() const;

  // Rejects every key of this map that was never read.
  void finish() const;

  // Reading every problem of a file (`pathfinder validate`), not only the first: a copy of this
  // tree that records each per-key problem (a missing or unknown key, a value of the wrong kind,
  // unit or sign) and goes on with a stand-in value (1 for numbers and quantities, an empty
  // string, false, an empty map or list), so one pass over a reader finds them all. Only the
  // first problem at each key path is kept: a stand-in never reports again at its own key.
  // Readers' semantic checks still throw; callers add that error with report() and stop.
  [[nodiscard]] ConfigNode collecting() const;
  // The problems recorded so far in this tree, in the order found (empty unless collecting()).
  [[nodiscard]] std::vector<Diagnostic> problems() const;
  // Throws e, or records its diagnostics when this tree is collecting.
  void report(const ConfigError& e) const;
  // Reports a required key as missing: a misspelling of it (an unread key of this map a small
  // edit away) as that key's unknown-key problem at its own line, else "missing required key
  // <hint>" at this map.
  void report_missing(std::string_view key, const std::string& hint) const;

  [[nodiscard]] ConfigError error(std::string message) const;
  [[nodiscard]] ConfigError error_at(std::string_view key, std::string message) const;
  [[nodiscard]] SourceLoc loc() const;
  [[nodiscard]] SourceLoc loc_of(std::string_view key) const;
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const std::string& file() const;
  [[nodiscard]] std::string scalar_text() const;
  // The raw text of key's value in quotes, for messages: "\"0.9 V\"".
  [[nodiscard]] std::string quoted(std::string_view key) const;

  struct Impl;

 private:
  using Origins = std::map<std::string, SourceLoc, std::less<>>;  // key path -> where it was set
  struct Sink;  // the problems of a collecting tree
  ConfigNode(std::shared_ptr<const Impl> impl, std::shared_ptr<const std::string> file,
             std::string path, std::shared_ptr<const Origins> origins = nullptr,
             std::shared_ptr<Sink> sink = nullptr, bool stand_in = false);
  // An empty stand-in for a value whose problem was just recorded.
  [[nodiscard]] ConfigNode stand_in(std::string path) const;
  // Where the node at `path` came from: the option that overrode it, else the file at the
  // yaml-cpp mark (0-based line and column; -1 for a node without one).
  [[nodiscard]] SourceLoc located(int mark_line, int mark_column, const std::string& path) const;
  [[nodiscard]] std::optional<ConfigNode> child_for_value(std::string_view key, bool required,
                                                          const std::string& expected) const;
  [[nodiscard]] std::string child_path(std::string_view key) const;
  [[nodiscard]] double as_quantity(const DimVec& dim) const;
  [[nodiscard]] double as_double() const;
  [[nodiscard]] long long as_integer() const;
  [[nodiscard]] bool as_bool() const;
  [[nodiscard]] std::string as_string() const;

  template <class T>
  static std::string describe() {
    if constexpr (is_quantity<T>::value) {
      return describe_dimension(dim_of<typename T::dim_type>());
    } else if constexpr (std::is_same_v<T, bool>) {
      return "true or false";
    } else if constexpr (std::is_same_v<T, std::string>) {
      return "a string";
    } else if constexpr (std::is_integral_v<T>) {
      return "a whole number";
    } else {
      return "a number";
    }
  }
  template <class T>
  static std::string noun() {
    if constexpr (is_quantity<T>::value) {
      std::string d = describe_dimension(dim_of<typename T::dim_type>());
      const auto sp = d.find(' ');
      const auto such = d.find(" such as");
      return d.substr(sp + 1, such - sp - 1);
    } else {
      return "number";
    }
  }
  // c's value, rejected unless > 0 (or >= 0 when zero_ok).
  template <class T>
  static T as_sign_checked(const ConfigNode& c, bool zero_ok) {
    const T v = c.template as<T>();
    const double x = value_of(v);
    if (!(zero_ok ? x >= 0.0 : x > 0.0)) {
      c.report(c.error(std::string("expected a ") + (zero_ok ? "non-negative " : "positive ") +
                       noun<T>() + ", got \"" + c.scalar_text() + "\""));
      return one<T>();  // collecting: a stand-in that passes the check
    }
    return v;
  }
  template <class T>
  static T one() {
    if constexpr (is_quantity<T>::value) {
      return T::from_si(1.0);
    } else {
      return T(1);
    }
  }
  template <class T>
  static double value_of(const T& v) {
    if constexpr (is_quantity<T>::value) {
      return v.si();
    } else {
      return static_cast<double>(v);
    }
  }

  std::shared_ptr<const Impl> impl_;
  std::shared_ptr<const std::string> file_;
  std::string path_;
  std::shared_ptr<const Origins> origins_;  // null unless with_overrides made this tree
  std::shared_ptr<std::set<std::string>> read_;
  std::shared_ptr<Sink> sink_;  // null unless collecting()
  bool stand_in_ = false;       // reads give stand-in values silently
};

// Text that names or describes something (a name, a title, a label) ends up in one-line
// messages, CSV cells, Markdown tables and gnuplot scripts: a control character there (a
// newline ends a gnuplot command and starts another) is rejected where it was read. These
// throw the node's (or its key's) ConfigError unless `text` is free of them:
//   study.yaml:9:12: error: outputs[0].title: expected text without control characters
//   (newline, tab, ...), got "t\nsystem 'touch /tmp/x'\n"
void check_single_line(const ConfigNode& n, const std::string& text);
void check_single_line(const ConfigNode& map, std::string_view key, const std::string& text);
// s with each control character, backslash and double quote written as a C escape, for a
// message that must stay on one line: "a\nb".
[[nodiscard]] std::string escape_for_message(std::string_view s);

}  // namespace pathfinder
