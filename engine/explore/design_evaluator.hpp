// The objective every search of issue 5 minimizes: one training iteration of a workload under a
// parallelism strategy on the micro-architecture a resource split generates (paper §7). An
// infeasible design (the generator's verdict) or a strategy that does not fit in memory is +inf,
// never an exception. Thread-safe: each call builds its own micro-architecture and training
// model (train/training_model.hpp), so finite differences and restarts evaluate in parallel.
#pragma once

#include <Eigen/Core>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/arch/arch_spec.hpp"
#include "engine/explore/goal.hpp"
#include "engine/parallel/strategy.hpp"
#include "engine/graph/workload.hpp"
#include "search/split_space.hpp"
#include "engine/train/gpt_training.hpp"
#include "engine/train/training_result.hpp"

namespace pathfinder {
struct MicroArch;
}

namespace pathfinder {

// The template's split as a search space: area and power of every component free in [0, 1];
// perimeter free for the components the template gives die edge (memory, networks), fixed at 0
// for the others.
[[nodiscard]] SplitSpace template_split_space(const ArchTemplate& t);

// The headline figures of the micro-architecture a split generates (`pathfinder arch`'s first
// lines), or the generator's reason it is infeasible.
struct ArchFigures {
  bool feasible = false;
  std::string reason;             // when infeasible
  Throughput peak_flops;      // one device's dense peak
  Bandwidth memory_bandwidth;  // main memory
  Bytes memory_capacity;       // main memory per device
};
[[nodiscard]] ArchFigures arch_figures(const MicroArch& a);

// One design point evaluated: its micro-architecture's figures and the training result on it
// (breakdown per stage, memory footprint, and for a GEMM the local product). What a study
// writes, with nothing regenerated.
struct DesignEvaluation {
  ArchFigures arch;
  TrainingResult training;
};

class DesignEvaluator {
 public:
  DesignEvaluator(ArchSpec spec, WorkloadSpec workload, int devices,
                  TrainingOptions options = {}, Goal goal = {});
  // Full result at a split (a point in the template's split layout); over the goal's budget
  // it is infeasible with the reason.
  [[nodiscard]] DesignEvaluation evaluate(const Eigen::VectorXd& split, const Strategy& s) const;
  // What the goal minimizes (goal.hpp): the iteration time in seconds by default; +inf when
  // infeasible or over the goal's budget.
  [[nodiscard]] double objective(const Eigen::VectorXd& split, const Strategy& s) const;
  // The least objective over `strategies` at one split (the micro-architecture generated once):
  // a joint search's objective over its shortlist; +inf when none is feasible.
  [[nodiscard]] double objective(const Eigen::VectorXd& split,
                                 std::span<const Strategy> strategies) const;
  [[nodiscard]] const Goal& goal() const { return goal_; }
  [[nodiscard]] const ArchSpec& spec() const { return spec_; }
  [[nodiscard]] const WorkloadSpec& workload() const { return workload_; }
  [[nodiscard]] int devices() const { return devices_; }
  [[nodiscard]] const TrainingOptions& options() const { return options_; }

 private:
  ArchSpec spec_;
  WorkloadSpec workload_;
  int devices_;
  TrainingOptions options_;
  Goal goal_;
};

struct RankedStrategy {
  Strategy strategy;
  TrainingResult result;
};

// How a ranking's strategies fared, whether every one was timed or not: how many were
// enumerated and timed, how many are feasible, and the others by reason class
// (ranking_report.hpp's reason_class), most frequent first (ties by name).
struct RankingCounts {
  std::size_t strategies = 0, timed = 0, feasible = 0;
  std::vector<std::pair<std::string, std::size_t>> dropped;
};

// Every valid strategy for the workload on the evaluator's devices (parallel/strategy_enumeration),
// timed on the design at `split`; feasible ones by the goal's measure (the iteration time by
// default; ties: enumeration order), then the infeasible ones (over the goal's budget too).
// `evaluated` receives how many were timed, `arch` the figures of the micro-architecture they
// were timed on. `top` > 0 with the time goal: only the strategies that can be among the `top`
// fastest are timed (best-first by a lower bound of their iteration time, GPT workloads), so
// the result holds the same first `top` feasible rows as the full ranking, the infeasible
// strategies met on the way, and none of those skipped. `skip_dominated` (with `top`): nor
// any that recomputes more than a twin differing only there which fits (never faster; the
// first row stays the full ranking's, the others are the best of the rest). `counts`
// receives the full ranking's counts either way: a strategy not timed is feasible when its
// stack runs it and it fits in memory, else dropped for the one or the other. With a budget on
// the goal an untimed strategy could be over it: ask for counts with `top` only under the
// time goal without budgets (best_first_ranks).
[[nodiscard]] std::vector<RankedStrategy> rank_strategies(const DesignEvaluator& e,
                                                          const Eigen::VectorXd& split,
                                                          std::size_t* evaluated = nullptr,
                                                          ArchFigures* arch = nullptr,
                                                          std::size_t top = 0,
                                                          bool skip_dominated = false,
                                                          RankingCounts* counts = nullptr);
// Whether a ranking under goal `g` may time only the strategies that can be among its top and
// still count the rest exactly: the time goal, no energy or cost budget.
[[nodiscard]] bool best_first_ranks(const Goal& g);

// d(objective)/d(resource) at a split for each component: per extra mm² of die, per W and per
// mm of perimeter (seconds for the default goal; central differences of the split fractions,
// divided by the budgets), and which budgets bind (their fractions sum to 1).
struct Sensitivity {
  std::string component;
  double per_mm2 = 0.0, per_watt = 0.0, per_mm = 0.0;
};
struct Sensitivities {
  std::vector<Sensitivity> components;
  std::array<bool, 3> binds{};  // area, power, perimeter
};
[[nodiscard]] Sensitivities sensitivities(const DesignEvaluator& e, const SplitSpace& space,
                                          const Eigen::VectorXd& split, const Strategy& s,
                                          double step = 0.01);

}  // namespace pathfinder
