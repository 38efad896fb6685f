// Shared loaders for arch tests: the shipped library and templates.
#pragma once

#include "engine/arch/generator.hpp"
#include "engine/arch/template_loader.hpp"
#include "engine/techlib/techlib_loader.hpp"
#include "tests/test_support.hpp"

namespace pathfinder::test {

inline ArchTemplate shipped_template(const std::string& name) {
  return load_template(source_path("templates/" + name + ".yaml"));
}
inline MicroArch generate_shipped(const std::string& name, const TechOverrides& o = {}) {
  return generate_micro_arch(shipped_techlib(), apply_overrides(shipped_template(name), o));
}

}  // namespace pathfinder::test
