// Helpers shared by tests: the shipped technology library, the message of a ConfigError, and
// the library's name lists as error messages print them.
#pragma once

#include <functional>
#include <string>

#include "engine/core/error.hpp"
#include "engine/techlib/techlib_loader.hpp"
#include "tests/test_paths.hpp"

namespace pathfinder::test {

inline const TechLibrary& shipped_techlib() {
  static const TechLibrary lib = load_tech_library_dir(source_path("techlib"));
  return lib;
}

// The ConfigError message thrown by f, or a marker that makes the comparison fail.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no ConfigError thrown>";
}

inline const std::string kKnownMemory = "(known: DF-HBM, HBM2, HBM2e, HBM3, HBM3e, HBM4 or GDDR5)";
inline const std::string kKnownNetwork =
    "(known: DF-inter, interposer-2.5D, UCIe-advanced, NVLink2, NVLink3, NVLink4, NVLink5, xGMI3, ICIv5p, HDR-x8, "
    "NDR-x8, XDR-x8 or GDR-x8)";

}  // namespace pathfinder::test
