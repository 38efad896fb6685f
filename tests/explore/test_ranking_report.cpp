// The ranked-strategy report: reasons derived from the breakdowns, dropped strategies counted
// by reason, and the same rows in the table, CSV and JSON.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "engine/explore/ranking_report.hpp"

namespace pathfinder {
namespace {

RankedStrategy row(const std::string& strategy, double compute, double bubble, double tensor) {
  RankedStrategy r;
  r.strategy = parse_strategy(strategy);
  r.result.strategy = r.strategy;
  r.result.breakdown.compute = seconds(compute);
  r.result.breakdown.pipeline_bubble = seconds(bubble);
  r.result.breakdown.tensor_comm = seconds(tensor);
  r.result.iteration_time = r.result.breakdown.total();
  r.result.mfu = 0.5;
  return r;
}

RankedStrategy dropped(const std::string& strategy, const std::string& reason) {
  RankedStrategy r;
  r.strategy = parse_strategy(strategy);
  r.result.feasible = false;
  r.result.reason = reason;
  return r;
}

// Three feasible strategies (10 s, 10.5 s, 12 s) and three dropped ones, as rank_strategies
// orders them.
std::vector<RankedStrategy> ranking() {
  return {row("tp8-pp8-dp16-mb1", 8.0, 1.0, 1.0), row("tp8-pp16-dp8-mb1", 8.0, 0.5, 2.0),
          row("tp4-pp16-dp16-mb1", 8.0, 3.5, 0.5),
          dropped("tp1-pp1-dp1024-mb1", "needs 2803.27 GB per device (stage 0), has 85.90 GB"),
          dropped("tp1-pp2-dp512-mb1", "needs 1401.71 GB per device (stage 0), has 85.90 GB"),
          dropped("tp8-pp8-dp16-mb1-zero3",
                  "the model's iteration time is not a finite positive number: an input is "
                  "outside its physical range")};
}

}  // namespace

TEST_CASE("dropped strategies are counted by reason class", "[explore]") {
  CHECK(reason_class("needs 2803.27 GB per device (stage 0), has 85.90 GB") ==
        "does not fit in memory");
  CHECK(reason_class("no valid strategy for 7 devices") == "no valid strategy for");
  // A name's digits stay in the class: a profile's refusal groups whole.
  CHECK(reason_class("deepseek-v3 runs no interleaved pipeline schedule (its software profile's "
                     "parallelism.schedules)") ==
        "deepseek-v3 runs no interleaved pipeline schedule (its software profile's "
        "parallelism.schedules)");
  CHECK(reason_class("the board's power limit (100 W) is not above") == "the board's power limit");
  const auto counts = dropped_by_reason(ranking());
  REQUIRE(counts.size() == 2);
  CHECK(counts[0] == std::pair<std::string, std::size_t>{"does not fit in memory", 2});
  CHECK(counts[1].second == 1);
}

TEST_CASE("each row's reason names the parts that differ most from the best", "[explore]") {
  const auto r = ranking();
  // #1: compute 8 of 10 s = 80%; the runner-up is 0.5 s slower.
  CHECK(ranking_reason(r, 0) == "fastest; largest part compute (80%); runner-up +500 ms");
  // #2 - #1: tensor_comm +1 s, pipeline_bubble -0.5 s, compute 0: +0.5 s.
  CHECK(ranking_reason(r, 1) == "+500 ms vs #1: tensor_comm +1 s, pipeline_bubble -500 ms");
  // #3 - #1: bubble +2.5 s, tensor -0.5 s: +2 s.
  CHECK(ranking_reason(r, 2) == "+2 s vs #1: pipeline_bubble +2.5 s, tensor_comm -500 ms");
}

TEST_CASE("the table, CSV and JSON hold the top N feasible rows", "[explore]") {
  const auto r = ranking();
  const std::string table = format_ranking(r, 2, "gpt");
  CHECK(table.rfind("gpt: 6 strategies ranked, 3 feasible; dropped: 2 does not fit in memory, 1 "
                    "the model's iteration time is not a finite positive number",
                    0) == 0);
  CHECK(table.find("tp8-pp16-dp8-mb1-1f1b") != std::string::npos);
  CHECK(table.find("tp4-pp16-dp16-mb1-1f1b") == std::string::npos);  // only the top 2
  // CSV: a header and 2 rows; the reason holds commas, so it is quoted.
  const std::string csv = ranking_csv(r, 2);
  CHECK(csv.rfind("rank,strategy,iteration_s,gap_to_best_s,mfu,memory_gb,compute_s,", 0) == 0);
  CHECK(csv.find("\n2,tp8-pp16-dp8-mb1-1f1b,10.5,0.5,0.5,0,8,0,2,0,0.5,0,0,0,0,"
                 "\"+500 ms vs #1: tensor_comm +1 s, pipeline_bubble -500 ms\"\n") !=
        std::string::npos);
  const auto j = ranking_json(r, 10);  // more than there are: the 3 feasible
  CHECK(j["ranked"] == 6);
  CHECK(j["feasible"] == 3);
  CHECK(j["top"].size() == 3);
  CHECK(j["top"][2]["gap_to_best_s"].get<double>() == Approx(2.0));
  CHECK(j["dropped"]["does not fit in memory"] == 2);
  CHECK(j["timed"] == 6);
}

TEST_CASE("a top-k ranking's table and JSON take the counts of every strategy", "[explore]") {
  // The same rows as the timed part of a larger ranking: 1,000 strategies, 40 timed, 700
  // feasible, 300 dropped in two classes. The rows still come from the timed results.
  const auto r = ranking();
  RankingCounts c;
  c.strategies = 1000;
  c.timed = 40;
  c.feasible = 700;
  c.dropped = {{"does not fit in memory", 250}, {"nanotron runs no ZeRO stage", 50}};
  const std::string table = format_ranking(r, 2, "gpt", GoalKind::kTime, &c);
  CHECK(table.rfind("gpt: 1000 strategies ranked (40 timed: no other can be among the best), "
                    "700 feasible; dropped: 250 does not fit in memory, 50 nanotron runs no "
                    "ZeRO stage\n",
                    0) == 0);
  CHECK(table.find("tp8-pp16-dp8-mb1-1f1b") != std::string::npos);
  const auto j = ranking_json(r, 10, GoalKind::kTime, &c);
  CHECK(j["ranked"] == 1000);
  CHECK(j["timed"] == 40);
  CHECK(j["feasible"] == 700);
  CHECK(j["top"].size() == 3);  // the feasible rows timed
  CHECK(j["dropped"]["nanotron runs no ZeRO stage"] == 50);
  // Without counts they are the rows' own: count_ranking.
  const RankingCounts own = count_ranking(r);
  CHECK(own.strategies == 6);
  CHECK(own.timed == 6);
  CHECK(own.feasible == 3);
  CHECK(own.dropped == dropped_by_reason(r));
}

}  // namespace pathfinder
