// Tests for engine/parallel/memory_footprint.hpp against the closed forms of ZeRO (Rajbhandari et
// al. 2020) and Korthikanti et al. 2022, the compute graph's parameter count, and monotonicity.
#include <catch2/catch.hpp>

#include "engine/parallel/memory_footprint.hpp"
#include "engine/parallel/strategy_enumeration.hpp"
#include "tests/parallel/parallel_specs.hpp"

using namespace pathfinder;
using pathfinder::test::shipped_gpt;
using pathfinder::test::shipped_workload;
using pathfinder::test::tiny_gpt;

namespace {

double b(Bytes x) { return x.in(units::bytes); }
Approx exactly(double x) { return Approx(x).epsilon(1e-12); }

}  // namespace

TEST_CASE("ZeRO paper example: 7.5B parameters on 64 data-parallel devices", "[dist][golden]") {
  // Rajbhandari et al. 2020, Figure 1: Ψ = 7.5e9, K = 12, Nd = 64, fp16 Adam.
  const double psi = 7.5e9;
  const auto at = [&](int zero) {
    return b(model_state_footprint(psi, Optimizer::kAdam, DataType::kFp16, zero, 64).total());
  };
  CHECK(at(0) == exactly(120e9));        // (2 + 2 + 12)·Ψ = 120 GB
  CHECK(at(1) == exactly(31.40625e9));   // 2Ψ + 2Ψ + 12Ψ/64 = 30e9 + 1.40625e9: "31.4 GB"
  CHECK(at(2) == exactly(16.640625e9));  // 2Ψ + 14Ψ/64 = 15e9 + 1.640625e9: "16.6 GB"
  CHECK(at(3) == exactly(1.875e9));      // 16Ψ/64: "1.9 GB"
  const MemoryFootprint z1 = model_state_footprint(psi, Optimizer::kAdam, DataType::kFp16, 1, 64);
  CHECK(b(z1.weights) == exactly(15e9));
  CHECK(b(z1.gradients) == exactly(15e9));
  CHECK(b(z1.optimizer) == exactly(1.40625e9));
  CHECK(b(z1.activations) == 0.0);
  // fp32 Adam: 4 + 4 + 8 (m, v; no master copy); fp16 SGD: 2 + 2 + 4 (master); fp32 SGD: 4 + 4.
  const auto per_param = [](Optimizer o, DataType t) {
    return b(model_state_footprint(1.0, o, t, 0, 1).total());
  };
  CHECK(per_param(Optimizer::kAdam, DataType::kFp32) == 16.0);
  CHECK(per_param(Optimizer::kAdam, DataType::kBf16) == 16.0);
  CHECK(per_param(Optimizer::kSgd, DataType::kFp16) == 8.0);
  CHECK(per_param(Optimizer::kSgd, DataType::kFp32) == 8.0);
  CHECK(b(model_state_footprint(1.0, Optimizer::kSgd, DataType::kFp32, 0, 1).optimizer) == 0.0);
}

TEST_CASE("Megatron's fp32 main gradients: bf16 param, fp32 grads = 18 bytes, 6 + 12/d", "[dist][golden]") {
  // Megatron-LM docs/source/api-guide/dist_optimizer.md: bf16 parameters with fp32 gradients
  // hold 18 bytes per parameter without the distributed optimizer, 6 + 12/d with it.
  MemoryModel mm;
  mm.gradient_bytes = 4.0;
  const auto total = [&](int zero, int dp) {
    return b(model_state_footprint(1.0, Optimizer::kAdam, DataType::kBf16, zero, dp, mm).total());
  };
  CHECK(total(0, 8) == exactly(18.0));
  CHECK(total(1, 8) == exactly(6.0 + 12.0 / 8.0));
  CHECK(total(2, 8) == exactly(2.0 + 16.0 / 8.0));  // ZeRO-2 shards the fp32 gradients too
  CHECK(b(model_state_footprint(1.0, Optimizer::kAdam, DataType::kBf16, 1, 8, mm).gradients) ==
        exactly(4.0));
  // Unset: the workload's 2 bytes (the ZeRO paper's count above).
  CHECK(b(model_state_footprint(1.0, Optimizer::kAdam, DataType::kBf16, 1, 8).gradients) ==
        exactly(2.0));
}

TEST_CASE("per-layer activations: Korthikanti et al. 2022 Table 2 at t = 8, s = 2048, b = 1",
          "[dist][golden]") {
  // Rows: baseline tensor parallel s·b·h·(10 + 24/t + 5as/(ht)); + sequence parallel
  // s·b·h·(34 + 5as/h)/t; selective s·b·h·(10 + 24/t); selective + sp s·b·h·34/t; full 2·s·b·h;
  // full + sp 2·s·b·h/t. Models (Table 3): h, a.
  struct Row {
    const char* file;
    double baseline, sp, selective, selective_sp, full, full_sp;
  };
  const Row rows[] = {
      // 22B: sbh = 2048·6144 = 12,582,912; 5as/h = 5·64·2048/6144 = 106.67
      //   baseline sbh·(10 + 3 + 13.333) = 331,350,016; sp sbh·140.667/8 = 221,249,536;
      //   selective sbh·13 = 163,577,856; selective + sp sbh·4.25 = 53,477,376;
      //   full 25,165,824; full + sp 3,145,728
      {"megatron_22b", 331350016, 221249536, 163577856, 53477376, 25165824, 3145728},
      // 175B: sbh = 25,165,824; 5as/h = 80: baseline sbh·23 = 578,813,952;
      //   sp sbh·114/8 = 358,612,992; selective sbh·13 = 327,155,712; sel + sp 106,954,752
      {"gpt3_175b", 578813952, 358612992, 327155712, 106954752, 50331648, 6291456},
      // 530B: sbh = 41,943,040; 5as/h = 64: baseline sbh·21 = 880,803,840;
      //   sp sbh·98/8 = 513,802,240; selective 545,259,520; sel + sp 178,257,920
      {"megatron_530b", 880803840, 513802240, 545259520, 178257920, 83886080, 10485760},
      // 1T: sbh = 52,428,800; 5as/h = 64: baseline sbh·21 = 1,101,004,800;
      //   sp 642,252,800; selective 681,574,400; sel + sp 222,822,400
      {"megatron_1t", 1101004800, 642252800, 681574400, 222822400, 104857600, 13107200},
  };
  for (const auto& r : rows) {
    INFO(r.file);
    const GptSpec g = shipped_gpt(r.file);
    const auto layer = [&](const char* strategy) {
      return b(gpt_layer_activations(g, parse_strategy(strategy), 1));
    };
    CHECK(layer("tp8") == exactly(r.baseline));
    CHECK(layer("tp8-sp") == exactly(r.sp));
    CHECK(layer("tp8-recompute=selective") == exactly(r.selective));
    CHECK(layer("tp8-sp-recompute=selective") == exactly(r.selective_sp));
    CHECK(layer("tp8-recompute=full") == exactly(r.full));
    CHECK(layer("tp8-sp-recompute=full") == exactly(r.full_sp));
  }
  // No parallelism (t = 1): s·b·h·(34 + 5as/h), 22B: 12,582,912·140.667 = 1,769,996,288.
  CHECK(b(gpt_layer_activations(shipped_gpt("megatron_22b"), Strategy{}, 1)) ==
        exactly(1769996288.0));
}

TEST_CASE("530B on tp8 x pp35, selective + sequence parallel: the first stage", "[dist][golden]") {
  // Korthikanti et al. 2022 Table 3's 530B run: 105 layers, h 20480, a 128, f 81920, V 51200,
  // s 2048, b 1, global batch 280 -> m = 280 micro-batches per pipeline, 3 layers per stage.
  const GptSpec g = shipped_gpt("megatron_530b");
  const Strategy s = parse_strategy("tp8-pp35-dp1-mb1-1f1b-sp-recompute=selective");
  // Parameters of stage 0: per layer (4h² + 2hf + 3h + f)/8 + 6h = 5,033,308,160/8 + 122,880
  // = 629,286,400; 3 layers 1,887,859,200 + token embedding V·h/8 = 131,072,000 + positions
  // s·h = 41,943,040 -> 2,060,874,240.
  CHECK(gpt_stage_parameters(g, s, 0) == 2060874240);
  // Last stage: 3 layers + final layernorm 2h + the tied embedding's copy V·h/8.
  CHECK(gpt_stage_parameters(g, s, 34) == 1887859200 + 40960 + 131072000);
  const MemoryFootprint f = gpt_memory_footprint(g, s);
  CHECK(f.stage == 0);
  CHECK(f.in_flight_micro_batches == 35);               // 1F1B: min(pp, m) = min(35, 280)
  CHECK(b(f.weights) == exactly(2060874240.0 * 2));     // fp16
  CHECK(b(f.gradients) == exactly(2060874240.0 * 2));   // fp16
  CHECK(b(f.optimizer) == exactly(2060874240.0 * 12));  // fp32 master, m, v
  // 35 micro-batches x 3 layers = 105 = L layers' worth (Korthikanti §4.2.3) of s·b·h·34/t
  // = 41,943,040·34/8 = 178,257,920 -> 18,717,081,600; plus the embedding dropout mask
  // s·b·h/t per micro-batch, 35·5,242,880 = 183,500,800 (their "s·b·h·p/t").
  CHECK(b(f.activations) == exactly(18717081600.0 + 183500800.0));
  // Workspace: the attention scores selective recomputation rebuilds for one layer,
  // 5·a·s²·b/t = 5·128·2048²/8 = 335,544,320.
  CHECK(b(f.workspace) == exactly(335544320.0));
  CHECK(b(f.total()) == exactly(52210114560.0));  // 52.2 GB: fits an 80 GB A100
  // The last stage: 1 micro-batch x 3 layers = 534,773,760, the output layer's inputs
  // 2·(s·b·h·2/8) = 20,971,520 and fp32 logits 4·s·b·V/8 = 52,428,800.
  const MemoryFootprint last = gpt_stage_memory_footprint(g, s, 34);
  CHECK(last.in_flight_micro_batches == 1);
  CHECK(b(last.activations) == exactly(534773760.0 + 20971520.0 + 52428800.0));
}

TEST_CASE("interleaved: the first stage holds L·(1 + (p−1)/(p·v)) layers", "[dist][golden]") {
  // GPT-3 175B, tp8 x pp8, v 2, b 1, m = 1536: chunk forwards held on stage 0 =
  // min(2·(8−1) + (2−1)·8 + 1, 1536·2) = 23 chunks of 96/16 = 6 layers = 138 layers
  // = 96·(1 + 7/16) (Korthikanti §4.2.3); each 578,813,952 B (Table 2 row above).
  const GptSpec g = shipped_gpt("gpt3_175b");
  const MemoryFootprint f =
      gpt_stage_memory_footprint(g, parse_strategy("tp8-pp8-dp1-mb1-interleaved-v2"), 0);
  CHECK(f.in_flight_micro_batches == 23);
  // Plus the embedding mask s·b·h (no sp) for min(2·8 − 1, 1536) = 15 micro-batches: 15·25,165,824.
  CHECK(b(f.activations) == exactly(138 * 578813952.0 + 15 * 25165824.0));
  // 1F1B: 8 micro-batches x 12 layers = 96 layers, mask for 8.
  const MemoryFootprint g1 = gpt_stage_memory_footprint(g, parse_strategy("tp8-pp8-dp1-mb1"), 0);
  CHECK(g1.in_flight_micro_batches == 8);
  CHECK(b(g1.activations) == exactly(96 * 578813952.0 + 8 * 25165824.0));
  // Uneven chunks: 94 layers over 8 x 2 = 16 chunks hold 5 (the first and last) and 6 (the
  // others; stage_layers); stage 0 holds 11 (5 + 6) and counts its fuller chunk, 6 layers, per
  // chunk forward held: the same 23 x 6 layers as 96 even ones.
  GptSpec uneven = g;
  uneven.layers = 94;
  const MemoryFootprint fu =
      gpt_stage_memory_footprint(uneven, parse_strategy("tp8-pp8-dp1-mb1-interleaved-v2"), 0);
  CHECK(fu.in_flight_micro_batches == 23);
  CHECK(b(fu.activations) == exactly(138 * 578813952.0 + 15 * 25165824.0));
}

TEST_CASE("in-flight micro-batches by schedule", "[dist][golden]") {
  const Strategy one_f = parse_strategy("pp4");
  CHECK(in_flight_micro_batches(one_f, 8, 0) == 4);  // min(pp − 0, m)
  CHECK(in_flight_micro_batches(one_f, 8, 3) == 1);
  CHECK(in_flight_micro_batches(one_f, 2, 0) == 2);  // fewer micro-batches than stages
  CHECK(in_flight_micro_batches(parse_strategy("pp4-gpipe"), 8, 3) == 8);  // all of them
  const Strategy inter = parse_strategy("pp4-interleaved-v2");
  CHECK(in_flight_micro_batches(inter, 8, 0) == 11);  // 2·3 + 1·4 + 1
  CHECK(in_flight_micro_batches(inter, 8, 3) == 5);   // 0 + 4 + 1
  CHECK(in_flight_micro_batches(inter, 4, 0) == 8);   // m = pp: every chunk of every micro-batch
  // DualPipe: pp + 1 on every device (DeepSeek-V3 report Table 2).
  const Strategy dual = parse_strategy("pp4-dualpipe");
  CHECK(in_flight_micro_batches(dual, 8, 0) == 5);
  CHECK(in_flight_micro_batches(dual, 8, 3) == 5);
}

TEST_CASE("a stack's stored-activation and moment precisions: FP8 activations, BF16 moments",
          "[dist][golden]") {
  // GPT-3 175B (fp16: 2 bytes an activation element), tp8 x pp8, b 1. Cached
  // in FP8 the layers' activations take half (the embedding's masks and the output layer as
  // counted); Adam's moments in BF16 4 bytes a parameter instead of 8: the optimizer's 12
  // bytes (fp32 master 4 + moments 8) become 8.
  const GptSpec g = shipped_gpt("gpt3_175b");
  const Strategy s = parse_strategy("tp8-pp8-dp1-mb1");
  MemoryModel deepseek;
  deepseek.activation_bytes = 1.0;
  deepseek.moment_bytes = 4.0;
  const MemoryFootprint base = gpt_stage_memory_footprint(g, s, 1, MemoryModel{});
  const MemoryFootprint low = gpt_stage_memory_footprint(g, s, 1, deepseek);
  CHECK(b(low.activations) == exactly(0.5 * b(base.activations)));  // stage 1: layers only
  CHECK(b(low.optimizer) == exactly(b(base.optimizer) * 8.0 / 12.0));
  CHECK(b(low.weights) == exactly(b(base.weights)));
  CHECK(b(low.gradients) == exactly(b(base.gradients)));
}

TEST_CASE("Transformer Engine's FP8 linear layers: saved inputs in FP8, weight copies",
          "[dist][golden]") {
  // 22B (GPT-3 layout, GeLU f = 4h, dropout, fp16: p = 2), t = 8, s = 2048, b = 1, FP8 inputs
  // (1 byte): the norms' outputs before QKV and fc1 1 byte each instead of 2 (replicated
  // 4p + 2 = 10 -> 2p + 2 + 2 = 8), the projection's cast beside the attention output (h/t:
  // 2 -> 3 bytes), fc2's input f/t at 1 byte beside fc1's output at 2 (16h/t -> 12h/t):
  // s·b·h·(8 + (6 + 3 + 12)/t + 5as/(ht)) = 12,582,912 x 23.958 = 301,465,600 (331,350,016
  // at 16 bits: 29,884,416 = s·b·h·(2 + 3/8) less); with sp the replicated 8 /t:
  // s·b·h·(1 + 21/8 + 13.333) = 213,385,216.
  const GptSpec g = shipped_gpt("megatron_22b");
  const auto layer = [&](const char* strategy, double q) {
    return b(gpt_layer_activations(g, parse_strategy(strategy), 1, q));
  };
  CHECK(layer("tp8", 1.0) == exactly(301465600.0));
  CHECK(layer("tp8-sp", 1.0) == exactly(213385216.0));
  CHECK(layer("tp8", 0.0) == exactly(331350016.0));  // 0: the workload's precision
  CHECK(layer("tp8", 2.0) == exactly(331350016.0 + 12582912.0 * 2.0 / 8.0));  // + the cast
  CHECK(layer("tp8-recompute=full", 1.0) == exactly(25165824.0));  // the layer input only
  // A mixture of experts (Mixtral 8x7B, bf16, SwiGLU, top-2, tp2): the router keeps the second
  // norm's output at 2 bytes; the first norm's output (-1 x sbh), the projection's cast
  // (+1 x h/t) and the experts' rows and SiLU outputs (-1 x top_k·imbalance·(h + f_e/t))
  // change: per token -4096 + 2048 - 2·imbalance·(4096 + 7168).
  const GptSpec m = shipped_gpt("mixtral_8x7b");
  const Strategy tp2 = parse_strategy("tp2-sp");
  const double sb = static_cast<double>(m.sequence);
  const double delta = sb * (-4096.0 / 2.0 + 2048.0 - 2.0 * m.expert_imbalance * (4096.0 + 7168.0));
  CHECK(b(gpt_layer_activations(m, tp2, 1, 1.0)) - b(gpt_layer_activations(m, tp2, 1)) ==
        Approx(delta).epsilon(1e-12));
  // Weight copies: Llama 3 8B (bf16), tp1 x pp2, ZeRO-1 over dp4: stage 0's 16 layers of
  // 218,103,808 linear weights each (QKV 4096·48·128, projection 4096², MLP 3·4096·14336)
  // take 2 more bytes each as Transformer Engine's FP8 cast and transpose; held only in FP8
  // (--fp8-param-gather) the 2-byte weights go: the copies replace them. ZeRO-3 shards them.
  const GptSpec l = shipped_gpt("llama3_8b");
  const Strategy s = parse_strategy("tp1-pp2-dp4-mb1-zero1");
  MemoryModel te;
  te.linear_weight_copy_bytes = 2.0;
  const double linear = 16.0 * 218103808.0;
  const MemoryFootprint base = gpt_stage_memory_footprint(l, s, 0, MemoryModel{});
  CHECK(b(gpt_stage_memory_footprint(l, s, 0, te).weights) ==
        exactly(b(base.weights) + 2.0 * linear));
  te.quantized_parameters = true;
  CHECK(b(gpt_stage_memory_footprint(l, s, 0, te).weights) == exactly(b(base.weights)));
  te.linear_weight_copy_bytes = 2.0 * (0.5 + 1.0 / 16.0);  // NVFP4's two copies
  CHECK(b(gpt_stage_memory_footprint(l, s, 0, te).weights) ==
        exactly(b(base.weights) - (2.0 - 1.125) * linear));
  te = MemoryModel{};
  te.linear_weight_copy_bytes = 2.0;
  const Strategy z3 = parse_strategy("tp1-pp2-dp4-mb1-zero3");
  CHECK(b(gpt_stage_memory_footprint(l, z3, 0, te).weights) ==
        exactly(b(gpt_stage_memory_footprint(l, z3, 0, MemoryModel{}).weights) +
                2.0 * linear / 4.0));
}

TEST_CASE("DualPipe: each device holds two stages' model states, pp + 1 micro-batches",
          "[dist][golden]") {
  // GPT-3 175B, tp8 x pp8, b 1: device d holds stage d and stage 7 - d (DeepSeek-V3 report
  // Table 2: parameters 2x). The first device: stage 0's and stage 7's model states; the
  // activations of the fuller of the two for the 9 micro-batches in flight: stage 0's 12
  // layers and embedding masks (9 x 25,165,824 B) against stage 7's 12 layers and output layer
  // (2·s·b·h·2 = 100,663,296 B and fp32 logits 4·s·b·V/8 = 52,428,800 B, one micro-batch).
  const GptSpec g = shipped_gpt("gpt3_175b");
  const Strategy dual = parse_strategy("tp8-pp8-dp1-mb1-dualpipe");
  const MemoryFootprint s0 = gpt_stage_memory_footprint(g, dual, 0);
  const MemoryFootprint s7 = gpt_stage_memory_footprint(g, dual, 7);
  CHECK(s0.in_flight_micro_batches == 9);
  CHECK(b(s7.activations) == exactly(9 * 12 * 578813952.0 + 100663296.0 + 52428800.0));
  const MemoryFootprint f = gpt_memory_footprint(g, dual);
  // Every pair's states are the same (even stages); the end devices hold the embedding and
  // the head: the fullest.
  CHECK(b(f.weights) == exactly(b(s0.weights) + b(s7.weights)));
  CHECK(b(f.optimizer) == exactly(b(s0.optimizer) + b(s7.optimizer)));
  CHECK(b(f.activations) == exactly(b(s0.activations)));
  // Against 1F1B's first stage: twice the layers' states, one micro-batch more in flight.
  const MemoryFootprint one = gpt_memory_footprint(g, parse_strategy("tp8-pp8-dp1-mb1"));
  CHECK(b(f.weights) > 1.9 * b(one.weights));
  // 12 layers x 578,813,952 B per micro-batch (Table 2 row above): 9 held, against 8.
  CHECK(b(s0.activations) == exactly(9 * 12 * 578813952.0 + 9 * 25165824.0));
}

TEST_CASE("22B on one tensor-parallel node (Korthikanti Table 4's setting)", "[dist][golden]") {
  // h 6144, a 64, f 24576, 48 layers, b 4, t 8, no pipeline, fp16 Adam.
  const GptSpec g = shipped_gpt("megatron_22b");
  const MemoryFootprint f = gpt_memory_footprint(g, parse_strategy("tp8-mb4"));
  // Parameters: per layer (4h² + 2hf + 3h + f)/8 + 6h = 453,027,840/8 + 36,864 = 56,665,344;
  // 48 layers 2,719,936,512 + V·h/8 39,321,600 + s·h 12,582,912 + 2h 12,288 = 2,771,853,312;
  // x 16 B = 44,349,652,992.
  CHECK(b(f.weights + f.gradients + f.optimizer) == exactly(44349652992.0));
  // Activations: 48 layers x s·b·h·(10 + 24/8 + 5as/(8h)) = 50,331,648·26.333 = 1,325,400,064
  // -> 63,619,203,072; embedding mask s·b·h = 50,331,648; output layer 2·s·b·h·2 = 201,326,592
  // + fp32 logits 4·s·b·V/8 = 209,715,200.
  CHECK(b(f.activations) == exactly(63619203072.0 + 50331648.0 + 201326592.0 + 209715200.0));
  CHECK(b(f.workspace) == 0.0);
  // 108 GB: the baseline does not fit an 80 GB A100; selective + sp does.
  CHECK(b(f.total()) > 80e9);
  CHECK(b(gpt_memory_footprint(g, parse_strategy("tp8-mb4-sp-recompute=selective")).total()) <
        80e9);
}

TEST_CASE("stage parameters add up to the compute graph's count", "[dist][golden]") {
  // tiny GPT: 12·l·h² + 13·l·h + (V + s)·h + 2h = 196,608 + 3,328 + 10,240 + 128 = 210,304.
  const GptSpec g = tiny_gpt();
  const std::int64_t total = make_workload("tiny", g).stats.parameters;
  CHECK(total == 210304);
  CHECK(gpt_stage_parameters(g, parse_strategy("pp1"), 0) == total);
  // pp 2: the last stage keeps its own copy of the tied embedding, V·h = 8192.
  const Strategy pp2 = parse_strategy("pp2");
  CHECK(gpt_stage_parameters(g, pp2, 0) + gpt_stage_parameters(g, pp2, 1) == total + 8192);
  // tp 2: per layer (16,384 + 32,768 + 192 + 256)/2 + 384 = 25,184; x4 + V·h/2 4,096 + s·h
  // 2,048 + 2h 128 = 107,008.
  CHECK(gpt_stage_parameters(g, parse_strategy("tp2"), 0) == 107008);
}

TEST_CASE("LSTM LM and GEMM footprints", "[dist][golden]") {
  const WorkloadSpec lm = shipped_workload("lstm_lm");
  // Pure data parallel, 64 replicas of 256 sequences: 30,510,298,368 parameters x 8 B (fp16
  // SGD: weights 2, gradients 2, fp32 master 4) = 244,082,386,944. Activations over 20 steps,
  // 2 B each: 2 layers x 7·256·16384 + softmax 256·(16384 + 800000) = 267,714,560 per step.
  const MemoryFootprint dp = memory_footprint(lm, parse_strategy("RC-1-1-d64-p1"));
  CHECK(b(dp.weights + dp.gradients + dp.optimizer) == exactly(244082386944.0));
  CHECK(b(dp.activations) == exactly(267714560.0 * 20 * 2));
  // RC-4-2-d8-p2: 2048 rows per replica; stage 0 the embedding and layer 0, stage 1 layer 1 and
  // the softmax (the fuller): (2D+1)·4D + (D+1)·V = 15,255,549,184 parameters / kp2 2 x 8 B;
  // activations (7·2048·16384 + 2048·816384)·20·2 / (kp1·kp2 = 8) = 9,534,177,280.
  const MemoryFootprint rc = memory_footprint(lm, parse_strategy("RC-4-2-d8-p2"));
  CHECK(rc.stage == 1);
  CHECK(b(rc.weights + rc.gradients + rc.optimizer) == exactly(15255549184.0 / 2 * 8));
  CHECK(b(rc.activations) == exactly(9534177280.0));
  CHECK(b(rc.workspace) == 0.0);

  // 8192³ fp16 GEMM. RC-4-2: B/kp2 = 8192²·2/2 = 67,108,864; A/kp1 + C/(kp1·kp2) =
  // (8192²/4 + 8192²/8)·2 = 50,331,648. CR-8: B/8 = 16,777,216; A/8 + full C = 150,994,944.
  const WorkloadSpec gemm = shipped_workload("gemm");
  const MemoryFootprint r = memory_footprint(gemm, parse_strategy("RC-4-2-d1-p1"));
  CHECK(b(r.weights) == exactly(67108864.0));
  CHECK(b(r.activations) == exactly(50331648.0));
  CHECK(b(r.gradients + r.optimizer) == 0.0);
  const MemoryFootprint c = memory_footprint(gemm, parse_strategy("CR-8-d1-p1"));
  CHECK(b(c.weights) == exactly(16777216.0));
  CHECK(b(c.activations) == exactly(150994944.0));
}

TEST_CASE("ZeRO-3 holds three gathered layers besides its shards", "[dist][golden]") {
  // GPT-3 175B tp8-pp8-dp16-mb1, no recomputation: per layer (4h² + 2hf + 3h + f)/8 + 6h with
  // h 12,288, f 4h = (603,979,776 + 1,207,959,552 + 36,864 + 49,152)/8 + 73,728
  // = 1,812,025,344/8 + 73,728 = 226,576,896 parameters. Workspace: the running layer's and
  // the prefetched layer's weights and the running layer's gradients, fp16:
  // 3·226,576,896·2 = 1,359,461,376 bytes.
  const GptSpec g = shipped_gpt("gpt3_175b");
  const MemoryFootprint f = gpt_memory_footprint(g, parse_strategy("tp8-pp8-dp16-mb1-zero3"));
  CHECK(b(f.workspace) == exactly(1359461376.0));
}

TEST_CASE("more data parallelism never needs more memory per device", "[dist][property]") {
  // GPT-3 175B, tp8 x pp8, mb 1: dp over the divisors of 1536 up to 16, every ZeRO stage.
  const GptSpec g = shipped_gpt("gpt3_175b");
  for (int zero = 0; zero <= 3; ++zero) {
    double previous = 0.0;
    for (const int dp : {1, 2, 3, 4, 6, 8, 12, 16}) {
      Strategy s = parse_strategy("tp8-pp8-mb1");
      s.dp = dp;
      s.zero = zero;
      const double now = b(gpt_memory_footprint(g, s).total());
      INFO("zero " << zero << " dp " << dp);
      if (previous > 0.0) CHECK(now <= previous);
      if (previous > 0.0 && zero >= 1) CHECK(now < previous);
      previous = now;
    }
  }
}

TEST_CASE("recomputation and sequence parallelism never store more", "[dist][property]") {
  // Every strategy of the tiny GPT on 8 devices, and GPT-3 175B's first 3,000 on 1024.
  const auto check_all = [](const GptSpec& g, const std::vector<Strategy>& all) {
    for (const Strategy& s : all) {
      if (s.recompute != Recompute::kNone) continue;
      INFO(to_string(s));
      Strategy sel = s, full = s;
      sel.recompute = Recompute::kSelective;
      full.recompute = Recompute::kFull;
      const double none_a = b(gpt_memory_footprint(g, s).activations);
      const double sel_a = b(gpt_memory_footprint(g, sel).activations);
      const double full_a = b(gpt_memory_footprint(g, full).activations);
      CHECK(full_a <= sel_a);
      CHECK(sel_a <= none_a);
      if (s.tp > 1 && !s.sequence_parallel) {
        Strategy sp = s;
        sp.sequence_parallel = true;
        CHECK(b(gpt_memory_footprint(g, sp).activations) <= none_a);
      }
      // GPipe holds every micro-batch, 1F1B at most pp.
      if (s.schedule == PipelineSchedule::kOneFOneB) {
        Strategy gpipe = s;
        gpipe.schedule = PipelineSchedule::kGpipe;
        CHECK(b(gpt_memory_footprint(g, gpipe).activations) >= none_a);
      }
    }
  };
  check_all(tiny_gpt(), enumerate_strategies(tiny_gpt(), 8));
  const GptSpec big = shipped_gpt("gpt3_175b");
  auto all = enumerate_strategies(big, 1024);
  all.resize(std::min<std::size_t>(all.size(), 3000));
  check_all(big, all);
}

TEST_CASE("Llama 3 8B: GQA, SwiGLU and flash attention in the Korthikanti terms",
          "[dist][golden]") {
  const GptSpec w = shipped_gpt("llama3_8b");  // s 8192, h 4096, a 32, g 8, d 128, f 14336
  // Per layer and sequence, bf16, no dropout, no sp:
  //   replicated 4p·s·h = 8·8192·4096                        = 268,435,456
  //   split s·p·(a·d + 2·g·d + h + 3f) = 8192·2·(4096 + 2048 + 4096 + 43008)
  //                                                           = 872,415,232
  //   flash logsumexp 4·a·s = 4·32·8192                       =   1,048,576
  CHECK(b(gpt_layer_activations(w, parse_strategy("tp1-pp1-dp1-mb1"), 1)) ==
        exactly(1141899264.0));
  // tp8 with sp: replicated /8 = 33,554,432; split 8192·2·(512 + 2·128 + 512 + 5376)
  // = 109,051,904; logsumexp /8 = 131,072.
  CHECK(b(gpt_layer_activations(w, parse_strategy("tp8-pp1-dp1-mb1-sp"), 1)) ==
        exactly(142737408.0));
  // Selective recomputation has nothing to drop: flash stores no scores.
  CHECK(b(gpt_layer_activations(w, parse_strategy("tp8-pp1-dp1-mb1-sp-recompute=selective"),
                                1)) == exactly(142737408.0));
  // Parameters: the whole model on one stage (untied head, no position table) is the model
  // card's 8,030,261,248; with pp2 stage 0 holds 16 layers and the token table,
  // 16·218,112,000 + 128256·4096 = 4,015,128,576, the last 16 layers, the final RMSNorm and
  // the untied head: 4,015,132,672.
  CHECK(gpt_stage_parameters(w, parse_strategy("tp1-pp1-dp1"), 0) == 8030261248LL);
  CHECK(gpt_stage_parameters(w, parse_strategy("tp1-pp2-dp1"), 0) == 4015128576LL);
  CHECK(gpt_stage_parameters(w, parse_strategy("tp1-pp2-dp1"), 1) == 4015132672LL);
}

namespace pathfinder {

TEST_CASE("context parallel: activations for s/cp tokens, model states over dp x cp",
          "[dist][golden]") {
  // Llama 3 8B, bf16, Adam, ZeRO-1, 8 devices: dp8 against dp4 x cp2.
  const GptSpec w = shipped_gpt("llama3_8b");
  const MemoryFootprint dp8 = gpt_memory_footprint(w, parse_strategy("tp1-pp1-dp8-mb1-zero1"));
  const MemoryFootprint cp2 =
      gpt_memory_footprint(w, parse_strategy("tp1-pp1-dp4-cp2-mb1-zero1"));
  // The distributed optimizer shards over all 8 ranks either way: 12 B x 8.03e9 / 8.
  CHECK(b(cp2.optimizer) == Approx(b(dp8.optimizer)));
  CHECK(b(cp2.weights) == Approx(b(dp8.weights)));
  // Each rank stores its 4096 of the 8192 tokens: half the layers' activations (the Korthikanti
  // count is linear in s with flash attention), and the head's inputs and fp32 logits.
  CHECK(b(cp2.activations) == Approx(b(dp8.activations) / 2.0));
  // Plus the ring's two K/V receive buffers: 2 x 2 x 4096 x (8 x 128) x 2 B = 33.6 MB.
  CHECK(b(cp2.workspace) - b(dp8.workspace) == Approx(2.0 * 2.0 * 4096 * 1024 * 2));
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("expert parallel: E/ep experts per rank, their optimizer over dp/ep ranks",
          "[dist][golden]") {
  // Mixtral 8x7B on 64 devices, tp1 pp4 dp16, ZeRO-1 (distributed optimizer), bf16 Adam.
  const GptSpec w = shipped_gpt("mixtral_8x7b");
  const MemoryFootprint one = gpt_memory_footprint(w, parse_strategy("tp1-pp4-dp16-mb1-zero1"));
  const MemoryFootprint ep8 =
      gpt_memory_footprint(w, parse_strategy("tp1-pp4-dp16-ep8-mb1-zero1"));
  // Stage 0 (8 layers and the token table): experts 8·3·4096·14336 = 1,409,286,144 per
  // layer of the 1,451,278,336; ep8 keeps one expert per layer: weights fall by 7/8 of the
  // experts' 2 bytes each.
  const double experts = 8.0 * 1409286144.0;
  CHECK(b(one.weights) - b(ep8.weights) == Approx(experts * 7.0 / 8.0 * 2.0));
  // Optimizer (12 B per parameter): dense parameters over 16 ranks; ep8's one expert per layer
  // over 16/8 = 2 expert-data-parallel ranks, the same bytes as 8 experts over 16.
  const double dense = b(one.optimizer) - experts * 12.0 / 16.0;
  CHECK(b(ep8.optimizer) == Approx(dense + experts / 8.0 * 12.0 / 2.0));
}

TEST_CASE("whole experts (etp1): E/ep full-width experts per rank, sharded over tp·dp/ep",
          "[dist][golden]") {
  // Mixtral 8x7B on 64 devices, tp2 pp4 dp8 ep8 with SP, ZeRO-1, bf16 Adam.
  const GptSpec w = shipped_gpt("mixtral_8x7b");
  const Strategy split = parse_strategy("tp2-pp4-dp8-ep8-mb1-sp-zero1");
  const Strategy whole = parse_strategy("tp2-pp4-dp8-ep8-mb1-sp-zero1-etp1");
  const MemoryFootprint a = gpt_memory_footprint(w, split);
  const MemoryFootprint e = gpt_memory_footprint(w, whole);
  // Stage 0's 8 layers each keep one expert, 3·4096·14336 = 176,160,768 parameters: half of it
  // per rank when split over tp2, all of it whole; 2 bytes each.
  const double expert = 3.0 * 4096 * 14336;
  CHECK(b(e.weights) - b(a.weights) == Approx(8.0 * expert / 2.0 * 2.0));
  // Optimizer (12 B per parameter): split, half an expert over dp/ep = 1 rank; whole, a whole
  // expert over tp·dp/ep = 2 ranks: the same bytes.
  CHECK(b(e.optimizer) == Approx(b(a.optimizer)));
  // Activations (Korthikanti's count, gpt_layer_activations): per token the top-2 rows' input
  // and SwiGLU tensors, split: k·(h + 3·f/t) on every token of the tensor group's T; whole:
  // k·(h + 3·f) on this rank's T/t. Per layer and micro-batch, s·b = 4096 tokens, 2 bytes:
  // 2·4096·2·[(4096 + 3·7168) - (4096 + 3·14336)/2] = 16,777,216 B fewer.
  CHECK(b(gpt_layer_activations(w, split, 1)) - b(gpt_layer_activations(w, whole, 1)) ==
        Approx(2.0 * 4096 * 2 * ((4096 + 3 * 7168) - (4096 + 3 * 14336) / 2.0)));
}

TEST_CASE("recomputed modules store less: what each discards, per layer and micro-batch",
          "[dist][golden]") {
  // DeepSeek-V3 (h 7168, 128 heads of 192 for keys and 128 for values, SwiGLU experts of 2048,
  // top 8 of 256, one shared) at s 4096, b 1, bf16, tp2 with SP and whole experts (etp1).
  const GptSpec w = shipped_gpt("deepseek_v3");
  const Strategy sel = parse_strategy("tp2-pp8-dp64-ep64-mb1-sp-etp1-recompute=selective");
  const auto minus = [&](const char* modules) {
    Strategy s = sel;
    s.recompute_modules = *parse_recompute_modules(modules);
    return b(gpt_layer_activations(w, sel, 1)) - b(gpt_layer_activations(w, s, 1));
  };
  const double sb = 4096.0, p = 2.0;
  // mla_up_proj: the 64 local heads' Q (64·192) and K, V (64·(192 + 128)): 32,768 a token.
  CHECK(minus("core_attn+mla_up_proj") == Approx(sb * p * (64 * 192 + 64 * 320)));
  // layernorm: both norms' outputs, h each, split by SP: 2·p·s·h/t.
  CHECK(minus("core_attn+layernorm") == Approx(2.0 * p * sb * 7168 / 2));
  // moe_act: the experts' SwiGLU output on this rank's T/t tokens' 8 rows, 2048 wide.
  CHECK(minus("core_attn+moe_act") == Approx(sb / 2 * 8 * 2048 * p));
  // shared_experts: gate, up and their product, 3·2048/t a token.
  CHECK(minus("core_attn+shared_experts") == Approx(sb * p * 3 * 2048 / 2));
  // moe: the routed rows (k·(h + 3·f_e) on T/t tokens) and the shared experts' tensors.
  CHECK(minus("core_attn+moe") ==
        Approx(sb * p * (8.0 / 2 * (7168 + 3 * 2048) + 3 * 2048 / 2)));
  // mlp: a dense layer's 3·18432/t a token (the first three layers; none on a sparse one).
  Strategy mlp = sel;
  mlp.recompute_modules = kRecomputeMlp;
  CHECK(b(gpt_layer_activations(w.dense_layer_spec(), sel, 1)) -
            b(gpt_layer_activations(w.dense_layer_spec(), mlp, 1)) ==
        Approx(sb * p * 3 * 18432 / 2));
  CHECK(minus("mlp") == Approx(0.0).margin(1.0));
  // The rematerialized modules of one layer are the workspace the backward needs.
  Strategy up = sel;
  up.recompute_modules = kRecomputeMlaUpProj;
  GptSpec one = w;
  one.layers = 8;
  one.dense_layers = 0;
  CHECK(b(gpt_stage_memory_footprint(one, up, 0).workspace) ==
        Approx(b(gpt_layer_activations(one, parse_strategy("tp2-pp8-dp64-ep64-mb1-sp-etp1"), 1)) -
               b(gpt_layer_activations(one, up, 1))));
}

TEST_CASE("leading dense layers: their parameters and activations on the stages that hold them",
          "[dist]") {
  // Mixtral 8x7B with its first 3 layers dense (a DeepSeek-style variant), pp4: stage 0 holds
  // layers 0-7, 3 of them dense; stage 1 layers 8-15, all sparse.
  GptSpec w = shipped_gpt("mixtral_8x7b");
  w.dense_layers = 3;
  const Strategy s = parse_strategy("tp1-pp4-dp16-ep8-mb1-zero1");
  const std::int64_t sparse = gpt_layer_parameters(w, 1, 8);
  const std::int64_t dense = gpt_layer_parameters(w.dense_layer_spec(), 1);
  CHECK(gpt_stage_parameters(w, s, 0) == 5 * sparse + 3 * dense + 32000 * 4096);
  CHECK(gpt_stage_parameters(w, s, 1) == 8 * sparse);
  // Activations of stage 0 (4 micro-batches in flight under 1F1B): 5 sparse layers and 3
  // dense ones, each as gpt_layer_activations counts it.
  const MemoryFootprint f = gpt_stage_memory_footprint(w, s, 0);
  const double per = 4.0 * (5.0 * b(gpt_layer_activations(w, s, 1)) +
                            3.0 * b(gpt_layer_activations(w.dense_layer_spec(), s, 1)));
  CHECK(b(f.activations) == Approx(per));
  // Stage_first_layer agrees with stage_layers (126 layers over 8 stages: 15, 16 x 6, 15).
  CHECK(stage_first_layer(126, 8, 0) == 0);
  CHECK(stage_first_layer(126, 8, 1) == 15);
  CHECK(stage_first_layer(126, 8, 7) == 111);
}

}  // namespace pathfinder

TEST_CASE("LoRA holds every weight, but gradients and optimizer states for its adapters only",
          "[dist][golden]") {
  // Llama 3 8B on one device, bf16 Adam: 32 layers of 218,112,000 parameters (4096·6144 QKV,
  // 4096² projection, 3·4096·14336 MLP, 2·4096 norms) + the token table and untied head
  // 2·128,256·4096 + the final norm 4096 = 8,030,261,248 held in 2 bytes.
  GptSpec w = shipped_gpt("llama3_8b");
  w.lora_rank = 16;
  w.lora_targets = kLoraQkv;
  const MemoryFootprint f = gpt_memory_footprint(w, parse_strategy("tp1-mb1"));
  // Adapters beside QKV: A 4096·16 + B 16·6144 = 163,840 per layer, 5,242,880 in all: 2-byte
  // gradients, a 4-byte master copy and two 4-byte moments each.
  const double adapters = 32.0 * 163840;
  CHECK(gpt_layer_trainable_parameters(w, 1) == 163840);
  CHECK(b(f.weights) == exactly(2.0 * (8030261248.0 + adapters)));
  CHECK(b(f.gradients) == exactly(2.0 * adapters));
  CHECK(b(f.optimizer) == exactly(12.0 * adapters));
  // The activations are those of full training (every layer's inputs kept for the data
  // gradients and the adapters).
  GptSpec full = shipped_gpt("llama3_8b");
  CHECK(f.activations == gpt_memory_footprint(full, parse_strategy("tp1-mb1")).activations);
}
