// [calibration] The nanotron H100 sweep (Hugging Face Ultra-Scale Playbook, 4,104 runs;
// tests/data/calibration/README.md): per-device memory (engine/parallel/memory_footprint.cpp)
// against each run's Success/OOM status and allocated memory, and the training model
// (engine/train/gpt_training.cpp) against its tokens/s/GPU, on templates/h100.yaml with
// templates/software/nanotron.yaml. Issue 13's goals: OOM predicted right on >= 95% of the
// Success/OOM runs, allocated memory within 10%, tokens/s/GPU MAPE <= 10% on Success runs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "engine/parallel/strategy_check.hpp"
#include "tests/train/train_fixtures.hpp"

using namespace pathfinder;

namespace {

struct Run {
  std::string name, status;
  int nodes = 0, seq = 0, mbs = 0, acc = 0, dp = 0, pp = 0, tp = 0, zero = 0;
  std::int64_t hidden = 0, layers = 0, heads = 0, kv = 0, vocab = 0;
  bool tied = false;
  bool pp_fixed = true;  // made after the sweep's pipeline-engine fix (after_pp_fix)
  double tokens_per_gpu = 0.0, alloc_gib = 0.0, reserved_gib = 0.0;
  // The sweep's own collective bus bandwidths (GB/s), measured on each job's allocation: an
  // all-reduce over all its GPUs, and over one node's eight (0 when not recorded).
  double allreduce_gbs = 0.0, allreduce_intra_gbs = 0.0;
};

double num(const std::string& s) { return s.empty() ? 0.0 : std::stod(s); }

// Columns (README): name, nodes, seq_len, mbs, batch_accum, gbs, tok/s/gpu, Mem Alloc (GB),
// Mem Res (GB), dp, pp, tp, hidden_size, num_layers, num_heads, num_kv_heads, vocab_size,
// tie_word_embeddings, zero_stage, accumulate_grad_in_fp32, Total Params, status, after_pp_fix,
// AllReduce (GB/s), AllGather (GB/s), ReduceScatter (GB/s) and the three intra-node ones.
std::vector<Run> runs() {
  std::ifstream f(PATHFINDER_TEST_DATA "/calibration/h100/nanotron_h100_sweep.csv");
  REQUIRE(f.good());
  std::string line;
  std::getline(f, line);
  REQUIRE(line.rfind("name,nodes,seq_len,mbs,batch_accum,gbs,tok/s/gpu,Mem Alloc (GB)", 0) == 0);
  REQUIRE(line.find(",after_pp_fix,AllReduce (GB/s),AllGather (GB/s),") != std::string::npos);
  std::vector<Run> out;
  while (std::getline(f, line)) {
    const auto c = test::csv_cells(line);
    REQUIRE(c.size() == 29);
    Run r;
    r.name = c[0];
    r.status = c[21];
    r.pp_fixed = c[22] == "True";
    r.nodes = static_cast<int>(num(c[1]));
    r.seq = static_cast<int>(num(c[2]));
    r.mbs = static_cast<int>(num(c[3]));
    r.acc = static_cast<int>(num(c[4]));
    r.tokens_per_gpu = num(c[6]);
    r.alloc_gib = num(c[7]);
    r.reserved_gib = num(c[8]);
    r.dp = static_cast<int>(num(c[9]));
    r.pp = static_cast<int>(num(c[10]));
    r.tp = static_cast<int>(num(c[11]));
    r.hidden = static_cast<std::int64_t>(num(c[12]));
    r.layers = static_cast<std::int64_t>(num(c[13]));
    r.heads = static_cast<std::int64_t>(num(c[14]));
    r.vocab = static_cast<std::int64_t>(num(c[16]));
    r.zero = static_cast<int>(num(c[18]));
    r.allreduce_gbs = num(c[23]);
    r.allreduce_intra_gbs = num(c[26]);
    // OOM and Other rows leave kv heads and tying empty: the name says "_gqaN" when the run
    // had N KV heads; the 1.34G and 3.57G models (hidden 2048, 3072) tie their embeddings and
    // the 8.86G, 80G and 469G ones do not, as every Success row of each says.
    const auto gqa = r.name.find("_gqa");
    r.kv = !c[15].empty() ? static_cast<std::int64_t>(num(c[15]))
           : gqa != std::string::npos ? std::stoll(r.name.substr(gqa + 4))
                                      : r.heads;
    r.tied = !c[17].empty() ? c[17] == "True" : r.hidden <= 3072;
    out.push_back(r);
  }
  return out;
}

// The sweep has no intermediate size; the parameter counts fix it (Llama 3.x shapes). With
// untied/tied embeddings V·h once or twice and layers l·(4h² + 3·h·f + 2h) (MHA):
//   1.34G  h 2048, l 16, tied:   0.268e9 + 16·(16.8e6 + 3·2048·8192) = 1.342e9  -> f 8192
//   3.57G  h 3072, l 28, tied:   0.403e9 + 28·(37.7e6 + 3·3072·8192) = 3.573e9  -> f 8192
//   8.86G  h 4096, l 32, untied: 1.074e9 + 32·(67.1e6 + 3·4096·14336) = 8.860e9 -> f 14336
//   80G    h 8192, l 80, untied: 2.147e9 + 80·(268e6 + 3·8192·28672) = 80.0e9  -> f 28672
//   469G   h 16384, l 126:       4.295e9 + 126·(1.074e9 + 3·16384·53248) = 469.4e9 -> f 53248
std::int64_t ffn_of(std::int64_t hidden) {
  switch (hidden) {
    case 2048: case 3072: return 8192;
    case 4096: return 14336;
    case 8192: return 28672;
    default: return 53248;
  }
}

// nanotron's Llama: SwiGLU, RMSNorm, rotary, no biases, no dropout, flash attention (causal),
// bf16 with fp32 Adam state. Its pipeline stages hold the layers nanotron's build_model places
// there by cost (nanotron.yaml pipeline.layer_split: by-cost; the 8.86G model on pp2: 18 and 14).
GptSpec spec_of(const Run& r) {
  GptSpec s;
  s.layers = r.layers;
  s.hidden = r.hidden;
  s.heads = r.heads;
  s.kv_heads = r.kv;
  s.ffn = ffn_of(r.hidden);
  s.sequence = r.seq;
  s.vocabulary = r.vocab;
  s.micro_batch = r.mbs;
  s.global_batch = static_cast<std::int64_t>(r.dp) * r.mbs * r.acc;
  s.precision = DataType::kBf16;
  s.optimizer = Optimizer::kAdam;
  s.dropout = false;
  s.mlp = MlpKind::kSwiglu;
  s.norm = NormKind::kRmsNorm;
  s.position = PositionKind::kRotary;
  s.attention = AttentionKind::kFlash;
  s.tied_embeddings = r.tied;
  s.bias = false;
  return s;
}

// tp_mode REDUCE_SCATTER is sequence parallelism; OneForwardOneBackward; no recomputation.
Strategy strategy_of(const Run& r) {
  Strategy s;
  s.tp = r.tp;
  s.pp = r.pp;
  s.dp = r.dp;
  s.micro_batch = r.mbs;
  s.sequence_parallel = r.tp > 1;
  s.zero = r.zero;
  s.schedule = PipelineSchedule::kOneFOneB;
  s.recompute = Recompute::kNone;
  return s;
}

std::string family(const Run& r) {
  const std::string shape = r.tp > 1 && r.pp > 1 ? "tp+pp" : r.tp > 1 ? "tp" : r.pp > 1 ? "pp"
                                                                                         : "dp-only";
  return shape + (r.zero == 1 ? " zero1" : " zero0");
}

struct Errors {
  std::vector<double> e;
  void add(double pred, double meas) { e.push_back((pred - meas) / meas); }
  [[nodiscard]] double mape() const {
    double s = 0.0;
    for (double x : e) s += std::abs(x);
    return e.empty() ? 0.0 : s / static_cast<double>(e.size());
  }
  [[nodiscard]] double bias() const {
    double s = 0.0;
    for (double x : e) s += x;
    return e.empty() ? 0.0 : s / static_cast<double>(e.size());
  }
  [[nodiscard]] double median_abs() const {
    std::vector<double> a;
    for (double x : e) a.push_back(std::abs(x));
    std::sort(a.begin(), a.end());
    return a.empty() ? 0.0 : a[a.size() / 2];
  }
  [[nodiscard]] double median_signed() const {
    std::vector<double> a = e;
    std::sort(a.begin(), a.end());
    return a.empty() ? 0.0 : a[a.size() / 2];
  }
  [[nodiscard]] double within(double bound) const {
    double n = 0.0;
    for (double x : e) n += std::abs(x) <= bound ? 1.0 : 0.0;
    return e.empty() ? 0.0 : n / static_cast<double>(e.size());
  }
};

constexpr double kGiB = 1073741824.0;

// templates/h100.yaml with templates/software/nanotron.yaml at the template's split; every
// Success run is timed, whatever its footprint says.
struct Setup {
  SoftwareProfile nanotron =
      load_software_profile(test::source_path("templates/software/nanotron.yaml"));
  ArchSpec spec = bind_template(
      test::shipped_techlib(),
      with_software(load_template(test::source_path("templates/h100.yaml")), nanotron));
  MicroArch arch = generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl));
  PerfMachine machine = make_perf_machine(spec, arch);
  TrainingOptions options = [this] {
    TrainingOptions o = TrainingOptions::from(nanotron);
    o.check_memory = false;
    return o;
  }();
};

}  // namespace

TEST_CASE("[calibration] nanotron H100 sweep: out-of-memory, allocated memory, tokens/s/GPU",
          "[train]") {
  const Setup setup;
  const auto& [nanotron, spec, arch, machine, options] = setup;
  // The capacity PyTorch can allocate from: the device's 80 GiB (templates/h100.yaml).
  const double capacity = machine.main_memory.capacity.si();

  int tp_fit = 0, fn_oom = 0, fp_fit = 0, tn_oom = 0, skipped = 0;
  std::map<std::string, std::array<int, 2>> oom_by_family;  // right, total
  // tokens: every Success run; clean: those not through the pipeline engine before its fix.
  Errors alloc, tokens, clean, unfixed;
  std::vector<double> act_ratio;
  std::map<std::string, Errors> alloc_by_family, tokens_by_family;
  std::map<int, Errors> clean_by_nodes;
  std::map<std::string, std::unique_ptr<GptTraining>> models;
  struct Shown {
    std::string name;
    double measured, predicted;
  };
  std::vector<Shown> dp_only;  // the runs without tensor or pipeline parallelism, printed
  std::vector<Shown> worst;    // the clean runs, the 25 predicted fastest against measurement printed
  for (const Run& r : runs()) {
    if (r.status != "Success" && r.status != "OOM") continue;
    const GptSpec w = spec_of(r);
    const Strategy s = strategy_of(r);
    if (!is_valid_strategy(s, w, s.devices())) {
      ++skipped;
      continue;
    }
    // The fullest stage, each with the layers nanotron places there.
    const MemoryFootprint m = gpt_memory_footprint(w, s, nanotron.memory);
    const bool fits = m.total().in(units::bytes) <= capacity;
    const bool ok = r.status == "Success";
    (fits ? (ok ? tp_fit : fp_fit) : (ok ? fn_oom : tn_oom))++;
    auto& fam = oom_by_family[family(r)];
    fam[0] += fits == ok ? 1 : 0;
    ++fam[1];
    if (!ok) continue;
    // PyTorch's allocated memory after the step: the model states and the pipeline buffers
    // (the workspace: nothing else without recomputation or ZeRO-3); activations are freed.
    const double states = (m.weights + m.gradients + m.optimizer + m.workspace).in(units::bytes);
    alloc.add(states, r.alloc_gib * kGiB);
    // The profile's activation_factor [fit]: reserved minus allocated over the bare count.
    act_ratio.push_back((r.reserved_gib - r.alloc_gib) * kGiB /
                        (m.activations.in(units::bytes) / nanotron.memory.activation_factor));
    alloc_by_family[family(r)].add(states, r.alloc_gib * kGiB);
    if (r.tokens_per_gpu <= 0.0) continue;
    const std::string key = r.name.substr(0, r.name.find('_')) + "/" + std::to_string(w.layers) +
                            "/" + std::to_string(r.nodes) + "/" + std::to_string(w.global_batch) + "/" +
                            std::to_string(r.kv) + "/" + std::to_string(r.vocab);
    auto& model = models[key];
    if (!model) {
      model = std::make_unique<GptTraining>(w, machine,
                                            make_system_graph(spec, arch, s.devices()),
                                            arch.core.peak, options);
    }
    const TrainingResult t = model->evaluate(s);
    REQUIRE(t.feasible);
    const double pred = static_cast<double>(w.global_batch * w.sequence) / t.iteration_time.si() /
                        static_cast<double>(s.devices());
    tokens.add(pred, r.tokens_per_gpu);
    (r.pp == 1 || r.pp_fixed ? clean : unfixed).add(pred, r.tokens_per_gpu);
    if (r.pp == 1 || r.pp_fixed) worst.push_back({r.name, r.tokens_per_gpu, pred});
    if (r.pp == 1 || r.pp_fixed) {
      tokens_by_family[family(r)].add(pred, r.tokens_per_gpu);
      clean_by_nodes[r.nodes].add(pred, r.tokens_per_gpu);
    }
    if (r.tp == 1 && r.pp == 1) dp_only.push_back({r.name, r.tokens_per_gpu, pred});
  }
  const int total = tp_fit + fn_oom + fp_fit + tn_oom;
  const double accuracy = static_cast<double>(tp_fit + tn_oom) / static_cast<double>(total);
  std::printf("\nnanotron H100 sweep: %d Success/OOM runs modelled (%d skipped: fewer layers than stages)\n",
              total, skipped);
  std::printf("                 measured Success  measured OOM\n");
  std::printf("predicted fit    %16d  %12d\n", tp_fit, fp_fit);
  std::printf("predicted OOM    %16d  %12d\n", fn_oom, tn_oom);
  std::printf("OOM prediction right on %.1f%% (goal >= 95%%)\n", 100 * accuracy);
  std::printf("allocated memory (model states vs Mem Alloc): MAPE %.1f%%, bias %+.1f%%, median "
              "|error| %.1f%%, within 10%%: %.1f%% of %zu runs\n",
              100 * alloc.mape(), 100 * alloc.bias(), 100 * alloc.median_abs(),
              100 * alloc.within(0.10), alloc.e.size());
  std::printf("tokens/s/GPU: MAPE %.1f%%, median |error| %.1f%%, within 10%%: %.1f%% of %zu "
              "runs (goal MAPE <= 10%%)\n",
              100 * tokens.mape(), 100 * tokens.median_abs(), 100 * tokens.within(0.10),
              tokens.e.size());
  std::printf("  pp = 1 or after the sweep's pipeline-engine fix: MAPE %.1f%%, median |error| %.1f%%, "
              "within 10%%: %.1f%% of %zu runs\n",
              100 * clean.mape(), 100 * clean.median_abs(), 100 * clean.within(0.10), clean.e.size());
  std::printf("  pp > 1 before the fix (after_pp_fix False): MAPE %.1f%%, median |error| %.1f%% of "
              "%zu runs\n",
              100 * unfixed.mape(), 100 * unfixed.median_abs(), unfixed.e.size());
  std::printf("%-14s %12s %14s %14s\n", "family", "OOM right", "alloc MAPE",
              "tok/s MAPE (clean)");
  for (const auto& [name, f] : oom_by_family) {
    std::printf("%-14s %5.1f%% of %4d %6.1f%% (%4zu) %6.1f%% (%4zu)\n", name.c_str(),
                100.0 * static_cast<double>(f[0]) / static_cast<double>(f[1]), f[1], 100 * alloc_by_family[name].mape(),
                alloc_by_family[name].e.size(), 100 * tokens_by_family[name].mape(),
                tokens_by_family[name].e.size());
  }
  std::printf("clean runs by nodes:");
  for (const auto& [nodes, e] : clean_by_nodes) {
    std::printf("  %d: median %+.0f%%, MAPE %.0f%% (%zu)", nodes, 100 * e.median_signed(),
                100 * e.mape(), e.e.size());
  }
  std::printf("\n");
  std::printf("\n%-72s %9s %9s %7s\n", "dp-only runs", "measured", "predicted", "error");
  for (const Shown& d : dp_only) {
    std::printf("%-72s %9.0f %9.0f %+6.0f%%\n", d.name.c_str(), d.measured, d.predicted,
                100.0 * (d.predicted - d.measured) / d.measured);
  }
  std::sort(worst.begin(), worst.end(), [](const Shown& a, const Shown& b) {
    return a.predicted / a.measured > b.predicted / b.measured;
  });
  std::printf("\n%-72s %9s %9s %7s\n", "clean runs predicted fastest", "measured", "predicted",
              "error");
  for (std::size_t i = 0; i < std::min<std::size_t>(25, worst.size()); ++i) {
    const Shown& d = worst[i];
    std::printf("%-72s %9.0f %9.0f %+6.0f%%\n", d.name.c_str(), d.measured, d.predicted,
                100.0 * (d.predicted - d.measured) / d.measured);
  }
  std::sort(act_ratio.begin(), act_ratio.end());
  std::printf("(reserved - allocated) / counted activations on Success runs: median %.2f, quartiles %.2f %.2f\n",
              act_ratio[act_ratio.size() / 2], act_ratio[act_ratio.size() / 4], act_ratio[3 * act_ratio.size() / 4]);
  CHECK(total + skipped == 3682);
  // The 1.34G model's 16 layers on 32 stages (1 Success, 3 OOM runs): nanotron leaves stages
  // empty, the engine refuses pp > layers.
  CHECK(skipped == 4);
  // Measured today (bounds just above, so a regression fails; the goals are the issue's):
  //   OOM right 97.3%: 1,748 + 1,832 of 3,678 (goal >= 95%); 82 OOM runs predicted to fit,
  //     16 Success runs predicted OOM
  //   allocated memory MAPE 4.6%, bias -2.2%, 88% of runs within 10% (goal: within 10%);
  //     tp runs 7-8% under (a constant 0.1-0.4 GiB not modelled)
  //   tokens/s/GPU MAPE 858%, median |error| 149% (goal <= 10%); on the 1,286 clean runs MAPE
  //     234.1%, median 53.0%, by nodes median +3/+4/+29/+56/+61/+121/+403% at 1-64 nodes,
  //     with NCCL's tree timed by NCCL's own model (collectives.cpp; median 52.1% before),
  //     and its rings at NCCL's own protocol latencies. Before them:
  //     867% and 153%, clean 237.6% and 54.3%, +4/+5/+31/+58/+64/+121/+409% at 1-64 nodes, at
  //     the H100's residual 0.765 with rings across nodes costing main memory at their rate
  //     (236.5%, 53.0%, +3/+4/+30/+58/+62/+120/+409% at 0.745 without it), at
  //     the H100's residual 0.745 with NVLink's memory contention (868% and 154%, clean 238.4%
  //     and 55.0%, at 0.77 without it). History, oldest last:
  //   tokens/s/GPU MAPE 784%, median |error| 144% (goal <= 10%); on the 1,286 runs not through
  //     the pipeline engine before the sweep's fix of it (after_pp_fix; the 478 others are
  //     measured 14x slower, median) MAPE 227%, median 49% (928%/174% and 289%/67% with
  //     megatron-lm.yaml's 80 us host time per kernel, before nanotron.yaml's own from its
  //     host-bound runs: single-node tp runs at micro-batch 1 from +25..+71% to -10..+17%):
  //     tens of runs at 40-700 tokens/s/GPU
  //     (printed) weigh most. With nanotron's layer placement by cost (pipeline.layer_split)
  //     single-node pipeline runs moved from 17-38% pessimistic (the modelled last stage held
  //     the first's layers and the head) to +6..+11% (median by pp), as the single-node
  //     dp-only runs are, and every multi-node pipeline run the same way, which is why the
  //     sums grew (731% and 141%, clean 238% and 51%, before; 744% and 154% before ZeRO-1's
  //     blocking all-reduce, nanotron.yaml zero), 768% and 160% before the fp32
  //     gradient buffer's adds, nanotron.yaml wgrad_accumulation: separate; 815% and 163%
  //     before NCCL's algorithms, collectives: nccl), with the fp32 gradient
  //     reduction of accumulate_grad_in_fp32, GLUActivation's eager SiLU and product and the
  //     q, k, v layout copies (nanotron.yaml; 858% and 173% without the last two): single-node
  //     dp-only runs +7..+10% (printed; +14..+24% before the adds), the error growing with
  //     the nodes to +45..+240% at dp 128-256 (the measured
  //     step keeps ~0.2 s that does not shrink with dp, the modelled reduction ~0.03 s), and
  //     runs through the pipeline engine with many micro-batches crawl: e.g. 1.34G tp8-pp4-dp1
  //     from 18,287 tokens/s/GPU at acc 8 x mbs 32 to 1,032 at acc 256 x mbs 1, the same tokens
  //     per step; 10-180x below any modelled mechanism
  //     Since the tensor group's collectives and the pipeline's sends stopped sharing ports
  //     (they never run at once: gpt_training.cpp's placements) runs whose tensor and
  //     pipeline groups both cross the network are faster in the model: 784% and 144%, clean
  //     227% and 49%, before; 879% and 160%, clean 242% and 60%, now (4-node median +24% ->
  //     +34%); with each job's measured network (below) the median is unchanged.
  CHECK(accuracy >= 0.97);
  CHECK(alloc.mape() <= 0.05);
  CHECK(tokens.mape() <= 9.0);
  CHECK(tokens.median_abs() <= 1.65);
  CHECK(clean.mape() <= 2.5);
  CHECK(clean.median_abs() <= 0.62);
  // By the nodes a run spans (clean runs, median signed error): 1 node +5% (66 runs), 2 nodes
  // +8% (146), then +25%, +55%, +54%, +121% and +410% at 4, 8, 16, 32 and 64 nodes. What the
  // model misses grows with the job's size, not with its parallelism: the sweep's own
  // collective-bandwidth columns, an all-reduce over the whole job, fall as 1/nodes from 4
  // nodes on in one batch of jobs (busbw ~160, 95, 52, 27, 13 GB/s at 4-64 nodes, medians;
  // 1/busbw linear in the GPUs, as a ring whose per-step latency dominates), a property of
  // that cluster's network the template does not describe; the next test puts each job's
  // measured all-reduce into its network.
  CHECK(std::abs(clean_by_nodes[1].median_signed()) <= 0.06);
  CHECK(std::abs(clean_by_nodes[2].median_signed()) <= 0.09);
}

TEST_CASE("[calibration] nanotron H100 sweep on the network each job measured",
          "[train]") {
  // The sweep records, for every job, an all-reduce's bus bandwidth over all its GPUs, measured
  // on that allocation. Across nodes it is far from the template's NDR network and from one
  // batch of jobs to another (medians 160, 95, 52, 27, 13 GB/s at 4, 8, 16, 32, 64 nodes in
  // one; ~170 GB/s at 16-64 nodes in the other). Here each multi-node job's scale-out tier is
  // scaled so that the model's all-reduce over all the job's devices (1 GiB: the bandwidth
  // term) runs at the measured bus bandwidth, as Rapid-LLM's validation harness maps the
  // sweep's measured bandwidths onto its network; the model is otherwise unchanged. A
  // diagnosis of how much of the multi-node error is that cluster's network, not a
  // prediction: no held-out run comes with its own bandwidth.
  const Setup setup;
  const auto& [nanotron, spec, arch, machine, options] = setup;
  const Bytes message = bytes(1073741824.0);
  std::map<int, Errors> fixed_by_nodes, measured_by_nodes;
  Errors fixed, measured;
  double worst_fit = 0.0;  // the scaled network's all-reduce against the measured one
  int unreached = 0;       // jobs whose measured all-reduce no scale-out bandwidth gives
  std::map<int, SystemGraph> base_graphs;
  for (const Run& r : runs()) {
    if (r.status != "Success" || r.tokens_per_gpu <= 0.0 || r.nodes < 2) continue;
    if (r.pp > 1 && !r.pp_fixed) continue;  // the pipeline engine before its fix (first test)
    if (r.allreduce_gbs <= 0.0) continue;
    const GptSpec w = spec_of(r);
    const Strategy s = strategy_of(r);
    if (!is_valid_strategy(s, w, s.devices())) continue;
    auto [it, added] = base_graphs.try_emplace(s.devices());
    if (added) it->second = make_system_graph(spec, arch, s.devices());
    const SystemGraph& base = it->second;
    SystemGraph g = base;
    const auto all_reduce_busbw = [&](const SystemGraph& graph) {
      const GroupPlacement all = place_group(graph, s.devices(), 1, PortSharing{});
      const double n = s.devices();
      return message.si() * 2.0 * (n - 1.0) / n /
             collective_time(all, Collective::kAllReduce, message).si() / 1e9;
    };
    auto out = std::find_if(g.tiers.begin(), g.tiers.end(),
                            [](const TierLink& t) { return t.tier == Tier::kScaleOut; });
    REQUIRE(out != g.tiers.end());  // more than one node: a scale-out tier joins them
    // The bus bandwidth grows with the tier's bandwidth but not in proportion (latency, the
    // intra-node tier, NCCL's choice between ring and tree): bisection on the tier's scale,
    // 1/1000 to 1000 times the template's.
    const Bandwidth base_bw = out->bandwidth;
    double lo = std::log(1e-3), hi = std::log(1e3);
    for (int k = 0; k < 60; ++k) {
      const double mid = 0.5 * (lo + hi);
      out->bandwidth = base_bw * std::exp(mid);
      (all_reduce_busbw(g) < r.allreduce_gbs ? lo : hi) = mid;
    }
    out->bandwidth = base_bw * std::exp(0.5 * (lo + hi));
    const double fit = all_reduce_busbw(g) / r.allreduce_gbs - 1.0;
    if (std::abs(fit) > 0.02) {
      ++unreached;
      continue;
    }
    worst_fit = std::max(worst_fit, std::abs(fit));
    const double tokens = static_cast<double>(w.global_batch * w.sequence) /
                          static_cast<double>(s.devices());
    const auto predict = [&](const SystemGraph& graph) {
      GptTraining m(w, setup.machine, graph, setup.arch.core.peak, setup.options);
      const TrainingResult t = m.evaluate(s);
      REQUIRE(t.feasible);
      return tokens / t.iteration_time.si();
    };
    const double pf = predict(base), pm = predict(g);
    fixed.add(pf, r.tokens_per_gpu);
    measured.add(pm, r.tokens_per_gpu);
    fixed_by_nodes[r.nodes].add(pf, r.tokens_per_gpu);
    measured_by_nodes[r.nodes].add(pm, r.tokens_per_gpu);
  }
  std::printf("\nnanotron H100 sweep, clean multi-node runs: the template's network against the "
              "one each job measured\n%-6s %6s %14s %14s\n", "nodes", "runs", "template net",
              "measured net");
  for (const auto& [nodes, e] : fixed_by_nodes) {
    std::printf("%-6d %6zu %+13.0f%% %+13.0f%%   (median signed error)\n", nodes, e.e.size(),
                100 * e.median_signed(), 100 * measured_by_nodes[nodes].median_signed());
  }
  std::printf("all %zu: MAPE %.0f%% -> %.0f%%, median |error| %.0f%% -> %.0f%%, within 10%%: "
              "%.0f%% -> %.0f%%; the scaled all-reduce within %.1e of the measured (%d jobs "
              "whose measured all-reduce no scale-out bandwidth reaches left out)\n",
              fixed.e.size(), 100 * fixed.mape(), 100 * measured.mape(), 100 * fixed.median_abs(),
              100 * measured.median_abs(), 100 * fixed.within(0.1), 100 * measured.within(0.1),
              worst_fit, unreached);
  CHECK(worst_fit <= 1e-6);  // every job kept is fitted to the bisection's tolerance
  // Measured today: MAPE 243% -> 134%, median |error| 63% -> 28% over 1,220 jobs; median signed
  // error by nodes +4/+29/+56/+61/+121/+403% -> +4/+12/+12/+10/+28/+38% at 2-64 nodes, with
  // NCCL's tree timed by NCCL's own model (collectives.cpp): its bus bandwidth is the node's
  // NICs together, so the 64 two-node jobs measured at 341-438 GB/s are now within reach.
  // Before it: MAPE 256% -> 141%, median 75% -> 33% over the 1,156 others; +7/+29/+56/+61/
  // +120/+404% -> +7/+12/+12/+10/+29/+44%,
  // with NCCL's rings at NCCL's own protocol latencies (collectives.cpp). Before them: MAPE
  // 251% -> 135%, median 78% -> 35%, +25/+55/+54/+121/+410% -> +15/+14/+11/+34/+49% at 4-64
  // nodes. The
  // cluster's network explains most of the growth with the nodes; an optimism of ~+11-15%
  // beyond 2 nodes (+5% on one) and the 32-64 node runs' remainder stay unexplained.
  // (MAPE 144%, median 34%, since the tensor and pipeline groups stopped sharing ports.)
  CHECK(unreached == 0);
  CHECK(measured.mape() <= 1.40);
  CHECK(measured.median_abs() <= 0.31);
  CHECK(measured.mape() < 0.6 * fixed.mape());
  CHECK(std::abs(measured_by_nodes[16].median_signed()) <= 0.13);
}
