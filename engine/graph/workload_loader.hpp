// Loading workload files (studies/workloads/*.yaml). Every file has a name, a kind and the
// kind's sizes at the top level:
//
//   name: gpt3-175b
//   kind: gpt                  # gemm | lstm | gpt
//   layers: 96                 # gpt: layers, hidden, heads, ffn (default 4·hidden), sequence,
//   hidden: 12288              #      vocabulary, micro_batch, global_batch (default micro_batch)
//   ...                        # lstm: batch, sequence, hidden, vocabulary, layers
//                              # gemm: m, n, k
//   precision: fp16            # fp32 | fp16 | bf16 | fp8 (default fp16)
//   optimizer: adam            # sgd | adam (lstm default sgd, gpt default adam; not for gemm)
//
// Parse errors (unknown key, missing key, non-positive size, unknown spelling) throw at once;
// the semantic pass (hidden a multiple of heads, global_batch a multiple of micro_batch)
// collects every problem into one ConfigError.
//
// Overrides (`pathfinder eval --set micro_batch=4`) are applied to the parsed file before it is
// read, so an overridden value passes the same checks as one in the file, and a problem with it
// is reported at the option: `command line: error: --set micro_batch: expected ...`.
#pragma once

#include <string>
#include <vector>

#include "engine/config/node.hpp"  // ConfigOverride
#include "engine/core/error.hpp"
#include "engine/graph/workload.hpp"

namespace pathfinder {

// A workload file before its graph is built.
struct WorkloadFile {
  std::string name;
  std::string file;
  WorkloadSpec spec;
};

[[nodiscard]] WorkloadFile read_workload_file(const ConfigNode& root);
[[nodiscard]] WorkloadFile load_workload_file(const std::string& path,
                                              const std::vector<ConfigOverride>& overrides = {});
// Loads and builds the graph and its stats.
[[nodiscard]] Workload load_workload(const std::string& path,
                                     const std::vector<ConfigOverride>& overrides = {});

}  // namespace pathfinder
