#include "engine/core/error.hpp"

#include <cstdio>
#include <cstdlib>

namespace pathfinder {

namespace {
// Control characters as C escapes, so a value quoted in a message (a YAML string with "\n", a
// strategy with a tab) never breaks the one-line form: \n, \t, \r, else \xNN.
std::string one_line(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (u < 0x20 || u == 0x7f) {
      static const char* const kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}
}  // namespace

std::string Diagnostic::str() const {
  std::string out = loc.file;
  if (loc.line > 0) out += ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col);
  out += ": error: ";
  if (!loc.key_path.empty()) out += loc.key_path + ": ";
  out += message;
  return one_line(out);
}

namespace {
std::string join(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) {
    if (!out.empty()) out += '\n';
    out += d.str();
  }
  return out;
}
}  // namespace

ConfigError::ConfigError(Diagnostic d) : ConfigError(std::vector<Diagnostic>{std::move(d)}) {}
ConfigError::ConfigError(std::vector<Diagnostic> ds)
    : std::runtime_error(join(ds)), diags_(std::move(ds)) {}

void assertion_failed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: internal error: assertion failed: %s\n", file, line, expr);
  std::abort();
}

}  // namespace pathfinder
