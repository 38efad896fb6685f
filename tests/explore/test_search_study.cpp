// Search studies: the file, the run, and its outputs.
#include <catch2/catch.hpp>

#include <oneapi/tbb/global_control.h>

#include "engine/explore/search_study.hpp"
#include "engine/graph/workload_loader.hpp"
#include "tests/train/train_fixtures.hpp"

namespace pathfinder {

TEST_CASE("a search study file resolves paths beside it and checks every value",
          "[explore][config-error]") {
  const SearchStudy s = load_search_study(test::source_path("tests/data/studies/small_search.yaml"));
  CHECK(s.name == "small");
  CHECK(s.template_path == test::source_path("templates/a100.yaml"));
  CHECK_FALSE(s.strategy.has_value());  // "search"
  CHECK(s.shortlist == 2);
  CHECK(s.options.restarts == 2);
  CHECK(s.options.steps == 4);
  const std::string bad = test::source_path("tests/data/studies/bad_strategy.yaml");
  CHECK(test::error_of([&] { (void)load_search_study(bad); })
            .find(bad + ":5:11: error: strategy: ") == 0);
  CHECK(test::error_of([&] { (void)load_search_study(bad); }).find("did you mean \"selective\"") !=
        std::string::npos);
  const std::string unk = test::source_path("tests/data/studies/unknown_key.yaml");
  CHECK(test::error_of([&] { (void)load_search_study(unk); }).find("restrats") !=
        std::string::npos);
}

TEST_CASE("a search study ranks strategies and never ends worse than the template split",
          "[explore]") {
  const SearchStudy s = load_search_study(test::source_path("tests/data/studies/small_search.yaml"));
  const ArchSpec spec = test::shipped_system("a100").spec;
  const DesignEvaluator e(spec, load_workload(s.workload_path).spec, s.devices);
  const StudyOutcome o = run_search_study(s, e);
  REQUIRE(o.search.feasible());
  CHECK(o.tried.size() == 2);
  CHECK(o.strategies_ranked > 2);
  // Restart 0 starts at the template's split and PGD only accepts improving steps.
  CHECK(o.best.training.iteration_time.si() <= o.at_template.iteration_time.si() * (1.0 + 1e-12));
  CHECK(o.best.training.iteration_time.si() == Approx(o.search.f));
  // The record carries the searched split's micro-architecture figures.
  REQUIRE(o.best.arch.feasible);
  CHECK(o.best.arch.peak_flops > Throughput{});
  const std::string yaml = outcome_yaml(o, e);
  CHECK(yaml.find("split:\n  core: {area: ") != std::string::npos);
  CHECK(outcome_csv(o).find("strategy,feasible,iteration_s") == 0);
}

TEST_CASE("a search study gives the same answer with 1 and 2 threads", "[explore]") {
  const SearchStudy s = load_search_study(test::source_path("tests/data/studies/small_search.yaml"));
  const ArchSpec spec = test::shipped_system("a100").spec;
  const DesignEvaluator e(spec, load_workload(s.workload_path).spec, s.devices);
  const auto run_with = [&](std::size_t threads) {
    oneapi::tbb::global_control c(oneapi::tbb::global_control::max_allowed_parallelism, threads);
    return run_search_study(s, e);
  };
  const StudyOutcome one = run_with(1), two = run_with(2);
  CHECK(one.search.f == two.search.f);  // bit for bit
  CHECK(one.search.x == two.search.x);
  CHECK(to_string(one.strategy) == to_string(two.strategy));
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("a search file's budget: replaces the template's budgets, located in the file",
          "[explore]") {
  const std::string path = test::data_path("studies/search_budget.yaml");
  const SearchStudy s = load_search_study(path);
  REQUIRE(s.budget.size() == 2);
  CHECK(s.budget[0].key == "budget.chip_area");
  CHECK(s.budget[1].at->line == 10);  // "  power: 300 W"
  const ArchTemplate t = load_template(s.template_path, s.budget);
  CHECK(t.budget.chip_area.in(units::square_millimeters) == Approx(800.0));
  CHECK(t.budget.power.in(units::watts) == Approx(300.0));
  // The die's perimeter follows the new area when the template infers it: 4 x sqrt(800) mm.
  CHECK(t.budget.perimeter.in(units::millimeters) == Approx(4.0 * std::sqrt(800.0)));
}

}  // namespace pathfinder
