// The KKT-style convergence check of a split search (issue 15).
#include <catch2/catch.hpp>

#include "engine/explore/convergence.hpp"
#include "engine/explore/search_study.hpp"
#include "engine/graph/workload_loader.hpp"
#include "tests/train/train_fixtures.hpp"

namespace pathfinder {

TEST_CASE("the template's split is not a minimum: the check names a move that saves time",
          "[explore]") {
  // GPT-3 13B on 64 A100s (studies/search_gpt3_13b_a100.yaml): the joint search takes the
  // iteration from 21.6 s at the template's split to 18.7 s, so some single 1% move of a
  // budget from the template's split must save more than 0.1%.
  const ArchSpec spec = test::shipped_system("a100").spec;
  const DesignEvaluator e(spec, load_workload(test::source_path("studies/workloads/gpt3_13b.yaml")).spec, 64);
  const Strategy s = parse_strategy("tp8-pp2-dp4-mb1-1f1b-recompute=selective");
  const SplitSpace space = template_split_space(spec.tmpl);
  const Eigen::VectorXd x = ResourceSplit::from_template(spec.tmpl).values();
  const ConvergenceCheck c = check_convergence(e, space, x, s);
  CHECK_FALSE(c.converged);
  CHECK(c.saving > 1e-3);
  CHECK(c.moves_tried > 10);
  CHECK(c.move.find(" saves ") != std::string::npos);
  // The move it names is real: its saving is the time the check measured.
  INFO(c.move);
  CHECK(c.saving < 0.2);
}

TEST_CASE("a search study reports whether its split search converged", "[explore]") {
  SearchStudy s = load_search_study(test::source_path("tests/data/studies/small_search.yaml"));
  const ArchSpec spec = test::shipped_system("a100").spec;
  const DesignEvaluator e(spec, load_workload(s.workload_path).spec, s.devices);
  // One step of one restart from the template's split, no budget moves after it: not a minimum.
  s.options.restarts = 1;
  s.options.steps = 1;
  s.options.polish_moves = 0;
  const StudyOutcome short_run = run_search_study(s, e);
  REQUIRE(short_run.search.feasible());
  CHECK_FALSE(short_run.convergence.converged);
  CHECK(format_outcome(short_run, e).find("NOT converged: ") != std::string::npos);
  CHECK(outcome_yaml(short_run, e).find("# NOT converged: ") != std::string::npos);
  // The same search finished with greedy budget moves (the default): each move saved more
  // than 0.1%, so the result is faster, and it stops only where no move saves that much, which
  // is exactly the check's criterion.
  s.options.polish_moves = 30;
  const StudyOutcome polished = run_search_study(s, e);
  REQUIRE(polished.search.feasible());
  INFO(polished.convergence.move);
  CHECK(polished.polish_moves > 0);
  CHECK(polished.search.f < short_run.search.f * (1.0 - 1e-3));
  CHECK(polished.convergence.converged == (polished.polish_moves < 30));
  CHECK(polished.best.training.iteration_time.si() == Approx(polished.search.f));
  CHECK(format_outcome(polished, e).find("budget moves of 1%") != std::string::npos);
}

}  // namespace pathfinder
