// The commands as functions returning what their --format json prints, for callers inside one
// process: the Python module (engine/python/). Each throws ConfigError for bad input, exactly
// as the command reports it; an infeasible design is a result ("feasible": false, "reason").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pathfinder::api {

// A template and what replaces its choices: arch's and eval's --tech, --memory, --network,
// --techlib, --software and --set (template, techlib. and, for eval, workload keys).
struct Machine {
  std::string template_path;
  std::string tech, memory, network, techlib, software;
  std::vector<std::string> sets;  // KEY=VALUE
  std::string nic;                // as --nic: the scale-out NIC replacing the template's
};

struct Evaluation {
  Machine machine;
  std::string workload_path;
  std::string strategy;  // a strategy string or YAML file; empty: data parallel (or one device)
  int devices = 0;       // 0: the strategy's (one device without a strategy)
};

// Every problem of each file: [{file, ok, problems: [{file, line, col, key, message}]}].
[[nodiscard]] nlohmann::ordered_json validate(const std::vector<std::string>& paths,
                                              const std::string& techlib = "");
// pathfinder arch TEMPLATE --format json.
[[nodiscard]] nlohmann::ordered_json arch(const Machine& m);
// pathfinder eval ... --format json: one iteration.
[[nodiscard]] nlohmann::ordered_json evaluate(const Evaluation& e);
// pathfinder rank ... --format json: every valid strategy on e.devices devices, ranked by
// `objective` (time, energy, edp, cost); the top `top` in full.
[[nodiscard]] nlohmann::ordered_json rank(const Evaluation& e, const std::string& objective = "time",
                                          int top = 5);
// pathfinder search FILE --format json: the best split (and strategy) of a search file; 0 for
// the file's restarts and steps, all cores; objective empty: the file's.
[[nodiscard]] nlohmann::ordered_json search(const std::string& search_file, int restarts = 0,
                                            int steps = 0, int threads = 0,
                                            const std::string& objective = "");
// pathfinder study FILE --out OUT --format json ("" for results/<name>); threads 0: all cores.
[[nodiscard]] nlohmann::ordered_json study(const std::string& study_file, const std::string& out = "",
                                           int threads = 0);

}  // namespace pathfinder::api
