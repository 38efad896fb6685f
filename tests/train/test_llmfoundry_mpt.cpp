// [calibration] llm-foundry MPT on A100 40/80 GB and H100 (tests/data/calibration/h100/
// mosaic_llmfoundry_mpt_training_throughput.csv, from mosaicml/llm-foundry's benchmarking
// README): every row, predicted tokens/s/GPU against the published one, per row and per
// hardware table. Issue 13's goal is MAPE <= 10% for A100 and for H100, separately; this test
// reports where the model stands and fails on a regression.
//
// How a row becomes an evaluation:
//   model      MPT (llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml): 125m 12 x 768 (12
//              heads), 350m 24 x 1024 (16), 760m 24 x 1536 (12), 1b 24 x 2048 (16), 3b 32 x
//              2560 (20), 7b 32 x 4096 (32), 13b 40 x 5120 (40), 30b 48 x 7168 (56), 70b 80 x
//              8192 (64); GeLU 4h, LayerNorm, biases, tied embeddings, vocabulary 50,368; the
//              benchmark's learned position table (NumParams grows by s·h with the sequence);
//              causal flash attention, no dropout. Each row's NumParams checks the shape.
//   GPUs       templates/a100.yaml, templates/a100_40gb.yaml (the same die with HBM2 at
//              1,555 GB/s) and templates/h100.yaml
//   strategy   dp = GPUs with FSDP FULL_SHARD -> zero3 (SHARD_GRAD_OP -> zero2), micro-batch and
//              global batch as published, activation checkpointing -> recompute=full
//   software   templates/software/llm-foundry.yaml (Composer, PyTorch FSDP, MPT's Triton
//              attention of FlashAttention-1's generation, fused loss, two training-metric
//              losses); the row's MP Mode: DEFAULT reduces in fp32, PURE in bf16; amp_fp8 -> the
//              linear layers in FP8
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/graph/workload.hpp"
#include "engine/parallel/strategy_check.hpp"
#include "engine/software/software_profile.hpp"
#include "engine/train/training_model.hpp"
#include "tests/train/train_fixtures.hpp"

namespace pathfinder {
namespace {

struct Row {
  std::string section, model, gpu, precision, mixed_precision, sharding;
  int seq = 0, gpus = 0, micro = 0, global = 0;
  bool checkpointing = false;
  double tokens = 0.0;
  std::int64_t parameters = 0;
};

std::vector<Row> rows() {
  std::ifstream f(PATHFINDER_TEST_DATA "/calibration/h100/mosaic_llmfoundry_mpt_training_throughput.csv");
  REQUIRE(f.good());
  std::string line;
  std::getline(f, line);  // # source: ...
  std::getline(f, line);
  REQUIRE(line.rfind("section,Model,SeqLen (T),# GPUs,GPU,MFU,HFU,Model TFLOP,MicroBatchSize,", 0) ==
          0);
  std::vector<Row> out;
  while (std::getline(f, line)) {
    const std::vector<std::string> c = test::csv_cells(line);
    REQUIRE(c.size() == 21);
    Row r;
    r.section = c[0];
    r.model = c[1];
    r.seq = std::stoi(c[2]);
    r.gpus = std::stoi(c[3]);
    r.gpu = c[4];
    r.micro = std::stoi(c[8]);
    r.global = std::stoi(c[10]);
    r.tokens = std::stod(c[13]);
    r.precision = c[15];
    r.mixed_precision = c[16];
    r.sharding = c[17];
    r.checkpointing = c[18] == "True";
    r.parameters = std::stoll(c[20]);
    out.push_back(r);
  }
  return out;
}

// MPT's shapes by name: layers, hidden, heads.
struct Shape {
  std::int64_t layers, hidden, heads;
};
const std::map<std::string, Shape> kShapes{
    {"125m", {12, 768, 12}},   {"350m", {24, 1024, 16}}, {"760m", {24, 1536, 12}},
    {"1b", {24, 2048, 16}},    {"3b", {32, 2560, 20}},   {"7b", {32, 4096, 32}},
    {"13b", {40, 5120, 40}},   {"30b", {48, 7168, 56}},  {"70b", {80, 8192, 64}}};

GptSpec mpt(const Row& r) {
  const Shape& s = kShapes.at(r.model);
  GptSpec g;
  g.layers = s.layers;
  g.hidden = s.hidden;
  g.heads = s.heads;
  g.ffn = 4 * s.hidden;
  g.sequence = r.seq;
  g.vocabulary = 50368;
  g.micro_batch = r.micro;
  g.global_batch = r.global;
  g.precision = DataType::kBf16;
  g.optimizer = Optimizer::kAdam;
  g.dropout = false;
  g.attention = AttentionKind::kFlash;
  return g;
}

}  // namespace

TEST_CASE("[calibration] llm-foundry MPT with FSDP on A100 and H100: tokens/s/GPU", "[train]") {
  const std::vector<Row> all = rows();
  REQUIRE(all.size() == 216);
  const TrainingOptions base = [] {
    TrainingOptions o = test::profile_options("llm-foundry");
    o.check_memory = false;  // every row ran: the published micro-batches fit
    return o;
  }();
  std::printf("\n%-10s %-5s %6s %5s %-34s %9s %9s %7s\n", "llm-foundry", "model", "seq", "gpus",
              "strategy", "measured", "predicted", "error");
  std::map<std::string, std::pair<double, int>> by_gpu;
  std::map<std::string, double> bias_by_gpu;
  int n = 0;
  for (const Row& r : all) {
    const GptSpec w = mpt(r);
    // The published parameter count fixes the shape (within one hidden row: the 70B's 5h).
    CHECK(std::abs(static_cast<double>(gpt_parameters(w) - r.parameters)) <= 8.0 * static_cast<double>(w.hidden));
    std::string text = "tp1-pp1-dp" + std::to_string(r.gpus) + "-mb" + std::to_string(r.micro) +
                       (r.sharding == "FULL_SHARD" ? "-zero3" : "-zero2");
    if (r.checkpointing) text += "-recompute=full";
    const Strategy s = parse_strategy(text);
    REQUIRE(check_strategy(s, w, r.gpus).empty());
    TrainingOptions o = base;
    o.quantized_linear = r.precision == "amp_fp8";
    // The row's FSDP mixed precision: DEFAULT reduce-scatters the gradients in fp32 (Composer's
    // reduce_dtype torch.float32, the profile's), PURE in bf16.
    if (r.mixed_precision == "PURE") o.gradient_reduction = GradientReduction::kWorkload;
    REQUIRE((r.mixed_precision == "PURE" || r.mixed_precision == "DEFAULT"));
    const test::ShippedSystem& sys =
        test::shipped_system(r.gpu == "h100_80gb"   ? "h100"
                             : r.gpu == "a100_40gb" ? "a100_40gb"
                                                    : "a100",
                             "llm-foundry");
    const TrainingResult t = evaluate_training(sys.spec, sys.arch, w, s, o);
    REQUIRE(t.feasible);
    const double pred = t.tokens_per_second / r.gpus;
    const double e = (pred - r.tokens) / r.tokens;
    const std::string gpu = r.gpu.substr(0, 4);  // a100 or h100
    by_gpu[gpu].first += std::abs(e);
    ++by_gpu[gpu].second;
    bias_by_gpu[gpu] += e;
    ++n;
    std::printf("%-10s %-5s %6d %5d %-34s %9.0f %9.0f %+6.0f%%\n", r.gpu.c_str(), r.model.c_str(),
                r.seq, r.gpus, (text + (o.quantized_linear ? " fp8" : "")).c_str(), r.tokens, pred,
                100 * e);
  }
  std::printf("llm-foundry (llm-foundry profile), %d rows:", n);
  for (const auto& [gpu, v] : by_gpu) {
    std::printf("  %s MAPE %.1f%% bias %+.1f%% (%d)", gpu.c_str(), 100 * v.first / v.second,
                100 * bias_by_gpu[gpu] / v.second, v.second);
  }
  std::printf(" (goal MAPE <= 10%% each)\n");
  CHECK(n == 216);
  CHECK(by_gpu.size() == 2);
  // Measured today (bounds just above, so a regression fails): A100 MAPE 5.3% (bias +3.1%),
  // H100 7.4% (+7.4%) with NCCL's rings at NCCL's own protocol latencies (collectives.cpp;
  // 5.2% (+3.0%) and 7.3% (+7.3%) at the links' latencies), at the H100's residual refitted to 0.755 (the four sets' mean at zero
  // once the copy engines' contention and torchtitan's sequence parallelism moved two of
  // them); H100 8.2% (+8.2%) at 0.765, since a ring across nodes costs the compute beside it main memory at its
  // own rate (GptTraining::contention: on eight rails 8 x 47 GB/s, the H100's NVLink rate; one
  // rail, a tenth): the 13B row without checkpointing on 16-64 H100s from +32% to +4..+7%,
  // as on one node (+7%), the 1B-7B rows on 128-512 GPUs from +14..+27% to +5..+19%; 6.5%
  // (+6.4%) at the residual 0.745, refitted to 0.765 with it (the four sets' mean at zero).
  // A100 6.1% (bias +4.1%), H100 10.2% (+10.2%) since NVLink collectives cost the compute beside them main-memory
  // bandwidth in proportion to the link's share of it (memory_contention: the A100's
  // measured 0.76 s a second there, 1.00 on the 40 GB board's slower HBM2, 0.73 on the H100):
  // FSDP's gathers and fp32 reduce-scatters on one node's NVLink beside every layer: the 13B
  // row without checkpointing on 8 H100s (mb2) from +33% to +7%, while the same row on 16-64
  // GPUs stays +32% (the group crosses InfiniBand: only the SMs NCCL holds count, and the
  // runs measured the same rate as on one node); with the H100's residual refitted with it
  // (0.745; 12.5%, +12.5% at 0.77).
  // H100 14.7% (+14.7%, every row optimistic) since the Triton kernel of FlashAttention-1's
  // generation runs at half the warp-level MMA ceiling (h100.yaml warp_mma_peak_fraction
  // 0.667, "about 2/3", FA-3 §1), not half FlashAttention-2's own Hopper fit (0.463): the
  // 32K-64K rows from -20..-24% to -1..+5% (+2..+8% before the 0.745 refit), the attention-bound rows as close as the A100's
  // of the same image are; the 12.4% before was those rows' pessimism cancelling the short
  // ones' optimism. What stays (means, 80 GB boards): H100 +5% with activation
  // checkpointing, +13% without; A100 -3% and +5%: the same 8-point gap on both, not
  // identified, and the H100's +8% over the A100 at each.
  // H100 12.4% (+3.8%) since FlashAttention-1-era causal forwards pay their ramp of tiles' tail
  // (kernel_timer.cpp; A100 6.4%, +4.5%, H100 12.5%, +4.0% before); H100 12.5% (+4.0%) since
  // the H100's training residual is its own fit (h100.yaml
  // core.sustained_fraction 0.77, this set among the four it zeroes the mean signed error of);
  // H100 14.1% (+8.3%) since warp-MMA attention's backward is fitted to FlashAttention-2's
  // measured one (h100.yaml warp_mma_backward_fraction; 14.2%, +5.3% before: the long
  // sequences' pessimism falls, the short ones' optimism grows); since a job waits for its slowest device (core.device_variation; 6.6%,
  // +4.8% and 14.8%, +5.9% before); A100 7.4% before FSDP's NVLink collectives cost the compute beside
  // them a100.yaml's measured contention (0.76 a second, not the SMs' 0.17); at the residual
  // 0.856 (before Megatron's backward overlap refitted it to 0.821) A100 9.4% (bias +8.9%),
  // H100 15.9% (+8.7%); A100 11.7% with the 40 GB rows on the 80 GB template (HBM2e at
  // 2,039 GB/s; the published 40 GB rows run 5-7% below the 80 GB ones at the same shape),
  // 13.1% and 18.3% before the board's power limiter and FSDP's collectives holding SMs
  // beside the layers' compute (collective_sms). With the stack as the benchmarks ran it
  // (llm-foundry.yaml): MPT's
  // Triton attention of FlashAttention-1's generation at half FlashAttention-2's rate (29.4%
  // and 32.0% with FlashAttention-2, fsdp.yaml's), Composer's two training-metric
  // cross-entropies (17.3% and 19.6% without), MPT's fused loss (10.2% and 16.5% with fp32
  // passes instead), the row's own FSDP mixed precision (DEFAULT reduces in fp32). Before the
  // profile, every row was optimistic (26.8% and 30.9%). Now the H100 errors fall with the
  // sequence: +17..+21% (mean) at 512-2,048 tokens, -20..-25% at 32,768-65,536 (at half
  // FlashAttention-2's Hopper fraction, before the ceiling above). Rows without activation checkpointing are the worst (13B on H100, mb2: +40-46%, where
  // the same model with checkpointing and mb16 is near +10%): near-full memory and the caching
  // allocator's retries are not modelled.
  CHECK(by_gpu["a100"].first / by_gpu["a100"].second <= 0.055);
  CHECK(by_gpu["h100"].first / by_gpu["h100"].second <= 0.08);
  CHECK(bias_by_gpu["a100"] > 0.0);  // optimistic, as every row today
}

}  // namespace pathfinder
