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
  r.memory_capacity = 85.9e9;
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
                          "device_busy_s", "stage_utilization", "mfu", "tokens_per_s"}) {
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
  ok.iteration_time = 2.0;
  ok.breakdown.compute = 1.5;
  ok.breakdown.host = 0.5;
  ok.mfu = 0.4;
  ok.tokens_per_second = 1024.0;
  const nlohmann::json j = nlohmann::json::parse(to_json(ok, 2).dump());
  CHECK(j.at("feasible") == true);
  CHECK_FALSE(j.contains("reason"));
  CHECK(j.at("iteration_s").get<double>() == 2.0);
  CHECK(j.at("breakdown").at("compute_s").get<double>() == 1.5);
  CHECK(j.at("mfu").get<double>() == 0.4);

  const std::string csv = to_csv(out_of_memory(), 8);
  const std::string row = csv.substr(csv.find('\n') + 1);
  // strategy, devices, feasible, then iteration_s, mfu, tokens_per_s and the seven breakdown
  // parts empty, then memory_bytes and capacity_bytes (%.9g).
  CHECK(row == "tp8-pp1-dp1-mb1-1f1b,8,0,,,,,,,,,,,,,9.5e+10,8.59e+10\n");
}

}  // namespace pathfinder
