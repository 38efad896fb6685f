// [calibration] NeMo 24.07 on DGX H100, FP8 (tests/data/calibration/h100/
// nemo_2407_h100_perf_summary.csv, from the NeMo docs' performance summary): every pre-training
// row the model can express, predicted tokens/s/GPU against the published one, per row and per
// model family. Issue 13's goal is MAPE <= 8%; this test reports where the model stands and
// fails on a regression. A second case times the file's long-input-sequence rows (NeMo
// 24.03.01: Llama 2 7B with context parallelism, 4K to 1M tokens), a third its fine-tuning
// rows (SFT and LoRA on packed SQuAD; their configuration is described there).
//
// How a row becomes an evaluation:
//   rows       Pretraining, the newest published value of each (model, GPUs, parallelism)
//              configuration (the summary was revised Aug-Dec 2024, e.g. after a vboost update)
//   models     the NeMo-Framework-Launcher configs (conf/training/gpt3/{5b,20b,175b}.yaml,
//              llama/llama2_*.yaml, nemotron/nemotron_{8b,22b,340b}.yaml), from the shipped
//              workloads with their shapes set:
//                GPT-3     gpt3_175b.yaml: 5B 24 x 4096 (32 heads), 20B 44 x 6144 (48), 175B
//                          96 x 12288 (96); FFN 4h, sequence 2048, GPT-2 BPE vocabulary 50,257
//                          padded to a multiple of 128 x tp (make_vocab_size_divisible_by),
//                          learned positions, LayerNorm, GeLU, biases, dropout 0.1
//                Llama 2   llama3_8b.yaml: 7B 32 x 4096 (32 heads, FFN 11008), 13B 40 x 5120
//                          (40, 13824), 70B 80 x 8192 (64 heads, 8 KV, 28672); vocabulary 32,000,
//                          sequence 4096, no dropout
//                Llama 3   llama3_8b.yaml as shipped; 70B 80 x 8192 (64 heads, 8 KV, 28672),
//                          vocabulary 128,256, sequence 8192, context parallel 2
//                Nemotron  llama3_8b.yaml: 8B 32 x 4096 (32 heads, FFN 16384), 22B 40 x 6144 (48,
//                          24576), 340B 96 x 18432 (96 heads, 8 KV, 73728); vocabulary 256,000,
//                          sequence 4096, rotary, no biases, untied; squared-ReLU MLP (one
//                          matrix in, one element-wise op: timed as GeLU, mlp gelu)
//   GPUs       templates/h100.yaml (DGX H100: NVSwitch, 8 x 400 Gb/s InfiniBand per node)
//   strategy   tpN-ppN-dpN(-cpN)-mbN (-interleaved-vN when VP > 1), sequence parallelism with tp > 1,
//              the distributed optimizer (zero1), no recomputation (the configs' null
//              activations_checkpoint_granularity)
//   software   templates/software/nemo-fp8.yaml (FP8 linear layers, userbuffer TP overlap,
//              overlapped gradient reduce-scatter)
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/graph/workload_loader.hpp"
#include "engine/parallel/strategy_check.hpp"
#include "engine/software/software_profile.hpp"
#include "engine/train/training_model.hpp"
#include "tests/train/train_fixtures.hpp"

namespace pathfinder {
namespace {

struct Row {
  std::string date, model;
  int gpus = 0, gbs = 0, mbs = 0, seq = 0, tp = 1, pp = 1, cp = 1, vp = 1;
  double tokens = 0.0;
};


// The cells of every row of the file's `section`, the header checked.
std::vector<std::vector<std::string>> section_cells(const std::string& section) {
  std::ifstream f(PATHFINDER_TEST_DATA "/calibration/h100/nemo_2407_h100_perf_summary.csv");
  REQUIRE(f.good());
  std::string line;
  std::getline(f, line);  // # source: ...
  std::getline(f, line);
  REQUIRE(line.rfind("commit,date,section,container,system,Model,Task,Sequence Length (K),#-GPUs,"
                     "GBS,MBS,Sequence Length,Packed Sequence Length,TP,PP,CP,VP,DP,",
                     0) == 0);
  std::vector<std::vector<std::string>> out;
  while (std::getline(f, line)) {
    std::vector<std::string> c = test::csv_cells(line);
    REQUIRE(c.size() >= 20);
    if (c[2] == section) out.push_back(std::move(c));
  }
  return out;
}

// One row's configuration (model and sequence given: the long-sequence rows name neither).
Row row_of(const std::vector<std::string>& c, const std::string& model, int seq) {
  const auto num = [&](std::size_t i) { return c[i].empty() ? 1 : std::stoi(c[i]); };
  Row r;
  r.date = c[1];
  r.model = model;
  r.gpus = num(8);
  r.gbs = num(9);
  r.mbs = num(10);
  r.seq = seq;
  r.tp = num(13);
  r.pp = num(14);
  r.cp = num(15);
  r.vp = num(16);
  r.tokens = std::stod(c[18]);
  return r;
}

// The newest row of each pre-training configuration, in the file's order of first appearance.
std::vector<Row> pretraining_rows() {
  std::vector<std::string> order;
  std::map<std::string, Row> newest;
  for (const auto& c : section_cells("Pretraining")) {
    const std::string key = c[5] + "/" + c[8] + "/" + c[13] + "-" + c[14] + "-" + c[15] + "-" +
                            c[16] + "-" + c[10] + "-" + c[9];
    if (!newest.count(key)) order.push_back(key);
    newest[key] = row_of(c, c[5], std::stoi(c[11]));  // dates ascend through the file
  }
  std::vector<Row> out;
  for (const std::string& k : order) out.push_back(newest[k]);
  return out;
}

// The long-input-sequence rows (NeMo 24.03.01): the docs' "Long Sequence Performance" table,
// "the pre-training performance of the LLAMA2-7B with CP (context parallelism)" in FP8; the
// CSV leaves the model's name empty and gives the sequence in K tokens.
std::vector<Row> long_sequence_rows() {
  std::vector<Row> out;
  for (const auto& c : section_cells("Long Input Sequences")) {
    out.push_back(row_of(c, "LLAMA2-7B", std::stoi(c[7]) * 1024));
  }
  return out;
}

// The newest row of each fine-tuning configuration (task, model, GPUs, parallelism), in the
// file's order of first appearance; the sequence is the packed one.
std::vector<std::pair<std::string, Row>> finetuning_rows() {
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::string, Row>> newest;
  for (const auto& c : section_cells("Finetuning")) {
    const std::string key = c[6] + "/" + c[5] + "/" + c[8] + "-" + c[13] + "-" + c[14];
    if (!newest.count(key)) order.push_back(key);
    newest[key] = {c[6], row_of(c, c[5], std::stoi(c[12]))};
  }
  std::vector<std::pair<std::string, Row>> out;
  for (const std::string& k : order) out.push_back(newest[k]);
  return out;
}

// The published parallelism as a strategy: dp from the GPUs, the distributed optimizer
// (zero1), sequence parallelism with tp > 1, interleaving with VP > 1.
std::string strategy_text(const Row& r) {
  const int dp = r.gpus / (r.tp * r.pp * r.cp);
  REQUIRE(dp * r.tp * r.pp * r.cp == r.gpus);
  std::string text = "tp" + std::to_string(r.tp) + "-pp" + std::to_string(r.pp) + "-dp" +
                     std::to_string(dp) + (r.cp > 1 ? "-cp" + std::to_string(r.cp) : "") +
                     "-mb" + std::to_string(r.mbs) + "-zero1";
  if (r.tp > 1) text += "-sp";
  if (r.vp > 1) text += "-interleaved-v" + std::to_string(r.vp);
  return text;
}

// The row's model as overrides of a shipped workload (see the header).
std::pair<std::string, std::vector<ConfigOverride>> model_of(const Row& r) {
  std::vector<std::pair<std::string, std::string>> kv;
  std::string base = "llama3_8b";
  const auto shape = [&](int layers, int hidden, int heads, int kv_heads, int ffn) {
    kv.insert(kv.end(), {{"layers", std::to_string(layers)},
                         {"hidden", std::to_string(hidden)},
                         {"heads", std::to_string(heads)},
                         {"kv_heads", std::to_string(kv_heads)},
                         {"ffn", std::to_string(ffn)}});
  };
  if (r.model.rfind("GPT3", 0) == 0) {
    base = "gpt3_175b";
    if (r.model == "GPT3-5B") shape(24, 4096, 32, 32, 16384);
    else if (r.model == "GPT3-20B") shape(44, 6144, 48, 48, 24576);
    const int pad = 128 * r.tp;
    kv.insert(kv.end(), {{"vocabulary", std::to_string((50257 + pad - 1) / pad * pad)},
                         {"attention", "flash"}, {"causal", "true"}, {"precision", "bf16"}});
  } else if (r.model.rfind("LLAMA2", 0) == 0) {
    if (r.model == "LLAMA2-7B") shape(32, 4096, 32, 32, 11008);
    else if (r.model == "LLAMA2-13B") shape(40, 5120, 40, 40, 13824);
    else shape(80, 8192, 64, 8, 28672);
    kv.emplace_back("vocabulary", "32000");
  } else if (r.model.rfind("LLAMA3", 0) == 0) {  // llama3_8b.yaml, or 70B's shapes
    if (r.model == "LLAMA3-70B") shape(80, 8192, 64, 8, 28672);
  } else {  // Nemotron
    if (r.model == "Nemotron-8B") shape(32, 4096, 32, 32, 16384);
    else if (r.model == "Nemotron-22B") shape(40, 6144, 48, 48, 24576);
    else shape(96, 18432, 96, 8, 73728);
    kv.insert(kv.end(), {{"vocabulary", "256000"}, {"mlp", "gelu"}});
  }
  kv.insert(kv.end(), {{"sequence", std::to_string(r.seq)},
                       {"micro_batch", std::to_string(r.mbs)},
                       {"global_batch", std::to_string(r.gbs)}});
  std::vector<ConfigOverride> sets;
  for (const auto& [k, v] : kv) sets.push_back({k, v, k, std::nullopt});
  return {base, sets};
}

// The gradient reduction each row's published script asks for: NVIDIA's H100 FP8 scripts for
// Llama 2 7B and Nemotron 8B/22B leave the optimizer's grad_sync_dtype at its fp32 default
// (NeMo-Framework-Launcher examples/training/llama/h100/llama2_7b_fp8.sh,
// nemotron/h100/nemotron_{8b,22b}_fp8.sh); the others set bf16, as nemo-fp8.yaml does.
TrainingOptions row_options(TrainingOptions o, const Row& r) {
  if (r.model == "LLAMA2-7B" || r.model == "Nemotron-8B" || r.model == "Nemotron-22B") {
    o.gradient_reduction = GradientReduction::kFp32IfBf16;
  }
  return o;
}

}  // namespace

TEST_CASE("[calibration] NeMo 24.07 FP8 pre-training on DGX H100: tokens/s/GPU", "[train]") {
  const std::vector<Row> rows = pretraining_rows();
  REQUIRE(rows.size() == 12);  // 5B, 20B, 175B x2, Llama 2 x3, Nemotron x3, Llama 3 x2
  const test::ShippedSystem& sys = test::shipped_system("h100", "nemo-fp8");
  TrainingOptions o = test::profile_options("nemo-fp8");
  std::printf("\n%-14s %5s %-40s %9s %9s %7s\n", "NeMo 24.07", "gpus", "strategy", "measured",
              "predicted", "error");
  double sum = 0.0, signed_sum = 0.0;
  int n = 0;
  std::map<std::string, std::pair<double, int>> by_family;
  for (const Row& r : rows) {
    const auto [base, sets] = model_of(r);
    const WorkloadSpec w = load_workload(test::source_path("studies/workloads/" + base + ".yaml"), sets).spec;
    const std::string text = strategy_text(r);
    const Strategy s = parse_strategy(text);
    REQUIRE(check_strategy(s, w, r.gpus).empty());
    const TrainingResult t = evaluate_training(sys.spec, sys.arch, w, s, row_options(o, r));
    INFO(r.model << " " << text << ": " << t.reason);
    CHECK(t.feasible);  // every published configuration fits in 80 GB
    if (!t.feasible) continue;
    const double pred = t.tokens_per_second / r.gpus;
    const double e = (pred - r.tokens) / r.tokens;
    sum += std::abs(e);
    signed_sum += e;
    ++n;
    const std::string family = r.model.substr(0, r.model.find('-'));
    by_family[family].first += std::abs(e);
    ++by_family[family].second;
    std::printf("%-14s %5d %-40s %9.0f %9.0f %+6.1f%%\n", r.model.c_str(), r.gpus, text.c_str(),
                r.tokens, pred, 100 * e);
  }
  std::printf("MAPE by family:");
  for (const auto& [family, v] : by_family) {
    std::printf("  %s %.1f%% (%d)", family.c_str(), 100 * v.first / v.second, v.second);
  }
  REQUIRE(n > 0);
  const double mape = sum / n;
  std::printf("\nNeMo 24.07 (nemo-fp8 profile): %d rows modelled, MAPE %.1f%%, bias %+.1f%% "
              "(goal MAPE <= 8%%)\n",
              n, 100 * mape, 100 * signed_sum / n);
  CHECK(n == 12);
  // Measured today (bounds just above, so a regression fails; the goal is the 8%):
  //   MAPE 2.1%, bias +0.2% (every row within 6%: GPT-3 175B on 512 GPUs -5.7%, GPT-3 5B
  //   +4.8%, Llama 3 8B +4.6%) with NCCL's rings at NCCL's own protocol latencies
  //   (collectives.cpp).
  //   MAPE 2.1%, bias +0.6% (every row within 6%: GPT-3 175B on 512 GPUs -5.2%, GPT-3 5B
  //   +4.8%, Llama 3 8B +4.6%) since Transformer Engine's attention is cuDNN's, whose causal
  //   kernels run below FlashAttention-3's (nemo-fp8.yaml kernels.attention: cudnn, h100.yaml
  //   cudnn_causal_fraction; cuDNN 9.1's own benchmark).
  //   MAPE 2.4%, bias +1.3% (every row within 6%: Llama 3 8B +5.7%, GPT-3 5B +5.6%, GPT-3
  //   175B on 512 GPUs -4.9%) since the rows whose scripts say so reduce gradients in bf16
  //   (row_options; GPT-3 20B -1.8% -> +1.1%).
  //   MAPE 2.3%, bias +0.4% (every row within 6%: GPT-3 175B on 512 GPUs -5.9%, Llama 3 8B
  //   +4.9%) since NeMo's FP8 recipe gathers the linear layers' weights in FP8
  //   (nemo-fp8.yaml precision.parameters: the distributed optimizer's gathers 43% lighter;
  //   GPT-3 20B -5.3% -> -1.8%) and Transformer Engine's FP8 inputs and weight copies are
  //   counted (Nemotron-340B needs 85.3 GB -> 80.4 GB a device; 90.8 GB with the copies beside
  //   16-bit parameters, when the run fit in 80).
  //   MAPE 2.6%, bias -0.5% (every row within 7%: GPT-3 175B on 512 GPUs -6.4%, GPT-3 20B
  //   -5.3%) since the userbuffers' copy engines cost the compute beside them half NVLink's
  //   memory contention (the chunked tensor-parallel rows 1-4 points slower; Nemotron-340B
  //   tp8 +0.4% -> -3.5%) and the residual was refitted with it and torchtitan's sequence
  //   parallelism (0.755; MAPE 2.6%, bias +0.1% at 0.765).
  //   MAPE 2.5%, bias +1.1% at the residual refitted to 0.765 once rings across nodes cost the
  //   compute beside them main memory at their own rate (the distributed optimizer's
  //   reductions across nodes beside the backward: MAPE 2.3%, bias 0.0% at 0.745 with it).
  //   MAPE 2.2%, bias +0.6% (every row within 5%: GPT-3 5B +4.7%, GPT-3 175B on 512 GPUs
  //   -4.9%) since NVLink collectives cost the compute beside them main-memory bandwidth on
  //   the H100 as on the A100 (h100.yaml memory_contention; the distributed optimizer's
  //   reduce-scatters and gathers within a node) with the residual refitted to 0.745; MAPE
  //   2.7%, bias +2.0% with it at 0.77.
  //   MAPE 2.9%, bias +2.2% since the H100's training residual is its own fit (h100.yaml
  //   core.sustained_fraction 0.77, fitted to the four GPU-bound H100 sets' mean signed error,
  //   this one among them; the A100's 0.821 before): ten rows optimistic (+0.2..+6.4%), GPT-3 20B
  //   -0.6% and GPT-3 175B on 512 GPUs -3.5%. MAPE 5.2%, bias +5.1% since the fused attention overlaps its softmax with the products
  //   at its kernel-benchmark fit (h100.yaml attention_overlap, attention_fraction); MAPE 5.1%,
  //   bias +5.0% since sequence parallelism's gathers carry FP8 rows as Transformer
  //   Engine sends them (nemo-fp8.yaml precision.tensor_parallel_gather; the sp rows 0.2-1.7%
  //   faster); MAPE 5.0%, bias +4.7% since a job waits for its slowest device (core.device_variation:
  //   64 to 512 GPUs 1.3-2.3% slower than 8; 5.6%, +5.6% before; 7.4% at core.sustained_fraction 0.856, before the refit with
  //   Megatron-LM's backward overlap; 8.8% before the collectives overlapped with compute held SMs
  //   beside it, software profile collective_sms, NCCL's 16; 8.5% before the board's power
  //   limiter slowed only the kernels
  //   drawing more than 700 W, FP8 GEMMs to the measured FP8 benchmark-loop rate through their
  //   own energy per FLOP, engine/perf/power_limiter.hpp; 8.6% before the second
  //   bias-dropout-add's mask; 8.9% before the embedding's gradient zeroed and added into
  //   main_grad each micro-batch; 9.0% before NCCL's algorithms, nemo-fp8.yaml collectives: nccl;
  //   9.2% before the weight gradients accumulated into the fp32
  //   main_grad by their GEMMs, nemo-fp8.yaml kernels.wgrad_accumulation: 175B at micro-batch
  //   1, whose 2,048-token weight-gradient GEMMs then move as many bytes as they compute,
  //   +16.6% -> +15.5%; 9.4% before context parallelism's per-step merges; 15.5% before
  //   the backward GEMMs' promoted FP8 accumulation,
  //   Transformer Engine's _2X_ACC_DGRAD/_2X_ACC_WGRAD at h100.yaml's measured 0.87; 19.3%
  //   before the attention backward's pre/postprocess passes and h100.yaml's
  //   attention_backward_fraction, FlashAttention-3 kernel benchmarks; 19.8% before the fp32
  //   gradient reduction of Megatron's bf16 rule): every row still optimistic (+4% to +16%),
  //   alike across GPT-3, Llama 2, Llama 3 (context parallel 2) and Nemotron, 8 to 512 GPUs,
  //   tp 1 to 8: a device-level shortfall, not a parallelism one.
  //   (Before FP8's own sustained rate, the A100's training residual and the fp32 loss:
  //   +28.6%, +34%, +22.9%.)
  CHECK(mape <= 0.08);
  CHECK(signed_sum / n <= 0.10);
  // No systematic pessimism: a change that takes the mean below -2% must say why here.
  CHECK(signed_sum / n >= -0.02);
}

TEST_CASE("[calibration] NeMo 24.03 Llama 2 7B with context parallelism, 4K to 1M tokens",
          "[train]") {
  // The same profile and template as the pre-training rows (nemo-fp8, h100.yaml): sequences of
  // 4K to 1,024K tokens on as many GPUs (tp, cp and dp as published, pp 2 at 8K), global batch
  // shrinking with the sequence, so that attention's s^2 work goes from ~10% of a step to all
  // of it.
  const std::vector<Row> rows = long_sequence_rows();
  REQUIRE(rows.size() == 9);
  const test::ShippedSystem& sys = test::shipped_system("h100", "nemo-fp8");
  const TrainingOptions o = test::profile_options("nemo-fp8");
  std::printf("\n%-10s %5s %-36s %9s %9s %7s\n", "NeMo 24.03", "gpus", "strategy", "measured",
              "predicted", "error");
  std::vector<double> errors;
  for (const Row& r : rows) {
    const auto [base, sets] = model_of(r);
    const WorkloadSpec w =
        load_workload(test::source_path("studies/workloads/" + base + ".yaml"), sets).spec;
    const std::string text = strategy_text(r);
    const Strategy s = parse_strategy(text);
    REQUIRE(check_strategy(s, w, r.gpus).empty());
    const TrainingResult t = evaluate_training(sys.spec, sys.arch, w, s, o);
    INFO(text << ": " << t.reason);
    REQUIRE(t.feasible);  // every published configuration fits in 80 GB
    const double pred = t.tokens_per_second / r.gpus;
    errors.push_back((pred - r.tokens) / r.tokens);
    std::printf("%5dK %9d %-36s %9.0f %9.0f %+6.1f%%\n", r.seq / 1024, r.gpus, text.c_str(),
                r.tokens, pred, 100 * errors.back());
  }
  double mape = 0.0;
  for (double e : errors) mape += std::abs(e);
  mape /= static_cast<double>(errors.size());
  std::printf("NeMo 24.03 long sequences (nemo-fp8 profile): MAPE %.1f%%, 4K %+.1f%%, 1M %+.1f%%\n",
              100 * mape, 100 * errors.front(), 100 * errors.back());
  // Measured today (bounds just above, so a regression fails): MAPE 17.5%, every row
  // optimistic and more so as attention takes over: +3.5% at 4K, +8.8% at 16K, +24.4% at
  // 128K, +29.5% at 1M (17.6%, +9.1%, +24.5%, +29.6% before NCCL's rings took NCCL's own protocol
  // latencies, collectives.cpp), since the kernel is cuDNN's (nemo-fp8.yaml kernels.attention: cudnn):
  // its causal kernels at cuDNN 9.1's measured share of the full-mask rate
  // (h100.yaml cudnn_causal_fraction), which under context parallelism only the diagonal
  // ring step pays (1/cp of the work: the 1M row's cp 32 barely moves; 19.8%, +5.0%, +13.3%,
  // +26.7%, +29.9% before). 19.7%, +4.6% at 4K, +29.8% at 1M (19.5%, +29.6%
  // before the FP8 parameter gathers of nemo-fp8.yaml) at the H100's
  // residual 0.755 (h100.yaml, refitted with the copy engines' contention; these rows are
  // not among the four it is fitted to). 21.3%, +5.3%, +14.8% at 16K, +28.7% at 128K, +31.5%
  // at 0.765. 19.0%, +3.9%, +13.0%, +26.0%, +28.5% at 0.745; 21.9%, +5.6%, +15.3%, +29.4%, +32.2% at 0.77 (27.5%, +8.2%, +19.6%,
  // +36.2%, +39.7% at the A100's 0.821), since the native kernel overlaps its softmax with the products and its
  // main loop is fitted to FlashAttention-3's kernel benchmarks (h100.yaml attention_overlap,
  // attention_fraction: forward 0..+8% of them, -3..-11% before; 25.8%, +7.9%, +18.6%,
  // +34.0%, +37.1% before). What the rows measured is slower than FA-3: the kernel of NeMo
  // 24.03's Transformer Engine on Hopper was cuDNN's (TE selects FusedAttention on sm90),
  // whose mid-2024 release measured 1.83x FlashAttention-2 forward and 1.35x backward on one
  // small shape (pytorch/pytorch PR 128888) where the model's FA-3-class kernel is 1.94x and
  // 1.68x: a backward ~20% slower than FA-3's explains about half of the 1M row's gap; no
  // long-sequence measurement of that kernel is at hand, so none is modelled.
  // (25.0%, +7.9%, +17.0%, +32.7%, +36.7% before the sp rows' gathers
  // carried FP8 rows, nemo-fp8.yaml tensor_parallel_gather; 26.5%, +7.4%, +17.5%, +34.8%,
  // +40.2% before a job waited for its
  // slowest device, core.device_variation) (318 tokens/s/GPU measured: ~1.0 PFLOP of causal attention and dense
  // work a token, ~320 TFLOP/s). The profile's default attention is a kernel on the native
  // matrix instructions at FlashAttention-3's measured rates (kernels.attention: fused); with
  // FlashAttention-2's (flash2) the rows are -5.8% at 4K, -14.4% at 16K, -23.7% at 128K and
  // -26.1% at 1M: the measured kernel lies between, as Transformer Engine's cuDNN fused
  // attention of early 2024 would. Which kernel NeMo 24.03's context parallelism ran is not
  // recorded; nothing is refitted to these rows.
  CHECK(mape <= 0.22);
  CHECK(errors.front() <= 0.06);
  CHECK(errors.back() <= 0.32);
  for (std::size_t i = 1; i < errors.size(); ++i) {
    CHECK(errors[i] > 0.0);  // optimistic everywhere: a change that flips a row says why here
  }
}

TEST_CASE("[calibration] NeMo 24.07 FP8 fine-tuning on DGX H100: SFT and LoRA, packed SQuAD",
          "[train]") {
  // "For fine-tuning, we use SQuAD-v1.1 dataset, and the inputs are packed to 4096 tokens"
  // (the summary). The configurations are NeMo-Framework-Launcher's conf/fine_tuning/llama/
  // squad.yaml (SFT) and conf/peft/llama/squad.yaml (LoRA) with the table's GPUs, batch and
  // parallelism:
  //   both   sequence_parallel False (so no userbuffer overlap of the tensor group's
  //          all-reduces), no recomputation, megatron_amp_O2, FP8 linear layers (the table)
  //   SFT    hidden, attention and FFN dropout 0.1; distributed_fused_adam without
  //          overlap_grad_sync (NeMo's default False): the distributed optimizer (zero1),
  //          gradients reduced after the backward pass
  //   LoRA   dropout 0; lora_tuning adapter_dim 32 on NeMo's default target, attention_qkv;
  //          base weights, embedding and head frozen; fused_adam (zero0)
  //   data   SQuAD v1.1 examples (context, question, answer and the template's separators)
  //          average roughly 200 Llama tokens [R: our estimate, not a published count]; as
  //          documents of 200 tokens their attention is ~0.3% of a step's work, so any value
  //          from 100 to 400 moves a row by under 1%.
  const auto rows = finetuning_rows();
  REQUIRE(rows.size() == 6);  // SFT and LoRA, Llama 2 7B, 13B, 70B
  const test::ShippedSystem& sys = test::shipped_system("h100", "nemo-fp8");
  TrainingOptions o = test::profile_options("nemo-fp8");
  o.overlap_data_parallel = false;
  o.overlap_zero_gradients = false;
  // The launcher's Apex optimizer keeps 16-bit parameters (no fp8_params in squad.yaml, and
  // NeMo 1's default is off): the FP8 weights only Transformer Engine's copies.
  o.memory.quantized_parameters = false;
  // fused_adam (the PEFT script drops grad_sync_dtype): the fp32 main gradients all-reduced.
  o.gradient_reduction = GradientReduction::kFp32IfBf16;
  o.tensor_comm_chunked = false;
  o.tensor_comm_overlap = 0.0;
  std::printf("\n%-14s %-5s %5s %-28s %9s %9s %7s\n", "NeMo 24.07", "task", "gpus", "strategy",
              "measured", "predicted", "error");
  std::map<std::string, std::pair<double, int>> by_task;
  double sum = 0.0, signed_sum = 0.0;
  int over_memory = 0;
  for (const auto& [task, r] : rows) {
    auto [base, sets] = model_of(r);
    const bool lora = task == "LoRA";
    std::vector<std::pair<std::string, std::string>> kv = {
        {"document", "200"}, {"dropout", lora ? "false" : "true"}};
    if (lora) kv.insert(kv.end(), {{"lora_rank", "32"}, {"lora_targets", "qkv"}});
    for (const auto& [k, v] : kv) sets.push_back({k, v, k, std::nullopt});
    const WorkloadSpec w =
        load_workload(test::source_path("studies/workloads/" + base + ".yaml"), sets).spec;
    const int dp = r.gpus / (r.tp * r.pp);
    const std::string text = "tp" + std::to_string(r.tp) + "-pp" + std::to_string(r.pp) + "-dp" +
                             std::to_string(dp) + "-mb" + std::to_string(r.mbs) +
                             (lora ? "-zero0" : "-zero1");
    const Strategy s = parse_strategy(text);
    REQUIRE(check_strategy(s, w, r.gpus).empty());
    TrainingResult t = evaluate_training(sys.spec, sys.arch, w, s, o);
    std::string note;
    if (!t.feasible) {  // timed anyway, and said
      note = "  (" + t.reason + ")";
      TrainingOptions unchecked = o;
      unchecked.check_memory = false;
      t = evaluate_training(sys.spec, sys.arch, w, s, unchecked);
      ++over_memory;
    }
    INFO(task << " " << r.model << " " << text << ": " << t.reason);
    REQUIRE(t.feasible);
    const double pred = t.tokens_per_second / r.gpus;
    const double e = (pred - r.tokens) / r.tokens;
    sum += std::abs(e);
    signed_sum += e;
    by_task[task].first += std::abs(e);
    ++by_task[task].second;
    std::printf("%-14s %-5s %5d %-28s %9.0f %9.0f %+6.1f%%%s\n", r.model.c_str(), task.c_str(),
                r.gpus, text.c_str(), r.tokens, pred, 100 * e, note.c_str());
  }
  const double n = static_cast<double>(rows.size());
  std::printf("NeMo 24.07 fine-tuning (nemo-fp8 profile): MAPE %.1f%%, bias %+.1f%%;", 100 * sum / n,
              100 * signed_sum / n);
  for (const auto& [task, v] : by_task) {
    std::printf("  %s %.1f%% (%d)", task.c_str(), 100 * v.first / v.second, v.second);
  }
  std::printf("\n");
  // Measured today (bounds just above, so a regression fails): LoRA 4.1% (-1.1% 7B, -4.6%
  // 13B, -6.6% 70B on tp2 x pp4), SFT 13.1% (+3.4% 7B; -17.2% 13B on pp4, whose 1F1B bubble
  // over 16 micro-batches is 3/19 of the step; -18.6% 70B on tp4 x pp4, its tensor group's
  // all-reduces exposed without sequence parallelism, at NCCL's own per-call and per-step
  // latencies: LoRA 3.9%, SFT 12.9%, 70B -6.1% and -17.9% at the links' 2 us a step and
  // 64 KiB half-bandwidth messages, collectives.cpp); MAPE 8.6%, bias -7.5% (8.4%, -7.2%), with cuDNN's
  // causal attention (nemo-fp8.yaml kernels.attention: cudnn; 8.1%, -6.8% at
  // FlashAttention-3's rates), at the H100's own training residual (h100.yaml core.sustained_fraction 0.755,
  // fitted with this set among four; MAPE 7.8%, bias -6.3% at 0.765; 8.2%, -7.1% at 0.745; MAPE 7.7%, bias -6.1% at 0.77; at the A100's 0.821: LoRA
  // 1.9%, SFT 11.8%, MAPE 6.9%, bias -4.2%). The 70B rows
  // were -9.9% and -25.9% while the tensor and pipeline groups, both on one node's NVLink,
  // shared its ports (they never communicate at once). The SFT rows with pp look as if they
  // ran the pre-training table's tuning instead of the launcher's defaults (interleaving, and
  // for 70B sequence parallelism with userbuffer overlap, bring 13B to -2% and 70B to about
  // +1%); the table does not say, so the documented configuration is timed.
  // The 70B SFT row needs 123.8 GB a device in our memory model with the optimizer unsharded
  // (dp 1) and no sequence parallelism (115.1 GB before the fp32 main gradients; 113.6 GB
  // before Transformer Engine's FP8 inputs, -7.0 GB, and weight copies, +8.6 GB, were
  // counted): the published run fit in 80 GB (Apex's
  // DistributedFusedAdam keeps 16-bit remainders of the fp32 master weights, not modelled;
  // sequence parallelism, as the pre-training table's tuning, would take ~20 GB off the
  // activations), so it is timed unchecked.
  CHECK(over_memory == 1);
  CHECK(by_task["LoRA"].first / by_task["LoRA"].second <= 0.045);
  CHECK(by_task["SFT"].first / by_task["SFT"].second <= 0.135);
  CHECK(sum / n <= 0.09);
}

}  // namespace pathfinder
