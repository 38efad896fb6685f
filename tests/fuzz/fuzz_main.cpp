// libFuzzer entry point for one target (PATHFINDER_FUZZ_TARGET, set by tests/CMakeLists.txt):
//   build-fuzz/tests/fuzz_workload -runs=100000 corpus-dir seed-dir...
// An invariant broken (fuzz_target.hpp) aborts with the reason, and libFuzzer saves the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "tests/fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    pathfinder::fuzz::run_one(pathfinder::fuzz::Target::PATHFINDER_FUZZ_TARGET,
                              std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const pathfinder::fuzz::FuzzFailure& e) {
    std::fprintf(stderr, "fuzz invariant broken: %s\n", e.what());
    std::abort();
  }
  return 0;
}
