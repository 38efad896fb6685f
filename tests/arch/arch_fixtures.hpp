// Shared loaders for arch tests: the shipped library and templates.
#pragma once

#include "engine/arch/generator.hpp"
#include "engine/arch/template_loader.hpp"
#include "engine/software/software_profile.hpp"
#include "engine/techlib/techlib_loader.hpp"
#include "tests/test_support.hpp"

namespace pathfinder::test {

// A shipped template with the software profile it was calibrated with: the DeepFlow
// reference's (no framework host costs) for deepflow_*, Megatron-LM's for the others.
inline SoftwareProfile shipped_software(const std::string& template_name) {
  const std::string software =
      template_name.rfind("deepflow", 0) == 0 ? "deepflow-reference" : kDefaultSoftwareProfile;
  return load_software_profile(source_path("templates/software/" + software + ".yaml"));
}
inline ArchTemplate shipped_template(const std::string& name) {
  return with_software(load_template(source_path("templates/" + name + ".yaml")),
                       shipped_software(name));
}
inline MicroArch generate_shipped(const std::string& name, const TechOverrides& o = {}) {
  return generate_micro_arch(shipped_techlib(), apply_overrides(shipped_template(name), o));
}

}  // namespace pathfinder::test
