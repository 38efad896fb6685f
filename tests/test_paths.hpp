// Fixture locations, from CMake definitions (tests/CMakeLists.txt).
#pragma once

#include <string>

namespace pathfinder::test {
inline std::string source_path(const std::string& rel) { return std::string(PATHFINDER_SOURCE_DIR) + "/" + rel; }
inline std::string data_path(const std::string& rel) { return std::string(PATHFINDER_TEST_DATA) + "/" + rel; }
}  // namespace pathfinder::test
