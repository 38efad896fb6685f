// The search objective: a split's micro-architecture timed on a workload and strategy.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>

#include <oneapi/tbb/global_control.h>

#include "engine/parallel/strategy_enumeration.hpp"
#include "engine/explore/design_evaluator.hpp"
#include "engine/graph/workload_loader.hpp"
#include "tests/train/train_fixtures.hpp"

namespace pathfinder {
namespace {

DesignEvaluator gpt3_175b_on(int devices) {
  const test::ShippedSystem& s = test::shipped_system("a100");
  return DesignEvaluator(
      s.spec, load_workload(test::source_path("studies/workloads/gpt3_175b.yaml")).spec, devices);
}

DesignEvaluator gpt13b_on(int devices) {
  const test::ShippedSystem& s = test::shipped_system("a100");
  return DesignEvaluator(s.spec, load_workload(test::source_path("studies/workloads/gpt3_13b.yaml")).spec,
                         devices);
}

Eigen::VectorXd template_point(const ArchSpec& spec) {
  return ResourceSplit::from_template(spec.tmpl).values();
}

}  // namespace

TEST_CASE("the template's split space frees area and power, and perimeter where used",
          "[explore]") {
  const ArchTemplate& t = test::shipped_system("a100").spec.tmpl;
  const SplitSpace space = template_split_space(t);
  // core, RF, L1, L2, main_memory, intra_package, inter_package; a100.yaml has no intra-package
  // network, so its shares are fixed at 0.
  REQUIRE(space.components() == 7);
  CHECK(space.names()[0] == "core");
  const int h = space.components();
  CHECK(space.names()[5] == "intra_package");
  CHECK(space.upper()[5] == 0.0);
  CHECK(space.upper()[h + 5] == 0.0);
  CHECK(space.upper()[2 * h + 0] == 0.0);  // the core has no perimeter share
  CHECK(space.upper()[2 * h + 4] == 1.0);  // main memory has (0.35 in a100.yaml)
  // The template's own split is a point of the space.
  CHECK(space.contains(template_point(test::shipped_system("a100").spec)));
}

TEST_CASE("the objective at the template split is the training model's time", "[explore]") {
  const DesignEvaluator e = gpt13b_on(8);
  const Strategy s = parse_strategy("tp8-mb1-recompute=selective");
  const DesignEvaluation d = e.evaluate(template_point(e.spec()), s);
  const TrainingResult& r = d.training;
  REQUIRE(r.feasible);
  const GptSpec w = std::get<GptSpec>(e.workload());
  GptTraining direct = test::training_model("a100", w, 8, e.options());
  CHECK(r.iteration_time.si() == Approx(direct.evaluate(s).iteration_time.si()));
  CHECK(e.objective(template_point(e.spec()), s) == Approx(r.iteration_time.si()));
}

TEST_CASE("the evaluation record carries the micro-architecture's figures", "[explore]") {
  const DesignEvaluator e = gpt13b_on(8);
  const DesignEvaluation d = e.evaluate(template_point(e.spec()), parse_strategy("tp8-mb1"));
  const MicroArch& a = test::shipped_system("a100").arch;  // the same template split
  REQUIRE(d.arch.feasible);
  // The A100's dense FP16 peak as the generator derives it (tests/cli: arch prints 311.9).
  CHECK(d.arch.peak_flops.si() == Approx(311.9e12).margin(0.5e12));
  CHECK(d.arch.peak_flops == a.core.peak);
  CHECK(d.arch.memory_bandwidth == a.main_memory.bandwidth);
  CHECK(d.arch.memory_capacity == a.main_memory.capacity);
  CHECK(d.training.memory_capacity == d.arch.memory_capacity);
  // rank_strategies reports the figures of the design it ranked on.
  ArchFigures ranked;
  (void)rank_strategies(e, template_point(e.spec()), nullptr, &ranked);
  CHECK(ranked.peak_flops == d.arch.peak_flops);
}

TEST_CASE("an infeasible design is +inf, not an exception", "[explore]") {
  const DesignEvaluator e = gpt13b_on(8);
  Eigen::VectorXd x = template_point(e.spec());
  x[0] = 0.0;  // no core area: no MCUs
  CHECK(std::isinf(e.objective(x, parse_strategy("tp8-mb1"))));
  const DesignEvaluation d = e.evaluate(x, parse_strategy("tp8-mb1"));
  CHECK_FALSE(d.training.feasible);
  CHECK_FALSE(d.arch.feasible);
  CHECK(d.arch.reason == d.training.reason);
}

TEST_CASE("strategies are ranked by iteration time, infeasible ones last", "[explore]") {
  const DesignEvaluator e = gpt13b_on(8);
  std::size_t n = 0;
  const std::vector<RankedStrategy> ranked = rank_strategies(e, template_point(e.spec()), &n);
  REQUIRE(n == enumerate_strategies(e.workload(), 8).size());
  REQUIRE(ranked.front().result.feasible);
  bool seen_infeasible = false;
  for (std::size_t i = 1; i < ranked.size(); ++i) {
    if (!ranked[i].result.feasible) {
      seen_infeasible = true;
      continue;
    }
    CHECK_FALSE(seen_infeasible);
    CHECK(ranked[i].result.iteration_time.si() >= ranked[i - 1].result.iteration_time.si());
  }
  std::printf("\nGPT-3 13B on 8 A100s: %zu strategies, best %s at %.3f s\n", n,
              to_string(ranked.front().strategy).c_str(), ranked.front().result.iteration_time.si());
}

TEST_CASE("sensitivities: more core power speeds a compute-bound iteration", "[explore]") {
  const DesignEvaluator e = gpt13b_on(8);
  const SplitSpace space = template_split_space(e.spec().tmpl);
  const Strategy s = parse_strategy("tp8-mb1-recompute=selective");
  const Sensitivities d = sensitivities(e, space, template_point(e.spec()), s);
  REQUIRE(d.components.size() == 7);
  // The A100 core is power-bound (its frequency follows the power share): one more watt for
  // the core lowers the iteration time.
  CHECK(d.components[0].per_watt < 0.0);
  std::printf("\nd(iteration)/d(resource) at the A100 split, GPT-3 13B tp8:\n");
  for (const Sensitivity& c : d.components) {
    std::printf("  %-14s %+.3e s/mm2 %+.3e s/W %+.3e s/mm\n", c.component.c_str(), c.per_mm2,
                c.per_watt, c.per_mm);
  }
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("the goal decides the objective and the ranking, a budget drops with a reason",
          "[explore][goal]") {
  const test::ShippedSystem& s = test::shipped_system("a100");
  const WorkloadSpec w = load_workload(test::source_path("studies/workloads/gpt3_13b.yaml")).spec;
  const Eigen::VectorXd x = ResourceSplit::from_template(s.spec.tmpl).values();
  Goal energy;
  energy.kind = GoalKind::kEnergy;
  const DesignEvaluator e(s.spec, w, 64, {}, energy);
  const Strategy st = parse_strategy("tp8-pp2-dp4-mb1");
  const TrainingResult r = e.evaluate(x, st).training;
  REQUIRE(r.feasible);
  CHECK(e.objective(x, st) == r.energy.joules.si());
  // Ranked by energy: feasible strategies in increasing joules.
  const std::vector<RankedStrategy> ranked = rank_strategies(e, x);
  double last = 0.0;
  std::size_t feasible = 0;
  for (const RankedStrategy& q : ranked) {
    if (!q.result.feasible) break;
    CHECK(q.result.energy.joules.si() >= last);
    last = q.result.energy.joules.si();
    ++feasible;
  }
  REQUIRE(feasible > 2);
  // A budget between the best and the second best energy per token keeps only the best; the
  // others are out "over budget (... J per token, budget ...)".
  Goal tight = energy;
  tight.max_j_per_token = 0.5 * (ranked[0].result.energy.joules_per_token.si() +
                                 ranked[1].result.energy.joules_per_token.si());
  const DesignEvaluator b(s.spec, w, 64, {}, tight);
  const std::vector<RankedStrategy> kept = rank_strategies(b, x);
  CHECK(kept[0].result.feasible);
  CHECK(kept[0].strategy == ranked[0].strategy);
  CHECK_FALSE(kept[1].result.feasible);
  const auto second = std::find_if(kept.begin(), kept.end(), [&](const RankedStrategy& q) {
    return q.strategy == ranked[1].strategy;
  });
  REQUIRE(second != kept.end());
  CHECK_FALSE(second->result.feasible);
  CHECK(second->result.reason.rfind("over budget (", 0) == 0);
  CHECK(std::isinf(b.objective(x, ranked[1].strategy)));
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("a top-k search times few strategies and ranks its top exactly as the full ranking",
          "[explore]") {
  // GPT-3 175B on 1,024 A100s (35,772 strategies; 12,862 fit in memory). The full ranking
  // times every one; the top-k search only those whose lower bound (iteration_lower_bound) can
  // still beat the k-th best, best-first. Its first k feasible rows must be the full
  // ranking's, strategy for strategy and bit for bit (ties in enumeration order).
  const DesignEvaluator e = gpt3_175b_on(1024);
  std::size_t all = 0;
  const std::vector<RankedStrategy> full = rank_strategies(e, template_point(e.spec()), &all);
  REQUIRE(all == 35772);
  for (const std::size_t k : {std::size_t{1}, std::size_t{5}, std::size_t{100}}) {
    std::size_t timed = 0;
    const std::vector<RankedStrategy> top =
        rank_strategies(e, template_point(e.spec()), &timed, nullptr, k);
    INFO("top " << k << ": " << timed << " strategies timed");
    REQUIRE(top.size() >= k);
    CHECK(timed == top.size());
    CHECK(timed < all / 10);  // the bound prunes: 64 timed for k = 5
    for (std::size_t i = 0; i < k; ++i) {
      CHECK(top[i].result.feasible);
      CHECK(to_string(top[i].strategy) == to_string(full[i].strategy));
      CHECK(top[i].result.iteration_time.si() == full[i].result.iteration_time.si());
    }
  }
}

TEST_CASE("a top-k search counts every strategy as the full ranking does", "[explore]") {
  // GPT-3 175B on 1,024 A100s under Megatron-LM: of 35,772 strategies the full ranking times
  // every one and finds 4,788 feasible, the rest refused by the stack (ZeRO-3, GPipe) or out
  // of memory. The top-5 search times 64 and must count the same from its bound pass, with
  // and without skipping the dominated recomputations (which it checks for memory alone).
  const test::ShippedSystem& sys = test::shipped_system("a100");
  const DesignEvaluator e(
      sys.spec, load_workload(test::source_path("studies/workloads/gpt3_175b.yaml")).spec, 1024,
      test::profile_options("megatron-lm"));
  RankingCounts full;
  const std::vector<RankedStrategy> all =
      rank_strategies(e, template_point(e.spec()), nullptr, nullptr, 0, false, &full);
  CHECK(full.strategies == 35772);
  CHECK(full.timed == 35772);
  std::size_t feasible = 0;
  for (const RankedStrategy& r : all) feasible += r.result.feasible ? 1 : 0;
  CHECK(full.feasible == feasible);
  CHECK(full.feasible == 4788);
  REQUIRE(full.dropped.size() == 3);  // no ZeRO-3, no GPipe, out of memory
  for (const bool skip : {false, true}) {
    RankingCounts top;
    const std::vector<RankedStrategy> best =
        rank_strategies(e, template_point(e.spec()), nullptr, nullptr, 5, skip, &top);
    INFO((skip ? "skipping dominated twins: " : "") << top.timed << " timed");
    CHECK(top.strategies == full.strategies);
    CHECK(top.timed == best.size());
    CHECK(top.timed < full.timed / 100);
    CHECK(top.feasible == full.feasible);
    CHECK(top.dropped == full.dropped);
  }
}

TEST_CASE("the best strategy skips recomputing more than a fitting twin and stays the best",
          "[explore]") {
  // GPT-3 175B on 1,024 A100s: a strategy recomputing more than one that differs from it only
  // there and fits only adds kernels (recompute=none below selective below full); the best
  // found without timing or bounding those is the full ranking's best, bit for bit.
  const DesignEvaluator e = gpt3_175b_on(1024);
  const std::vector<RankedStrategy> full = rank_strategies(e, template_point(e.spec()));
  std::size_t timed = 0, timed_skipping = 0;
  const auto plain = rank_strategies(e, template_point(e.spec()), &timed, nullptr, 1);
  const auto skipping =
      rank_strategies(e, template_point(e.spec()), &timed_skipping, nullptr, 1, true);
  REQUIRE_FALSE(skipping.empty());
  CHECK(to_string(skipping.front().strategy) == to_string(full.front().strategy));
  CHECK(skipping.front().result.iteration_time.si() == full.front().result.iteration_time.si());
  CHECK(timed_skipping <= timed);
  // Every strategy it timed is one no fitting lighter twin beats: none recomputes more than
  // a feasible row of the full ranking that differs only there.
  std::set<std::string> fitting;
  for (const RankedStrategy& r : full) {
    if (r.result.feasible) fitting.insert(to_string(r.strategy));
  }
  for (const RankedStrategy& r : skipping) {
    for (const Recompute lighter : {Recompute::kNone, Recompute::kSelective}) {
      if (static_cast<int>(lighter) >= static_cast<int>(r.strategy.recompute)) continue;
      Strategy t = r.strategy;
      t.recompute = lighter;
      CHECK(fitting.count(to_string(t)) == 0);
    }
  }
}

TEST_CASE("a top-k search times the same strategies on one thread as on all", "[explore]") {
  // Blocks fixed by position in the bound order and a cutoff moved only between them: the set
  // timed is a function of the inputs alone.
  const DesignEvaluator e = gpt13b_on(64);
  std::size_t many = 0, one = 0;
  const std::vector<RankedStrategy> a = rank_strategies(e, template_point(e.spec()), &many,
                                                        nullptr, 3);
  std::vector<RankedStrategy> b;
  {
    oneapi::tbb::global_control single(oneapi::tbb::global_control::max_allowed_parallelism, 1);
    b = rank_strategies(e, template_point(e.spec()), &one, nullptr, 3);
  }
  CHECK(many == one);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(to_string(a[i].strategy) == to_string(b[i].strategy));
    CHECK(a[i].result.iteration_time.si() == b[i].result.iteration_time.si());
  }
}

TEST_CASE("a top-k search with nothing in memory falls back to every strategy's reason",
          "[explore]") {
  // GPT-3 175B on 8 A100s: no strategy fits (175B parameters' model states alone are ~2.8 TB).
  const DesignEvaluator e = gpt3_175b_on(8);
  std::size_t all = 0, timed = 0;
  const std::vector<RankedStrategy> full = rank_strategies(e, template_point(e.spec()), &all);
  const std::vector<RankedStrategy> top =
      rank_strategies(e, template_point(e.spec()), &timed, nullptr, 1);
  CHECK(timed == all);
  REQUIRE(top.size() == full.size());
  REQUIRE(!top.empty());
  CHECK_FALSE(top.front().result.feasible);
  CHECK(top.front().result.reason == full.front().result.reason);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("a search over an FP4 GEMM on a device without FP4 units finds nothing to time",
          "[explore]") {
  // The H100 has no FP4 matrix units (templates/h100.yaml: no core.fp4_throughput_ratio): every
  // strategy is infeasible with the reason, never timed at another precision's rate. The B200
  // (fp4_throughput_ratio 4) times them.
  const GemmSpec fp4{8192, 8192, 8192, DataType::kFp4};
  for (const char* name : {"h100", "b200"}) {
    const test::ShippedSystem& s = test::shipped_system(name);
    const Eigen::VectorXd x = ResourceSplit::from_template(s.spec.tmpl).values();
    const DesignEvaluator e(s.spec, WorkloadSpec(fp4), 8);
    const std::vector<RankedStrategy> ranked = rank_strategies(e, x);
    REQUIRE(ranked.size() == 5);  // RC 8x1, 4x2, 2x4, 1x8 and CR 8
    for (const RankedStrategy& q : ranked) {
      INFO(name << " " << to_string(q.strategy));
      if (std::string(name) == "h100") {
        CHECK_FALSE(q.result.feasible);
        CHECK(q.result.reason == "an FP4 GEMM needs FP4 matrix units "
                                 "(core.fp4_throughput_ratio), which this device lacks");
        CHECK(std::isinf(e.objective(x, q.strategy)));
      } else {
        CHECK(q.result.feasible);
      }
    }
  }
}

}  // namespace pathfinder
