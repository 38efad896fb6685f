// Study test helpers: the fixture studies, a clean output folder per test, and a run with the
// shipped technology library.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include "engine/study/study_runner.hpp"
#include "tests/test_paths.hpp"

namespace pathfinder::test {

inline StudySpec fixture_study(const std::string& name) {
  return load_study(source_path("tests/data/studies/" + name + ".yaml"));
}

// This process's folder under the system's temporary directory, removed at exit.
inline const std::filesystem::path& temp_root() {
  struct Root {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 ("pathfinder-study-test-" + std::to_string(::getpid()));
    ~Root() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Root root;
  return root.path;
}

// An empty folder for one test.
inline std::string fresh_dir(const std::string& name) {
  const std::filesystem::path p = temp_root() / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

inline StudyRunOptions run_options(const std::string& out_dir) {
  StudyRunOptions o;
  o.out_dir = out_dir;
  o.techlib_dir = source_path("techlib");
  return o;
}

}  // namespace pathfinder::test
