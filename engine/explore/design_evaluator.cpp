#include "engine/explore/design_evaluator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <variant>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_sort.h>

#include "engine/arch/generator.hpp"
#include "engine/explore/ranking_report.hpp"
#include "engine/parallel/strategy_enumeration.hpp"
#include "engine/train/training_model.hpp"

namespace pathfinder {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

ResourceSplit split_of(const Eigen::VectorXd& x) {
  ResourceSplit r(static_cast<int>(x.size() / 3));
  r.values() = x;
  return r;
}

TrainingResult infeasible(const Strategy& s, std::string reason) {
  TrainingResult r;
  r.strategy = s;
  r.feasible = false;
  r.reason = std::move(reason);
  return r;
}

// A result over the goal's budget is out, with the reason (a result, not an error).
void apply_budget(const Goal& g, TrainingResult& r) {
  if (!r.feasible || (!g.max_j_per_token && !g.max_usd_per_mtoken)) return;
  const std::string why = over_budget(g, r);
  if (why.empty()) return;
  r.feasible = false;
  r.reason = "over budget (" + why + ")";
}

}  // namespace

SplitSpace template_split_space(const ArchTemplate& t) {
  const int h = static_cast<int>(t.split.size());
  Eigen::VectorXd lo = Eigen::VectorXd::Zero(3 * h), hi = Eigen::VectorXd::Ones(3 * h);
  std::vector<std::string> names;
  for (int i = 0; i < h; ++i) {
    const ComponentShare& c = t.split[static_cast<std::size_t>(i)];
    names.push_back(c.name);
    if (c.perimeter <= 0.0) hi[2 * h + i] = 0.0;  // no die edge for this component
    if (c.area <= 0.0 && c.power <= 0.0) hi[i] = hi[h + i] = 0.0;  // not built
  }
  return SplitSpace(h, lo, hi, names);
}

DesignEvaluator::DesignEvaluator(ArchSpec spec, WorkloadSpec workload, int devices,
                                 TrainingOptions options, Goal goal)
    : spec_(std::move(spec)),
      workload_(std::move(workload)),
      devices_(devices),
      options_(std::move(options)),
      goal_(goal) {
  // The graphs every split and strategy share (graph_cache.hpp), built once per evaluator.
  options_.graphs = std::make_shared<GraphCache>();
}

ArchFigures arch_figures(const MicroArch& a) {
  ArchFigures f;
  f.feasible = a.feasible;
  if (!a.feasible) {
    f.reason = a.infeasible_reason;
    return f;
  }
  f.peak_flops = a.core.peak;
  f.memory_bandwidth = a.main_memory.bandwidth;
  f.memory_capacity = a.main_memory.capacity;
  return f;
}

DesignEvaluation DesignEvaluator::evaluate(const Eigen::VectorXd& split, const Strategy& s) const {
  const MicroArch a = generate_micro_arch(spec_, split_of(split));
  DesignEvaluation out{arch_figures(a), {}};
  if (!a.feasible) {
    out.training = infeasible(s, a.infeasible_reason);
    return out;
  }
  TrainingModel m(spec_, a, workload_, devices_, options_);
  out.training = m.evaluate(s);
  apply_budget(goal_, out.training);
  return out;
}

double DesignEvaluator::objective(const Eigen::VectorXd& split, const Strategy& s) const {
  return objective(split, std::span<const Strategy>(&s, 1));
}

double DesignEvaluator::objective(const Eigen::VectorXd& split,
                                  std::span<const Strategy> strategies) const {
  // One split, design and result per thread, their storage reused from call to call.
  thread_local ResourceSplit x;
  thread_local MicroArch a;
  thread_local TrainingResult r;
  const int components = static_cast<int>(split.size() / 3);
  if (x.components() != components) x = ResourceSplit(components);
  x.values() = split;
  generate_micro_arch(spec_, x, a);
  if (!a.feasible) return kInf;
  // One model for all: its memo (GEMM plans, layer times) serves every strategy.
  TrainingModel m(spec_, a, workload_, devices_, options_);
  double best = kInf;
  for (const Strategy& s : strategies) {
    m.evaluate(s, r);
    best = std::min(best, goal_value(goal_, r));
  }
  return best;
}

namespace {

using Models = oneapi::tbb::enumerable_thread_specific<std::optional<TrainingModel>>;

TrainingModel& local_model(Models& models, const DesignEvaluator& e, const MicroArch& a) {
  std::optional<TrainingModel>& m = models.local();
  if (!m) m.emplace(e.spec(), a, e.workload(), e.devices(), e.options());
  return *m;
}

// Whether `light` re-runs a subset of what `heavy` re-runs (the same strategy otherwise):
// nothing does; full re-runs every layer whole; selective module sets by inclusion, the
// attention core counting as nothing beside fused attention (it stores no scores to drop).
bool recomputes_within(const Strategy& light, const Strategy& heavy, bool flash) {
  if (light.recompute == Recompute::kNone || heavy.recompute == Recompute::kFull) return true;
  if (light.recompute == Recompute::kFull) return false;
  if (heavy.recompute != Recompute::kSelective) return false;
  unsigned l = selective_modules(light.recompute, light.recompute_modules);
  unsigned h = selective_modules(heavy.recompute, heavy.recompute_modules);
  if (flash) {
    l &= ~kRecomputeCoreAttn;
    h &= ~kRecomputeCoreAttn;
  }
  return (l & ~h) == 0;
}

// Whether all[i] is dominated by a strategy enumerated just before it that differs from it
// only in its recomputation, re-runs a subset of what it does, and fits: the enumeration
// lists each shape's recompute modes together (strategy_enumeration.cpp), and re-running
// more only adds kernels, so the lighter one is never slower and all[i] cannot enter the top.
bool lighter_twin_fits(TrainingModel& m, const std::vector<Strategy>& all, std::size_t i,
                       bool flash) {
  const Strategy& s = all[i];
  if (s.recompute == Recompute::kNone) return false;
  for (std::size_t j = i; j-- > 0;) {
    Strategy t = all[j];
    t.recompute = s.recompute;
    t.recompute_modules = s.recompute_modules;
    if (!(t == s) || all[j] == s) return false;  // another shape, or the same twice
    if (recomputes_within(all[j], s, flash) && m.fits(all[j])) return true;
  }
  return false;
}

// Strategies no stack runs or that do not fit, counted by reason class as the full ranking's
// results would be (per thread, summed: the same counts for any thread count).
using Dropped = std::map<std::string, std::size_t>;

// The strategies' indices grouped by what a model's memos are keyed on: the layer graphs by
// tensor, sequence, recomputation, micro-batch, context and expert splits, their timed parts
// further by the placement (pp, dp). Enumeration varies the micro-batch inside the pipeline
// degree, so its order revisits each graph once per pp, past what the caches hold for
// millions of strategies (graph_cache.hpp kMaxGraphs). A memo changes no result, so the
// order a pass visits in changes none either.
std::vector<std::size_t> memo_order(const std::vector<Strategy>& all) {
  std::vector<std::size_t> order(all.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto key = [&](std::size_t i) {
    const Strategy& s = all[i];
    return std::make_tuple(s.tp, s.cp, s.ulysses, s.etp, s.ep, s.micro_batch, s.sequence_parallel,
                           static_cast<int>(s.recompute), s.recompute_modules, s.pp, s.dp, i);
  };
  oneapi::tbb::parallel_sort(order.begin(), order.end(),
                             [&](std::size_t x, std::size_t y) { return key(x) < key(y); });
  return order;
}

// The strategies that can be among the `top` fastest, timed best-first by their lower bounds
// (TrainingModel::lower_bound) in blocks of a fixed size: after each block the cutoff is the
// top-th best time so far, and a strategy whose bound exceeds it cannot enter the top. Blocks
// are fixed by position in the bound order and the cutoff changes only between them, so which
// strategies are timed does not depend on the thread count. Strategies out of memory are
// skipped; none feasible leaves `out` empty.
void time_best_first(const DesignEvaluator& e, const MicroArch& a, const std::vector<Strategy>& all,
                     std::size_t top, bool skip_dominated, Models& models,
                     std::vector<RankedStrategy>& out, RankingCounts* counts) {
  constexpr double kSkip = std::numeric_limits<double>::infinity();
  const auto* gpt = std::get_if<GptSpec>(&e.workload());
  const bool flash = gpt != nullptr && gpt->attention == AttentionKind::kFlash;
  std::vector<double> bound(all.size());
  oneapi::tbb::enumerable_thread_specific<Dropped> dropped;
  const std::vector<std::size_t> visit = memo_order(all);
  oneapi::tbb::parallel_for(
      oneapi::tbb::blocked_range<std::size_t>(0, all.size(), 256),
      [&](const oneapi::tbb::blocked_range<std::size_t>& range) {
        TrainingModel& m = local_model(models, e, a);
        Dropped* reasons = counts != nullptr ? &dropped.local() : nullptr;
        for (std::size_t k = range.begin(); k != range.end(); ++k) {
          const std::size_t i = visit[k];
          if (skip_dominated && lighter_twin_fits(m, all, i, flash)) {
            bound[i] = kSkip;
            // Recomputing more does not always hold less (a module's recomputation buffers).
            if (reasons != nullptr && !m.fits(all[i])) ++(*reasons)[kNoMemoryClass];
            continue;
          }
          const std::optional<Time> b = m.lower_bound(all[i]);
          // Out of memory: skipped; no finite bound: always timed.
          bound[i] = !b ? kSkip : std::isfinite(b->si()) && *b > Time{} ? b->si() : 0.0;
          if (reasons != nullptr && !b) {
            const std::string why = m.refusal(all[i]);
            ++(*reasons)[why.empty() ? kNoMemoryClass : reason_class(why)];
          }
        }
      });
  std::vector<std::size_t> order;
  order.reserve(all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (bound[i] != kSkip) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return bound[x] < bound[y]; });
  constexpr std::size_t kBlock = 64;
  std::vector<double> best;  // the top fastest feasible times so far, ascending
  double cutoff = std::numeric_limits<double>::infinity();
  std::size_t next = 0;
  while (next < order.size()) {
    // Bounds ascend: from the first one above the cutoff on, none can enter the top (the
    // margin covers the bound's rounding against the simulation's sums).
    if (bound[order[next]] * (1.0 - 1e-9) > cutoff) break;
    const std::size_t end = std::min(order.size(), next + kBlock);
    const std::size_t first = out.size();
    out.resize(first + (end - next));
    oneapi::tbb::parallel_for(
        oneapi::tbb::blocked_range<std::size_t>(next, end, 8),
        [&](const oneapi::tbb::blocked_range<std::size_t>& range) {
          TrainingModel& m = local_model(models, e, a);
          for (std::size_t k = range.begin(); k != range.end(); ++k) {
            RankedStrategy& r = out[first + (k - next)];
            r.strategy = all[order[k]];
            m.evaluate(r.strategy, r.result);
            apply_budget(e.goal(), r.result);
          }
        });
    for (std::size_t k = first; k < out.size(); ++k) {
      if (!out[k].result.feasible) continue;
      const double t = out[k].result.iteration_time.si();
      best.insert(std::upper_bound(best.begin(), best.end(), t), t);
      if (best.size() > top) best.pop_back();
      if (best.size() == top) cutoff = best.back();
    }
    next = end;
  }
  if (best.empty()) {
    out.clear();
    return;
  }
  if (counts != nullptr) {
    // Every strategy not skipped fits: the timed ones as their results say, the rest feasible.
    Dropped sum;
    for (const Dropped& d : dropped) {
      for (const auto& [reason, n] : d) sum[reason] += n;
    }
    std::size_t skipped = 0;
    for (const auto& [reason, n] : sum) skipped += n;
    counts->feasible = all.size() - skipped - out.size();
    for (const RankedStrategy& r : out) {
      if (r.result.feasible) ++counts->feasible;
      else ++sum[reason_class(r.result.reason)];
    }
    counts->dropped = by_count(sum);
  }
  // Back to enumeration order (out[k] is all[order[k]]): the full ranking's order among ties.
  std::vector<std::size_t> by_index(out.size());
  for (std::size_t k = 0; k < by_index.size(); ++k) by_index[k] = k;
  std::sort(by_index.begin(), by_index.end(),
            [&](std::size_t x, std::size_t y) { return order[x] < order[y]; });
  std::vector<RankedStrategy> sorted;
  sorted.reserve(out.size());
  for (const std::size_t k : by_index) sorted.push_back(std::move(out[k]));
  out = std::move(sorted);
}

}  // namespace

std::vector<RankedStrategy> rank_strategies(const DesignEvaluator& e,
                                            const Eigen::VectorXd& split,
                                            std::size_t* evaluated, ArchFigures* arch,
                                            std::size_t top, bool skip_dominated,
                                            RankingCounts* counts) {
  const std::vector<Strategy> all =
      enumerate_strategies(e.workload(), e.devices(), enumerate_options(e.options().parallelism));
  std::vector<RankedStrategy> out;
  out.reserve(all.size());
  const MicroArch a = generate_micro_arch(e.spec(), split_of(split));
  if (arch != nullptr) *arch = arch_figures(a);
  std::size_t count = all.size();
  // One model per worker thread (its memo is not shared); each strategy's result lands in its
  // own slot, so the ranking is the same for any thread count.
  Models models;
  if (!a.feasible) {
    for (const Strategy& s : all) out.push_back({s, infeasible(s, a.infeasible_reason)});
  } else if (top > 0 && e.goal().kind == GoalKind::kTime) {
    time_best_first(e, a, all, top, skip_dominated, models, out, counts);
    count = out.size();
  }
  // Every strategy timed: no top asked, another goal, or none feasible in the best-first pass
  // (the full ranking names each one's reason).
  if (a.feasible && out.empty()) {
    count = all.size();
    out.resize(all.size());
    const std::vector<std::size_t> visit = memo_order(all);
    oneapi::tbb::parallel_for(
        oneapi::tbb::blocked_range<std::size_t>(0, all.size(), 256),
        [&](const oneapi::tbb::blocked_range<std::size_t>& range) {
          TrainingModel& m = local_model(models, e, a);
          for (std::size_t k = range.begin(); k != range.end(); ++k) {
            const std::size_t i = visit[k];
            out[i] = {all[i], m.evaluate(all[i])};
            apply_budget(e.goal(), out[i].result);
          }
        });
  }
  if (evaluated != nullptr) *evaluated = count;
  const GoalKind kind = e.goal().kind;
  std::stable_sort(out.begin(), out.end(), [kind](const RankedStrategy& x, const RankedStrategy& y) {
    if (x.result.feasible != y.result.feasible) return x.result.feasible;
    return x.result.feasible && measure(kind, x.result) < measure(kind, y.result);
  });
  if (counts != nullptr) {
    if (count == all.size()) *counts = count_ranking(out);  // every one timed: the results
    counts->strategies = all.size();
    counts->timed = count;
  }
  return out;
}

bool best_first_ranks(const Goal& g) {
  return g.kind == GoalKind::kTime && !g.max_j_per_token && !g.max_usd_per_mtoken;
}

Sensitivities sensitivities(const DesignEvaluator& e, const SplitSpace& space,
                            const Eigen::VectorXd& split, const Strategy& s, double step) {
  const int h = space.components();
  const Budget& b = e.spec().tmpl.budget;
  const std::array<double, 3> budget{b.chip_area.in(units::square_millimeters),
                                     b.power.in(units::watts),
                                     b.perimeter.in(units::millimeters)};
  Sensitivities out;
  for (int i = 0; i < h; ++i) out.components.push_back({space.names()[static_cast<std::size_t>(i)]});
  for (int k : space.free_coordinates()) {
    // One more unit of this component's budget share: forward and backward differences of the
    // time (the budget grows, nothing is taken from the others), one-sided at an infeasibility.
    Eigen::VectorXd up = split, down = split;
    up[k] = std::min(split[k] + step, space.upper()[k]);
    down[k] = std::max(split[k] - step, space.lower()[k]);
    const double fu = e.objective(up, s), fd = e.objective(down, s), f0 = e.objective(split, s);
    double d = 0.0;
    if (std::isfinite(fu) && std::isfinite(fd) && up[k] > down[k]) d = (fu - fd) / (up[k] - down[k]);
    else if (std::isfinite(fu) && std::isfinite(f0) && up[k] > split[k]) d = (fu - f0) / (up[k] - split[k]);
    else if (std::isfinite(fd) && std::isfinite(f0) && split[k] > down[k]) d = (f0 - fd) / (split[k] - down[k]);
    const int budget_index = k / h;
    Sensitivity& c = out.components[static_cast<std::size_t>(k % h)];
    const double per_unit = d / budget[static_cast<std::size_t>(budget_index)];
    (budget_index == 0 ? c.per_mm2 : budget_index == 1 ? c.per_watt : c.per_mm) = per_unit;
  }
  for (int bi = 0; bi < 3; ++bi) out.binds[static_cast<std::size_t>(bi)] = split.segment(bi * h, h).sum() >= 1.0 - 1e-9;
  return out;
}

}  // namespace pathfinder
