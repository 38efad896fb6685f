// Loading the technology library from YAML (techlib/README.md documents every key).
#pragma once

#include <string>
#include <vector>

#include "engine/config/node.hpp"  // ConfigOverride
#include "engine/techlib/tech_library.hpp"

namespace pathfinder {

// Every *.yaml file in dir, in name order. Throws ConfigError.
// `overrides` change technology fields as if the file said so (a what-if without a copied
// library: `--set techlib.network.NVLink3.nominal_lane_rate=100Gb/s`): each key is
// section.technology.field... (the "techlib." prefix removed), applied to the file that
// defines that technology and checked as its own value; a key naming no technology of the
// library is a ConfigError at the override's origin listing the section's technologies.
[[nodiscard]] TechLibrary load_tech_library_dir(const std::string& dir,
                                                const std::vector<ConfigOverride>& overrides = {});
// The given files, merged. Duplicate names across files are errors.
[[nodiscard]] TechLibrary load_tech_library_files(const std::vector<std::string>& files,
                                                  const std::vector<ConfigOverride>& overrides = {});

class ConfigNode;
// Merge one parsed file into lib (exposed for `pathfinder validate`).
void load_tech_file_into(const ConfigNode& root, TechLibrary& lib);

}  // namespace pathfinder
