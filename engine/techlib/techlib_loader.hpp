// Loading the technology library from YAML (techlib/README.md documents every key).
#pragma once

#include <string>
#include <vector>

#include "engine/techlib/tech_library.hpp"

namespace pathfinder {

// Every *.yaml file in dir, in name order. Throws ConfigError.
[[nodiscard]] TechLibrary load_tech_library_dir(const std::string& dir);
// The given files, merged. Duplicate names across files are errors.
[[nodiscard]] TechLibrary load_tech_library_files(const std::vector<std::string>& files);

class ConfigNode;
// Merge one parsed file into lib (exposed for `pathfinder validate`).
void load_tech_file_into(const ConfigNode& root, TechLibrary& lib);

}  // namespace pathfinder
