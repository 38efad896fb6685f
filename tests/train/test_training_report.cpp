// Tests for engine/train/training_report.hpp: an infeasible strategy's JSON and CSV carry the
// reason and no times (JSON null, CSV empty), never a 0 that reads as instantaneous.
#include "engine/train/training_report.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace pathfinder {
namespace {

// A result as GptTraining returns one that does not fit: the footprint and the reason, no times.
TrainingResult out_of_memory() {
  TrainingResult r;
  r.feasible = false;
  r.reason = "needs 95.00 GB per device, has 85.90 GB";
  r.strategy = parse_strategy("tp8-pp1-dp1-mb1");
  r.memory_capacity = bytes(85.9e9);
  r.memory.weights = Bytes::from_si(95e9);
  r.micro_batches = 4;
  return r;
}

}  // namespace

TEST_CASE("an infeasible strategy's JSON has the reason and null times", "[train][report]") {
  const nlohmann::json j = nlohmann::json::parse(to_json(out_of_memory(), 8).dump());
  CHECK(j.at("feasible") == false);
  CHECK(j.at("reason") == "needs 95.00 GB per device, has 85.90 GB");
  CHECK(j.at("strategy") == "tp8-pp1-dp1-mb1-1f1b");
  for (const char* key : {"iteration_s", "stage_forward_s", "stage_backward_s", "critical_stage",
                          "device_busy_s", "stage_utilization", "mfu", "tokens_per_s",
                          "job_pace"}) {
    INFO(key);
    CHECK(j.at(key).is_null());
  }
  for (const auto& [name, v] : j.at("breakdown").items()) {
    INFO(name);
    CHECK(v.is_null());
  }
  // What does not fit is still reported, with the numbers.
  CHECK(j.at("memory").at("weights_bytes").get<double>() == 95e9);
  CHECK(j.at("memory").at("capacity_bytes").get<double>() == 85.9e9);
}

TEST_CASE("a feasible strategy's JSON has numbers, and the CSV leaves an infeasible one's "
          "times empty",
          "[train][report]") {
  TrainingResult ok;
  ok.strategy = parse_strategy("dp2");
  ok.iteration_time = seconds(2.0);
  ok.breakdown.compute = seconds(1.5);
  ok.breakdown.host = seconds(0.5);
  ok.mfu = 0.4;
  ok.tokens_per_second = 1024.0;
  const nlohmann::json j = nlohmann::json::parse(to_json(ok, 2).dump());
  CHECK(j.at("feasible") == true);
  CHECK_FALSE(j.contains("reason"));
  CHECK(j.at("iteration_s").get<double>() == 2.0);
  CHECK(j.at("breakdown").at("compute_s").get<double>() == 1.5);
  CHECK(j.at("mfu").get<double>() == 0.4);
  // Energy: numbers when feasible; a workload without tokens has a null J per token.
  ok.energy.joules = 700.0 * units::joules;
  ok.energy.by_component.core = 700.0 * units::joules;
  ok.energy.by_phase.compute = 700.0 * units::joules;
  const nlohmann::json je = nlohmann::json::parse(to_json(ok, 2).dump()).at("energy");
  CHECK(je.at("joules").get<double>() == 700.0);
  CHECK(je.at("joules_per_token").is_null());
  CHECK(je.at("by_component").at("core_j").get<double>() == 700.0);
  CHECK(je.at("by_phase").at("compute_j").get<double>() == 700.0);
  CHECK(nlohmann::json::parse(to_json(out_of_memory(), 8).dump()).at("energy").is_null());

  const std::string csv = to_csv(out_of_memory(), 8);
  const std::string row = csv.substr(csv.find('\n') + 1);
  // strategy, devices, feasible, then iteration_s, mfu, tokens_per_s and the seven breakdown
  // parts empty, then memory_bytes and capacity_bytes (%.9g), then the energy columns empty.
  CHECK(row == "tp8-pp1-dp1-mb1-1f1b,8,0,,,,,,,,,,,,,9.5e+10,8.59e+10,,,,,\n");
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("every stage's breakdown: JSON lists all, the table at most 8 rows", "[train][report]") {
  // 10 stages of a 1 s iteration; stage s computes 0.5 + s/100 s and idles the rest; stage 9
  // is critical.
  TrainingResult r;
  r.strategy = parse_strategy("tp1-pp10-dp1-mb1");
  r.iteration_time = seconds(1.0);
  for (int s = 0; s < 10; ++s) {
    TrainingBreakdown b;
    b.compute = seconds(0.5 + s / 100.0);
    b.pipeline_bubble = seconds(1.0) - b.compute;
    r.stages.push_back(b);
  }
  r.critical_stage = 9;
  r.breakdown = r.stages[9];
  const nlohmann::json j = nlohmann::json::parse(to_json(r, 10).dump());
  REQUIRE(j.at("stages").size() == 10);
  CHECK(j.at("stages")[9].at("stage") == 9);
  CHECK(j.at("stages")[9].at("compute_s").get<double>() == 0.59);
  CHECK(j.at("stages")[0].at("pipeline_bubble_s").get<double>() == 0.5);
  const std::string t = format_table(r, 10, "gpt");
  // Rows 0..7, then the count left out, then the critical stage 9 (59.0% compute).
  CHECK(t.find("\n0        50.0    0.0    0.0    0.0   50.0") != std::string::npos);
  CHECK(t.find("\n7  ") != std::string::npos);
  CHECK(t.find("\n8  ") == std::string::npos);
  CHECK(t.find("\n... 2 more stages\n9*       59.0") != std::string::npos);
  // One stage: no per-stage rows.
  r.stages.resize(1);
  r.critical_stage = 0;
  CHECK(format_table(r, 1, "gpt").find("\nstage  ") == std::string::npos);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("the job's pace under device variation: JSON always, the table when it is not 1",
          "[train][report]") {
  // engine/perf/device_variation.hpp: 1,024 devices of a template fitted on 8 with sigma 1.5%
  // run at (1 + 0.015 e(8)) / (1 + 0.015 e(1024)) = 0.974 of its rate.
  TrainingResult r;
  r.strategy = parse_strategy("tp8-pp4-dp32-mb1");
  r.iteration_time = seconds(8.0);
  r.job_pace = 0.9743;
  CHECK(nlohmann::json::parse(to_json(r, 1024).dump()).at("job_pace").get<double>() == 0.9743);
  const std::string table = format_table(r, 1024, "job");
  CHECK(table.find("device variation: the job's slowest of 1024 devices computes at 0.974 of "
                   "the template's rate (core.device_variation)") != std::string::npos);
  r.job_pace = 1.0;  // the fitted size, or no variation: nothing to say
  CHECK(format_table(r, 8, "job").find("device variation") == std::string::npos);
}

}  // namespace pathfinder
