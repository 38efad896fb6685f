#include "engine/cli/load.hpp"

#include <cstdlib>
#include <filesystem>

#include "engine/techlib/techlib_loader.hpp"

namespace pathfinder::cli {

std::string techlib_dir_for(const std::string& template_path, const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("PATHFINDER_TECHLIB"); env != nullptr && *env != '\0') return env;
  const std::filesystem::path p(template_path);
  return (p.parent_path() / ".." / "techlib").lexically_normal().string();
}

TechLibrary load_techlib_for(const std::string& template_path, const std::string& flag) {
  return load_tech_library_dir(techlib_dir_for(template_path, flag));
}

}  // namespace pathfinder::cli
