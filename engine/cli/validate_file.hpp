// Every problem of one input file of any kind (`pathfinder validate`, the Python module's
// validate): technology library, template, software profile, workload, strategy, study or
// search, told apart by their keys (core: a template, kind: a workload, ...).
#pragma once

#include <string>
#include <vector>

#include "engine/core/error.hpp"

namespace pathfinder::cli {

// The file is read once in a collecting pass (ConfigNode::collecting), which records every
// per-key problem (missing, unknown, wrong kind, unit or sign) and goes on; a reader's cross-key
// check ends the pass, and the semantic checks that compare values (a template against its
// technology library, a study's files) run only on a file without per-key problems, since
// stand-in values would make them report problems that are not there. In file order (a reader
// may meet an unknown key only when it finishes its map), this file's before those of the files
// it names; empty when the file is fine. `techlib_flag`: --techlib, or empty.
[[nodiscard]] std::vector<Diagnostic> validate_file(const std::string& path,
                                                    const std::string& techlib_flag);

}  // namespace pathfinder::cli
