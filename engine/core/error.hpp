// Error kinds (design.md §4): ConfigError for user input (the CLI exits 2), infeasible designs
// are values, engine bugs trip PF_ASSERT (active in every build).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace pathfinder {

// Where a value came from: file, 1-based line and column, dotted key path.
struct SourceLoc {
  std::string file;
  int line = 0;  // 0: no position (e.g. the file itself is missing)
  int col = 0;
  std::string key_path;
};

// One problem in user input, rendered compiler-style:
//   templates/h100.yaml:14:17: error: memory.hbm.bandwidth: expected …, got …
struct Diagnostic {
  SourceLoc loc;
  std::string message;
  [[nodiscard]] std::string str() const;
};

class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(Diagnostic d);
  explicit ConfigError(std::vector<Diagnostic> ds);  // several problems from a semantic pass
  [[nodiscard]] const std::vector<Diagnostic>& diagnostics() const { return diags_; }

 private:
  std::vector<Diagnostic> diags_;
};

[[noreturn]] void assertion_failed(const char* expr, const char* file, int line);

}  // namespace pathfinder

#define PF_ASSERT(cond) \
  ((cond) ? static_cast<void>(0) : ::pathfinder::assertion_failed(#cond, __FILE__, __LINE__))
