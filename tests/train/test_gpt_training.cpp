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
#include <string>
#include <vector>

#include "engine/graph/workload_loader.hpp"
#include "engine/parallel/memory_footprint.hpp"
#include "engine/parallel/strategy_check.hpp"
#include "engine/perf/device_variation.hpp"
#include "engine/system/collectives.hpp"
#include "tests/parallel/parallel_specs.hpp"
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

// The contention the A100's NVLink collectives cost the compute beside them, as the perf
// machine derives it from a100.yaml's memory_contention.
double a100_nvlink_contention() {
  const test::ShippedSystem& a = test::shipped_system("a100");
  return make_perf_machine(a.spec, a.arch).scale_up_contention;
}

}  // namespace

TEST_CASE("[calibration] vTrain: 1,440 single-node A100 training iterations", "[train]") {
  // Megatron-LM, mixed precision, 1F1B, activation checkpointing (full recomputation), GPT-2
  // vocabulary 50,257 padded to a multiple of 128·tp as Megatron does.
  std::map<std::string, std::unique_ptr<GptTraining>> models;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> groups;
  std::vector<double> errors;
  struct Family {
    double abs = 0.0, signed_sum = 0.0;
    int n = 0;
  };
  std::map<std::string, Family> by_family;  // "tpN ppN"
  std::printf("\nvTrain rows: gpus, global batch, micro-batch, hidden, layers, tp, dp, pp, "
              "measured ms, predicted ms, error\n");
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
    const double pred = t.iteration_time.si() * 1e3;
    errors.push_back((pred - r.ms) / r.ms);
    std::printf("%d %d %d %d %d %d %d %d %.2f %.2f %+.1f%%\n", r.gpus, r.global_batch,
                r.micro_batch, r.hidden, r.layers, r.tp, r.dp, r.pp, r.ms, pred,
                100 * errors.back());
    Family& fam = by_family["tp" + std::to_string(r.tp) + " pp" + std::to_string(r.pp)];
    fam.abs += std::abs(errors.back());
    fam.signed_sum += errors.back();
    fam.n += 1;
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
  std::printf("\nvTrain: %zu iterations, MAPE %.3f%% (vTrain itself 8.37%%), bias %+.2f%%\n",
              errors.size(), 100 * mape, 100 * bias);
  std::printf("|error| percentiles: 50%% %.1f%%, 90%% %.1f%%, 99%% %.1f%%, max %.1f%%\n",
              100 * pct(0.5), 100 * pct(0.9), 100 * pct(0.99), 100 * abs_err.back());
  std::printf("by tensor x pipeline parallelism (MAPE, bias, rows):");
  for (const auto& [name, f] : by_family) {
    std::printf("  %s %.1f%% %+.1f%% (%d)", name.c_str(), 100 * f.abs / f.n,
                100 * f.signed_sum / f.n, f.n);
  }
  std::printf("\n");
  std::printf("strategy ranking: mean Spearman rho %.3f over %zu model/batch groups\n", rho,
              groups.size());
  CHECK(errors.size() == 1440);
  // 6.997%, bias -0.00% (issue 12's goal 7%, met by 0.003 points: the bound is the goal) with
  // NCCL's rings at NCCL's own per-call and per-step protocol latencies (collectives.cpp: tp8's
  // all-reduces of 2-32 MB take LL128's 14 + 14 x 1.9 us, tp2's Simple's 8.4 + 2 x 3.4 us);
  // 7.03%, bias -0.3% before, at the links' 2 us a step and 64 KiB half-bandwidth messages
  // (tp8 -13.9% -> -13.5%, tp4 +1.6% -> +2.3%), since a job waits for its
  // slowest device (core.device_variation: 2- and 4-GPU rows 1.3% and 0.6% faster than 8-GPU
  // ones); 7.06%, bias -0.2% before (7.08%, +0.3% while the
  // tensor and pipeline groups shared the ports they never use at once), since Megatron-LM's
  // column-parallel backward collectives run beside the weight-gradient GEMMs at the A100's
  // measured NVLink contention and core.sustained_fraction was refitted to Korthikanti's layers
  // with them (0.856 -> 0.821): 6.90% before (the host fit, 65 us, stays the best: 7.05% at
  // 64, 7.21% at 63, 7.27% at 66). Earlier: 6.88%, bias -0.1% (6.83% before the embedding's gradient zeroed and
  // added into main_grad each micro-batch), with the fp32 loss, a tied head on the embedding's
  // own stage reduced and updated once, Megatron-LM's separate bias kernels, the attention's
  // layout copies and its unfused softmax where the fused kernel does not take the shape (tp8
  // at micro-batch 1: 2 heads x 1 sequence per rank, not a multiple of 4), and megatron-lm.yaml's
  // host fits refitted (8.81% before those).
  CHECK(mape <= 0.07);
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
    const double f = t.forward.span.si() * 1e3, b = t.backward.span.si() * 1e3;
    const double ef = (f - row.fwd) / row.fwd, eb = (b - row.bwd) / row.bwd;
    worst_fwd = std::max(worst_fwd, std::abs(ef));
    worst_bwd = std::max(worst_bwd, std::abs(eb));
    std::printf("%-28s %8.1f %8.2f %+6.1f%% %8.1f %8.2f %+6.1f%%\n", row.name.c_str(), row.fwd, f,
                100 * ef, row.bwd, b, 100 * eb);
  }
  std::printf("worst forward %.1f%% (bound 3%%), worst backward %.1f%% (bound 3%%)\n",
              100 * worst_fwd, 100 * worst_bwd);
  // Backward as Megatron-LM's LinearWithGradAccumulationAndAsyncCommunication runs it
  // (megatron-lm.yaml overlap: tensor_parallel_backward, sequence_parallel_regather): QKV's
  // and FFN1's input-gradient all-reduce (reduce-scatter with SP) beside their weight-gradient
  // GEMMs, SP's re-gathers beside the data-gradient GEMMs, each second of them costing the
  // GEMM beside it 0.76 s (a100.yaml memory_contention at its NVLink share, measured: nccl issue 1428); the row-
  // parallel layers' SP all-gathers block. With the separate bias-gradient reductions and the
  // q/k/v gradients' concatenation.
  // Forward, with the separate QKV bias add and the context's layout copy, and SP's all-gathers
  // and reduce-scatters as NCCL's rings (7 steps, not recursive doubling's 3; megatron-lm.yaml
  // collectives: nccl) and the second bias-dropout-add's mask written. The long GEMMs run at
  // the clock the board's power limiter settles at (engine/perf/power_limiter.hpp), the rest
  // at a100.yaml's sustained_fraction, the residual fitted here to the least worst error
  // (0.821): forward -0.2% without SP, -2.3% with it; backward +0.8..+2.2%. Issue 12's goal:
  // every number within 3%. With every backward collective blocking (the model before),
  // forward was 1.5% and 3.8% fast and backward +2.1..+3.6% slow in every row at the best
  // residual (0.856): the backward's overlap was what split them.
  CHECK(worst_bwd <= 0.03);
  CHECK(worst_fwd <= 0.03);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("the iteration lies between the critical path and the serial sum", "[train]") {
  // Megatron 22B-like on 64 devices (8 DGX A100s over HDR InfiniBand).
  const GptSpec w{16, 6144, 64, 4 * 6144, 2048, 51200, 1, 64, DataType::kFp16, Optimizer::kAdam};
  GptTraining m = test::training_model("a100", w, 64);
  for (const char* text : {"tp8-pp2-dp4-mb1-1f1b-recompute=selective", "tp8-pp4-dp2-mb1-gpipe",
                           "tp4-pp4-dp4-mb1-1f1b-sp-zero1-recompute=full",
                           "tp8-pp4-dp2-mb1-interleaved-v2-recompute=selective",
                           "tp4-pp4-dp4-mb1-1f1b-zero3-recompute=full",
                           "tp8-pp4-dp2-mb1-interleaved-v2-zero3"}) {
    const Strategy s = parse_strategy(text);
    const TrainingResult r = m.evaluate(s);
    INFO(text);
    REQUIRE(r.feasible);
    const double m_b = static_cast<double>(r.micro_batches);
    // Lower bound: the busiest stage's own work. Upper bound: every stage's work one after the
    // other, plus every transfer, reduction, update and host cost.
    double busiest = 0.0, serial = 0.0;
    for (const Time b : r.device_busy) {
      busiest = std::max(busiest, b.si());
      serial += b.si();
    }
    CHECK(r.iteration_time.si() >= busiest + r.breakdown.optimizer.si() - 1e-12);
    CHECK(r.iteration_time.si() <= serial + r.breakdown.data_comm.si() +
                                       r.breakdown.optimizer.si() + r.breakdown.host.si() +
                                       2.0 * m_b * s.pp * r.stage_forward.si());
    const TrainingBreakdown& b = r.breakdown;
    CHECK(b.total().si() == Approx(r.iteration_time.si()));
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
    GptTraining a(w, pm, base, sys.arch.core.peak);
    GptTraining b(w, pm, fast, sys.arch.core.peak);
    for (const char* text : {"tp8-pp2-dp4-mb1", "tp4-pp2-dp8-mb1-zero2", "tp2-pp4-dp8-mb1"}) {
      const Strategy s = parse_strategy(text);
      INFO(text << " tier " << tier);
      CHECK(b.evaluate(s).iteration_time.si() <= a.evaluate(s).iteration_time.si() * (1.0 + 1e-12));
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
  CHECK(r.iteration_time.si() == 0.0);
  CHECK(r.reason.find("GB per device") != std::string::npos);
  CHECK(r.memory.total().si() > r.memory_capacity.si());
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("column-parallel backward collectives beside the weight-gradient GEMMs", "[train]") {
  // Korthikanti's 22B layer on tp 8 (mb 4): QKV's and FFN1's input-gradient all-reduces, each
  // 100.7 MB and shorter than the weight-gradient GEMM launched after it, move to the side
  // stream; each second of them costs the GEMM 0.76 s on the A100's NVLink (a100.yaml
  // memory_contention): the backward shortens by (1 - 0.76) of the two all-reduces, and what
  // stays exposed is 0.76 of them. The forward is unchanged.
  const GptSpec w{48, 6144, 64, 4 * 6144, 2048, 51200, 4, 4, DataType::kFp16, Optimizer::kAdam};
  Strategy s;
  s.tp = 8;
  s.micro_batch = 4;
  TrainingOptions off, on;
  on.overlap_tp_backward = true;
  GptTraining a = test::training_model("a100", w, 8, off);
  GptTraining b = test::training_model("a100", w, 8, on);
  const StageTimes blocking = a.layer_times(s);
  const StageTimes side = b.layer_times(s);
  const double reduces = blocking.backward.exposed_comm.si();
  // The A100's NVLink contention as the perf machine derives it (0.76, test_perf_machine.cpp).
  const double c = a100_nvlink_contention();
  CHECK(c == Approx(0.76).epsilon(0.001));
  CHECK(reduces > 1.5e-3);  // two ring all-reduces of 100.7 MB at ~224 GB/s bus bandwidth
  CHECK(side.backward.hidden_comm.si() == Approx(reduces));
  CHECK(side.backward.exposed_comm.si() == Approx(c * reduces));
  CHECK(blocking.backward.span.si() - side.backward.span.si() ==
        Approx((1.0 - c) * reduces).epsilon(1e-9));
  CHECK(side.forward.span.si() == blocking.forward.span.si());
}

TEST_CASE("backward collectives beside the GEMMs never lengthen an iteration",
          "[train][property]") {
  // A side-stream collective costs the compute stream its time times the contention (at most
  // 1 here: the A100's measured 0.76, or the SMs' share, at most 1) and the consumer waits for
  // its end: max(W + c·C, C) <= W + C, its blocking time. Over shapes, SP or not, recomputation
  // and pipelines, on A100 (NVLink contention) and H100 (SMs only).
  const GptSpec w{8, 4096, 32, 4 * 4096, 2048, 51200, 2, 64, DataType::kBf16, Optimizer::kAdam};
  for (const char* tmpl : {"a100", "h100"}) {
    for (const char* text :
         {"tp8-pp1-dp1-mb1", "tp8-pp1-dp1-mb2-sp", "tp4-pp2-dp1-mb1-sp",
          "tp2-pp1-dp4-mb2-recompute=full", "tp8-pp1-dp1-mb1-sp-recompute=selective"}) {
      TrainingOptions off, on;
      off.collective_sms = on.collective_sms = 16;
      off.check_memory = on.check_memory = false;
      on.overlap_tp_backward = on.overlap_sp_regather = true;
      const Strategy s = parse_strategy(text);
      const TrainingResult a = test::training_model(tmpl, w, s.devices(), off).evaluate(s);
      const TrainingResult b = test::training_model(tmpl, w, s.devices(), on).evaluate(s);
      REQUIRE(a.feasible);
      REQUIRE(b.feasible);
      INFO(tmpl << " " << text);
      CHECK(b.iteration_time.si() <= a.iteration_time.si() * (1.0 + 1e-12));
      CHECK(b.iteration_time.si() < a.iteration_time.si());  // some of it hidden
    }
  }
}

TEST_CASE("collectives cost the compute beside them main memory at their ring's rate",
          "[train]") {
  // ZeRO-3 (FSDP) over the data group: on 8 A100s its per-layer gathers and reduce-scatters
  // run on NVLink beside the layers' compute, which pays a100.yaml's measured 0.76 per second
  // of them. On 16 (two DGX nodes) the ring crosses InfiniBand on all eight rails at once,
  // 8 x 23.75 GB/s = 190 of NVLink's 234 GB/s: its bytes stream through main memory at that
  // rate, and the compute pays 190/234 of the NVLink figure. A group with one GPU per node
  // (tp8, the data group across the nodes) rings through one rail, a tenth of it, and only the
  // SMs NCCL holds count (collective_sms), whatever the NVLink tier's figure.
  const GptSpec w{24, 2048, 16, 4 * 2048, 2048, 51200, 4, 64, DataType::kBf16, Optimizer::kAdam};
  TrainingOptions o;
  o.collective_sms = 16;
  const auto iteration = [&](double nvlink_contention, int devices, const std::string& split) {
    ArchTemplate t = load_template(test::source_path("templates/a100.yaml"));
    for (NetworkSpec& n : t.networks) {
      if (n.tier == NetworkTier::kInterPackage) n.behavior.memory_contention = nvlink_contention;
    }
    const ArchSpec spec = bind_template(test::shipped_techlib(), t);
    const MicroArch arch = generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl));
    GptTraining m(w, make_perf_machine(spec, arch), make_system_graph(spec, arch, devices),
                  arch.core.peak, o);
    const TrainingResult r = m.evaluate(parse_strategy(split));
    REQUIRE(r.feasible);
    return r.iteration_time.si();
  };
  const double node = iteration(5.96, 8, "tp1-pp1-dp8-mb4-zero3") /
                      iteration(0.0, 8, "tp1-pp1-dp8-mb4-zero3");
  const double two = iteration(5.96, 16, "tp1-pp1-dp16-mb4-zero3") /
                     iteration(0.0, 16, "tp1-pp1-dp16-mb4-zero3");
  std::printf("\nFSDP on A100s, slowdown from NVLink's measured contention: 8 GPUs %.4f, 16 %.4f\n",
              node, two);
  CHECK(node > 1.001);
  CHECK(two > 1.001);
  CHECK(iteration(5.96, 16, "tp8-pp1-dp2-mb4-zero3") == iteration(0.0, 16, "tp8-pp1-dp2-mb4-zero3"));
}

TEST_CASE("tensor-parallel communication hidden as configured", "[train]") {
  // Korthikanti's 22B layer: fully exposed all-reduces (0), half hidden, all hidden. A hidden
  // second still costs the compute beside it 0.76 s on the A100's NVLink
  // (network.inter_package.memory_contention at its share, measured): exposed 1, 0.5 + 0.5 x 0.76, 0.76.
  const GptSpec w{48, 6144, 64, 4 * 6144, 2048, 51200, 4, 64, DataType::kFp16, Optimizer::kAdam};
  const Strategy s = parse_strategy("tp8-dp8-mb4-recompute=selective");
  std::vector<double> tc, it;
  for (double f : {0.0, 0.5, 1.0}) {
    TrainingOptions o;
    o.tensor_comm_overlap = f;
    GptTraining m = test::training_model("a100", w, 64, o);
    const TrainingResult r = m.evaluate(s);
    REQUIRE(r.feasible);
    tc.push_back(r.breakdown.tensor_comm.si());
    it.push_back(r.iteration_time.si());
  }
  const double nvlink = a100_nvlink_contention();
  CHECK(tc[1] == Approx(tc[0] * (0.5 + 0.5 * nvlink)));
  CHECK(tc[2] == Approx(tc[0] * nvlink));
  CHECK(it[0] - it[2] == Approx(tc[0] - tc[2]).epsilon(0.02));
  // Chunked (TE userbuffers): tp chunks pipelined, one chunk's transfer exposed, 1/tp; the
  // chunks move by the copy engines, which read and write each byte once where NCCL's ring
  // also copies it through its buffers: the (tp - 1)/tp hidden cost the compute beside them
  // half NVLink's measured contention (GptTraining::tensor_comm_contention).
  for (const int tp : {4, 8}) {  // dp 16 and 8: 64 sequences = dp x 4 x micro-batches
    const Strategy c = parse_strategy("tp" + std::to_string(tp) + "-dp" + std::to_string(64 / tp) +
                                      "-mb4-recompute=selective");
    TrainingOptions blocking, chunked;
    blocking.check_memory = chunked.check_memory = false;  // tp4 exceeds 80 GB; timing only
    chunked.tensor_comm_chunked = true;
    const TrainingResult b = test::training_model("a100", w, 64, blocking).evaluate(c);
    const TrainingResult h = test::training_model("a100", w, 64, chunked).evaluate(c);
    REQUIRE(b.feasible);
    REQUIRE(h.feasible);
    CHECK(h.breakdown.tensor_comm.si() ==
          Approx(b.breakdown.tensor_comm.si() * (1.0 / tp + (tp - 1.0) / tp * 0.5 * nvlink)));
  }
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("overlapping the gradient reduction never lengthens an iteration", "[train]") {
  // The tensor and pipeline groups are placed alike either way; overlapped buckets share the
  // ports only until the backward ends and run at the data group's own rate after, so at every
  // instant at least as much is reduced as when the reduction waits for the backward.
  const GptSpec w{16, 6144, 64, 4 * 6144, 2048, 51200, 1, 512, DataType::kFp16,
                  Optimizer::kAdam};
  TrainingOptions on, off;
  on.check_memory = off.check_memory = false;  // a property of the timing, fitting or not
  off.overlap_data_parallel = false;
  int compared = 0;
  for (const int devices : {64, 256, 1024}) {
    GptTraining a = test::training_model("a100", w, devices, on);
    GptTraining b = test::training_model("a100", w, devices, off);
    for (const int tp : {2, 8}) {
      for (const int pp : {2, 4, 8}) {
        for (const int mb : {1, 2}) {
          for (const char* schedule : {"1f1b", "interleaved-v2"}) {
            for (const int zero : {0, 1}) {
              Strategy s = parse_strategy(std::string("mb1-") + schedule);
              s.tp = tp;
              s.pp = pp;
              s.dp = devices / (tp * pp);
              s.micro_batch = mb;
              s.zero = zero;
              if (!is_valid_strategy(s, w, devices)) continue;
              INFO(to_string(s) << " on " << devices);
              const double t_on = a.evaluate(s).iteration_time.si();
              const double t_off = b.evaluate(s).iteration_time.si();
              CHECK(t_on <= t_off * (1.0 + 1e-12));
              ++compared;
            }
          }
        }
      }
    }
  }
  CHECK(compared >= 100);
}

TEST_CASE("GPT-3 175B on 1,024 A100s: overlap on is not slower than off", "[train]") {
  // tp8-pp8-dp16-mb1, 1F1B, full recomputation, Narayanan et al.'s batch of 1,536. When the
  // gradients shared the ports with the tensor and pipeline groups for the whole iteration
  // (before this model) overlap made it slower: 27.43 s on, 27.15 s off.
  const GptSpec w{96, 12288, 96, 4 * 12288, 2048, 51200, 1, 1536, DataType::kFp16,
                  Optimizer::kAdam};
  TrainingOptions on, off;
  off.overlap_data_parallel = false;
  GptTraining a = test::training_model("a100", w, 1024, on);
  GptTraining b = test::training_model("a100", w, 1024, off);
  const Strategy s = parse_strategy("tp8-pp8-dp16-mb1-1f1b-recompute=full");
  const TrainingResult r_on = a.evaluate(s), r_off = b.evaluate(s);
  REQUIRE(r_on.feasible);
  REQUIRE(r_off.feasible);
  std::printf("\nGPT-3 175B %s: overlap on %.3f s (data_comm %.1f ms), off %.3f s (%.1f ms)\n",
              to_string(s).c_str(), r_on.iteration_time.si(), 1e3 * r_on.breakdown.data_comm.si(),
              r_off.iteration_time.si(), 1e3 * r_off.breakdown.data_comm.si());
  CHECK(r_on.iteration_time.si() <= r_off.iteration_time.si() * (1.0 + 1e-12));
  // Only the exposed reduction differs: the pipelines are the same.
  CHECK(r_on.breakdown.compute.si() == r_off.breakdown.compute.si());
  CHECK(r_on.breakdown.data_comm.si() < r_off.breakdown.data_comm.si());
}

}  // namespace pathfinder

namespace pathfinder {
namespace {

// A 22B-like model of 4 layers on one DGX A100: dp8 over NVSwitch, the only group; 16
// micro-batches of one sequence per replica.
const GptSpec kSmall{4, 6144, 64, 4 * 6144, 2048, 51200, 1, 128, DataType::kFp16,
                     Optimizer::kAdam};

// The first part of each pass: the forward starts with the embedding (token rows V·h and
// positions s·h), the backward with the head (final layernorm 2h and, alone on its part, its
// copy of the tied token rows V·h).
constexpr double kEmbeddingParams = 51200.0 * 6144 + 2048.0 * 6144;
constexpr double kHeadParams = 2.0 * 6144 + 51200.0 * 6144;

// The all-gather of `params` fp16 parameters over the 8 devices (dp8 alone on the ports).
double gather_time(const SystemGraph& g, double params) {
  return collective_time(place_group(g, 8, 1), Collective::kAllGather, bytes(2.0 * params)).si();
}

}  // namespace

TEST_CASE("ZeRO-3 gathers every layer on every micro-batch: slower than ZeRO-1", "[train]") {
  GptTraining m = test::training_model("a100", kSmall, 8);
  const TrainingResult z1 = m.evaluate(parse_strategy("dp8-mb1-zero1"));
  const TrainingResult z3 = m.evaluate(parse_strategy("dp8-mb1-zero3"));
  REQUIRE(z1.feasible);
  REQUIRE(z3.feasible);
  const double micro = static_cast<double>(z3.micro_batches);  // 128 / 8 = 16
  const double g_first = gather_time(m.system(), kEmbeddingParams);
  const double g_head = gather_time(m.system(), kHeadParams);
  std::printf("\nOne DGX A100, dp8-mb1: ZeRO-1 %.2f ms (data_comm %.2f ms), ZeRO-3 %.2f ms "
              "(data_comm %.2f ms); first gather %.3f ms\n",
              1e3 * z1.iteration_time.si(), 1e3 * z1.breakdown.data_comm.si(), 1e3 * z3.iteration_time.si(),
              1e3 * z3.breakdown.data_comm.si(), 1e3 * g_first);
  // One stage, no bubble: the kernels, the optimizer on the 1/8 shard and the host are the
  // same; only the data-parallel communication differs.
  CHECK(z3.breakdown.compute.si() == Approx(z1.breakdown.compute.si()).epsilon(1e-12));
  CHECK(z3.breakdown.tensor_comm.si() == z1.breakdown.tensor_comm.si());
  CHECK(z3.breakdown.optimizer.si() == z1.breakdown.optimizer.si());
  CHECK(z3.iteration_time.si() - z1.iteration_time.si() ==
        Approx(z3.breakdown.data_comm.si() - z1.breakdown.data_comm.si()).epsilon(1e-9));
  // Every micro-batch's forward waits for the embedding's gather and its backward for the
  // head's before any kernel runs: at least 16·(g_embedding + g_head) exposed.
  CHECK(z3.breakdown.data_comm.si() >= micro * (g_first + g_head) * (1.0 - 1e-12));
  // ZeRO-1 exposes at most its bucket reduce-scatters and the one gather of the parameters
  // after the step; ZeRO-3 at least the first gather on each of the 16 micro-batches.
  CHECK(z3.iteration_time.si() >= z1.iteration_time.si() + g_first);
}

TEST_CASE("ZeRO-3 on one replica costs what ZeRO-0 does", "[train]") {
  // dp1: nothing to gather or reduce; the schedule is the plain compute chain.
  GptTraining m = test::training_model("a100", kSmall, 8);
  const TrainingResult z0 = m.evaluate(parse_strategy("tp8-dp1-mb1"));
  const TrainingResult z3 = m.evaluate(parse_strategy("tp8-dp1-mb1-zero3"));
  REQUIRE(z0.feasible);
  REQUIRE(z3.feasible);
  CHECK(z3.iteration_time.si() == z0.iteration_time.si());
  CHECK(z3.breakdown.data_comm.si() == 0.0);
}

TEST_CASE("a slower link lengthens ZeRO-3 by its exposed gathers", "[train]") {
  const test::ShippedSystem& sys = test::shipped_system("a100");
  const PerfMachine pm = make_perf_machine(sys.spec, sys.arch);
  const Strategy s = parse_strategy("dp8-mb1-zero3");
  double previous = 0.0, previous_comm = 0.0;
  for (const double scale : {4.0, 1.0, 0.5, 0.25, 0.0625}) {
    SystemGraph g = make_system_graph(sys.spec, sys.arch, 8);
    REQUIRE(g.find(Tier::kInterPackage) != nullptr);
    for (TierLink& t : g.tiers) {
      if (t.tier == Tier::kInterPackage) t.bandwidth *= scale;  // NVSwitch
    }
    GptTraining m(kSmall, pm, g, sys.arch.core.peak);
    const TrainingResult r = m.evaluate(s);
    REQUIRE(r.feasible);
    INFO("NVSwitch bandwidth x" << scale);
    std::printf("NVSwitch x%-6g ZeRO-3 dp8: %.2f ms, data_comm %.2f ms\n", scale,
                1e3 * r.iteration_time.si(), 1e3 * r.breakdown.data_comm.si());
    // Each gather's time grows as the bandwidth falls; the first of each pass is exposed.
    const double micro = static_cast<double>(r.micro_batches);
    CHECK(r.breakdown.data_comm.si() >=
          micro * (gather_time(g, kEmbeddingParams) + gather_time(g, kHeadParams)) *
              (1.0 - 1e-12));
    CHECK(r.iteration_time.si() > previous);
    CHECK(r.breakdown.data_comm.si() > previous_comm);
    previous = r.iteration_time.si();
    previous_comm = r.breakdown.data_comm.si();
  }
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("ZeRO-3 over a slow link: a stage's forward is its gathers plus the last layer",
          "[train]") {
  // kSmall on one DGX as dp4-pp2: stage 0 holds the embedding and 2 layers. The dp4 and pp2
  // groups both cross the NVSwitch, concurrently: each sees half its port. At 1/64 of the
  // NVSwitch bandwidth a layer's gather (12h² + 13h fp16 parameters, 0.9 GB) takes far longer
  // than the embedding's or a layer's forward, so each compute waits for its gather and each
  // gather starts when the previous one ends (it was issued when the previous compute started,
  // which is when that gather arrived):
  //   forward = g_embedding + 2·g_layer + the last layer's forward.
  const test::ShippedSystem& sys = test::shipped_system("a100");
  SystemGraph g = make_system_graph(sys.spec, sys.arch, 8);
  REQUIRE(g.tiers.size() == 1);
  g.tiers[0].bandwidth /= 64.0;
  GptTraining m(kSmall, make_perf_machine(sys.spec, sys.arch), g, sys.arch.core.peak);
  const Strategy s = parse_strategy("dp4-pp2-mb1-zero3");
  const TrainingResult r = m.evaluate(s);
  REQUIRE(r.feasible);
  PortSharing shared;
  shared.sharers[0] = 2;
  const GroupPlacement dp4 = place_group(g, 4, 1, shared);  // a switch: any stride alike
  const double h = 6144.0;
  const double g_layer =
      collective_time(dp4, Collective::kAllGather, bytes(2.0 * (12 * h * h + 13 * h))).si();
  const double g_emb =
      collective_time(dp4, Collective::kAllGather, bytes(2.0 * kEmbeddingParams)).si();
  const double layer_forward = m.layer_times(s).forward.span.si();  // its launch latency included
  REQUIRE(g_layer > 10.0 * layer_forward);
  CHECK(r.stage_forward.si() == Approx(g_emb + 2.0 * g_layer + layer_forward).epsilon(1e-9));
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("time outside the layers: tied embedding and gradient-norm all-reduces", "[train]") {
  // Megatron 22B (h 6144, V 51200) on two DGX A100: tp8 inside each, pp2 across HDR InfiniBand.
  const GptSpec w{48, 6144, 64, 4 * 6144, 2048, 51200, 1, 64, DataType::kFp16, Optimizer::kAdam};
  GptTraining m = test::training_model("a100", w, 16);
  Strategy s;
  s.tp = 8;
  s.pp = 2;
  s.micro_batch = 1;
  const TrainingResult r = m.evaluate(s);
  REQUIRE(r.feasible);
  // The tied word embedding's gradients, V/t·h = 6400·6144 fp16 = 78,643,200 B, cross the
  // 25 GB/s NIC (0.94 utilization) once: >= 78.64e6 / 23.5e9 = 3.35 ms.
  const double tied = 6400.0 * 6144 * 2 / (25e9 * 0.94);
  std::printf("\n22B tp8-pp2: gradient_sync %.3f ms (tied embedding >= %.3f ms), "
              "embedding_head %.3f ms, optimizer %.3f ms\n",
              r.breakdown.gradient_sync.si() * 1e3, tied * 1e3, r.breakdown.embedding_head.si() * 1e3,
              r.breakdown.optimizer.si() * 1e3);
  CHECK(r.breakdown.gradient_sync.si() >= tied);
  CHECK(r.breakdown.gradient_sync.si() <= tied + 1e-3);  // + latencies and two scalar all-reduces
  CHECK(r.breakdown.embedding_head.si() > 0.0);
  CHECK(r.breakdown.total().si() == Approx(r.iteration_time.si()));
  // One stage: the embedding and the head share a device; nothing to synchronise but the
  // scalar norm and overflow all-reduces over the tensor group (latency only).
  GptTraining one = test::training_model("a100", w, 8);
  Strategy s1 = s;
  s1.pp = 1;
  const TrainingResult r1 = one.evaluate(s1);
  REQUIRE(r1.feasible);
  CHECK(r1.breakdown.gradient_sync.si() > 0.0);
  CHECK(r1.breakdown.gradient_sync.si() < 1e-4);
}

}  // namespace pathfinder

namespace pathfinder {

namespace {

// One Llama 3 8B layer: h 4096, 32 heads, 8 KV heads, SwiGLU f 14336, s 8192, V 128,256, flash
// attention, RMSNorm, rotary, no biases or dropout; micro-batch 1 of a global batch of 8.
GptSpec llama3_8b_layer() {
  GptSpec w{1, 4096, 32, 14336, 8192, 128256, 1, 8, DataType::kBf16, Optimizer::kAdam};
  w.kv_heads = 8;
  w.mlp = MlpKind::kSwiglu;
  w.norm = NormKind::kRmsNorm;
  w.position = PositionKind::kRotary;
  w.attention = AttentionKind::kFlash;
  w.dropout = false;
  w.bias = false;
  return w;
}

}  // namespace

TEST_CASE("FP8 linear layers speed a layer up on H100 and not on A100", "[train]") {
  // A Llama 3 8B layer (h 4096, 32 heads, 8 KV heads, SwiGLU f 14336, s 8192, flash attention)
  // on one device. H100 runs FP8 GEMMs at 2x the datasheet rate (fp8_throughput_ratio 2), less
  // in sustained use and in the backward GEMMs' promoted accumulation; the casts and attention
  // stay. Published whole-step FP8-over-BF16 speed-ups on H100: 1.25x (torchtitan + torchao,
  // Llama 3 8B, torchao float8 README), 1.335x (NeMo 24.09, Llama 3.1 8B, NVIDIA
  // dgxc-benchmarking), 1.42x (Megatron-LM GPT 13B, Megatron-LM issue 396): the layer lands in
  // 1.2-1.5x. A100 has no faster FP8 path: the casts only cost.
  const GptSpec w = llama3_8b_layer();
  const auto layer = [&](const char* tmpl, bool fp8) {
    TrainingOptions o = TrainingOptions::from(test::shipped_software(tmpl));
    o.quantized_linear = fp8;
    GptTraining m = test::training_model(tmpl, w, 1, o);
    const StageTimes& t = m.layer_times(parse_strategy("tp1-pp1-dp1-mb1"));
    return t.forward.span.si() + t.backward.span.si();
  };
  const double h100 = layer("h100", false) / layer("h100", true);
  const double a100 = layer("a100", false) / layer("a100", true);
  std::printf("\nFP8 layer speed-up: H100 %.2fx, A100 %.2fx\n", h100, a100);
  CHECK(h100 > 1.2);
  CHECK(h100 < 1.5);
  CHECK(a100 <= 1.0);
  CHECK(a100 > 0.9);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("FP8 sequence-parallel gathers: the gathers' share of the exposed collectives halves",
          "[train]") {
  // The FP8 layer above on tp8 with sequence parallelism (one DGX H100), its tensor-parallel
  // collectives blocking (megatron-lm.yaml: no overlap). Per pass, the gathers (2 forward; the
  // output gradients' 2 and the re-gathers' 2 backward) carry T·h·1 B instead of T·h·2 B; the
  // reduce-scatters (2 each way) keep 16 bits. Their exposed time: the reduce-scatters' R plus
  // the gathers' G before, R + G/2 after (less the latency share, which does not halve), and
  // the head's and embedding's collectives unchanged: with gathers as long as reduce-scatters
  // (6 : 4 per layer) the layer's part falls to 0.70, the whole to between that and 1
  // (measured 0.82: the single layer's head collectives weigh).
  const GptSpec w = llama3_8b_layer();
  const auto comm = [&](bool fp8_gathers) {
    TrainingOptions o = TrainingOptions::from(test::shipped_software("h100"));
    o.quantized_linear = true;
    o.quant_recipe = QuantRecipe::kCurrent;
    o.fp8_tp_gather = fp8_gathers;
    GptTraining m = test::training_model("h100", w, 8, o);
    const TrainingResult t = m.evaluate(parse_strategy("tp8-pp1-dp1-mb1-sp"));
    REQUIRE(t.feasible);
    return std::pair{t.breakdown.tensor_comm.si(), t.iteration_time.si()};
  };
  const auto [comm16, time16] = comm(false);
  const auto [comm8, time8] = comm(true);
  std::printf("\ntp8 FP8 layer: tensor-parallel collectives %.3f ms with 16-bit gathers, %.3f ms "
              "with FP8 ones (iteration %.3f -> %.3f ms)\n",
              1e3 * comm16, 1e3 * comm8, 1e3 * time16, 1e3 * time8);
  CHECK(comm8 < comm16);
  CHECK(comm8 > 0.6 * comm16);
  CHECK(time8 < time16);
}

TEST_CASE("context parallelism: long sequences fit, short ones cost about the same", "[train]") {
  // Llama 3 8B on one DGX H100 (8 GPUs, NVSwitch), ZeRO-1. With Megatron's fp32 main
  // gradients dp8 holds 8.0 B parameters x (2 + 4 + 12/8) bytes = 60 GB of states beside 8,192
  // tokens of activations, over 80 GB: NeMo runs this model on 8 GPUs with cp2 (its 24.07
  // performance summary). The time comparison is made without the memory check.
  GptSpec w = test::shipped_gpt("llama3_8b");
  w.global_batch = 64;
  GptTraining m = test::training_model("h100", w, 8);
  const TrainingResult dp8_fits = m.evaluate(parse_strategy("tp1-pp1-dp8-mb1-zero1"));
  CHECK_FALSE(dp8_fits.feasible);
  TrainingOptions unchecked = TrainingOptions::from(test::shipped_software("h100"));
  unchecked.check_memory = false;
  GptTraining m_unchecked = test::training_model("h100", w, 8, unchecked);
  const TrainingResult dp8 = m_unchecked.evaluate(parse_strategy("tp1-pp1-dp8-mb1-zero1"));
  const TrainingResult cp2 = m.evaluate(parse_strategy("tp1-pp1-dp4-cp2-mb1-zero1"));
  REQUIRE(dp8.feasible);
  REQUIRE(cp2.feasible);
  // The same FLOPs per device (each rank: half the tokens of twice the micro-batches); the
  // ring's key/value blocks (K, V of 4096 tokens, 16.8 MB per step) hide behind attention.
  CHECK(cp2.iteration_time.si() == Approx(dp8.iteration_time.si()).epsilon(0.05));
  CHECK(cp2.memory.activations.si() < 0.6 * dp8.memory.activations.si());
  // At 65,536 tokens a sequence no longer fits one GPU's 80 GB without splitting it.
  w.sequence = 65536;
  w.global_batch = 8;
  GptTraining longer = test::training_model("h100", w, 8);
  CHECK_FALSE(longer.evaluate(parse_strategy("tp1-pp1-dp8-mb1-zero1-recompute=full")).feasible);
  const TrainingResult cp8 =
      longer.evaluate(parse_strategy("tp1-pp1-dp1-cp8-mb1-zero1-recompute=full"));
  INFO(cp8.reason);
  CHECK(cp8.feasible);
  // By all-to-all (Ulysses) instead: the same FLOPs per rank (4 of the 32 heads over the whole
  // sequence rather than s/8 queries of all 32), no ring to hide, four all-to-alls per layer
  // and pass on the compute stream (Q, K, V and O of 8,192 tokens: 25.2 and 16.8 MB forward),
  // which the attention does not cover: exposed, where the ring was hidden. The ring instead
  // merges its steps' partial outputs (forward) and gradients (backward): with the causal
  // balance 1 + 3/4 x 7 = 6.25 full steps over O (8,192 x 32 x 128 x 2 B = 67.1 MB): reads of
  // 11.5 O and writes of 6.25 O, 1.19 GB a layer's forward pass (~0.5 ms at the H100's stream
  // bandwidth) beside ~4.4 TFLOP of attention: a few % of the compute, so the two come out
  // within a few % of each other.
  const TrainingResult ulysses =
      longer.evaluate(parse_strategy("tp1-pp1-dp1-cp8-ulysses-mb1-zero1-recompute=full"));
  REQUIRE(ulysses.feasible);
  CHECK(cp8.breakdown.compute > ulysses.breakdown.compute);
  CHECK(cp8.breakdown.compute.si() < 1.06 * ulysses.breakdown.compute.si());
  CHECK(cp8.breakdown.tensor_comm.si() == 0.0);
  CHECK(ulysses.breakdown.tensor_comm.si() > 0.0);
  CHECK(ulysses.iteration_time.si() == Approx(cp8.iteration_time.si()).epsilon(0.05));
  // Its workspace holds one layer's regrouped Q, K, V and O instead of the ring's two K, V
  // blocks: 8,192 x (32 x 256 + 8 x 256) x 2 B = 167.8 MB against 2 x 8,192 x 8 x 256 x 2 B
  // = 67.1 MB.
  CHECK((ulysses.memory.workspace - cp8.memory.workspace).si() ==
        Approx(8192.0 * (32 * 256 + 8 * 256) * 2 - 2.0 * 8192 * 8 * 256 * 2));
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("leading dense layers: each stage timed with the layers it holds", "[train]") {
  // Mixtral 8x7B shapes cut to 8 layers, the first 4 dense, on 2 H100s as pp2: stage 0 holds
  // the 4 dense layers and is timed exactly as a dense model's stage 0; stage 1 the 4 sparse
  // ones, as an all-sparse model's stage 1.
  GptSpec w = test::shipped_gpt("mixtral_8x7b");
  w.layers = 8;
  w.global_batch = 8;
  TrainingOptions o;
  o.check_memory = false;
  const Strategy s = parse_strategy("tp1-pp2-dp1-mb1");
  GptSpec mixed = w;
  mixed.dense_layers = 4;
  const TrainingResult r = test::training_model("h100", mixed, 2, o).evaluate(s);
  const TrainingResult dense = test::training_model("h100", w.dense_layer_spec(), 2, o).evaluate(s);
  const TrainingResult sparse = test::training_model("h100", w, 2, o).evaluate(s);
  REQUIRE(r.feasible);
  CHECK(r.stage_forward.si() == Approx(dense.stage_forward.si()).epsilon(1e-12));
  CHECK(r.stage_backward.si() == Approx(dense.stage_backward.si()).epsilon(1e-12));
  CHECK(r.device_busy[1].si() == Approx(sparse.device_busy[1].si()).epsilon(1e-12));
  CHECK(r.stage_forward.si() < sparse.stage_forward.si());  // f = 14336 dense vs top-2 of 8 experts
  // Model FLOPs between the two (4 of 8 layers each way; attention and logits alike).
  CHECK(r.model_flops.si() == Approx((dense.model_flops.si() + sparse.model_flops.si()) / 2.0));
}

TEST_CASE("expert gradients reduce over the expert-data-parallel group", "[train]") {
  // Mixtral shapes cut to 4 layers on one DGX H100 (8 GPUs), tp1-pp1-dp8, ZeRO-1, the gradient
  // reduction after the backward (overlap off, so data_comm is its whole time). With ep8 every
  // rank holds different experts: the expert-data group has dp/ep = 1 member and the experts'
  // gradients need no reduction, so their size does not change data_comm. With ep1 all 8
  // ranks hold every expert and reduce them.
  GptSpec w = test::shipped_gpt("mixtral_8x7b");
  w.layers = 4;
  w.global_batch = 8;
  TrainingOptions o;
  o.check_memory = false;
  o.overlap_data_parallel = false;
  GptSpec wide = w;
  wide.expert_ffn = 2 * w.expert_width();
  const auto data_comm = [&](const GptSpec& spec, const char* strategy) {
    const TrainingResult r = test::training_model("h100", spec, 8, o).evaluate(parse_strategy(strategy));
    REQUIRE(r.feasible);
    return r.breakdown.data_comm.si();
  };
  const double ep8 = data_comm(w, "tp1-pp1-dp8-ep8-mb1-zero1");
  CHECK(data_comm(wide, "tp1-pp1-dp8-ep8-mb1-zero1") == Approx(ep8).epsilon(1e-12));
  const double ep1 = data_comm(w, "tp1-pp1-dp8-mb1-zero1");
  CHECK(ep1 > 10.0 * ep8);  // the experts: 5.64e9 of the 6.07e9 parameters
  CHECK(data_comm(wide, "tp1-pp1-dp8-mb1-zero1") > 1.5 * ep1);
  // ep2: each expert on dp/ep = 4 ranks; its gradients reduce over those 4.
  const double ep2 = data_comm(w, "tp1-pp1-dp8-ep2-mb1-zero1");
  CHECK(ep2 > ep8);
  CHECK(ep2 < ep1);
}

TEST_CASE("whole experts (etp1): no tensor-group collectives for them, a longer gradient sync",
          "[train]") {
  // Mixtral 8x7B on 8 DGX H100 nodes (64 GPUs), tp2 pp4 dp8 ep8 with SP, ZeRO-1, bf16, the
  // gradient reduction after the backward (overlap off: data_comm is its whole time).
  GptSpec w = test::shipped_gpt("mixtral_8x7b");
  w.global_batch = 64;
  TrainingOptions o;
  o.check_memory = false;
  o.overlap_data_parallel = false;
  GptTraining m = test::training_model("h100", w, 64, o);
  const TrainingResult split = m.evaluate(parse_strategy("tp2-pp4-dp8-ep8-mb1-sp-zero1"));
  const TrainingResult whole = m.evaluate(parse_strategy("tp2-pp4-dp8-ep8-mb1-sp-zero1-etp1"));
  REQUIRE(split.feasible);
  REQUIRE(whole.feasible);
  // Split experts: the tensor group all-gathers the T·k = 8,192 expert rows (4096·2 B each)
  // before them and reduce-scatters after, forward and backward: 4 x 64 MiB per layer and
  // micro-batch on NVLink; whole experts move none, and their all-to-all group (ep8 of the
  // tensor and data ranks: one node) stays on NVLink as the split one's (8 of the dp8 ranks,
  // 2 GPUs apart: 2 nodes) does not.
  CHECK(whole.breakdown.tensor_comm.si() < 0.5 * split.breakdown.tensor_comm.si());
  CHECK(whole.iteration_time.si() < split.iteration_time.si());
  // Gradients: split, each half-expert on dp/ep = 1 rank, nothing to reduce; whole, each expert
  // on tp·dp/ep = 2 ranks, 8 layers x 176,160,768 parameters reduced per stage.
  CHECK(whole.breakdown.data_comm.si() > split.breakdown.data_comm.si());
  // The same expert FLOPs: compute within the copies and casts' difference.
  CHECK(whole.breakdown.compute.si() == Approx(split.breakdown.compute.si()).epsilon(0.05));
}

TEST_CASE("expert parallelism: experts spread over the data group, all-to-alls on its links",
          "[train]") {
  // Mixtral 8x7B on 8 DGX H100 nodes (64 GPUs), tp1 pp4 dp16, ZeRO-1, bf16.
  GptSpec w = test::shipped_gpt("mixtral_8x7b");
  w.global_batch = 256;
  TrainingOptions o;
  o.check_memory = false;  // ep1 does not fit; the comparison is of timing
  GptTraining m = test::training_model("h100", w, 64, o);
  const TrainingResult ep1 = m.evaluate(parse_strategy("tp1-pp4-dp16-mb1-zero1"));
  const TrainingResult ep8 = m.evaluate(parse_strategy("tp1-pp4-dp16-ep8-mb1-zero1"));
  REQUIRE(ep1.feasible);
  REQUIRE(ep8.feasible);
  // ep1 holds all 8 experts (98 GB with its states, over 80 GB); ep8 one per layer.
  CHECK(ep1.memory.total().si() > 80e9);
  CHECK(ep8.memory.total().si() < 80e9);
  // The same expert FLOPs per rank (8 experts x T·k/8 rows, or 1 x T·k rows); ep8 adds four
  // all-to-alls per layer and micro-batch, exposed on the compute stream.
  CHECK(ep8.breakdown.tensor_comm.si() > ep1.breakdown.tensor_comm.si());
  CHECK(ep8.iteration_time.si() > ep1.iteration_time.si());
  // Inside one node (NVLink) they cost a few percent, not the iteration.
  CHECK(ep8.iteration_time.si() < 1.15 * ep1.iteration_time.si());
  // Imbalance: the busiest rank's 1.5x tokens slow every expert GEMM.
  w.expert_imbalance = 1.5;
  GptTraining skewed = test::training_model("h100", w, 64, o);
  CHECK(skewed.evaluate(parse_strategy("tp1-pp4-dp16-ep8-mb1-zero1")).iteration_time.si() >
        1.1 * ep8.iteration_time.si());
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("the gradients a stage holds are the main gradient its GEMMs accumulate into",
          "[train]") {
  // Llama 3 8B at 4,096 tokens on 8 H100s, ZeRO-1: each rank holds all 8,030,261,248
  // parameters' gradients. Megatron's bf16 runs accumulate into an fp32 main_grad (4 bytes a
  // parameter, megatron-core.yaml's fused wgrad_accumulation and fp32_if_bf16 reduction), fp16
  // runs into an fp16 one (2), NeMo's bf16 grad_sync_dtype into a bf16 one (2, nemo-fp8.yaml);
  // without accumulation into a main gradient the workload's 2 bytes.
  GptSpec w = test::shipped_gpt("llama3_8b");
  w.sequence = 4096;
  w.global_batch = 32;
  const Strategy s = parse_strategy("tp1-pp1-dp8-mb1-zero1");
  const auto gradients = [&](const GptSpec& spec, TrainingOptions o) {
    o.check_memory = false;
    return test::training_model("h100", spec, 8, o).evaluate(s).memory.gradients.si();
  };
  const double params = 8030261248.0;
  const TrainingOptions mcore = test::profile_options("megatron-core");
  TrainingOptions unfused = mcore;
  unfused.wgrad_accumulation = WgradAccumulation::kNone;
  CHECK(gradients(w, mcore) == Approx(4.0 * params).epsilon(1e-9));
  CHECK(gradients(w, unfused) == Approx(2.0 * params).epsilon(1e-9));
  CHECK(gradients(w, test::profile_options("nemo-fp8")) == Approx(2.0 * params).epsilon(1e-9));
  GptSpec fp16 = w;
  fp16.precision = DataType::kFp16;
  CHECK(gradients(fp16, mcore) == Approx(2.0 * params).epsilon(1e-9));
}

TEST_CASE("LoRA: no weight gradients or their reduction, only the adapters' step", "[train]") {
  // Llama 3 8B, 4,096 tokens, on one DGX H100 as 8 data-parallel replicas, gradients reduced
  // after the backward pass so that the reduction shows whole in data_comm.
  GptSpec w = test::shipped_gpt("llama3_8b");
  w.sequence = 4096;
  w.global_batch = 32;
  TrainingOptions o = TrainingOptions::from(test::shipped_software("h100"));
  o.overlap_data_parallel = false;
  o.overlap_zero_gradients = false;
  const Strategy s = parse_strategy("tp1-pp1-dp8-mb1-zero1");
  GptTraining full = test::training_model("h100", w, 8, o);
  GptSpec l = w;
  l.lora_rank = 16;
  l.lora_targets = kLoraAll;
  GptTraining lora = test::training_model("h100", l, 8, o);
  const TrainingResult tf = full.evaluate(s), tl = lora.evaluate(s);
  REQUIRE(tf.feasible);
  REQUIRE(tl.feasible);
  const TrainingBreakdown &bf = tf.stages[0], &bl = tl.stages[0];
  // The backward drops every base weight-gradient GEMM (a third of the linear layers' work:
  // 2.53 of a layer's 9.51 ms as built) but adds five adapters a layer: thin GEMMs of rank 16
  // that stream their T x out operands, and an add of T x out elements forward and of T x in
  // backward for each (1.41 ms): compute falls by about an eighth (0.88).
  const double compute = bl.compute.si() / bf.compute.si();
  std::printf("\nLoRA r16 over full training: compute %.3f, data_comm %.3g of %.3g s, "
              "optimizer %.3g of %.3g s\n",
              compute, bl.data_comm.si(), bf.data_comm.si(), bl.optimizer.si(),
              bf.optimizer.si());
  CHECK(compute > 0.8);
  CHECK(compute < 0.92);
  // The reduction and the step scale with the trained parameters: the adapters are 37.7M
  // (32 layers of 16·(4096 + 6144) + 16·(4096 + 4096) + 2·16·(4096 + 14336) + 16·(14336 +
  // 4096) = 1,179,648) against 8.03B, 0.47%; both shrink by well over 50x.
  CHECK(gpt_layer_trainable_parameters(l, 1) == 1179648);
  CHECK(bl.data_comm.si() < bf.data_comm.si() / 50.0);
  CHECK(bl.optimizer.si() < bf.optimizer.si() / 50.0);
  CHECK(tl.iteration_time < tf.iteration_time);
}

TEST_CASE("packed documents: attention shrinks with the document, all else holds", "[train]") {
  GptSpec w = test::shipped_gpt("llama3_8b");
  w.global_batch = 8;  // s 8192
  const Strategy s = parse_strategy("tp1-pp1-dp1-mb1");
  const auto time = [&](std::int64_t document) {
    GptSpec p = w;
    p.document = document;
    TrainingOptions o = TrainingOptions::from(test::shipped_software("h100"));
    o.check_memory = false;  // 8B's states need more than one device; the time is the point
    GptTraining m = test::training_model("h100", p, 1, o);
    const TrainingResult r = m.evaluate(s);
    REQUIRE(r.feasible);
    return r.iteration_time.si();
  };
  // One document as long as the sequence is the unpacked model exactly; shorter documents only
  // remove attention work, so the iteration shortens monotonically.
  CHECK(time(8192) == time(0));
  const double t0 = time(0), t2k = time(2048), t256 = time(256);
  std::printf("\npacked documents, Llama 3 8B at s 8192: %.3f s whole, %.3f s at 2048, %.3f s "
              "at 256\n", t0, t2k, t256);
  CHECK(t2k < t0);
  CHECK(t256 < t2k);
  // At s 8192 attention is ~20-30% of a Llama 3 8B step; documents of 256 remove nearly all.
  CHECK(t256 / t0 > 0.65);
  CHECK(t256 / t0 < 0.85);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("quantization recipes: what a device runs, and what each costs", "[train]") {
  // Llama 3 70B's layer shapes on 64 devices, tp4-pp4-dp4 with interleaving, Megatron-Core FP8;
  // on the 80 GB H100 with cp2 as NeMo 24.07 runs it (tp4-pp4-cp2-dp2: dp4 leaves Megatron's
  // fp32 main gradients and the activations of 8,192 tokens over 80 GB).
  GptSpec w = test::shipped_gpt("llama3_70b");
  w.global_batch = 128;
  const auto run = [&](const std::string& tmpl, QuantRecipe r) {
    TrainingOptions o = test::profile_options("megatron-core-fp8");
    REQUIRE(o.quantized_linear);
    o.quant_recipe = r;
    GptTraining m = test::training_model(tmpl, w, 64, o);
    return m.evaluate(parse_strategy(tmpl == "h100" ? "tp4-pp4-dp2-cp2-mb1-sp-zero1-interleaved-v5"
                                                    : "tp4-pp4-dp4-mb1-sp-zero1-interleaved-v5"));
  };
  // Hopper has neither FP4 units nor tensor cores that apply block scales.
  const TrainingResult h4 = run("h100", QuantRecipe::kNvfp4);
  CHECK_FALSE(h4.feasible);
  CHECK(h4.reason == "nvfp4 quantization needs FP4 matrix units (core.fp4_throughput_ratio), "
                     "which H100-SXM5-80GB lacks");
  CHECK(run("h100", QuantRecipe::kMxfp8).reason ==
        "mxfp8 quantization needs matrix units that apply block scales (core.block_scaled_mma), "
        "which H100-SXM5-80GB lacks");
  // On Hopper per-tensor current scaling reads every cast tensor once more, and block scales on
  // the CUDA cores promote the forward GEMMs too (h100.yaml: 0.87 of the FP8 rate): both slower
  // than delayed scaling, by a little.
  const double delayed = run("h100", QuantRecipe::kDelayed).iteration_time.si();
  const double current = run("h100", QuantRecipe::kCurrent).iteration_time.si();
  const double blockwise = run("h100", QuantRecipe::kBlockwise).iteration_time.si();
  CHECK(current > delayed);
  CHECK(current < 1.05 * delayed);
  CHECK(blockwise > delayed);
  CHECK(blockwise < 1.05 * delayed);
  // On the B200 NVFP4's GEMMs run at twice FP8's rate: the step shortens by less than the
  // GEMMs' share (communication, attention and the casts stay), 15-30% here.
  const TrainingResult b8 = run("b200", QuantRecipe::kMxfp8), b4 = run("b200", QuantRecipe::kNvfp4);
  REQUIRE(b8.feasible);
  REQUIRE(b4.feasible);
  const double speedup = b8.iteration_time.si() / b4.iteration_time.si();
  std::printf("\nLlama 3 70B on 64 B200s: MXFP8 %.3f s, NVFP4 %.3f s (%.2fx); H100 FP8 delayed "
              "%.3f s, current %.3f s, blockwise %.3f s\n",
              b8.iteration_time.si(), b4.iteration_time.si(), speedup, delayed, current,
              blockwise);
  CHECK(speedup > 1.15);
  CHECK(speedup < 1.45);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("interleaved chunks may hold uneven layer counts, as Llama 3 405B's schedule",
          "[train]") {
  // 126 layers over pp16 x v2 = 32 chunks: stage_layers gives the first and the last chunk 3
  // layers and the others 4 (Dubey et al. 2024 section 3.3.2: one layer fewer on the first and
  // the last stage). Meta's configuration at 16M tokens is then timed; it lands near the 41%
  // MFU they report (36.1% with NCCL's rings at NCCL's own protocol latencies; 36.5% at the
  // H100's own training residual, 0.755; 36.7% at 0.765 once
  // rings across nodes cost the compute beside them main memory at their rate; 36.2% at 0.745, with
  // the backward's tensor collectives costing the wgrad GEMMs beside them NVLink's memory contention: 37.7%
  // without it; 38.3% at 0.77 without it; 39.5% at the A100's
  // 0.821, 40.7% before a job waited for its slowest device; nothing fitted to it: printed,
  // bounded loosely).
  GptSpec w = test::shipped_gpt("llama3_405b");
  w.global_batch = 2048;
  // Meta's FSDP shards the optimizer states and the gradients, not the weights between the
  // forward and the backward (§3.3.2): ZeRO-2 (its fp32 gradients whole under ZeRO-1 would
  // not fit 80 GB beside the interleaved schedule's activations).
  const Strategy s = parse_strategy("tp8-pp16-dp128-mb1-sp-zero2-interleaved-v2");
  REQUIRE(check_strategy(s, w, 16384).empty());
  GptTraining m = test::training_model("h100", w, 16384, std::string("megatron-core"));
  const TrainingResult r = m.evaluate(s);
  REQUIRE(r.feasible);
  std::printf("\nLlama 3 405B, Meta's TP8-PP16-DP128 interleaved v2 at 16M tokens: %.3f s, "
              "MFU %.1f%% (reported 41%%)\n", r.iteration_time.si(), 100 * r.mfu);
  CHECK(r.mfu > 0.30);
  CHECK(r.mfu < 0.50);
  // Interleaving shortens the 1F1B schedule's bubble (15 of 31 slots) on the same split.
  CHECK(m.evaluate(parse_strategy("tp8-pp16-dp128-mb1-sp-zero1")).iteration_time >
        r.iteration_time);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("a forwarding dispatcher: a token crosses to each remote domain its experts are in once",
          "[train]") {
  // DeepSeek-V3 (studies/workloads/deepseek_v3.yaml: 256 experts, top 8, node-limited to 4 of
  // 8 groups), its expert group of 64 over 8 DGX H100 domains. DeepEP's dispatch sends a token
  // once to each domain holding one of its experts (a chosen group per domain here): the 4
  // groups of 8 are 4 distinct domains, 8·(1 - 7/8·6/7·5/6·4/5) = 4, over 8 copies: 0.5.
  const GptSpec w = test::shipped_gpt("deepseek_v3");
  REQUIRE(w.expert_groups == 8);
  REQUIRE(w.routed_groups == 4);
  TrainingOptions o = test::profile_options("megatron-core-fp8");
  o.forwarded_dispatch = true;
  const GptTraining m = test::training_model("h100", w, 64, o);
  const test::ShippedSystem& h100 = test::shipped_system("h100");
  const SystemGraph sys = make_system_graph(h100.spec, h100.arch, 64);
  const GroupPlacement ep64 = place_group(sys, 64, 1);
  CHECK(m.dispatch_cross_share(ep64) == Approx(0.5));
  // Without the routing limit: 8 experts of 256 in 8 domains of 32 are
  // 8·(1 - Π_{j<8} (224 - j)/(256 - j)) distinct domains.
  GptSpec free = w;
  free.expert_groups = free.routed_groups = 0;
  double miss = 1.0;
  for (int j = 0; j < 8; ++j) miss *= (224.0 - j) / (256.0 - j);
  CHECK(test::training_model("h100", free, 64, o).dispatch_cross_share(ep64) ==
        Approx(8.0 * (1.0 - miss) / 8.0));
  // One domain, or Megatron-Core's flat all-to-all: every copy.
  CHECK(m.dispatch_cross_share(place_group(sys, 8, 1)) == 1.0);
  CHECK(test::training_model("h100", w, 64, test::profile_options("megatron-core-fp8"))
            .dispatch_cross_share(ep64) == 1.0);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("expert all-to-alls overlapped with compute: never slower, the exposed share hidden",
          "[train][property]") {
  // Mixtral 8x7B on 64 H100s (ep8 inside each DGX) and DeepSeek-V3 on 2,048 (ep64 across 8),
  // Megatron-Core FP8 with and without --overlap-moe-expert-parallel-comm: the all-to-alls
  // leave the compute stream (paying the SMs they hold), so an iteration is never slower.
  struct Case {
    const char* workload;
    const char* strategy;
    int devices;
  };
  for (const Case& c : {Case{"mixtral_8x7b", "tp1-pp4-dp16-ep8-mb1-zero1", 64},
                        Case{"deepseek_v3", "tp1-pp16-dp128-ep64-mb1-zero1-recompute=full",
                             2048}}) {
    INFO(c.workload);
    const GptSpec w = test::shipped_gpt(c.workload);
    TrainingOptions on = test::profile_options("megatron-core-fp8");
    on.overlap_expert_comm = true;
    GptTraining blocking = test::training_model("h100", w, c.devices,
                                                test::profile_options("megatron-core-fp8"));
    GptTraining overlapped = test::training_model("h100", w, c.devices, on);
    const Strategy s = parse_strategy(c.strategy);
    const TrainingResult a = blocking.evaluate(s), b = overlapped.evaluate(s);
    REQUIRE(a.feasible);
    REQUIRE(b.feasible);
    CHECK(b.iteration_time <= a.iteration_time);
    std::printf("\n%s %s: all-to-alls blocking %.3f s, overlapped %.3f s\n", c.workload,
                c.strategy, a.iteration_time.si(), b.iteration_time.si());
  }
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("a job waits for its slowest device: the same layer computes longer in a larger job",
          "[train]") {
  // a100.yaml: core.device_variation 0.015 and sustained_devices 8 (device_variation.hpp). One
  // 22B tensor-parallel-8 layer (Korthikanti's) timed by the shipped machine and by the same
  // machine with no variation: every compute kernel's clocked part runs at the job's pace, 1 at
  // 8 devices and (1 + 0.015 e(8)) / (1 + 0.015 e(1024)) = 1.0215 / 1.0485 = 0.9743 at 1,024
  // (dp 128); memory-bound kernels and collectives keep their time, so the layer's compute
  // grows by at most 1/0.9743 = +2.64%.
  const GptSpec w{48, 6144, 64, 4 * 6144, 2048, 51200, 4, 4, DataType::kFp16, Optimizer::kAdam};
  const test::ShippedSystem& sys = test::shipped_system("a100");
  const TrainingOptions o = TrainingOptions::from(test::shipped_software("a100"));
  const auto model = [&](bool variation, int devices) {
    PerfMachine m = make_perf_machine(sys.spec, sys.arch);
    REQUIRE(m.device_variation == 0.015);
    REQUIRE(m.sustained_devices == 8);
    if (!variation) m.device_variation = 0.0;
    return GptTraining(w, m, make_system_graph(sys.spec, sys.arch, devices), sys.arch.core.peak,
                       o);
  };
  const double pace = job_pace(0.015, 8, 1024);
  CHECK(pace == Approx(0.9743).margin(5e-4));
  for (const int dp : {1, 128}) {
    Strategy s;
    s.tp = 8;
    s.dp = dp;
    s.micro_batch = 4;
    GptTraining varied = model(true, 8 * dp), alike = model(false, 8 * dp);
    const StageTimes a = alike.layer_times(s), v = varied.layer_times(s);
    for (const auto& [x, y] : {std::pair{a.forward, v.forward}, std::pair{a.backward, v.backward}}) {
      INFO("dp " << dp);
      const double ratio = y.compute.si() / x.compute.si();
      if (dp == 1) {
        CHECK(ratio == 1.0);  // the fitted job size: the template's rate as stated
      } else {
        CHECK(ratio <= 1.0 / pace + 1e-12);
        CHECK(ratio >= 1.0 + 0.5 * (1.0 / pace - 1.0));  // GEMMs are most of the layer
      }
      CHECK(y.exposed_comm.si() == Approx(x.exposed_comm.si()).epsilon(1e-12));
    }
  }
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("an FP8 dispatch halves the forward dispatch and the backward combine", "[train]") {
  // DeepSeek-V3 on 2,048 H100s (tp1-pp16-dp128-ep64, full recomputation) under Megatron-Core's
  // MoE stack (megatron-core-moe: FP8 linear layers, DeepEP forwarding) with its rows sent in
  // FP8 (DeepSeek-V3 §3.3.2; moe.dispatch_precision: fp8): the two all-to-alls that carry the
  // experts' inputs and output gradients move 1 B per element instead of 2, so their time falls
  // to about half (the latency part stays); the iteration shortens by what they were exposed.
  const GptSpec w = test::shipped_gpt("deepseek_v3");
  const Strategy s = parse_strategy("tp1-pp16-dp128-ep64-mb1-zero1-recompute=full");
  TrainingOptions bf16 = test::profile_options("megatron-core-moe"), fp8 = bf16;
  REQUIRE(bf16.quantized_linear);
  REQUIRE_FALSE(bf16.fp8_dispatch);
  fp8.fp8_dispatch = true;
  GptTraining a = test::training_model("h100", w, 2048, bf16);
  GptTraining b = test::training_model("h100", w, 2048, fp8);
  const auto comm_time = [&](GptTraining& m, const char* name) {
    const GptTraining::LayerKernels k = m.layer_kernels(s);
    for (const KernelSpan& sp : k.spans) {
      if (k.graph->kernel(sp.id).name == name) return (sp.end - sp.start).si();
    }
    FAIL("no kernel " << name);
    return 0.0;
  };
  const std::string l = "l" + std::to_string(w.dense_layers) + ".moe.";
  const double d16 = comm_time(a, (l + "dispatch.fwd").c_str());
  const double d8 = comm_time(b, (l + "dispatch.fwd").c_str());
  CHECK(d8 < 0.6 * d16);
  CHECK(d8 > 0.5 * d16);  // 1 B of 2, plus the same per-message latency
  CHECK(comm_time(b, (l + "combine.fwd").c_str()) ==
        Approx(comm_time(a, (l + "combine.fwd").c_str())));  // the combine stays 16-bit
  const TrainingResult ra = a.evaluate(s), rb = b.evaluate(s);
  REQUIRE(ra.feasible);
  REQUIRE(rb.feasible);
  std::printf("\nDeepSeek-V3 on 2,048 H100s, megatron-core-moe: dispatch %.2f -> %.2f ms with FP8 "
              "rows; iteration %.2f -> %.2f s\n",
              1e3 * d16, 1e3 * d8, ra.iteration_time.si(), rb.iteration_time.si());
  CHECK(rb.iteration_time < ra.iteration_time);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("NVIDIA's DeepSeek-V3 H100 configuration fits with whole experts and its modules",
          "[train]") {
  // Megatron-MoE-ModelZoo's "best config on 1024 H100 GPUs" (best_practice/DeepSeekV3/run.sh):
  // TP2 PP8 VPP4 EP64, --expert-tensor-parallel-size 1, --recompute-modules mla_up_proj mlp,
  // MBS 1, GBS 8192, sequence 4096, with its MTP layer (the even split gives NVIDIA's layout
  // "Et|(tt|)*30mL", test_layer_split.cpp). Stage 0 holds 2·(8-1) + 3·8 + 1 = 39 chunk
  // forwards of (mostly) two layers in flight.
  GptSpec w = test::shipped_gpt("deepseek_v3");
  w.global_batch = 8192;
  GptTraining m = test::training_model("h100", w, 1024, "megatron-core-moe");
  const std::string base = "tp2-pp8-dp64-ep64-mb1-zero1-sp-interleaved-v4";
  const TrainingResult split = m.evaluate(parse_strategy(base + "-recompute=selective"));
  const TrainingResult nvidia =
      m.evaluate(parse_strategy(base + "-etp1-recompute=mla_up_proj+mlp"));
  std::printf("\nDeepSeek-V3 on 1,024 H100s, %s: stage 0 %.1f GB split experts, selective; "
              "%.1f GB whole experts, mla_up_proj+mlp (%.1f GB activations); %.2f s, MFU %.1f%%\n",
              base.c_str(), split.memory.total().si() / 1e9, nvidia.memory.total().si() / 1e9,
              nvidia.memory.activations.si() / 1e9, nvidia.iteration_time.si(),
              100 * nvidia.mfu);
  // Split experts store every T·k row of the tensor group at f_e/2 and the up-projections'
  // Q, K, V: ~1 GB a layer (the linear layers' inputs in FP8, megatron-core-moe.yaml), over
  // the 80 GB: 92.4 GB with Megatron's fp32 main gradients (87.5 GB with 16-bit ones, 107.7 GB
  // with 16-bit inputs, weights and moments); NVIDIA's 65.5 GB (59.8 GB with 16-bit gradients),
  // 25.23 s, MFU 36.9% (25.11 s, 37.1% before NCCL's rings took NCCL's protocol latencies;
  // 26.36 s, 35.3% with per-tensor FP8 and the unfused loss).
  CHECK_FALSE(split.feasible);
  CHECK(split.memory.total().si() > 85e9);
  // Whole experts store this rank's T/2 tokens' rows; Q, K and V recomputed: ~0.7 GB a layer.
  REQUIRE(nvidia.feasible);
  CHECK(nvidia.memory.total().si() < 80e9);
  CHECK(nvidia.memory.activations.si() < 0.6 * split.memory.activations.si());
}

TEST_CASE("overlapped expert all-to-alls: only the schedule's paired passes hide them",
          "[train]") {
  // Megatron-Core's combined 1F1B runs one micro-batch's forward with another's backward; a
  // stage's warm-up forwards and cool-down backwards run alone (Megatron's
  // get_pp_rank_microbatches warm-up counts): 1F1B p - 1 - d (at least 1), interleaved
  // (p - d - 1)·2 + (v - 1)·p, of its m·v passes.
  const GptSpec w = test::shipped_gpt("mixtral_8x7b");
  TrainingOptions o = test::profile_options("megatron-core-fp8");
  o.overlap_expert_comm = true;
  const GptTraining m = test::training_model("h100", w, 64, o);
  const Strategy onef1b = parse_strategy("tp1-pp4-dp16-ep8-mb1-zero1");
  CHECK(m.expert_paired_share(onef1b, 0, 16) == Approx(13.0 / 16.0));  // 3 warm-up
  CHECK(m.expert_paired_share(onef1b, 3, 16) == Approx(15.0 / 16.0));  // the last: 1
  CHECK(m.expert_paired_share(onef1b, 0, 2) == 0.0);                   // all warm-up
  CHECK(m.expert_paired_share(parse_strategy("tp1-pp1-dp64-ep8-mb1-zero1"), 0, 8) ==
        Approx(7.0 / 8.0));
  const Strategy inter = parse_strategy("tp1-pp4-dp16-ep8-mb1-zero1-interleaved-v2");
  CHECK(m.expert_paired_share(inter, 0, 8) == Approx(1.0 - 10.0 / 16.0));  // 3·2 + 1·4
  CHECK(m.expert_paired_share(inter, 3, 8) == Approx(1.0 - 4.0 / 16.0));   // 0·2 + 1·4
  CHECK(m.expert_paired_share(parse_strategy("tp1-pp4-dp16-ep8-mb1-zero1-gpipe"), 0, 16) == 0.0);
  // Without the overlap, or without expert parallelism, every pass is as timed.
  CHECK(test::training_model("h100", w, 64, test::profile_options("megatron-core-fp8"))
            .expert_paired_share(onef1b, 0, 16) == 1.0);
  CHECK(m.expert_paired_share(parse_strategy("tp1-pp4-dp16-mb1-zero1"), 0, 16) == 1.0);
  // Fewer micro-batches per pipeline leave more passes unpaired: the overlap's gain shrinks.
  GptSpec few = w;
  few.global_batch = 16 * 8;  // 8 micro-batches per pipeline on dp16
  GptTraining with = test::training_model("h100", few, 64, o);
  GptTraining without =
      test::training_model("h100", few, 64, test::profile_options("megatron-core-fp8"));
  GptTraining many_with = test::training_model("h100", w, 64, o);
  GptTraining many_without =
      test::training_model("h100", w, 64, test::profile_options("megatron-core-fp8"));
  const double gain_few = without.evaluate(onef1b).iteration_time.si() /
                          with.evaluate(onef1b).iteration_time.si();
  const double gain_many = many_without.evaluate(onef1b).iteration_time.si() /
                           many_with.evaluate(onef1b).iteration_time.si();
  std::printf("\nMixtral 8x7B tp1-pp4-dp16-ep8 on 64 H100s, EP overlap speedup: 8 micro-batches "
              "%.3fx, %lld micro-batches %.3fx\n",
              gain_few, static_cast<long long>(w.global_batch / 16), gain_many);
  CHECK(gain_few >= 1.0);
  CHECK(gain_many > gain_few);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("DualPipe: half the micro-batches each way, two stages a device, a smaller bubble",
          "[train]") {
  // deepseek-ai/DualPipe's step() on rank d of P (h = min(d, P - 1 - d), H = P/2): of its M
  // forwards, 2(M/2 - P + h + 1) overlapped in the main step (the middle ranks' first one
  // alone) and H - h - 1 in step 5. P 4, M 16: rank 0 (h 0) 2·5 + 1 = 11; rank 1 (h 1, a middle
  // rank) 2·6 - 1 + 0 = 11.
  const GptSpec w = test::shipped_gpt("mixtral_8x7b");
  TrainingOptions o = test::profile_options("deepseek-v3");
  REQUIRE(o.overlap_expert_comm);
  const GptTraining m = test::training_model("h100", w, 64, o);
  const Strategy dual = parse_strategy("tp1-pp4-dp16-ep8-mb1-zero1-dualpipe");
  CHECK(m.expert_paired_share(dual, 0, 16) == Approx(11.0 / 16.0));
  CHECK(m.expert_paired_share(dual, 3, 16) == Approx(11.0 / 16.0));
  CHECK(m.expert_paired_share(dual, 1, 16) == Approx(11.0 / 16.0));
  CHECK(m.expert_paired_share(dual, 0, 64) == Approx(59.0 / 64.0));  // 2·29 + 1

  // DeepSeek-V3 on 2,048 H800s as its report trained it (16 stages, ep64, ZeRO-1, its stack's
  // profile: FP8-cached activations, BF16 moments and fp32 gradients, with RMSNorm and the MLA
  // up-projections recomputed, §3.3.3, so both schedules fit 80 GB as the report's run did):
  // DualPipe against 1F1B on the same split.
  const GptSpec ds = test::shipped_gpt("deepseek_v3");
  REQUIRE(test::profile_options("deepseek-v3").check_memory);
  GptTraining v3 = test::training_model("h800", ds, 2048, std::string("deepseek-v3"));
  const TrainingResult one = v3.evaluate(
      parse_strategy("tp1-pp16-dp128-ep64-mb1-zero1-recompute=mla_up_proj+layernorm"));
  const TrainingResult two = v3.evaluate(
      parse_strategy("tp1-pp16-dp128-ep64-mb1-zero1-dualpipe-recompute=mla_up_proj+layernorm"));
  REQUIRE(one.feasible);
  REQUIRE(two.feasible);
  const auto per_gpu = [](const TrainingResult& r) { return r.tokens_per_second / 2048.0; };
  const auto bubble = [](const TrainingResult& r) {
    return r.breakdown.pipeline_bubble.si() / r.iteration_time.si();
  };
  // The report: 14.8T tokens in 2.664M H800 GPU-hours of pre-training, 1,543 tokens/s/GPU
  // over the whole run (evaluation and checkpoints included: a floor for the steady state, not
  // a measurement of it). With the shipped workload's multi-token-prediction module, as the
  // run trained: 1F1B 1,507, DualPipe 1,778 with the report's recomputation (1,523 and 1,808
  // without it, when the model held 16-bit gradients; H800 residual 0.755; the template bound to the
  // profile, its collectives NCCL's, as `pathfinder eval --software deepseek-v3` runs it).
  std::printf("\nDeepSeek-V3 on 2,048 H800s (deepseek-v3 profile): 1F1B %.0f tokens/s/GPU "
              "(bubble %.1f%%), DualPipe %.0f (bubble %.1f%%); the report's run averaged 1,543\n",
              per_gpu(one), 100 * bubble(one), per_gpu(two), 100 * bubble(two));
  CHECK(two.iteration_time < one.iteration_time);
  CHECK(per_gpu(two) > 1543.0);
  CHECK(per_gpu(two) < 1.35 * 1543.0);
  // Each device keeps both its stages: the memory of two.
  CHECK(two.memory.weights.si() > 1.9 * one.memory.weights.si());
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("multi-token prediction: one more block and head pass on the last stage, its states kept",
          "[train]") {
  // DeepSeek-V3 report §2.2: a depth-1 module is one block of the model's own kind, the shared
  // output head again and its own loss (GptSpec::mtp_depth). Llama 3 8B (dense, 32 layers) on
  // 8 A100s at 4K tokens, pp1: the step's layer compute grows by one layer's of 32, its head
  // time doubles.
  GptSpec w = test::shipped_gpt("llama3_8b");
  w.global_batch = 32;
  w.sequence = 4096;  // the module's logits and block fit 80 GB beside ZeRO-1's states
  GptSpec mtp = w;
  mtp.mtp_depth = 1;
  const Strategy s = parse_strategy("tp1-pp1-dp8-mb1-zero1");
  const TrainingResult a = test::training_model("a100", w, 8).evaluate(s);
  const TrainingResult b = test::training_model("a100", mtp, 8).evaluate(s);
  INFO(b.reason);
  REQUIRE(a.feasible);
  REQUIRE(b.feasible);
  const double compute = a.breakdown.compute.si(), head = a.breakdown.embedding_head.si();
  std::printf("\nLlama 3 8B with a multi-token-prediction module: %.3f -> %.3f s (layers %.3f -> "
              "%.3f s, embedding and head %.3f -> %.3f s)\n",
              a.iteration_time.si(), b.iteration_time.si(), compute, b.breakdown.compute.si(),
              head, b.breakdown.embedding_head.si());
  CHECK(b.breakdown.compute.si() ==  // within a kernel launch (5 us)
        Approx(compute * 33.0 / 32.0).epsilon(1e-5));
  // The embedding's lookup and gradient are small: the head's pass is most of the part, and
  // the module adds one more of it.
  CHECK(b.breakdown.embedding_head.si() > 1.8 * head);
  CHECK(b.breakdown.embedding_head.si() < 2.0 * head);
  // Model FLOPs stay the main model's (MFU as model cards count it).
  CHECK(b.model_flops.si() == a.model_flops.si());
  // Its parameters are stored and trained: one layer, the 2h -> h projection and three norms
  // more on the (only) stage, at ZeRO-1's bytes per parameter.
  const double extra = static_cast<double>(gpt_layer_parameters(w, 1) + 2 * 4096 * 4096 + 3 * 4096);
  const double before = static_cast<double>(gpt_stage_parameters(w, s, 0, LayerSplit::kEven));
  CHECK(static_cast<double>(gpt_stage_parameters(mtp, s, 0, LayerSplit::kEven)) ==
        before + extra);
  CHECK(b.memory.weights.si() == Approx(a.memory.weights.si() * (before + extra) / before));
  // With pipelines the last stage carries it, and the even split makes room: the output layer
  // and the module's block and head pass take a layer's place each (Megatron-Core's
  // account_for_loss_in_pipeline_split, MTP on the last stage), 32 + 3 = 35 places over two
  // stages: 17 layers, then 15 with the module.
  const Strategy p = parse_strategy("tp1-pp2-dp4-mb1-zero1");
  CHECK(gpt_stage_span(mtp, 2, 0, LayerSplit::kEven).count == 17);
  CHECK(gpt_stage_span(mtp, 2, 1, LayerSplit::kEven).first == 17);
  CHECK(gpt_stage_span(mtp, 2, 1, LayerSplit::kEven).count == 15);
  const double layer = static_cast<double>(gpt_layer_parameters(w, 1));
  CHECK(static_cast<double>(gpt_stage_parameters(mtp, p, 0, LayerSplit::kEven)) ==
        static_cast<double>(gpt_stage_parameters(w, p, 0, LayerSplit::kEven)) + layer);
  CHECK(static_cast<double>(gpt_stage_parameters(mtp, p, 1, LayerSplit::kEven)) ==
        static_cast<double>(gpt_stage_parameters(w, p, 1, LayerSplit::kEven)) - layer + extra);
  const TrainingResult c = test::training_model("a100", mtp, 8).evaluate(p);
  REQUIRE(c.feasible);
  REQUIRE(c.stages.size() == 2);
  // 17 layers against 15 and the module's block; two head passes against the embedding's lookup.
  CHECK(c.stages[1].compute.si() ==  // within a kernel launch (5 us)
        Approx(c.stages[0].compute.si() * 16.0 / 17.0).epsilon(1e-5));
  CHECK(c.stages[1].embedding_head.si() > 10.0 * c.stages[0].embedding_head.si());
  // Where the last stage's share of places is no more than the module's three, it keeps no
  // layer and the stages before it split the model's (Megatron-Core's DeepSeek-V3 layout gives
  // its MTP and loss chunks none): 4 layers + 3 places over 4 stages, 1 each and none, then 6
  // layers over 4 stages, 2 each and none.
  GptSpec small = mtp;
  small.layers = 4;
  CHECK(gpt_stage_span(small, 4, 2, LayerSplit::kEven).first == 3);
  CHECK(gpt_stage_span(small, 4, 2, LayerSplit::kEven).count == 1);
  CHECK(gpt_stage_span(small, 4, 3, LayerSplit::kEven).count == 0);
  small.layers = 6;
  CHECK(gpt_stage_span(small, 4, 0, LayerSplit::kEven).count == 2);
  CHECK(gpt_stage_span(small, 4, 2, LayerSplit::kEven).first == 4);
  CHECK(gpt_stage_span(small, 4, 3, LayerSplit::kEven).count == 0);
  const TrainingResult e = test::training_model("a100", small, 8).evaluate(
      parse_strategy("tp1-pp4-dp2-mb1-zero1"));
  REQUIRE(e.feasible);
  REQUIRE(e.stages.size() == 4);
  CHECK(e.stages[3].compute.si() > 0.0);  // the module's block
  CHECK(e.stages[3].compute.si() < 0.6 * e.stages[0].compute.si());
  // FSDP (ZeRO-3) gathers the module's block like a layer: still one layer's compute more.
  const Strategy z = parse_strategy("tp1-pp1-dp8-mb1-zero3");
  const TrainingResult za = test::training_model("a100", w, 8).evaluate(z);
  const TrainingResult zb = test::training_model("a100", mtp, 8).evaluate(z);
  REQUIRE(za.feasible);
  REQUIRE(zb.feasible);
  CHECK(zb.iteration_time.si() > za.iteration_time.si() * (1.0 + 1.0 / 33.0));
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("FP8 parameters: ZeRO's gather moves the linear weights at 1 byte", "[train]") {
  // Llama 3 8B (bf16), tp1 x pp1 x dp16 on two DGX H100s, ZeRO-1 with the gradients reduced
  // after the backward and the parameters gathered after the step (nothing overlapped), under
  // megatron-core-fp8: with Megatron-Core's --fp8-param-gather the layers' 32 x 218,103,808
  // linear weights are gathered in FP8, the embedding, head and norms (1.05e9) in bf16: 8.03e9
  // parameters of 2 bytes -> 1.05e9 x 2 + 6.98e9 x 1, 57% of the bytes, so the gather takes
  // about that share (ring all-gathers are bandwidth-bound at these sizes). FSDP (ZeRO-3)
  // gathers every layer at 1 byte likewise; ZeRO-0 gathers nothing and is unchanged.
  const GptSpec w = test::shipped_gpt("llama3_8b");
  TrainingOptions o = test::profile_options("megatron-core-fp8");
  o.overlap_data_parallel = false;
  o.overlap_zero_gradients = false;
  const auto data_comm = [&](bool fp8_params, const char* strategy) {
    TrainingOptions x = o;
    x.memory.quantized_parameters = fp8_params;
    x.check_memory = false;  // ZeRO-0 holds 16 bytes a parameter: timed all the same
    GptTraining m = test::training_model("h100", w, 16, x);
    const TrainingResult r = m.evaluate(parse_strategy(strategy));
    INFO(strategy << ": " << r.reason);
    REQUIRE(r.feasible);
    return r.breakdown.data_comm.si();
  };
  const char* zero1 = "tp1-pp1-dp16-mb1-zero1";
  const double bf16 = data_comm(false, zero1), fp8 = data_comm(true, zero1);
  const double linear = 32.0 * 218103808.0, total = static_cast<double>(gpt_parameters(w));
  const double share = (2.0 * (total - linear) + linear) / (2.0 * total);
  std::printf("\nZeRO-1 data communication, Llama 3 8B on 16 H100s: bf16 parameters %.1f ms, "
              "FP8 %.1f ms (gathered bytes x %.3f)\n", 1e3 * bf16, 1e3 * fp8, share);
  CHECK(share == Approx(0.565).epsilon(0.01));
  CHECK(fp8 < bf16);
  CHECK(data_comm(true, "tp1-pp1-dp16-mb1-zero3") < data_comm(false, "tp1-pp1-dp16-mb1-zero3"));
  CHECK(data_comm(true, "tp1-pp1-dp16-mb1") == data_comm(false, "tp1-pp1-dp16-mb1"));
}

}  // namespace pathfinder
