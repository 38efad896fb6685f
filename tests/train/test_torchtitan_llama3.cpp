// [calibration] torchtitan Llama 3.1 on H100 and H200 (tests/data/calibration/h100/
// torchtitan_llama3_training_throughput.csv, from pytorch/torchtitan benchmarks/*.md): every
// row the model can express, predicted tokens/s/GPU against the published one, per row and per
// table. Issue 13's goal is MAPE <= 10%; this test reports where the model stands and fails on
// a regression.
//
// How a row becomes an evaluation:
//   model      studies/workloads/llama3_{8b,70b,405b}.yaml at the row's sequence and batches
//   GPUs       H100-96GB-500W: templates/h100.yaml with budget.power 500 W (the cap the
//              benchmarks ran under) and six HBM2e stacks, 96 GiB at 2.4 TB/s (below);
//              H200: templates/h200.yaml
//   strategy   dp = fsdp with ZeRO-3 (FSDP full shard), tp, pp (1F1B, or interleaved with two
//              stages per rank), micro-batch = local_batch (pp: one sequence a micro-batch);
//              activation_ckpt selective/per-op SAC -> selective, full -> full, default -> none;
//              tp with sequence parallelism, as torchtitan's plan runs it (SequenceParallel on
//              the norms, Shard(1) layouts: fsdp.yaml kernels.sequence_parallel_layout copy,
//              its FP8 gathers precision.tensor_parallel_gather) [known gap: the 8B async-TP
//              rows +8..+31%: chunked overlap credits async TP 1.29-1.31x on the 8B model
//              where its runs gained 1.10x]
//   software   fsdp; float8 / fp8-tensorwise -> the linear layers in FP8 with current (dynamic,
//              per-tensor) scaling, torchao's tensorwise; fp8-rowwise -> its rowwise recipe
//              (fp8_scaling: rowwise: per-row scales, the backward GEMMs as tensor-wise cuBLAS
//              GEMMs plus a rescale kernel each)
//   context   cp -> cpN (each sequence over cp ranks, keys and values around the ring; torchtitan's
//             experimental context_parallel, timed as Megatron-Core's ring)
//   interleaved 405B's 126 layers over 8 x 2 chunks of 7 and 8 (stage_layers' uneven split)
//   async TP -> chunked tensor parallelism (tp - 1 of tp chunks' transfers hidden, as NeMo's
//              userbuffers)
//   compile    rows without torch.compile run the model's element-wise Python as eager PyTorch
//              decomposes it (EagerOps: fp32 RMSNorm composite, complex rotary, SiLU then the
//              product, repeat_kv copies); compiled rows as the profile's fused kernels
//   attention  SDPA runs FlashAttention-2 (templates/software/fsdp.yaml kernels.attention)
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/arch/template_loader.hpp"
#include "engine/parallel/strategy_check.hpp"
#include "engine/graph/workload_loader.hpp"
#include "engine/train/training_model.hpp"
#include "tests/train/train_fixtures.hpp"

namespace pathfinder {
namespace {

struct Row {
  std::string table, model, gpu, ckpt, techniques, schedule;
  int gpus = 0, fsdp = 1, tp = 1, pp = 1, cp = 1, local_batch = 1, global_batch = 0;
  std::int64_t seq = 0;
  double tokens = 0.0;
};


std::vector<Row> rows() {
  std::ifstream f(PATHFINDER_TEST_DATA "/calibration/h100/torchtitan_llama3_training_throughput.csv");
  REQUIRE(f.good());
  std::string line;
  std::getline(f, line);  // # source: ...
  std::getline(f, line);  // header
  REQUIRE(line.rfind("source_file,table,model,gpu,num_gpus,fsdp,tp,pp,cp,seq_len,local_batch,", 0) == 0);
  std::vector<Row> out;
  while (std::getline(f, line)) {
    const std::vector<std::string> c = test::csv_cells(line);
    REQUIRE(c.size() >= 16);
    const auto num = [&](std::size_t i) { return c[i].empty() ? 0 : std::stoi(c[i]); };
    Row r;
    r.table = c[0] + " " + c[1];
    r.model = c[2];
    r.gpu = c[3];
    r.gpus = num(4);
    r.fsdp = num(5);
    r.tp = num(6);
    r.pp = num(7);
    r.cp = num(8);
    r.seq = std::stoll(c[9]);
    r.local_batch = num(10);
    r.global_batch = num(11);
    r.ckpt = c[12];
    r.techniques = c[13];
    r.schedule = c[14];
    r.tokens = std::stod(c[15]);
    out.push_back(r);
  }
  return out;
}

}  // namespace

TEST_CASE("[calibration] torchtitan Llama 3.1 on H100 and H200: tokens/s/GPU", "[train]") {
  const std::vector<Row> all = rows();
  REQUIRE(all.size() == 32);
  std::map<std::string, test::ShippedSystem> systems;
  const auto system = [&](const std::string& gpu) -> const test::ShippedSystem& {
    auto it = systems.find(gpu);
    if (it != systems.end()) return it->second;
    const bool h200 = gpu == "H200";
    std::vector<ConfigOverride> cap;
    if (!h200) {
      // Grand Teton's H100: 96 GB HBM2e at 2.4 TB/s under a 500 W cap (the data file's source
      // line): six 16 GiB HBM2e stacks on the H100 die (the sixth site and its RF share as in
      // templates/h200.yaml), the memory's power share calibrated to 2.4 TB/s, the core the rest.
      for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
               {"budget.power", "500 W"},
               {"memory.main.technology", "HBM2e"},
               {"split.main_memory.area", "0.1106"},
               {"split.RF.area", "0.1100"},
               {"split.main_memory.power", "0.17"},
               {"split.core.power", "0.5995"}}) {
        cap.push_back({key, value, key, std::nullopt});
      }
    }
    // With the fsdp profile's host costs (the kernels are timed with them).
    const ArchTemplate t = with_software(
        load_template(test::source_path(h200 ? "templates/h200.yaml" : "templates/h100.yaml"), cap),
        load_software_profile(test::source_path("templates/software/fsdp.yaml")));
    test::ShippedSystem s{bind_template(test::shipped_techlib(), t), {}};
    s.arch = generate_micro_arch(s.spec, ResourceSplit::from_template(s.spec.tmpl));
    if (!h200) {
      CHECK(s.arch.main_memory.capacity.in(units::gibibytes) == Approx(96.0));
      CHECK(s.arch.main_memory.bandwidth.in(units::gigabytes_per_second) == Approx(2400.0).epsilon(0.01));
    }
    return systems.emplace(gpu, std::move(s)).first->second;
  };
  std::printf("\n%-28s %-13s %4s %-36s %9s %9s %7s\n", "torchtitan", "model", "gpus", "strategy",
              "measured", "predicted", "error");
  double sum = 0.0, signed_sum = 0.0;
  int n = 0, uneven = 0;
  std::map<std::string, std::pair<double, int>> by_table;
  for (const Row& r : all) {
    const std::string size = r.model.find("405B") != std::string::npos  ? "405b"
                             : r.model.find("70B") != std::string::npos ? "70b"
                                                                         : "8b";
    const int dp = r.fsdp;
    REQUIRE(dp * r.tp * r.pp * r.cp == r.gpus);
    const int micro = r.pp > 1 ? 1 : r.local_batch;
    const std::int64_t global =
        r.global_batch > 0 ? r.global_batch : static_cast<std::int64_t>(r.local_batch) * dp;
    std::vector<ConfigOverride> sets{{"sequence", std::to_string(r.seq), "sequence", std::nullopt},
                                     {"micro_batch", std::to_string(micro), "micro_batch", std::nullopt},
                                     {"global_batch", std::to_string(global), "global_batch", std::nullopt}};
    const WorkloadSpec w =
        load_workload(test::source_path("studies/workloads/llama3_" + size + ".yaml"), sets).spec;
    std::string text = "tp" + std::to_string(r.tp) + "-pp" + std::to_string(r.pp) + "-dp" +
                       std::to_string(dp) + (r.cp > 1 ? "-cp" + std::to_string(r.cp) : "") +
                       "-mb" + std::to_string(micro) + "-zero3" + (r.tp > 1 ? "-sp" : "");
    if (r.schedule == "Interleaved1F1B") text += "-interleaved-v2";
    if (r.ckpt == "full") text += "-recompute=full";
    else if (r.ckpt == "selective" || r.ckpt == "per-op SAC") text += "-recompute=selective";
    const Strategy s = parse_strategy(text);
    if (!check_strategy(s, w, r.gpus).empty()) {  // no row is: a strategy problem fails below
      ++uneven;
      std::printf("%-28s %-13s %4d %-36s %9.0f   (not modelled: %s)\n", r.table.c_str(),
                  r.model.c_str(), r.gpus, text.c_str(), r.tokens,
                  check_strategy(s, w, r.gpus).front().message.c_str());
      continue;
    }
    TrainingOptions o = test::profile_options("fsdp");
    o.check_memory = false;
    o.quantized_linear = r.techniques.find("fp8") != std::string::npos;
    // torchao's float8 as torchtitan runs it: tensorwise with dynamic scales (each tensor's own
    // amax every step: torchtitan's precompute_float8_dynamic_scale_for_fsdp), or the
    // axiswise rowwise recipe.
    o.quant_recipe = r.techniques.find("rowwise") != std::string::npos ? QuantRecipe::kRowwise
                                                                       : QuantRecipe::kCurrent;
    // Async TP (torchtitan's micro-pipelined collective matmuls on symmetric memory) splits
    // each tensor-parallel GEMM and its all-gather or reduce-scatter into tp chunks that
    // overlap: the decomposition the profiles call chunked tensor parallelism.
    if (r.techniques.find("AsyncTP") != std::string::npos ||
        r.techniques.find("asyncTP") != std::string::npos) {
      o.tensor_comm_chunked = true;
    }
    // Without torch.compile the model's element-wise Python runs as eager PyTorch decomposes
    // it: the fp32 RMSNorm composite, the complex rotary, SiLU then the product, and
    // repeat_kv's copies (torchtitan models/llama/model.py, models/norms.py at the benchmark's
    // commit); compiled, each is one generated kernel (the profile's fused default).
    if (r.techniques.find("compile") == std::string::npos) {
      o.eager = EagerOps{true, true, true, true};
    }
    const test::ShippedSystem& sys = system(r.gpu);
    const TrainingResult t = evaluate_training(sys.spec, sys.arch, w, s, o);
    REQUIRE(t.feasible);
    const double pred = t.tokens_per_second / r.gpus;
    const double e = (pred - r.tokens) / r.tokens;
    sum += std::abs(e);
    signed_sum += e;
    ++n;
    by_table[r.table].first += std::abs(e);
    ++by_table[r.table].second;
    std::printf("%-28s %-13s %4d %-36s %9.0f %9.0f %+6.0f%%\n", r.table.c_str(), r.model.c_str(),
                r.gpus, (text + (o.quantized_linear ? " fp8" : "")).c_str(), r.tokens, pred, 100 * e);
  }
  std::printf("MAPE by table:");
  for (const auto& [table, v] : by_table) std::printf("  %s %.0f%% (%d)", table.c_str(), 100 * v.first / v.second, v.second);
  const double mape = sum / n;
  std::printf("\ntorchtitan: %d rows modelled, %d not expressible, "
              "MAPE %.1f%%, bias %+.1f%% (goal MAPE <= 10%%)\n",
              n, uneven, 100 * mape, 100 * signed_sum / n);
  CHECK(n + uneven == 32);
  CHECK(uneven == 0);
  // Measured today (bounds just above, so a regression fails; the goal is the 10%):
  //   MAPE 8.6%, bias +0.3% with NCCL's rings at NCCL's own protocol latencies
  //   (collectives.cpp).
  //   MAPE 8.6%, bias +0.4% since the tensor-parallel rows run sequence parallelism with
  //   DTensor's layout copies around each collective (PyTorch's functional collectives along
  //   the second dimension) and async TP's copy engines cost the compute beside them half
  //   NVLink's memory contention (the tp8 rows without async TP -8..-25% -> -15..+12%, the 8B
  //   async-TP rows +7..+23% -> +14..+31%), the residual refitted with them (0.755; MAPE
  //   10.4%, bias +5.6% with the rows' sequence parallelism alone).
  //   MAPE 9.4%, bias -3.2% at the residual refitted to 0.765 once rings across nodes cost the
  //   compute beside them main memory at their own rate (T3's 128-GPU FSDP rows -2..+4% ->
  //   -6..+1%; MAPE 9.8%, bias -4.6% at 0.745 with it).
  //   MAPE 9.8%, bias -3.8% since NVLink collectives cost the compute beside them main-memory
  //   bandwidth on the H100 as on the A100 (h100.yaml memory_contention: FSDP's gathers on one
  //   node's NVLink, T1 -5..+1%; async TP's chunks move by the copy engines, exempt) and the
  //   residual refitted with it (0.745): MAPE 9.5%, bias -2.0% at 0.77.
  //   MAPE 9.3%, bias -0.8% since the H100's training residual is its own fit (h100.yaml
  //   core.sustained_fraction 0.77, fitted with this set among four GPU-bound H100 sets;
  //   h200.yaml the same). MAPE 10.1%, bias +2.6% over all 32 rows since FlashAttention-2's backward runs at its
  //   measured rate (h100.yaml warp_mma_backward_fraction, flash-attention PR 1791: 287-291
  //   TFLOP/s; 10-11% slow before, at the FA-3 fit): every row +1..+8% faster, most the
  //   context-parallel ones, attention-bound. The compiled bf16 rows are now +10..+12%
  //   (T1, T3, async TP 8B) where the FP8 ones are +1..+2%: FP8's gain over bf16 under the
  //   500 W cap is 1.17x in the model and 1.28x measured, the cap's clock taken from the
  //   700 W power-limiter fit. FlashAttention-2's causal forward is also timed at its full
  //   rate (+20% against fa1791's 284 TFLOP/s; the full-mask row -8%).
  //   Before: MAPE 9.2%, bias -0.1% over all 32 rows (9.3%, +0.8% before a job waited for its slowest
  //   device, core.device_variation), since the row-wise FP8 rows are modelled (torchao's
  //   rowwise recipe: their backward GEMMs' rescale kernels, the column-wise amax pass): +1%,
  //   +15% (70B), +12%, +24% (8B), where the measured rowwise runs are 26-34% slower than the
  //   tensorwise ones and the model 6-9% (the rowwise forward GEMM's own CUTLASS kernel, "most
  //   shapes within 90-100% of tensor-wise efficiency, but ... a long tail going down to 50%",
  //   pytorch/pytorch issue 147971, is timed at the FP8 rate). Tensorwise rows as torchao's
  //   dynamic (current) scaling: -0.5 points of MAPE against the delayed recipe timed before.
  //   Before: 8.3%, +0.7% over 28 rows, 405B's interleaved row (126 layers over 16 uneven
  //   chunks) -1% (8.5% over 27 before it was expressible; 8.3%, -0.1% while the tensor and
  //   pipeline groups shared ports; 9.4%, +2.3% at the residual 0.856). The 8B FSDP-only runs without torch.compile, on
  //   eager PyTorch's unfused element-wise operators, +1% and +5% (+27% and +32% when timed
  //   with fused kernels); compiled +10% and +13%; H200 +13..+15%. Context parallel 8B (T2,
  //   64k-256k tokens): -11..+21%: attention-bound, and PyTorch's ring merges each step's
  //   partial output in eager ops the model does not count. 405B on 512 GPUs (tp8 pp8, 126
  //   layers as 15, 16 x 6, 15): T5 -8%, T6 -12% (8K) and +4..+22% with cp 2-8.
  // History: 10.4% / +5.3% before FSDP's and the data-parallel collectives held SMs beside the
  //   compute they overlap (fsdp.yaml collective_sms, NCCL's 16 of 132).
  // History: 9.4% / +3.6% before the board's power limiter (engine/perf/power_limiter.hpp):
  //   every kernel then ran at the benchmark loop's power-limited share (0.885 x 0.927 = 0.82);
  //   now only those drawing more than the 700 W board allows are slowed, so attention (FA-2 at
  //   under half the tensor rate) and element-wise work run at the residual 0.856 alone, +4%,
  //   and the attention-bound context-parallel rows move most. 11.4% / +5.5% with fused kernels for the eager runs; 13.9% / -1.5% before the
  //   async-TP rows were timed with chunked tensor parallelism; 19.7% / +9.4% before the
  //   attention backward's pre/postprocess passes and h100.yaml's attention_backward_fraction
  //   (tests/perf/test_kernel_timer.cpp); 25.6% / +17.6% before the Grand Teton part's HBM2e
  //   at 2.4 TB/s and torchtitan's op-level selective checkpointing (fsdp.yaml).
  CHECK(mape <= 0.09);
  CHECK(std::abs(signed_sum / n) <= 0.04);
}

}  // namespace pathfinder
