// The fuzzing harness's targets (issue 14): one per input kind the CLI reads, each parsing the
// bytes with the library's own loaders and, when they are valid, evaluating them, then checking
// the invariants every input must keep: a ConfigError whose every diagnostic is one line and
// located (file:line:col, or `command line` with the option), or a result whose numbers are
// finite (an infeasible result carries its reason). Anything else -- another exception, a
// non-finite number, an unlocated message -- is a FuzzFailure. libFuzzer entry points
// (fuzz_main.cpp, built with PATHFINDER_FUZZ and clang) and the CTest replay
// (test_fuzz_replay.cpp) call the same function.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pathfinder::fuzz {

enum class Target { kTemplate, kTechlib, kWorkload, kStrategy, kOverride, kSoftware, kStudy, kSearch, kCsv,
                    kHfConfig };

struct TargetInfo {
  Target target;
  const char* name;        // fuzz_<name>, tests/fuzz/corpus/<name>/
  const char* seed_dirs;   // shipped folders (relative to the source tree) seeding it, ';'-separated
};
[[nodiscard]] const std::vector<TargetInfo>& targets();

struct FuzzFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs one input; throws FuzzFailure when an invariant breaks.
void run_one(Target t, std::string_view input);

}  // namespace pathfinder::fuzz
