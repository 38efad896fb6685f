#include "engine/core/error.hpp"

#include <cstdio>
#include <cstdlib>

namespace pathfinder {

std::string Diagnostic::str() const {
  std::string out = loc.file;
  if (loc.line > 0) out += ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col);
  out += ": error: ";
  if (!loc.key_path.empty()) out += loc.key_path + ": ";
  out += message;
  return out;
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
