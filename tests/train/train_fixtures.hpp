// A100 system and training model set-up for the training tests.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/system/system_graph.hpp"
#include "engine/train/gpt_training.hpp"
#include "tests/perf/perf_fixtures.hpp"

namespace pathfinder::test {

// The cells of one line of a calibration CSV: split at commas outside double quotes (a quoted
// cell may hold commas), the quotes dropped; a trailing comma ends in an empty cell.
inline std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  bool quoted = false;
  for (const char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.push_back(cell);
      cell.clear();
    } else {
      cell += c;
    }
  }
  out.push_back(cell);
  return out;
}

// The training options of a shipped software profile (templates/software/<name>.yaml).
inline TrainingOptions profile_options(const std::string& name) {
  return TrainingOptions::from(
      load_software_profile(source_path("templates/software/" + name + ".yaml")));
}

struct ShippedSystem {
  ArchSpec spec;
  MicroArch arch;
};

// The shipped template bound with its shipped software profile, or with `software` (a name in
// templates/software/): the profile sets the host costs the kernels are timed with.
inline const ShippedSystem& shipped_system(const std::string& name,
                                           const std::string& software = "") {
  static std::map<std::string, ShippedSystem> cache;
  const std::string key = name + "|" + software;
  auto it = cache.find(key);
  if (it == cache.end()) {
    const ArchTemplate t =
        software.empty()
            ? shipped_template(name)
            : with_software(load_template(source_path("templates/" + name + ".yaml")),
                            load_software_profile(source_path("templates/software/" + software +
                                                              ".yaml")));
    ShippedSystem s{bind_template(shipped_techlib(), t), {}};
    s.arch = generate_micro_arch(s.spec, ResourceSplit::from_template(s.spec.tmpl));
    it = cache.emplace(key, std::move(s)).first;
  }
  return it->second;
}

// Options default to the template's shipped software profile (shipped_software).
inline GptTraining training_model(const std::string& tmpl, const GptSpec& w, int devices,
                                  std::optional<TrainingOptions> options = std::nullopt) {
  const TrainingOptions o = options ? *options : TrainingOptions::from(shipped_software(tmpl));
  const ShippedSystem& s = shipped_system(tmpl);
  return GptTraining(w, make_perf_machine(s.spec, s.arch), make_system_graph(s.spec, s.arch, devices),
                     s.arch.core.peak, o);
}

// The template bound to a named software profile, its host costs and collective library with
// its options, as `pathfinder eval --software NAME` runs it.
inline GptTraining training_model(const std::string& tmpl, const GptSpec& w, int devices,
                                  const std::string& software) {
  const ShippedSystem& s = shipped_system(tmpl, software);
  return GptTraining(w, make_perf_machine(s.spec, s.arch), make_system_graph(s.spec, s.arch, devices),
                     s.arch.core.peak, profile_options(software));
}

}  // namespace pathfinder::test
