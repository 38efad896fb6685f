// Everything a split search needs, read and checked once, for `pathfinder search` and the
// Python module's search (engine/cli/api.hpp): the search file with the command's overrides,
// its software profile, template (budget: and --set keys applied), technology library and
// workload, the written strategy completed, the objective checked against the cost model.
#pragma once

#include <string>
#include <vector>

#include "engine/arch/arch_spec.hpp"
#include "engine/explore/search_study.hpp"
#include "engine/graph/workload.hpp"
#include "engine/software/software_profile.hpp"
#include "engine/train/gpt_training.hpp"

namespace pathfinder::cli {

struct SearchRequest {
  std::string file;       // the search file
  std::string optimizer;  // --optimizer; empty: the file's
  int restarts = 0, steps = 0;  // 0: the file's
  std::string techlib, software, objective, start;  // --techlib, --software, --objective, --start
  std::vector<std::string> sets;  // --set KEY=VALUE
};

struct PreparedSearch {
  SearchStudy study;
  SoftwareProfile software;
  ArchSpec spec;
  WorkloadSpec workload;
  TrainingOptions training;
};

// Throws ConfigError at the file, key or option a problem is in; a file the search names that
// cannot be read is reported at the key naming it.
[[nodiscard]] PreparedSearch prepare_search(const SearchRequest& r);

}  // namespace pathfinder::cli
