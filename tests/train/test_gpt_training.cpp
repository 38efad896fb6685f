// Distributed GPT training against measurements: vTrain's 1,440 single-node A100 iterations
// and Korthikanti et al.'s 22B layer times; plus properties of the iteration model.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include "tests/train/train_fixtures.hpp"

namespace pathfinder {
namespace {

struct VtrainRow {
  int gpus, global_batch, micro_batch, hidden, heads, layers, sequence, tp, dp, pp;
  double ms;
};

std::vector<VtrainRow> vtrain_rows() {
  std::ifstream f(PATHFINDER_TEST_DATA "/calibration/vtrain/ground_truth_single.csv");
  REQUIRE(f.good());
  std::string line;
  std::getline(f, line);  // header (after a UTF-8 byte-order mark)
  std::vector<VtrainRow> rows;
  while (std::getline(f, line)) {
    VtrainRow r{};
    char c = 0;
    std::istringstream is(line);
    is >> r.gpus >> c >> r.global_batch >> c >> r.micro_batch >> c >> r.hidden >> c >> r.heads >>
        c >> r.layers >> c >> r.sequence >> c >> r.tp >> c >> r.dp >> c >> r.pp >> c >> r.ms;
    rows.push_back(r);
  }
  return rows;
}

// Spearman's rank correlation (no ties expected among distinct measurements).
double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const auto ranks = [](const std::vector<double>& v) {
    std::vector<std::size_t> idx(v.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) { return v[x] < v[y]; });
    std::vector<double> r(v.size());
    for (std::size_t i = 0; i < idx.size(); ++i) r[idx[i]] = static_cast<double>(i);
    return r;
  };
  const auto ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  double d2 = 0.0;
  for (std::size_t i = 0; i < ra.size(); ++i) d2 += (ra[i] - rb[i]) * (ra[i] - rb[i]);
  return n > 1 ? 1.0 - 6.0 * d2 / (n * (n * n - 1.0)) : 1.0;
}

}  // namespace

TEST_CASE("[calibration] vTrain: 1,440 single-node A100 training iterations", "[train]") {
  // Megatron-LM, mixed precision, 1F1B, activation checkpointing (full recomputation), GPT-2
  // vocabulary 50,257 padded to a multiple of 128·tp as Megatron does.
  std::map<std::string, std::unique_ptr<GptTraining>> models;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> groups;
  std::vector<double> errors;
  for (const VtrainRow& r : vtrain_rows()) {
    const std::int64_t pad = 128 * r.tp;
    const std::int64_t vocab = (50257 + pad - 1) / pad * pad;
    const GptSpec w{r.layers, r.hidden, r.heads, 4 * r.hidden, r.sequence, vocab,
                    r.micro_batch, r.global_batch, DataType::kFp16, Optimizer::kAdam};
    const std::string model = std::to_string(r.gpus) + "x" + std::to_string(r.hidden) + "x" +
                              std::to_string(r.layers) + "x" + std::to_string(r.global_batch);
    auto& m = models[model + "v" + std::to_string(vocab)];
    if (!m) m = std::make_unique<GptTraining>(test::training_model("a100", w, r.gpus));
    Strategy s;
    s.tp = r.tp;
    s.pp = r.pp;
    s.dp = r.dp;
    s.micro_batch = r.micro_batch;
    s.recompute = Recompute::kFull;
    const TrainingResult t = m->evaluate(s);
    REQUIRE(t.feasible);
    const double pred = t.iteration_time * 1e3;
    errors.push_back((pred - r.ms) / r.ms);
    groups[model].first.push_back(r.ms);
    groups[model].second.push_back(pred);
  }
  std::vector<double> abs_err;
  for (double e : errors) abs_err.push_back(std::abs(e));
  std::sort(abs_err.begin(), abs_err.end());
  double mape = 0.0, bias = 0.0;
  for (double e : errors) {
    mape += std::abs(e);
    bias += e;
  }
  mape /= static_cast<double>(errors.size());
  bias /= static_cast<double>(errors.size());
  const auto pct = [&](double q) {
    return abs_err[static_cast<std::size_t>(q * static_cast<double>(abs_err.size() - 1))];
  };
  double rho = 0.0;
  for (const auto& [name, g] : groups) rho += spearman(g.first, g.second);
  rho /= static_cast<double>(groups.size());
  std::printf("\nvTrain: %zu iterations, MAPE %.2f%% (vTrain itself 8.37%%), bias %+.2f%%\n",
              errors.size(), 100 * mape, 100 * bias);
  std::printf("|error| percentiles: 50%% %.1f%%, 90%% %.1f%%, 99%% %.1f%%, max %.1f%%\n",
              100 * pct(0.5), 100 * pct(0.9), 100 * pct(0.99), 100 * abs_err.back());
  std::printf("strategy ranking: mean Spearman rho %.3f over %zu model/batch groups\n", rho,
              groups.size());
  CHECK(errors.size() == 1440);
  CHECK(mape <= 0.10);
  CHECK(rho >= 0.8);
}

TEST_CASE("[calibration] Korthikanti Table 4: one 22B layer with tensor parallelism 8",
          "[train]") {
  // h 6144, 64 heads, sequence 2048, micro-batch 4, tp 8 on one DGX A100 (NVSwitch).
  const GptSpec w{48, 6144, 64, 4 * 6144, 2048, 51200, 4, 4, DataType::kFp16, Optimizer::kAdam};
  GptTraining m = test::training_model("a100", w, 8);
  // Measured rows (tests/data/calibration/korthikanti2022_table4_layer_times_22B.csv).
  struct Row {
    std::string name;
    bool sp;
    Recompute r;
    double fwd, bwd;
  };
  const std::map<std::string, std::pair<bool, Recompute>> settings{
      {"baseline_no_recompute", {false, Recompute::kNone}},
      {"sequence_parallelism", {true, Recompute::kNone}},
      {"baseline_with_full_recompute", {false, Recompute::kFull}},
      {"selective_recompute", {false, Recompute::kSelective}},
      {"selective_plus_sequence", {true, Recompute::kSelective}}};
  std::vector<Row> rows;
  {
    std::ifstream f(PATHFINDER_TEST_DATA "/calibration/korthikanti2022_table4_layer_times_22B.csv");
    REQUIRE(f.good());
    std::string line;
    std::getline(f, line);  // experiment,forward_ms,backward_ms,combined_ms,overhead_pct
    while (std::getline(f, line)) {
      std::istringstream is(line);
      std::string name, fwd, bwd;
      std::getline(is, name, ',');
      std::getline(is, fwd, ',');
      std::getline(is, bwd, ',');
      const auto it = settings.find(name);
      REQUIRE(it != settings.end());
      rows.push_back({name, it->second.first, it->second.second, std::stod(fwd), std::stod(bwd)});
    }
  }
  REQUIRE(rows.size() == 5);
  std::printf("\n%-28s %8s %8s %7s %8s %8s %7s\n", "Korthikanti Table 4", "fwd ms", "pred",
              "err", "bwd ms", "pred", "err");
  double worst_fwd = 0.0, worst_bwd = 0.0;
  for (const Row& row : rows) {
    Strategy s;
    s.tp = 8;
    s.micro_batch = 4;
    s.sequence_parallel = row.sp;
    s.recompute = row.r;
    const StageTimes& t = m.layer_times(s);
    const double f = t.forward.span * 1e3, b = t.backward.span * 1e3;
    const double ef = (f - row.fwd) / row.fwd, eb = (b - row.bwd) / row.bwd;
    worst_fwd = std::max(worst_fwd, std::abs(ef));
    worst_bwd = std::max(worst_bwd, std::abs(eb));
    std::printf("%-28s %8.1f %8.2f %+6.1f%% %8.1f %8.2f %+6.1f%%\n", row.name.c_str(), row.fwd, f,
                100 * ef, row.bwd, b, 100 * eb);
  }
  std::printf("worst forward %.1f%% (bound 6%%), worst backward %.1f%% (bound 3%%)\n",
              100 * worst_fwd, 100 * worst_bwd);
  // Backward, with sequence parallelism's re-gathers on the compute stream (software profile
  // megatron-lm): every row within 3%. Forward runs 3.6% (5.9% with SP) fast on every row: a
  // mechanism of ~0.3 ms per layer forward is still missing (not fitted away).
  CHECK(worst_bwd <= 0.03);
  CHECK(worst_fwd <= 0.06);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("the iteration lies between the critical path and the serial sum", "[train]") {
  // Megatron 22B-like on 64 devices (8 DGX A100s over HDR InfiniBand).
  const GptSpec w{16, 6144, 64, 4 * 6144, 2048, 51200, 1, 64, DataType::kFp16, Optimizer::kAdam};
  GptTraining m = test::training_model("a100", w, 64);
  for (const char* text : {"tp8-pp2-dp4-mb1-1f1b-recompute=selective", "tp8-pp4-dp2-mb1-gpipe",
                           "tp4-pp4-dp4-mb1-1f1b-sp-zero1-recompute=full",
                           "tp8-pp4-dp2-mb1-interleaved-v2-recompute=selective"}) {
    const Strategy s = parse_strategy(text);
    const TrainingResult r = m.evaluate(s);
    INFO(text);
    REQUIRE(r.feasible);
    const double m_b = static_cast<double>(r.micro_batches);
    // Lower bound: the busiest stage's own work. Upper bound: every stage's work one after the
    // other, plus every transfer, reduction, update and host cost.
    double busiest = 0.0, serial = 0.0;
    for (double b : r.device_busy) {
      busiest = std::max(busiest, b);
      serial += b;
    }
    CHECK(r.iteration_time >= busiest + r.breakdown.optimizer - 1e-12);
    CHECK(r.iteration_time <= serial + r.breakdown.data_comm + r.breakdown.optimizer +
                                  r.breakdown.host + 2.0 * m_b * s.pp * r.stage_forward);
    const TrainingBreakdown& b = r.breakdown;
    CHECK(b.compute + b.tensor_comm + b.pipeline_comm + b.pipeline_bubble + b.data_comm +
              b.optimizer + b.host ==
          Approx(r.iteration_time));
    CHECK(r.mfu > 0.0);
    CHECK(r.mfu < 1.0);
  }
}

TEST_CASE("more link bandwidth never slows an iteration", "[train]") {
  const GptSpec w{16, 6144, 64, 4 * 6144, 2048, 51200, 1, 64, DataType::kFp16, Optimizer::kAdam};
  const test::ShippedSystem& sys = test::shipped_system("a100");
  const PerfMachine pm = make_perf_machine(sys.spec, sys.arch);
  const SystemGraph base = make_system_graph(sys.spec, sys.arch, 64);
  for (std::size_t tier = 0; tier < base.tiers.size(); ++tier) {
    SystemGraph fast = base;
    fast.tiers[tier].bandwidth *= 2.0;
    GptTraining a(w, pm, base, sys.arch.core.peak.si());
    GptTraining b(w, pm, fast, sys.arch.core.peak.si());
    for (const char* text : {"tp8-pp2-dp4-mb1", "tp4-pp2-dp8-mb1-zero2", "tp2-pp4-dp8-mb1"}) {
      const Strategy s = parse_strategy(text);
      INFO(text << " tier " << tier);
      CHECK(b.evaluate(s).iteration_time <= a.evaluate(s).iteration_time * (1.0 + 1e-12));
    }
  }
}

TEST_CASE("a strategy that does not fit is reported with its numbers", "[train]") {
  // GPT-3 175B on 8 A100s without pipeline parallelism: ~2.8 TB of model state per device.
  const GptSpec w{96, 12288, 96, 4 * 12288, 2048, 51200, 1, 8, DataType::kFp16,
                  Optimizer::kAdam};
  GptTraining m = test::training_model("a100", w, 8);
  const TrainingResult r = m.evaluate(parse_strategy("tp8-mb1"));
  CHECK_FALSE(r.feasible);
  CHECK(r.iteration_time == 0.0);
  CHECK(r.reason.find("GB per device") != std::string::npos);
  CHECK(r.memory.total().si() > r.memory_capacity);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("tensor-parallel communication hidden as configured", "[train]") {
  // Korthikanti's 22B layer: fully exposed all-reduces (0), half hidden, all hidden.
  const GptSpec w{48, 6144, 64, 4 * 6144, 2048, 51200, 4, 64, DataType::kFp16, Optimizer::kAdam};
  const Strategy s = parse_strategy("tp8-dp8-mb4-recompute=selective");
  std::vector<double> tc, it;
  for (double f : {0.0, 0.5, 1.0}) {
    TrainingOptions o;
    o.tensor_comm_overlap = f;
    GptTraining m = test::training_model("a100", w, 64, o);
    const TrainingResult r = m.evaluate(s);
    REQUIRE(r.feasible);
    tc.push_back(r.breakdown.tensor_comm);
    it.push_back(r.iteration_time);
  }
  CHECK(tc[1] == Approx(tc[0] / 2));
  CHECK(tc[2] == 0.0);
  CHECK(it[0] - it[2] == Approx(tc[0]).epsilon(0.02));
}

}  // namespace pathfinder
