// Shared loading for the subcommands: the technology library next to a template.
#pragma once

#include <string>

#include "engine/techlib/tech_library.hpp"

namespace pathfinder::cli {

// --techlib if given, else $PATHFINDER_TECHLIB, else <template dir>/../techlib.
[[nodiscard]] std::string techlib_dir_for(const std::string& template_path,
                                          const std::string& flag);
[[nodiscard]] TechLibrary load_techlib_for(const std::string& template_path,
                                           const std::string& flag);

}  // namespace pathfinder::cli
