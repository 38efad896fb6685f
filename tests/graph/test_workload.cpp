// Tests for engine/graph/workload.hpp: each builder's parameter and FLOP counts against closed
// forms, the graph's order, and the optimizer's per-parameter costs.
#include "engine/graph/workload.hpp"
#include "tests/parallel/parallel_specs.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>

using namespace pathfinder;

namespace {

double fl(Flops f) { return f.in(units::flops); }

// GPT-3 175B (Brown et al. 2020 Table 2.1) and Megatron 22B (Korthikanti et al. 2022 Table 3),
// one micro-batch per iteration so that Megatron's B is the micro-batch.
GptSpec gpt3_175b() {
  GptSpec s;
  s.layers = 96;
  s.hidden = 12288;
  s.heads = 96;
  s.ffn = 4 * 12288;
  s.sequence = 2048;
  s.vocabulary = 51200;
  s.micro_batch = 1;
  s.global_batch = 1;
  return s;
}
GptSpec megatron_22b() {
  GptSpec s = gpt3_175b();
  s.layers = 48;
  s.hidden = 6144;
  s.heads = 64;
  s.ffn = 4 * 6144;
  s.micro_batch = 4;
  s.global_batch = 4;
  return s;
}

// Narayanan et al. 2021 (Megatron-LM, SC'21) §5.1 / appendix:
//   P = 12·l·h²·(1 + 13/(12h) + (V+s)/(12·l·h))
//   F = 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h))   (forward + backward, no recomputation)
double megatron_parameters(const GptSpec& g) {
  const double l = double(g.layers), h = double(g.hidden), V = double(g.vocabulary),
               s = double(g.sequence);
  return 12.0 * l * h * h * (1.0 + 13.0 / (12.0 * h) + (V + s) / (12.0 * l * h));
}
double megatron_flops(const GptSpec& g, double B) {
  const double l = double(g.layers), h = double(g.hidden), V = double(g.vocabulary),
               s = double(g.sequence);
  return 72.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * l * h));
}

// The non-GEMM FLOPs the closed form leaves out, per micro-batch (counts per element in
// gpt_graph.cpp's header). T = b·s tokens. Per layer:
//   forward  layernorms 2·8·T·h, QKV bias 3·T·h, residual adds 2·2·T·h, bias+GeLU 10·T·f,
//            softmax 6·b·a·s²
//   backward layernorms 2·13·T·h, residual merges 2·T·h, bias gradients T·(3h + h + f + h),
//            GeLU 18·T·f, softmax 5·b·a·s²
//   = 56·T·h + 29·T·f + 11·b·a·s²  (172·T·h + 11·b·a·s² with f = 4h)
// Outside the layers: embedding T·h + 2·T·h, final layernorm 8·T·h + 13·T·h, cross-entropy
// 4·T·V + 2·T forward and T·V + T backward = 24·T·h + 5·T·V + 3·T.
double gpt_non_gemm_flops(const GptSpec& g) {
  const double T = double(g.micro_batch * g.sequence), h = double(g.hidden),
               f = double(g.ffn), V = double(g.vocabulary), s = double(g.sequence),
               ba = double(g.micro_batch * g.heads), l = double(g.layers);
  // Attention: softmax 6 + 5 per probability, dropout (when on) 3 forward + 1 backward.
  const double per_prob = g.dropout ? 15.0 : 11.0;
  return l * (56.0 * T * h + 29.0 * T * f + per_prob * ba * s * s) + 24.0 * T * h + 5.0 * T * V +
         3.0 * T;
}

void check_gpt_against_megatron(const GptSpec& spec) {
  const ComputeGraph g = build_gpt_graph(spec);
  const double h = double(spec.hidden);
  // Parameters: the closed form counts per layer 12h² weights + 13h biases and layernorm gains,
  // plus V·h + s·h embeddings; the graph also has the final layernorm's gain and bias (2h).
  CHECK(double(g.parameter_count()) == Approx(megatron_parameters(spec) + 2.0 * h).epsilon(1e-15));
  CHECK(g.parameter_count() - static_cast<std::int64_t>(std::llround(megatron_parameters(spec))) ==
        2 * spec.hidden);

  // GEMM FLOPs are exactly the closed form (up to double rounding of a ~1e15 sum).
  const double F = megatron_flops(spec, double(spec.micro_batch));
  CHECK(fl(g.gemm_flops()) == Approx(F).epsilon(1e-12));
  // All forward + backward FLOPs: the closed form plus the non-GEMM work it drops.
  const double fwd_bwd = fl(g.flops(Phase::kForward) + g.flops(Phase::kBackwardData) +
                            g.flops(Phase::kBackwardWeight));
  CHECK(fwd_bwd == Approx(F + gpt_non_gemm_flops(spec)).epsilon(1e-12));
  // Tolerance against the bare closed form: per layer the dropped work over the GEMM work is
  // about (172·T·h + 15·b·a·s²)/(72·T·h²) = 172/(72h) + 15·a·s/(72h²) with dropout:
  //   175B: 1.94e-4 + 2.71e-4 = 4.7e-4;  22B: 3.89e-4 + 7.23e-4 = 1.11e-3.  Both < 1.2e-3.
  CHECK(fwd_bwd > F);
  CHECK((fwd_bwd - F) / F < 1.2e-3);
  // Backward = 2 × forward for the GEMMs: forward GEMM FLOPs are F / 3.
  Flops fwd_gemm;
  for (const auto& k : g.kernels()) {
    if (k.gemm && k.phase == Phase::kForward) fwd_gemm += k.gemm->flops();
  }
  CHECK(fl(fwd_gemm) == Approx(F / 3.0).epsilon(1e-12));
  // Adam updates every parameter once: 16 FLOPs each.
  CHECK(fl(g.flops(Phase::kUpdate)) == Approx(16.0 * double(g.parameter_count())).epsilon(1e-15));
  CHECK(dependencies_precede(g));
  CHECK(is_acyclic(g));
}

}  // namespace

TEST_CASE("GEMM workload: one forward kernel of 2·m·n·k FLOPs", "[graph][golden]") {
  const Workload w = make_workload("g", GemmSpec{4096, 2048, 1024, DataType::kBf16});
  REQUIRE(w.graph.size() == 1);
  const Kernel& k = w.graph.kernel(0);
  CHECK(k.kind == KernelKind::kGemm);
  CHECK(k.phase == Phase::kForward);
  CHECK(k.dtype == DataType::kBf16);
  CHECK(*k.gemm == GemmShape{1, 4096, 2048, 1024});
  // 2 · 4096 · 2048 · 1024 = 17179869184 FLOP
  CHECK(fl(k.flops) == 17179869184.0);
  CHECK(w.stats.parameters == 0);
  CHECK(fl(w.stats.flops_per_iteration) == 17179869184.0);
  CHECK(fl(w.stats.gemm_flops_per_iteration) == 17179869184.0);
  CHECK(w.stats.kernels == 1);
  CHECK(kind_of(w.spec) == WorkloadKind::kGemm);
}

TEST_CASE("GPT-3 175B against Megatron's closed forms", "[graph][golden]") {
  const GptSpec s = gpt3_175b();
  // P = 12·96·12288² + 13·96·12288 + (51200 + 2048)·12288
  //   = 173946175488 + 15335424 + 654311424 = 174615822336
  CHECK(std::llround(megatron_parameters(s)) == 174615822336LL);
  check_gpt_against_megatron(s);
}

TEST_CASE("Megatron 22B against Megatron's closed forms", "[graph][golden]") {
  const GptSpec s = megatron_22b();
  // P = 12·48·6144² + 13·48·6144 + (51200 + 2048)·6144 = 21743271936 + 3833856 + 327155712
  //   = 22074261504
  CHECK(std::llround(megatron_parameters(s)) == 22074261504LL);
  check_gpt_against_megatron(s);
}

TEST_CASE("GPT graph structure", "[graph]") {
  GptSpec s = megatron_22b();
  s.layers = 3;
  const ComputeGraph g = build_gpt_graph(s);
  std::map<int, int> per_layer;
  std::map<Phase, int> gemms;
  for (const auto& k : g.kernels()) {
    ++per_layer[k.layer];
    if (k.gemm) ++gemms[k.phase];
    CHECK(k.layer >= -1);
    CHECK(k.layer < 3);
    CHECK(k.gemm.has_value() == is_gemm(k.kind));
    if (k.gemm) CHECK(k.flops >= k.gemm->flops());
  }
  // Per layer: forward 14 kernels (2 layernorms, 4 linears, scores, softmax, attention dropout,
  // context and its layout copy, 2 residual adds, GeLU); backward 4 × 2 linear GEMMs + 4
  // attention GEMMs + dropout + softmax + GeLU + 2 layernorms + 2 gradient merges + the q/k/v
  // gradients' concatenation = 20; one update.
  CHECK(per_layer[0] == 35);
  CHECK(per_layer[2] == 35);
  // Outside: embedding fwd/bwd, final layernorm fwd/bwd, logits fwd + 2 bwd, cross-entropy
  // fwd/bwd, updates of embeddings and final layernorm = 11.
  CHECK(per_layer[-1] == 11);
  // GEMMs: 6 forward per layer + logits; backward 2 per forward GEMM.
  CHECK(gemms[Phase::kForward] == 6 * 3 + 1);
  CHECK(gemms[Phase::kBackwardData] + gemms[Phase::kBackwardWeight] == 2 * (6 * 3 + 1));
  CHECK(gemms[Phase::kBackwardWeight] == 4 * 3 + 1);  // one per weight matrix
  // The QKV projection of layer 0: (T, 3h, h) with its bias added in the epilogue:
  // 2·8192·18432·6144 + 8192·18432 FLOPs, T = 4·2048 = 8192.
  const Kernel& qkv = g.kernel(2);
  CHECK(qkv.name == "l0.qkv.fwd");
  CHECK(*qkv.gemm == GemmShape{1, 8192, 18432, 6144});
  CHECK(fl(qkv.flops) == 2.0 * 8192 * 18432 * 6144 + 8192.0 * 18432);
  // Attention scores: 4·64 = 256 products of (s, s, h/a) = (2048, 2048, 96).
  const Kernel& scores = g.kernel(3);
  CHECK(scores.kind == KernelKind::kAttentionScores);
  CHECK(*scores.gemm == GemmShape{256, 2048, 2048, 96});
  // The softmax streams the 256·2048² fp16 probabilities once in and once out: 2 GiB each.
  const Kernel& sm = g.kernel(4);
  CHECK(sm.kind == KernelKind::kSoftmax);
  CHECK(sm.bytes_read.in(units::bytes) == 256.0 * 2048 * 2048 * 2);
  CHECK(sm.bytes_written.in(units::bytes) == 256.0 * 2048 * 2048 * 2);
  CHECK(g.kernels().back().phase == Phase::kUpdate);
}

TEST_CASE("GPT iteration: micro-batches times forward+backward, one update", "[graph]") {
  GptSpec s = megatron_22b();
  s.layers = 2;
  s.micro_batch = 1;
  s.global_batch = 8;
  const Workload w = make_workload("x", s);
  CHECK(w.stats.micro_batches == 8);
  CHECK(fl(w.stats.flops_per_iteration) ==
        Approx(8.0 * fl(w.stats.forward_flops + w.stats.backward_flops) +
               fl(w.stats.update_flops)).epsilon(1e-15));
  CHECK(fl(w.stats.gemm_flops_per_iteration) ==
        Approx(megatron_flops(s, 8.0)).epsilon(1e-12));  // Megatron's B = global batch
  CHECK(w.stats.parameters == w.graph.parameter_count());
}

TEST_CASE("LSTM LM: parameters, FLOPs and the reference's parameter count", "[graph][golden]") {
  // The paper's case study (paper §8): B 16384, S 20, D 16384, V 800000, L 2.
  LstmSpec s{16384, 20, 16384, 800000, 2, DataType::kFp16, Optimizer::kSgd};
  const ComputeGraph g = build_lstm_graph(s);
  const double B = 16384, S = 20, D = 16384, V = 800000, L = 2;
  // V·D + (2D+1)·4D·L + (D+1)·V = 13107200000 + 4295098368 + 13108000000 = 30510298368
  CHECK(g.parameter_count() == 30510298368LL);
  // GEMMs per step: per layer 2·B·2D·4D = 16·B·D² forward and twice that backward; softmax
  // 2·B·D·V forward and twice that backward.
  const double gemm = S * (L * 48.0 * B * D * D + 6.0 * B * D * V);
  CHECK(fl(g.gemm_flops()) == Approx(gemm).epsilon(1e-12));
  // Non-GEMM per step (deepflow-reference §3.8): per layer cell forward 5·B·4D, backward 5·B·D,
  // weight-gradient sum 2D·4D; softmax B·(3V−1) forward, 5·B·V backward; embedding backward
  // B·D adds. SGD: 3 FLOPs per parameter.
  const double pointwise =
      S * (L * (20.0 * B * D + 5.0 * B * D + 8.0 * D * D) + B * (3.0 * V - 1.0) + 5.0 * B * V +
           B * D);
  CHECK(fl(g.total_flops()) ==
        Approx(gemm + pointwise + 3.0 * double(g.parameter_count())).epsilon(1e-12));
  CHECK(dependencies_precede(g));
  CHECK(is_acyclic(g));
  // Kernels: per step embedding, L·(GEMM + pointwise), softmax GEMM + pointwise forward;
  // softmax pointwise + 2 GEMMs, L·(pointwise + 2 GEMMs + sum), embedding backward;
  // updates: embedding, L layers, softmax.  20·(1 + 4 + 2) + 20·(3 + 8 + 1) + 4 = 384.
  CHECK(g.size() == 384);
}

TEST_CASE("LSTM LM parameter count matches the reference run", "[graph][golden]") {
  // deepflow-reference.md §8: B 64, V 40000, L 1, D 4096, S 10 -> 0.47034272 B parameters,
  // which includes a projection D·P = 4096·2048 the model never runs (proj = False).
  LstmSpec s{64, 10, 4096, 40000, 1, DataType::kFp16, Optimizer::kSgd};
  const ComputeGraph g = build_lstm_graph(s);
  // 40000·4096 + 8193·16384 + 4097·40000 = 163840000 + 134234112 + 163880000 = 461954112
  CHECK(g.parameter_count() == 461954112LL);
  CHECK(g.parameter_count() + 4096LL * 2048 == 470342720LL);
  // One forward cell GEMM (B, 2D, 4D) as (m, n, k) = (64, 16384, 8192).
  bool found = false;
  for (const auto& k : g.kernels()) {
    if (k.name != "t0.l0.cell.fwd") continue;
    found = true;
    CHECK(*k.gemm == GemmShape{1, 64, 16384, 8192});
  }
  CHECK(found);
}

TEST_CASE("optimizer costs per parameter", "[graph][golden]") {
  // Adam, mixed fp16 (Megatron's step): grad copy r2 w4, unscale r4 w4, norm r4, Adam r16 w12,
  // weight copy r4 w2: read 30, write 22.
  const UpdateCost a16 = update_cost(Optimizer::kAdam, DataType::kFp16);
  CHECK(a16.flops == 16.0);
  CHECK(a16.bytes_read == 30.0);
  CHECK(a16.bytes_written == 22.0);
  // bf16: no loss scaling, read 2 + 24 = 26, write 16 + 2 = 18.
  CHECK(update_cost(Optimizer::kAdam, DataType::kBf16).bytes_read == 26.0);
  CHECK(update_cost(Optimizer::kAdam, DataType::kBf16).bytes_written == 18.0);
  // Adam, fp32: read g, w, m, v = 16; write w, m, v = 12.
  const UpdateCost a32 = update_cost(Optimizer::kAdam, DataType::kFp32);
  CHECK(a32.bytes_read == 16.0);
  CHECK(a32.bytes_written == 12.0);
  // fp8 gradients: read 1 + 24, write 16 + 1.
  CHECK(update_cost(Optimizer::kAdam, DataType::kFp8).bytes_read == 25.0);
  CHECK(update_cost(Optimizer::kAdam, DataType::kFp8).bytes_written == 17.0);
  // SGD: 3 FLOPs; fp32 read g, w = 8, write w = 4; bf16 read 2 + 4, write 4 + 2.
  const UpdateCost s32 = update_cost(Optimizer::kSgd, DataType::kFp32);
  CHECK(s32.flops == 3.0);
  CHECK(s32.bytes_read == 8.0);
  CHECK(s32.bytes_written == 4.0);
  const UpdateCost s16 = update_cost(Optimizer::kSgd, DataType::kBf16);
  CHECK(s16.bytes_read == 6.0);
  CHECK(s16.bytes_written == 6.0);
  // An update kernel over 1000 parameters with Adam fp16: 16000 FLOP, 30000 B read, 22000 written.
  const Kernel k = update_kernel("u", Optimizer::kAdam, DataType::kFp16, 1000, 3, {});
  CHECK(k.kind == KernelKind::kOptimizerUpdate);
  CHECK(k.phase == Phase::kUpdate);
  CHECK(k.layer == 3);
  CHECK(fl(k.flops) == 16000.0);
  CHECK(k.bytes_read.in(units::bytes) == 30000.0);
  CHECK(k.bytes_written.in(units::bytes) == 22000.0);
}

TEST_CASE("workload kinds and optimizers parse", "[graph]") {
  CHECK(valid_workload_kinds() == std::vector<std::string>{"gemm", "lstm", "gpt"});
  CHECK(valid_optimizers() == std::vector<std::string>{"sgd", "adam"});
  CHECK(parse_workload_kind("gpt") == WorkloadKind::kGpt);
  CHECK(to_string(WorkloadKind::kLstm) == "lstm");
  CHECK(parse_optimizer("adam") == Optimizer::kAdam);
  CHECK(to_string(Optimizer::kSgd) == "sgd");
  CHECK_FALSE(parse_optimizer("lamb").has_value());
}

TEST_CASE("linear-layer weights: what a quantizing stack keeps FP8 copies of", "[graph][golden]") {
  // GPT-3 175B (h 12288, f 4h, biases, layernorm) on one of t = 8 ranks: QKV, projection and
  // the MLP's two matrices, 12·h²/8 = 226,492,416; the rest of the layer's parameters are its
  // biases and norms, (3h + f)/t + 6h.
  const GptSpec g = gpt3_175b();
  const std::int64_t h = g.hidden;
  CHECK(gpt_layer_linear_weights(g, 8) == 226492416);
  CHECK(gpt_layer_parameters(g, 8) - gpt_layer_linear_weights(g, 8) == (3 * h + 4 * h) / 8 + 6 * h);
  // A mixture of experts (Mixtral 8x7B: h 4096, 32 heads of 128, 8 KV heads, 8 SwiGLU experts
  // of 14336, no biases): QKV 4096·48·128 = 25,165,824, projection 4096² = 16,777,216, experts
  // 8·3·4096·14336 = 1,409,286,144; the router (4096·8) and the two RMSNorms (2·4096) left out.
  const GptSpec m = test::shipped_gpt("mixtral_8x7b");
  CHECK(gpt_layer_linear_weights(m, 1) == 25165824 + 16777216 + 1409286144);
  CHECK(gpt_layer_parameters(m, 1) - gpt_layer_linear_weights(m, 1) == 4096 * 8 + 2 * 4096);
  // Over ep 4 each rank holds two experts.
  CHECK(gpt_layer_linear_weights(m, 1, 4) == 25165824 + 16777216 + 1409286144 / 4);
}
