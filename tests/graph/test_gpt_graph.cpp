// Tests for engine/graph/gpt_graph.cpp's Llama-style variants (issue 13) and the parameter and
// model-FLOP counts of engine/graph/workload.hpp that generalise with them. The GPT-3 layout's
// own graph is tested in test_workload.cpp and test_gpt_partition.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "engine/graph/workload.hpp"

using namespace pathfinder;

namespace {

// A small Llama-shaped decoder: h 256, a 8 heads of d = 32, g 2 KV heads, f 768, s 128, b 2,
// V 1024, two layers; T = b·s = 256 tokens.
GptSpec tiny_llama() {
  GptSpec s;
  s.layers = 2;
  s.hidden = 256;
  s.heads = 8;
  s.kv_heads = 2;
  s.ffn = 768;
  s.sequence = 128;
  s.vocabulary = 1024;
  s.micro_batch = 2;
  s.global_batch = 4;
  s.precision = DataType::kBf16;
  s.dropout = false;
  s.mlp = MlpKind::kSwiglu;
  s.norm = NormKind::kRmsNorm;
  s.position = PositionKind::kRotary;
  s.attention = AttentionKind::kFlash;
  s.tied_embeddings = false;
  s.bias = false;
  return s;
}

const Kernel& find(const ComputeGraph& g, const std::string& name) {
  const auto& ks = g.kernels();
  const auto it = std::find_if(ks.begin(), ks.end(), [&](const Kernel& k) { return k.name == name; });
  REQUIRE(it != ks.end());
  return *it;
}
// tiny_llama with multi-head latent attention: 8 heads of 48 for keys (32 without and 16
// with rotary positions) and 32 for values, query latent 96, key/value latent 64.
GptSpec tiny_mla() {
  GptSpec s = tiny_llama();
  s.kv_heads = 8;
  s.head_size = 48;
  s.rope_head_dim = 16;
  s.kv_lora_rank = 64;
  s.q_lora_rank = 96;
  s.v_head_size = 32;
  return s;
}
// FLOPs of layer 0's recomputed GEMMs.
double recomputed_gemm_flops(const ComputeGraph& g) {
  double out = 0.0;
  for (const Kernel& k : g.kernels()) {
    if (k.gemm && k.name.find(".recompute") != std::string::npos && k.layer == 0) {
      out += k.flops.si();
    }
  }
  return out;
}
std::size_t count(const ComputeGraph& g, KernelKind kind) {
  return static_cast<std::size_t>(std::count_if(g.kernels().begin(), g.kernels().end(),
                                                [&](const Kernel& k) { return k.kind == kind; }));
}

}  // namespace

TEST_CASE("GPT-3 defaults: parameter and model-FLOP counts keep their closed forms",
          "[graph][golden]") {
  GptSpec s;
  s.layers = 4;
  s.hidden = 512;
  s.heads = 8;
  s.ffn = 2048;
  s.sequence = 256;
  s.vocabulary = 4096;
  s.micro_batch = 2;
  s.global_batch = 8;
  for (const int t : {1, 2, 4}) {
    INFO("tp " << t);
    const std::int64_t h = 512, f = 2048;
    CHECK(gpt_layer_parameters(s, t) == (4 * h * h + 2 * h * f + 3 * h + f) / t + 6 * h);
  }
  // 12·l·h² + 13·l·h + (V + s)·h + 2h
  CHECK(gpt_parameters(s) == 12 * 4 * 512 * 512 + 13 * 4 * 512 + (4096 + 256) * 512 + 2 * 512);
  CHECK(gpt_parameters(s) == make_workload("gpt", s).stats.parameters);
  // Narayanan et al. 2021 eq. 3: 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)).
  const double B = 8, sq = 256, l = 4, h = 512, V = 4096;
  CHECK(gpt_model_flops(s) ==
        Approx(72.0 * B * sq * l * h * h * (1.0 + sq / (6.0 * h) + V / (12.0 * l * h)))
            .epsilon(1e-14));
}

TEST_CASE("Llama 3 8B model FLOPs with GQA and SwiGLU", "[graph][golden]") {
  GptSpec s = tiny_llama();
  s.layers = 32;
  s.hidden = 4096;
  s.heads = 32;
  s.kv_heads = 8;
  s.ffn = 14336;
  s.sequence = 8192;
  s.vocabulary = 128256;
  s.global_batch = 1024;
  // 3·B·s·(l·(2h·(h + 2·g·d) + 2h² + 6·h·f + 4·s·h) + 2·h·V), d = 128, g·d = 1024:
  // per layer 2·4096·6144 + 2·4096² + 6·4096·14336 + 4·8192·4096 = 570,425,344 per token;
  // 3·1024·8192·(32·570,425,344 + 1,050,673,152) = 4.858e17 FLOP per iteration.
  CHECK(gpt_model_flops(s) == Approx(485808217616547840.0).epsilon(1e-12));
}

TEST_CASE("Llama-style layer: GQA QKV, SwiGLU, RMSNorm, rotary and one flash kernel per pass",
          "[graph][golden]") {
  const GptSpec s = tiny_llama();
  const ComputeGraph g = build_gpt_graph(s);
  // Fused QKV: (T, (a + 2g)·d, h) = (256, (8 + 4)·32 = 384, 256); no biases.
  const Kernel& qkv = find(g, "l0.qkv.fwd");
  CHECK(*qkv.gemm == GemmShape{1, 256, 384, 256});
  CHECK(qkv.flops.in(units::flops) == 2.0 * 256 * 384 * 256);
  // SwiGLU: gate and up (256, 768, 256), down (256, 256, 768).
  CHECK(*find(g, "l0.fc1.fwd").gemm == GemmShape{1, 256, 768, 256});
  CHECK(*find(g, "l0.up.fwd").gemm == GemmShape{1, 256, 768, 256});
  CHECK(*find(g, "l0.fc2.fwd").gemm == GemmShape{1, 256, 256, 768});
  // SiLU(gate)·up: 6 FLOPs per element over T·f = 196,608; reads 2·T·f·2 B, writes T·f·2 B.
  const Kernel& act = find(g, "l0.swiglu.fwd");
  CHECK(act.flops.in(units::flops) == 6.0 * 196608);
  CHECK(act.bytes_read.in(units::bytes) == 2.0 * 196608 * 2);
  CHECK(act.bytes_written.in(units::bytes) == 196608.0 * 2);
  CHECK(find(g, "l0.swiglu.bwd").flops.in(units::flops) == 11.0 * 196608);
  // RMSNorm: 4 FLOPs per element of T·h = 65,536; writes y and a 4-byte 1/rms per token.
  const Kernel& ln = find(g, "l0.ln1.fwd");
  CHECK(ln.flops.in(units::flops) == 4.0 * 65536);
  CHECK(ln.bytes_written.in(units::bytes) == 65536.0 * 2 + 256.0 * 4);
  // Rotary on q and k: T·(a + g)·d = 256·10·32 = 81,920 elements, 3 FLOPs each.
  CHECK(find(g, "l0.rotary.fwd").flops.in(units::flops) == 3.0 * 81920);
  // FlashAttention: b·a = 16 problems of s = 128, d = 32; forward 4·s²·d·16/2 (causal)
  // = 16,777,216 FLOP; backward 2.5× = 41,943,040.
  const Kernel& fa = find(g, "l0.attn.flash.fwd");
  CHECK(fa.kind == KernelKind::kFlashAttention);
  CHECK(*fa.attention == AttentionShape{16, 128, 32, true, false});
  // The software profile's FlashAttention-2 marks both passes' kernels (timed at the device's
  // warp-MMA rate); nothing else in the graph changes.
  GptPartition fa2;
  fa2.attention_kernel = FlashKernel::kFlash2;
  const ComputeGraph g2 = build_gpt_graph(s, fa2);
  CHECK(find(g2, "l0.attn.flash.fwd").attention->kernel == FlashKernel::kFlash2);
  CHECK(find(g2, "l0.attn.flash.bwd").attention->kernel == FlashKernel::kFlash2);
  CHECK(fa.attention->kernel == FlashKernel::kNative);
  CHECK(g2.size() == g.size());
  CHECK(fa.flops.in(units::flops) == 16777216.0);
  CHECK(find(g, "l0.attn.flash.bwd").flops.in(units::flops) == 41943040.0);
  // Main memory: Q T·a·d·2 = 131,072 B, K and V 2·T·g·d·2 = 65,536 B read; O 131,072 B and the
  // fp32 logsumexp T·a·4 = 8,192 B written. No s×s matrix anywhere.
  CHECK(fa.bytes_read.in(units::bytes) == 196608.0);
  CHECK(fa.bytes_written.in(units::bytes) == 139264.0);
  // Backward reads Q, O, dO, K, V and the logsumexp; writes dQ, dK, dV.
  const Kernel& fb = find(g, "l0.attn.flash.bwd");
  CHECK(fb.bytes_read.in(units::bytes) == 3.0 * 131072 + 65536 + 8192);
  CHECK(fb.bytes_written.in(units::bytes) == 131072.0 + 65536);
  CHECK(count(g, KernelKind::kAttentionScores) == 0);
  CHECK(count(g, KernelKind::kSoftmax) == 0);
  CHECK(count(g, KernelKind::kFlashAttention) == 4);  // forward and backward, two layers
  // Without a causal mask the forward does all of s²: twice the work.
  GptSpec full = s;
  full.causal = false;
  CHECK(find(build_gpt_graph(full), "l0.attn.flash.fwd").flops.in(units::flops) == 33554432.0);
}

TEST_CASE("Llama-style parameters: untied head, no biases, no position table, tp shards",
          "[graph][golden]") {
  const GptSpec s = tiny_llama();
  // Layer: h·(a + 2g)·d + h² + 3·h·f + 2h = 256·384 + 65,536 + 589,824 + 512 = 754,176.
  CHECK(gpt_layer_parameters(s, 1) == 754176);
  // Model: 2 layers + token table and untied head 2·V·h = 524,288 + final RMSNorm 256.
  CHECK(gpt_parameters(s) == 2 * 754176 + 524288 + 256);
  CHECK(build_gpt_graph(s).parameter_count() == gpt_parameters(s));
  // tp 2: Q 4 heads, KV 1 of 2 heads per rank: 256·(4 + 2)·32 + 128·256 + 3·256·384 + 512.
  CHECK(gpt_layer_parameters(s, 2) == 49152 + 32768 + 294912 + 512);
  GptPartition two;
  two.tensor = 2;
  CHECK(build_gpt_graph(s, two).parameter_count() ==
        2 * gpt_layer_parameters(s, 2) + 2 * (1024 / 2) * 256 + 256);
  // tp 4 > g = 2: each rank holds one (replicated) KV head: QKV output (8/4 + 2)·32 = 128.
  GptPartition four;
  four.tensor = 4;
  CHECK(local_kv_heads(s, 4) == 1);
  CHECK(*find(build_gpt_graph(s, four), "l0.qkv.fwd").gemm == GemmShape{1, 256, 128, 256});
}

TEST_CASE("flash attention with selective recomputation recomputes nothing", "[graph]") {
  const GptSpec s = tiny_llama();
  GptPartition sel;
  sel.recompute = Recompute::kSelective;
  // The kernel recomputes its scores in its own backward; Megatron's selective recomputation
  // of the attention core adds nothing on top of it.
  CHECK(build_gpt_graph(s, sel).size() == build_gpt_graph(s).size());
  GptPartition full;
  full.recompute = Recompute::kFull;
  CHECK(find(build_gpt_graph(s, full), "l1.attn.flash.recompute").phase == Phase::kBackwardData);
}

TEST_CASE("FP8 linear layers: GEMMs in FP8, casts with transposes, attention and head in BF16",
          "[graph][golden]") {
  GptSpec s = tiny_llama();
  GptPartition p;
  p.quantized_linear = true;
  const ComputeGraph g = build_gpt_graph(s, p);
  for (const char* n : {"l0.qkv.fwd", "l0.proj.fwd", "l0.fc1.fwd", "l0.up.fwd", "l0.fc2.fwd",
                        "l0.qkv.dgrad", "l0.qkv.wgrad", "l1.fc2.wgrad"}) {
    INFO(n);
    CHECK(find(g, n).dtype == DataType::kFp8);
    // Transformer Engine's accumulation: fast forward, promoted in the gradient GEMMs.
    CHECK(find(g, n).promoted_accumulation == (std::string(n).find(".fwd") == std::string::npos));
  }
  GptPartition fast = p;
  fast.fp8_fast_backward_accumulation = true;
  const ComputeGraph gf = build_gpt_graph(s, fast);
  CHECK(std::none_of(gf.kernels().begin(), gf.kernels().end(),
                     [](const Kernel& k) { return k.promoted_accumulation; }));
  const ComputeGraph bf16 = build_gpt_graph(s);
  CHECK(std::none_of(bf16.kernels().begin(), bf16.kernels().end(),
                     [](const Kernel& k) { return k.promoted_accumulation; }));
  CHECK(find(g, "logits.fwd").dtype == DataType::kBf16);        // the output layer stays BF16
  CHECK(find(g, "l0.attn.flash.fwd").dtype == DataType::kBf16);  // and attention
  // The QKV input cast: T·h = 65,536 BF16 values read (131,072 B), FP8 and its transpose
  // written (2 x 65,536 B); the GEMM waits for it.
  const Kernel& cast = find(g, "l0.qkv.cast.fwd");
  CHECK(cast.bytes_read.in(units::bytes) == 131072.0);
  CHECK(cast.bytes_written.in(units::bytes) == 131072.0);
  // SwiGLU's gate and up share one cast of their input (fused, as TE's LayerNormMLP).
  CHECK(std::none_of(g.kernels().begin(), g.kernels().end(),
                     [](const Kernel& k) { return k.name == "l0.up.cast.fwd"; }));
  // Backward: the output gradient of fc2 (T·h) cast before its dgrad and wgrad.
  CHECK(find(g, "l0.fc2.grad.cast").bytes_read.in(units::bytes) == 131072.0);
  // The weights once per iteration, after the update: qkv 256·384 + proj 256·256 + gate, up
  // and down 3·256·768 = 753,664 values.
  const Kernel& wc = find(g, "l0.weights.cast");
  CHECK(wc.phase == Phase::kUpdate);
  CHECK(wc.bytes_read.in(units::bytes) == 753664.0 * 2);
  // Per layer: 4 forward casts (qkv, proj, fc1/up, fc2), 5 output-gradient casts, 1 weights.
  const auto casts = std::count_if(g.kernels().begin(), g.kernels().end(), [](const Kernel& k) {
    return k.name.find(".cast") != std::string::npos;
  });
  CHECK(casts == 2 * (4 + 5 + 1));
  // Model FLOPs are the precision's business no more than before: the same GEMM FLOPs.
  CHECK(find(g, "l0.qkv.fwd").flops.in(units::flops) == 2.0 * 256 * 384 * 256);
}

TEST_CASE("Sequence parallelism on the second dimension copies each gathered or scattered tensor",
          "[graph][golden]") {
  // tp2 with sequence parallelism, T = 256 tokens of h = 256 in bf16: every tensor the tensor
  // group gathers or reduce-scatters is T·h·2 = 131,072 B. With sp_layout_copy (DTensor's
  // Shard(1), PyTorch's functional collectives) each all-gather is followed and each
  // reduce-scatter preceded by a copy of that whole tensor: read and written once.
  const GptSpec s = tiny_llama();
  GptPartition p;
  p.tensor = 2;
  p.sequence_parallel = true;
  const ComputeGraph direct = build_gpt_graph(s, p);
  p.sp_layout_copy = true;
  const ComputeGraph g = build_gpt_graph(s, p);
  const auto layout = [](const ComputeGraph& graph) {
    int n = 0;
    for (const Kernel& k : graph.kernels()) {
      if (k.name.find(".layout") == std::string::npos) continue;
      ++n;
      CHECK(k.bytes_read.in(units::bytes) == 131072.0);
      CHECK(k.bytes_written.in(units::bytes) == 131072.0);
    }
    return n;
  };
  int collectives = 0;
  for (const Kernel& k : g.kernels()) {
    if (k.comm && k.comm->group == CommGroup::kTensor &&
        (k.comm->kind == CommKind::kAllGather || k.comm->kind == CommKind::kReduceScatter)) {
      ++collectives;
    }
  }
  // Per layer 4 forward (two gathers, two reduce-scatters), 4 backward and 2 re-gathers;
  // outside the layers the embedding's output reduce-scattered and its gradient gathered, the
  // final norm's output gathered and the logits' input gradient reduce-scattered.
  CHECK(collectives == 2 * 10 + 4);
  CHECK(layout(g) == collectives);
  CHECK(layout(direct) == 0);
  // The copy comes after the gather (the GEMM waits for it) and before the reduce-scatter.
  const Kernel& after = find(g, "l0.ln1.gather.fwd.layout");
  CHECK(find(g, "l0.ln1.gather.fwd").comm);
  CHECK(g.kernel(after.deps.front()).name == "l0.ln1.gather.fwd");
  CHECK(find(g, "l0.proj.reduce.fwd").deps.size() == 1);
  CHECK(g.kernel(find(g, "l0.proj.reduce.fwd").deps.front()).name ==
        "l0.proj.reduce.fwd.layout");
  // Without sequence parallelism the all-reduces need none.
  p.sequence_parallel = false;
  CHECK(layout(build_gpt_graph(s, p)) == 0);
}

TEST_CASE("FP8 sequence-parallel gathers: cast on the local rows, half the bytes gathered",
          "[graph][golden]") {
  // tp2 with sequence parallelism: T = 256 tokens, 128 local rows of h = 256.
  GptSpec s = tiny_llama();
  GptPartition p;
  p.tensor = 2;
  p.sequence_parallel = true;
  p.quantized_linear = true;
  p.quant_recipe = QuantRecipe::kCurrent;
  const ComputeGraph bf16_gathers = build_gpt_graph(s, p);
  p.fp8_tp_gather = true;
  const ComputeGraph g = build_gpt_graph(s, p);
  // 16-bit gathers carry T·h·2 = 131,072 B; FP8 ones T·h·1 = 65,536 B (per-tensor scales).
  for (const char* n : {"l0.ln1.gather.fwd", "l0.ln2.gather.fwd", "l0.fc2.gather.bwd",
                        "l0.proj.gather.bwd", "l0.ln1.regather.bwd", "l0.ln2.regather.bwd"}) {
    INFO(n);
    CHECK(find(bf16_gathers, n).comm->bytes.in(units::bytes) == 131072.0);
    CHECK(find(g, n).comm->bytes.in(units::bytes) == 65536.0);
  }
  // The reduce-scatters keep 16 bits.
  CHECK(find(g, "l0.proj.reduce.fwd").comm->bytes.in(units::bytes) == 131072.0);
  CHECK(find(g, "l0.qkv.reduce.bwd").comm->bytes.in(units::bytes) == 131072.0);
  // The cast runs on the 128 local rows before the gather: 128·256 values read at 2 B, one
  // FP8 copy written (32,768 B), after the amax pass current scaling takes; the GEMM does not
  // cast again (16-bit gathers: the QKV cast over all T rows, two copies written).
  const Kernel& cast = find(g, "l0.ln1.cast.fwd");
  CHECK(cast.bytes_read.in(units::bytes) == 65536.0);
  CHECK(cast.bytes_written.in(units::bytes) == 32768.0);
  CHECK(find(bf16_gathers, "l0.qkv.cast.fwd").bytes_written.in(units::bytes) == 131072.0);
  for (const char* n : {"l0.qkv.cast.fwd", "l0.fc1.cast.fwd"}) {
    INFO(n);
    CHECK(std::none_of(g.kernels().begin(), g.kernels().end(),
                       [&](const Kernel& k) { return k.name == n; }));
  }
  // After the gather the T rows are transposed for the other operand: 65,536 B each way.
  const Kernel& t = find(g, "l0.ln1.cast.fwd.transpose");
  CHECK(t.bytes_read.in(units::bytes) == 65536.0);
  CHECK(t.bytes_written.in(units::bytes) == 65536.0);
  // Backward: fc2's output gradient cast on the local rows before its gather.
  CHECK(find(g, "l0.fc2.grad.cast").bytes_read.in(units::bytes) == 65536.0);
  CHECK(find(bf16_gathers, "l0.fc2.grad.cast").bytes_read.in(units::bytes) == 131072.0);
  // Without sequence parallelism nothing is gathered and nothing changes.
  GptPartition no_sp = p;
  no_sp.sequence_parallel = false;
  GptPartition no_sp_bf16 = no_sp;
  no_sp_bf16.fp8_tp_gather = false;
  CHECK(build_gpt_graph(s, no_sp).kernels().size() ==
        build_gpt_graph(s, no_sp_bf16).kernels().size());
}

TEST_CASE("quantization recipes: each cast's bytes and FLOPs, FP4 operands, promoted blocks",
          "[graph][golden]") {
  // The QKV input: T·h = 65,536 BF16 values (131,072 B read), written as a row-wise and a
  // column-wise copy with their scales (gpt_linear.cpp quantize()).
  const GptSpec s = tiny_llama();
  const auto built = [&](QuantRecipe r) {
    GptPartition p;
    p.quantized_linear = true;
    p.quant_recipe = r;
    return build_gpt_graph(s, p);
  };
  const double e = 65536.0;
  struct Case {
    QuantRecipe recipe;
    double written, flops;  // per element
    bool amax;
    double read = 1.0;  // tensor reads by the cast itself
  };
  for (const Case& c : {Case{QuantRecipe::kDelayed, 2.0, 2.0, false},
                        Case{QuantRecipe::kCurrent, 2.0, 2.0, true},
                        Case{QuantRecipe::kRowwise, 2.0, 2.0, true, 2.0},
                        Case{QuantRecipe::kMxfp8, 2.0 * (1.0 + 1.0 / 32), 3.0, false},
                        Case{QuantRecipe::kBlockwise, 2.0 * (1.0 + 4.0 / 128), 3.0, false},
                        Case{QuantRecipe::kNvfp4, 2.0 * (0.5 + 1.0 / 16), 8.0, true}}) {
    INFO(to_string(c.recipe));
    const ComputeGraph g = built(c.recipe);
    const Kernel& cast = find(g, "l0.qkv.cast.fwd");
    CHECK(cast.bytes_read.in(units::bytes) == e * 2 * c.read);
    CHECK(cast.bytes_written.in(units::bytes) == Approx(e * c.written).epsilon(1e-12));
    CHECK(cast.flops.in(units::flops) == e * c.flops);
    // Per-tensor current scaling (and NVFP4's per-tensor scale) read the tensor once more for
    // its amax first; the cast waits for it.
    const bool amax = std::any_of(g.kernels().begin(), g.kernels().end(), [](const Kernel& k) {
      return k.name == "l0.qkv.cast.fwd.amax";
    });
    CHECK(amax == c.amax);
    if (c.amax) CHECK(find(g, "l0.qkv.cast.fwd.amax").bytes_read.in(units::bytes) == e * 2);
    // NVFP4's GEMMs take half-byte operands; every other recipe's FP8.
    const Kernel& qkv = find(g, "l0.qkv.fwd");
    CHECK(qkv.dtype == (c.recipe == QuantRecipe::kNvfp4 ? DataType::kFp4 : DataType::kFp8));
    CHECK(bytes_per_element(qkv.dtype).in(units::bytes) ==
          (c.recipe == QuantRecipe::kNvfp4 ? 0.5 : 1.0));
    // Block scales applied on the CUDA cores promote every FP8 GEMM's accumulation, forward
    // too; the other FP8 recipes the gradient GEMMs' only; FP4 none (Blackwell's units).
    CHECK(qkv.promoted_accumulation == (c.recipe == QuantRecipe::kBlockwise));
    CHECK(find(g, "l0.qkv.dgrad").promoted_accumulation == (c.recipe != QuantRecipe::kNvfp4));
    // Row-wise scales with promoted accumulation: each gradient GEMM is cuBLAS's tensor-wise one
    // followed by a kernel scaling its output (torchao): the QKV data gradient's T·h = 65,536
    // BF16 values read and written, the weight gradient's h·(a + 2g)·d = 256·384.
    const bool rescale = std::any_of(g.kernels().begin(), g.kernels().end(), [](const Kernel& k) {
      return k.name == "l0.qkv.dgrad.rescale";
    });
    CHECK(rescale == (c.recipe == QuantRecipe::kRowwise));
    if (rescale) {
      CHECK(find(g, "l0.qkv.dgrad.rescale").bytes_read.in(units::bytes) == e * 2);
      CHECK(find(g, "l0.qkv.dgrad.rescale").bytes_written.in(units::bytes) == e * 2);
      CHECK(find(g, "l0.qkv.wgrad.rescale").bytes_read.in(units::bytes) == 256.0 * 384 * 2);
      CHECK_FALSE(std::any_of(g.kernels().begin(), g.kernels().end(), [](const Kernel& k) {
        return k.name == "l0.qkv.fwd.rescale";  // the forward GEMM applies its scales itself
      }));
    }
  }
}

TEST_CASE("context parallel: s/cp tokens per rank, a key/value ring before each flash kernel",
          "[graph][golden]") {
  const GptSpec s = tiny_llama();  // b 2, s 128: T = 256; g 2 KV heads of d 32, bf16
  GptPartition cp2;
  cp2.context = 2;
  const ComputeGraph g = build_gpt_graph(s, cp2);
  // Every token-wise kernel on T/cp = 128 tokens: the QKV GEMM (T/2, (8 + 4)·32, 256).
  CHECK(*find(g, "l0.qkv.fwd").gemm == GemmShape{1, 128, 384, 256});
  // Attention: s/cp = 64 queries of each (sequence, head) against all 128 keys, half the work
  // of one rank without cp: 4·16·64·128·32/2 = 8,388,608 FLOP.
  const Kernel& fa = find(g, "l0.attn.flash.fwd");
  CHECK(fa.attention->query_count() == 64);
  CHECK(fa.attention->sequence == 128);
  CHECK(fa.flops.in(units::flops) == 8388608.0);
  // The ring before it: cp - 1 = 1 step of this rank's K and V, 2·(T/cp)·g·d·2 B = 32,768 B,
  // on the context group; backward carries K, V and their gradients, twice that.
  const Kernel& ring = find(g, "l0.attn.flash.fwd.ring");
  REQUIRE(ring.comm);
  CHECK(ring.comm->group == CommGroup::kContext);
  CHECK(ring.comm->ring_steps == 1);
  CHECK(ring.comm->bytes.in(units::bytes) == 32768.0);
  CHECK(find(g, "l0.attn.flash.bwd.ring").comm->bytes.in(units::bytes) == 65536.0);
  const auto ring_id = static_cast<KernelId>(&ring - g.kernels().data());
  CHECK(std::find(fa.deps.begin(), fa.deps.end(), ring_id) != fa.deps.end());
  // After it the steps' partial results merged: causal, 1 + 3/4 (cp - 1) = 1.75 full steps.
  // Forward over O = 128·8·32·2 B = 65,536 B and the fp32 lse 128·8·4 B = 4,096 B: reads
  // (2·1.75 - 1)·O + 1.75·lse = 171,008 B, writes 1.75·O = 114,688 B.
  const Kernel& merge = find(g, "l0.attn.flash.fwd.cp_merge");
  CHECK(merge.bytes_read.in(units::bytes) == 171008.0);
  CHECK(merge.bytes_written.in(units::bytes) == 114688.0);
  CHECK(merge.deps == std::vector<KernelId>{static_cast<KernelId>(&fa - g.kernels().data())});
  // Backward over dQ (65,536 B) and this rank's dK, dV (128·2·64·2 B = 32,768 B): read twice
  // and written once per step, 344,064 and 172,032 B.
  const Kernel& merge_bwd = find(g, "l0.attn.flash.bwd.cp_merge");
  CHECK(merge_bwd.bytes_read.in(units::bytes) == 344064.0);
  CHECK(merge_bwd.bytes_written.in(units::bytes) == 172032.0);
  // Without context parallelism there is nothing to merge.
  const ComputeGraph whole = build_gpt_graph(s);
  CHECK(std::none_of(whole.kernels().begin(), whole.kernels().end(), [](const Kernel& k) {
    return k.name.find("cp_merge") != std::string::npos;
  }));
}

TEST_CASE("context parallel by all-to-all (Ulysses): heads regrouped around each flash kernel",
          "[graph][golden]") {
  const GptSpec s = tiny_llama();  // b 2, s 128: T = 256; 8 heads, g 2 KV heads of d 32, bf16
  GptPartition a2a;
  a2a.context = 2;
  a2a.context_all_to_all = true;
  const ComputeGraph g = build_gpt_graph(s, a2a);
  // Token-wise kernels as with the ring: T/cp = 128 tokens.
  CHECK(*find(g, "l0.qkv.fwd").gemm == GemmShape{1, 128, 384, 256});
  // Attention on whole sequences of 8/2 = 4 heads: b·4 = 8 problems of 128 queries against 128
  // keys, 4·8·128·128·32/2 = 8,388,608 FLOP (the ring's work per rank, split by heads).
  const Kernel& fa = find(g, "l0.attn.flash.fwd");
  CHECK(fa.attention->batch == 8);
  CHECK(fa.attention->query_count() == 128);
  CHECK(fa.flops.in(units::flops) == 8388608.0);
  // Before it, an all-to-all over the context group of what each rank holds: Q, (T/cp)·8·32·2 B
  // = 65,536, and K, V, (T/cp)·2·(32 + 32)·2 B = 32,768 (2 KV heads over cp 2: one each); after
  // it, O back, 65,536 B. No ring.
  const Kernel& in = find(g, "l0.attn.flash.fwd.a2a_in");
  REQUIRE(in.comm);
  CHECK(in.comm->kind == CommKind::kAllToAll);
  CHECK(in.comm->group == CommGroup::kContext);
  CHECK(in.comm->bytes.in(units::bytes) == 65536.0 + 32768.0);
  CHECK(find(g, "l0.attn.flash.fwd.a2a_out").comm->bytes.in(units::bytes) == 65536.0);
  CHECK(std::none_of(g.kernels().begin(), g.kernels().end(), [](const Kernel& k) {
    return k.name.find(".ring") != std::string::npos;
  }));
  // Backward: dO in (65,536 B), dQ, dK, dV out (65,536 + 32,768 B).
  CHECK(find(g, "l0.attn.flash.bwd.a2a_in").comm->bytes.in(units::bytes) == 65536.0);
  CHECK(find(g, "l0.attn.flash.bwd.a2a_out").comm->bytes.in(units::bytes) == 65536.0 + 32768.0);
  const auto in_id = static_cast<KernelId>(&in - g.kernels().data());
  CHECK(std::find(fa.deps.begin(), fa.deps.end(), in_id) != fa.deps.end());
}

TEST_CASE("mixture of experts: router, all-to-all dispatch, grouped expert GEMMs, combine",
          "[graph][golden]") {
  GptSpec s = tiny_llama();  // T = 256 tokens, h 256, SwiGLU, bf16
  s.experts = 4;
  s.top_k = 2;
  s.expert_ffn = 128;
  s.shared_experts = 1;
  GptPartition ep2;
  ep2.expert = 2;
  const ComputeGraph g = build_gpt_graph(s, ep2);
  // Parameters: per layer the attention (256·(8 + 4)·32 + 256²), two RMSNorms, the router
  // 256·4, the 4/2 = 2 local experts 2·3·256·128 and one shared expert 3·256·128; with the
  // token table and untied head 2·1024·256 and the final norm.
  CHECK(gpt_layer_parameters(s, 1, 2) == 256 * 384 + 65536 + 512 + 1024 + 2 * 98304 + 98304);
  CHECK(g.parameter_count() == 2 * gpt_layer_parameters(s, 1, 2) + 2 * 1024 * 256 + 256);
  CHECK(*find(g, "l0.router.fwd").gemm == GemmShape{1, 256, 4, 256});
  // Each token's 2 rows to the experts' ranks: T·k·h·2 B = 262,144 B, an all-to-all over the
  // expert group; the same back, and twice more in backward.
  const Kernel& dispatch = find(g, "l0.moe.dispatch.fwd");
  REQUIRE(dispatch.comm);
  CHECK(dispatch.comm->kind == CommKind::kAllToAll);
  CHECK(dispatch.comm->group == CommGroup::kExpert);
  CHECK(dispatch.comm->bytes.in(units::bytes) == 262144.0);
  CHECK(find(g, "l0.moe.combine.bwd").comm->bytes.in(units::bytes) == 262144.0);
  // Dropless routing: the host reads the split sizes before the forward all-to-all (Megatron-
  // Core's cuda_sync_point before_ep_alltoall), nowhere else; backward reuses them.
  CHECK(dispatch.host_sync);
  CHECK(std::count_if(g.kernels().begin(), g.kernels().end(),
                      [](const Kernel& k) { return k.host_sync; }) == 2);  // one per layer
  CHECK_FALSE(find(g, "l0.moe.dispatch.bwd").host_sync);
  // Batch-level overlap (Megatron-Core --overlap-moe-expert-parallel-comm): the all-to-alls on
  // the communication stream, the experts not waiting for them.
  GptPartition overlap = ep2;
  overlap.overlap_expert_comm = true;
  const ComputeGraph go = build_gpt_graph(s, overlap);
  const Kernel& od = find(go, "l0.moe.dispatch.fwd");
  CHECK(od.comm->overlapped);
  const auto od_id = static_cast<KernelId>(&od - go.kernels().data());
  const Kernel& ofc1 = find(go, "l0.experts.fc1.fwd");
  CHECK(std::find(ofc1.deps.begin(), ofc1.deps.end(), od_id) == ofc1.deps.end());
  CHECK(find(go, "l0.moe.combine.bwd").comm->overlapped);
  // Row-wise FP8: the experts' gradient GEMMs rescaled by their own kernels too (torchao).
  GptPartition rowwise = ep2;
  rowwise.quantized_linear = true;
  rowwise.quant_recipe = QuantRecipe::kRowwise;
  const ComputeGraph gr = build_gpt_graph(s, rowwise);
  CHECK(find(gr, "l0.experts.fc1.dgrad.rescale").bytes_read.in(units::bytes) ==
        2.0 * 256 * 256 * 2);  // 2 local experts x 256 rows x h 256, bf16
  // An FP8 dispatch (DeepSeek-V3 §3.3.2): the rows quantized before the forward dispatch and
  // the backward combine, which carry 1 B per element with blockwise scales (1 + 4/128):
  // T·k·h·1.03125 = 135,168 B; the forward combine and the backward dispatch stay 16-bit
  // (262,144 B). The experts' input cast moves before the dispatch, onto the T·h token rows.
  GptPartition fp8d = ep2;
  fp8d.quantized_linear = true;
  fp8d.quant_recipe = QuantRecipe::kBlockwise;
  fp8d.fp8_dispatch = true;
  const ComputeGraph gd = build_gpt_graph(s, fp8d);
  CHECK(find(gd, "l0.moe.dispatch.fwd").comm->bytes.in(units::bytes) == 135168.0);
  CHECK(find(gd, "l0.moe.combine.bwd").comm->bytes.in(units::bytes) == 135168.0);
  CHECK(find(gd, "l0.moe.combine.fwd").comm->bytes.in(units::bytes) == 262144.0);
  CHECK(find(gd, "l0.moe.dispatch.bwd").comm->bytes.in(units::bytes) == 262144.0);
  CHECK(find(gd, "l0.moe.dispatch.cast.fwd").bytes_read.in(units::bytes) == 256.0 * 256 * 2);
  CHECK(std::none_of(gd.kernels().begin(), gd.kernels().end(), [](const Kernel& k) {
    return k.name == "l0.experts.fc1.cast.fwd";
  }));
  // The permute copies FP8 rows: T·h in, T·k·h out at 1.03125 B (with the routing indices).
  CHECK(find(gd, "l0.moe.permute.fwd").bytes_written.in(units::bytes) == 135168.0);
  // 2 local experts, each T·k·ep/E = 256 rows (balanced): (2; 256, 128, 256).
  CHECK(*find(g, "l0.experts.fc1.fwd").gemm == GemmShape{2, 256, 128, 256});
  CHECK(*find(g, "l0.experts.fc2.fwd").gemm == GemmShape{2, 256, 256, 128});
  CHECK(*find(g, "l0.experts.fc1.wgrad").gemm == GemmShape{2, 256, 128, 256});
  // The shared expert as a dense MLP on all T tokens.
  CHECK(*find(g, "l0.shared.fc1.fwd").gemm == GemmShape{1, 256, 128, 256});
  // tp2 with sequence parallelism (as Megatron-Core requires): each rank routes its T/2 = 128
  // tokens, the all-to-all carries 128·2·256·2 = 131,072 B, and the tensor group all-gathers
  // the 2 x 256 expert rows (262,144 B) before its half-width experts and reduce-scatters after.
  GptPartition sp;
  sp.tensor = 2;
  sp.sequence_parallel = true;
  sp.expert = 2;
  const ComputeGraph gs = build_gpt_graph(s, sp);
  CHECK(*find(gs, "l0.router.fwd").gemm == GemmShape{1, 128, 4, 256});
  CHECK(find(gs, "l0.moe.dispatch.fwd").comm->bytes.in(units::bytes) == 131072.0);
  CHECK(find(gs, "l0.experts.gather.fwd").comm->kind == CommKind::kAllGather);
  CHECK(find(gs, "l0.experts.gather.fwd").comm->bytes.in(units::bytes) == 262144.0);
  CHECK(find(gs, "l0.experts.reduce.fwd").comm->kind == CommKind::kReduceScatter);
  CHECK(*find(gs, "l0.experts.fc1.fwd").gemm == GemmShape{2, 256, 64, 256});
  // Whole experts (etp1, Megatron-Core's --expert-tensor-parallel-size 1): no gather or
  // reduce-scatter in the tensor group; each rank's experts take the rows its own 128 tokens
  // and its expert-group peers' send, T/t·k·ep/E = 128·2·2/4 = 128 per expert, full width 128:
  // the same FLOPs as the split experts' 256 rows of 64.
  GptPartition whole = sp;
  whole.expert_tensor = 1;
  const ComputeGraph gw = build_gpt_graph(s, whole);
  CHECK(std::none_of(gw.kernels().begin(), gw.kernels().end(), [](const Kernel& k) {
    return k.name.find("experts.gather") != std::string::npos ||
           k.name.find("experts.reduce") != std::string::npos;
  }));
  CHECK(*find(gw, "l0.experts.fc1.fwd").gemm == GemmShape{2, 128, 128, 256});
  CHECK(*find(gw, "l0.experts.fc2.dgrad").gemm == GemmShape{2, 128, 128, 256});
  CHECK(find(gw, "l0.moe.dispatch.fwd").comm->bytes.in(units::bytes) == 131072.0);
  CHECK(find(gw, "l0.experts.fc1.fwd").flops.in(units::flops) ==
        find(gs, "l0.experts.fc1.fwd").flops.in(units::flops));
  // Parameters: the 2 local experts whole, 2·3·256·128, beside the split dense weights.
  CHECK(gpt_layer_parameters(s, 2, 2, 1) - gpt_layer_parameters(s, 2, 2) == 2 * 3 * 256 * 64);
  CHECK(gw.parameter_count() - gs.parameter_count() == 2 * (2 * 3 * 256 * 64));
  // Without expert parallelism no all-to-all; all 4 experts local with 128 rows each; the
  // busiest rank's imbalance scales the rows.
  s.expert_imbalance = 1.5;
  const ComputeGraph local = build_gpt_graph(s);
  CHECK(count(local, KernelKind::kCommunication) == 0);
  // There the host synchronizes before the experts' first kernel (before_finish).
  CHECK(find(local, "l0.experts.fc1.fwd").host_sync);
  CHECK(*find(local, "l0.experts.fc1.fwd").gemm == GemmShape{4, 192, 128, 256});
}

TEST_CASE("latent attention: replicated down projections, per-head up projections",
          "[graph][golden]") {
  const GptSpec s = tiny_mla();  // T = 256 tokens (2 x 128), h 256, 8 heads
  const ComputeGraph g = build_gpt_graph(s);
  CHECK(*find(g, "l0.q_down.fwd").gemm == GemmShape{1, 256, 96, 256});
  CHECK(*find(g, "l0.q_up.fwd").gemm == GemmShape{1, 256, 8 * 48, 96});
  CHECK(*find(g, "l0.kv_down.fwd").gemm == GemmShape{1, 256, 64 + 16, 256});
  CHECK(*find(g, "l0.kv_up.fwd").gemm == GemmShape{1, 256, 8 * (32 + 32), 64});
  CHECK(*find(g, "l0.proj.fwd").gemm == GemmShape{1, 256, 256, 8 * 32});
  // Q·Kᵀ over 48 and P·V over 32 per (sequence, head): 2·16·128·128·80 / 2 (causal).
  const Kernel& fa = find(g, "l0.attn.flash.fwd");
  CHECK(fa.attention->value_dim == 32);
  CHECK(fa.flops.si() == 2.0 * 16 * 128 * 128 * 80 / 2);
  // Parameters: q 256·96 + 96 + 96·384, kv 256·80 + 64 + 64·512, projection 256·256, two
  // RMSNorms 512, SwiGLU 3·256·768 per layer; token table and untied head 2·1024·256, final norm.
  const std::int64_t layer = 256 * 96 + 96 + 96 * 384 + 256 * 80 + 64 + 64 * 512 + 65536 + 512 +
                             3 * 256 * 768;
  CHECK(gpt_layer_parameters(s, 1) == layer);
  CHECK(g.parameter_count() == 2 * layer + 2 * 1024 * 256 + 256);
  // tp2 with sequence parallelism: the down projections stay whole on each rank (T gathered
  // rows), the up projections and the projection split by heads; backward all-reduces the
  // latents' gradients, 256·(96 + 64 + 16)·2 B = 90,112 B, and no reduction follows the
  // down projections (their input gradient is complete on every rank).
  GptPartition tp2;
  tp2.tensor = 2;
  tp2.sequence_parallel = true;
  const ComputeGraph g2 = build_gpt_graph(s, tp2);
  CHECK(*find(g2, "l0.q_down.fwd").gemm == GemmShape{1, 256, 96, 256});
  CHECK(*find(g2, "l0.q_up.fwd").gemm == GemmShape{1, 256, 4 * 48, 96});
  CHECK(*find(g2, "l0.kv_up.fwd").gemm == GemmShape{1, 256, 4 * 64, 64});
  const Kernel& reduce = find(g2, "l0.latent.reduce.bwd");
  CHECK(reduce.comm->kind == CommKind::kAllReduce);
  CHECK(reduce.comm->bytes.in(units::bytes) == 90112.0);
  CHECK(std::none_of(g2.kernels().begin(), g2.kernels().end(),
                     [](const Kernel& k) { return k.name == "l0.qkv.reduce.bwd"; }));
  CHECK(g2.parameter_count() == 2 * gpt_layer_parameters(s, 2) + 2 * 512 * 256 + 256);
  CHECK(gpt_layer_parameters(s, 2) == layer - 96 * 192 - 64 * 256 - 32768 - 3 * 256 * 384);
}

TEST_CASE("recomputed modules: Megatron-Core's --recompute-modules re-run before the backward",
          "[graph]") {
  // The latent-attention layer above (T = 256, 8 heads of 48 with 32 for values, latents 96
  // and 64 + 16 rotary), a dense SwiGLU MLP of 768.
  const GptSpec s = tiny_mla();
  GptPartition mods;
  mods.recompute = Recompute::kSelective;
  mods.recompute_modules = kRecomputeMlaUpProj | kRecomputeMlp | kRecomputeLayernorm;
  const ComputeGraph g = build_gpt_graph(s, mods);
  // The up projections as forward (q 96 -> 8·48, kv 64 -> 8·64), the MLP's three GEMMs, both
  // norms: all in the backward, before the layer's gradients.
  CHECK(*find(g, "l0.q_up.recompute").gemm == GemmShape{1, 256, 8 * 48, 96});
  CHECK(*find(g, "l0.kv_up.recompute").gemm == GemmShape{1, 256, 8 * 64, 64});
  CHECK(*find(g, "l0.fc1.recompute").gemm == GemmShape{1, 256, 768, 256});
  CHECK(*find(g, "l0.fc2.recompute").gemm == GemmShape{1, 256, 256, 768});
  for (const char* n : {"l0.rotary.recompute", "l0.ln1.recompute", "l0.ln2.recompute",
                        "l0.swiglu.recompute", "l0.up.recompute"}) {
    CHECK(find(g, n).phase == Phase::kBackwardData);
  }
  // Recomputed GEMM FLOPs per layer: 2·256·(96·384 + 64·512 + 3·256·768).
  CHECK(recomputed_gemm_flops(g) == 2.0 * 256 * (96 * 384 + 64 * 512 + 3 * 256 * 768));
  // The default module, core_attn, recomputes nothing beside flash attention.
  GptPartition core = mods;
  core.recompute_modules = 0;
  const ComputeGraph gc = build_gpt_graph(s, core);
  CHECK(std::none_of(gc.kernels().begin(), gc.kernels().end(), [](const Kernel& k) {
    return k.name.find(".recompute") != std::string::npos;
  }));
  // A mixture of experts (4 experts, top 2, width 128, one shared; ep2): moe_act re-runs the
  // experts' SwiGLU on their 2 x 256 rows of 128; moe the whole block, dispatch included.
  GptSpec e = tiny_llama();
  e.experts = 4;
  e.top_k = 2;
  e.expert_ffn = 128;
  e.shared_experts = 1;
  GptPartition act;
  act.expert = 2;
  act.recompute = Recompute::kSelective;
  act.recompute_modules = kRecomputeMoeAct;
  const ComputeGraph ga = build_gpt_graph(e, act);
  CHECK(find(ga, "l0.experts.swiglu.recompute").bytes_written.in(units::bytes) ==
        2.0 * 256 * 128 * 2);
  CHECK(std::none_of(ga.kernels().begin(), ga.kernels().end(), [](const Kernel& k) {
    return k.name.find("moe.dispatch.recompute") != std::string::npos;
  }));
  GptPartition moe = act;
  moe.recompute_modules = kRecomputeMoe;
  const ComputeGraph gm = build_gpt_graph(e, moe);
  CHECK(find(gm, "l0.moe.dispatch.recompute").comm->bytes.in(units::bytes) == 262144.0);
  CHECK(*find(gm, "l0.experts.fc1.recompute").gemm == GemmShape{2, 256, 128, 256});
  CHECK(*find(gm, "l0.shared.fc1.recompute").gemm == GemmShape{1, 256, 128, 256});
}

TEST_CASE("op-level selective checkpointing recomputes every second linear and the element-wise",
          "[graph]") {
  // torchtitan's policy on a Llama layer (wq wk wv wo w1 w3 w2 in call order): the 2nd, 4th
  // and 6th linears (key, output and up projections), the norms, rotary, SiLU·up and the first
  // residual add, at the start of each layer's backward; nothing with Megatron's selective.
  GptSpec s = tiny_llama();  // T = 256, h 256, 8 heads of 32, 2 KV heads, ffn 768
  GptPartition op;
  op.recompute = Recompute::kSelective;
  op.selective_op = true;
  const ComputeGraph g = build_gpt_graph(s, op);
  CHECK(*find(g, "l0.k.recompute").gemm == GemmShape{1, 256, 2 * 32, 256});
  CHECK(*find(g, "l0.proj.recompute").gemm == GemmShape{1, 256, 256, 256});
  CHECK(*find(g, "l0.up.recompute").gemm == GemmShape{1, 256, 768, 256});
  for (const char* n : {"l0.ln1.recompute", "l0.rotary.recompute", "l0.residual1.recompute",
                        "l0.ln2.recompute", "l0.swiglu.recompute"}) {
    CHECK(find(g, n).phase == Phase::kBackwardData);
  }
  // Recomputed GEMM FLOPs per layer: 2·256·256·(64 + 256 + 768).
  CHECK(recomputed_gemm_flops(g) == 2.0 * 256 * 256 * (64 + 256 + 768));
  GptPartition megatron;
  megatron.recompute = Recompute::kSelective;
  const ComputeGraph m = build_gpt_graph(s, megatron);
  CHECK(std::none_of(m.kernels().begin(), m.kernels().end(), [](const Kernel& k) {
    return k.name.find(".recompute") != std::string::npos;
  }));
}

TEST_CASE("leading dense layers: the first dense_layers keep the MLP of width ffn", "[graph]") {
  GptSpec s = tiny_llama();  // 2 layers, h 256, ffn 768 (SwiGLU), untied, bf16
  s.experts = 4;
  s.top_k = 2;
  s.expert_ffn = 128;
  s.dense_layers = 1;
  const ComputeGraph g = build_gpt_graph(s);
  // Layer 0 dense: gate, up and down of width 768 and no router; layer 1 sparse.
  CHECK(*find(g, "l0.fc1.fwd").gemm == GemmShape{1, 256, 768, 256});
  CHECK(*find(g, "l1.router.fwd").gemm == GemmShape{1, 256, 4, 256});
  // Parameters: one dense layer (attention 256·384 + 256², norms 512, 3·256·512) and one
  // sparse (attention, norms, router 256·4, 4 experts 3·256·128 each), as gpt_parameters;
  // the dense one's MLP 3·256·768.
  const std::int64_t attention = 256 * 384 + 65536 + 512;
  const std::int64_t dense = attention + 3 * 256 * 768, sparse = attention + 1024 + 4 * 98304;
  CHECK(gpt_layer_parameters(s.dense_layer_spec(), 1) == dense);
  CHECK(gpt_layer_parameters(s, 1) == sparse);
  CHECK(gpt_parameters(s) == dense + sparse + 2 * 1024 * 256 + 256);
  CHECK(g.parameter_count() == gpt_parameters(s));
  // A partition of the second layer alone is sparse.
  GptPartition second;
  second.first_layer = 1;
  second.layers = 1;
  second.embedding = false;
  second.head = false;
  CHECK(build_gpt_graph(s, second).parameter_count() == sparse);
  // Model FLOPs: the dense layer's MLP 6·h·f per token, the sparse one's router 2·h·E and
  // top_k experts 6·h·f_e; 4 sequences of 128 tokens, forward + backward 3x.
  GptSpec all_sparse = s;
  all_sparse.dense_layers = 0;
  CHECK(gpt_model_flops(s) - gpt_model_flops(all_sparse) ==
        Approx(3.0 * 512.0 * (6.0 * 256 * 768 - (2.0 * 256 * 4 + 2 * 6.0 * 256 * 128))));
}

TEST_CASE("eager element-wise operators: each aten pass's traffic, fp32 where the code casts",
          "[graph]") {
  // torchtitan's Llama without torch.compile (GptPartition::eager). tiny_llama: T = 256 tokens,
  // h 256 (T·h = 65,536), f 768 (T·f = 196,608), a 8 query and g 2 key/value heads of d 32
  // (q and k: T·(a + g)·d = 81,920 elements), s 128, bf16 (p = 2, f32 = 4 bytes).
  const GptSpec s = tiny_llama();
  GptPartition eager;
  eager.eager = EagerOps{true, true, true, true};
  const ComputeGraph g = build_gpt_graph(s), e = build_gpt_graph(s, eager);
  // RMSNorm forward per element: x.float() 2 -> 4, pow 4 -> 4, mean 4, x·r 4 -> 4, .type_as
  // 4 -> 2, ·γ 2 -> 2: reads 20 and writes 16 bytes (fused: 2 and 2), plus γ and 1/rms.
  const Kernel& ln = find(e, "l0.ln1.fwd");
  CHECK(ln.bytes_read.in(units::bytes) == 20.0 * 65536 + 256 * 2);
  CHECK(ln.bytes_written.in(units::bytes) == 16.0 * 65536 + 256 * 4);
  // Its autograd: reads 4p + 10·4 + (p + 4) = 54, writes 2p + 7·4 + (p + 4) = 38 per element.
  const Kernel& lb = find(e, "l0.ln1.bwd");
  CHECK(lb.bytes_read.in(units::bytes) == 54.0 * 65536 + 256 * 2);
  CHECK(lb.bytes_written.in(units::bytes) == 38.0 * 65536 + 256 * 2);
  CHECK(lb.bytes_read.si() / find(g, "l0.ln1.bwd").bytes_read.si() > 8.0);
  // Rotary: .float() 2 -> 4, complex product 4 -> 4, .type_as 4 -> 2: 10 and 10 per element,
  // and freqs_cis (complex64, s·d/2·8 = 16,384 B) read once for q and once for k.
  const Kernel& rot = find(e, "l0.rotary.fwd");
  CHECK(rot.bytes_read.in(units::bytes) == 10.0 * 81920 + 2 * 16384);
  CHECK(rot.bytes_written.in(units::bytes) == 10.0 * 81920);
  CHECK(find(e, "l0.rotary.bwd").bytes_written.in(units::bytes) == 10.0 * 81920);
  // SiLU (2 -> 2) then the product (4 -> 2): 6 and 4 bytes per element against 4 and 2 fused;
  // backward the product's two gradients and SiLU's, 12 and 6 against 6 and 4.
  CHECK(find(e, "l0.swiglu.fwd").bytes_read.in(units::bytes) == 6.0 * 196608);
  CHECK(find(e, "l0.swiglu.fwd").bytes_written.in(units::bytes) == 4.0 * 196608);
  CHECK(find(e, "l0.swiglu.bwd").bytes_read.in(units::bytes) == 12.0 * 196608);
  CHECK(find(e, "l0.swiglu.bwd").bytes_written.in(units::bytes) == 6.0 * 196608);
  // repeat_kv: K and V of the 2 groups (T·2·(32 + 32)·2 = 65,536 B) copied for the 8 query
  // heads (262,144 B) before the flash kernel; backward the copies summed back.
  const Kernel& rep = find(e, "l0.attn.repeat_kv.fwd");
  CHECK(rep.bytes_read.in(units::bytes) == 65536.0);
  CHECK(rep.bytes_written.in(units::bytes) == 262144.0);
  CHECK(find(e, "l0.attn.repeat_kv.bwd").bytes_written.in(units::bytes) == 65536.0);
  // Only traffic changes: the forward's FLOPs as fused, two kernels more per layer (the copies).
  CHECK(e.size() == g.size() + 2 * 2);
  CHECK(e.flops(Phase::kForward) == g.flops(Phase::kForward));
  // Multi-head attention has nothing to repeat.
  GptSpec mha = s;
  mha.kv_heads = mha.heads;
  CHECK(build_gpt_graph(mha, eager).size() == build_gpt_graph(mha).size());
}

TEST_CASE("fused weight-gradient accumulation: every weight gradient adds into the main gradient",
          "[graph]") {
  // GptPartition::wgrad_accumulation 4: the layers' linear weight gradients (and the output
  // layer's) as C += A·B into fp32; data gradients and forward GEMMs unchanged.
  const GptSpec s = tiny_llama();
  GptPartition fused;
  fused.wgrad_accumulation = 4;
  const ComputeGraph g = build_gpt_graph(s, fused);
  int wgrads = 0;
  for (const Kernel& k : g.kernels()) {
    if (!k.gemm) continue;
    const bool wgrad = k.phase == Phase::kBackwardWeight;
    CHECK(k.gemm->accumulate == (wgrad ? 4 : 0));
    wgrads += wgrad ? 1 : 0;
  }
  CHECK(wgrads == 2 * 5 + 1);  // qkv, proj, gate, up, down per layer, and the output layer
  // fc2 (down) weight gradient: (f, h, T) = (768, 256, 256): C 768·256 read and written in fp32.
  const Kernel& down = find(g, "l0.fc2.wgrad");
  CHECK(down.bytes_written.in(units::bytes) == 768.0 * 256 * 4);
  CHECK(down.bytes_read.in(units::bytes) == (768.0 * 256 + 256.0 * 256) * 2 + 768.0 * 256 * 4);
}

TEST_CASE("separate gradient accumulation: every gradient added into the main gradient",
          "[graph]") {
  // GptPartition::gradient_add 4 (nanotron's fp32_grad.add_(half_param.grad)): per layer one
  // add over its parameters, h(a + 2g)d + h² + 3hf + 2h = 256·(8 + 4)·32 + 256² + 3·256·768 +
  // 2·256 = 98,304 + 65,536 + 589,824 + 512 = 754,176 elements, reading the bf16 gradient and
  // the fp32 buffer (2 + 4 bytes) and writing the buffer (4).
  const GptSpec s = tiny_llama();
  GptPartition part;
  part.gradient_add = 4;
  const ComputeGraph g = build_gpt_graph(s, part);
  const double layer = 754176.0;
  for (const char* name : {"l0.grad.accumulate", "l1.grad.accumulate"}) {
    const Kernel& k = find(g, name);
    CHECK(k.phase == Phase::kBackwardWeight);
    CHECK(k.bytes_read.in(units::bytes) == layer * 6);
    CHECK(k.bytes_written.in(units::bytes) == layer * 4);
  }
  // The untied head (V·h = 262,144) and the final RMSNorm (h) after the output layer's
  // gradient; the token table (V·h) after the embedding's backward.
  CHECK(find(g, "head.grad.accumulate").bytes_written.in(units::bytes) == (262144.0 + 256) * 4);
  CHECK(find(g, "embedding.grad.accumulate").bytes_written.in(units::bytes) == 262144.0 * 4);
  // The embedding's backward zeroes the table's gradient (V·h bf16) before the T = 256 rows'
  // scatter-add: written V·h·2 + T·h·2.
  CHECK(find(g, "embedding.bwd").bytes_written.in(units::bytes) == (1024.0 + 256.0) * 256 * 2);
  // With the GEMMs accumulating (fused), only the embedding's gradient is added.
  part.wgrad_accumulation = 4;
  const ComputeGraph fused = build_gpt_graph(s, part);
  int adds = 0;
  for (const Kernel& k : fused.kernels()) {
    if (k.name.find("grad.accumulate") != std::string::npos) {
      ++adds;
      CHECK(k.bytes_written.in(units::bytes) == 1024.0 * 256 * 4);
    }
  }
  CHECK(adds == 1);
}

TEST_CASE("q, k, v layout copies: split, made contiguous, k and v packed", "[graph]") {
  // EagerOps::qkv_layout (nanotron): tiny_llama's T = 256 tokens, a 8 query and g 2 key/value
  // heads of d 32: (a + 6g)·d·T = 20·32·256 = 163,840 elements read and written (bf16) after the
  // QKV GEMM; backward the split's gradients concatenated, (a + 2g)·d·T = 98,304.
  const GptSpec s = tiny_llama();
  GptPartition layout;
  layout.eager.qkv_layout = true;
  const ComputeGraph g = build_gpt_graph(s, layout);
  const Kernel& fwd = find(g, "l0.qkv.layout.fwd");
  CHECK(fwd.bytes_read.in(units::bytes) == 163840.0 * 2);
  CHECK(fwd.bytes_written.in(units::bytes) == 163840.0 * 2);
  const Kernel& bwd = find(g, "l0.qkv.grad.concat");
  CHECK(bwd.bytes_read.in(units::bytes) == 98304.0 * 2);
  CHECK(g.size() == build_gpt_graph(s).size() + 2 * 2);  // two kernels a layer
}

TEST_CASE("packed documents: attention within each document, the rest unchanged",
          "[graph][golden]") {
  GptSpec s = tiny_llama();  // b 2, s 128, 8 heads of d 32: 16 (sequence, head) problems
  s.document = 32;           // four 32-token documents per sequence
  const ComputeGraph g = build_gpt_graph(s);
  // Every query attends to at most its document's 32 keys: 16 problems of 128 queries against
  // 32 keys, 4·16·128·32·32/2 = 4,194,304 FLOP, a quarter (d/s) of the unpacked 16,777,216.
  const Kernel& fa = find(g, "l0.attn.flash.fwd");
  CHECK(fa.attention->query_count() == 128);
  CHECK(fa.attention->sequence == 32);
  CHECK(fa.flops.in(units::flops) == 4194304.0);
  CHECK(find(g, "l0.attn.flash.bwd").flops.in(units::flops) == 2.5 * 4194304.0);
  // Q, K, V and O still move whole: the same bytes as the unpacked kernel.
  const ComputeGraph whole = build_gpt_graph(tiny_llama());
  CHECK(fa.bytes_read == find(whole, "l0.attn.flash.fwd").bytes_read);
  CHECK(*find(g, "l0.qkv.fwd").gemm == *find(whole, "l0.qkv.fwd").gemm);
  CHECK(g.size() == whole.size());
  // Model FLOPs count 2·d·a·(d + d_v) per token and layer for the core instead of 2·s·...:
  // the difference is 3·T_total·l·2·(s - d)·2·a·d = 3·(4·128)·2·2·96·512.
  CHECK(gpt_model_flops(tiny_llama()) - gpt_model_flops(s) == 3.0 * 512 * 2 * 2 * 96 * 512);
}

TEST_CASE("LoRA: frozen base weights, rank-r adapters beside the chosen linears",
          "[graph][golden]") {
  GptSpec s = tiny_llama();  // h 256, QKV out 384, f 768, T 256, two layers, untied head
  s.lora_rank = 8;
  s.lora_targets = kLoraQkv | kLoraFc2;
  const ComputeGraph g = build_gpt_graph(s);
  // Adapters: QKV A 256·8 + B 8·384 = 5,120; fc2 A 768·8 + B 8·256 = 8,192; per layer 13,312,
  // the only trained parameters (gpt_layer_trainable_parameters).
  CHECK(gpt_layer_trainable_parameters(s, 1) == 13312);
  CHECK(g.trainable_parameter_count() == 2 * 13312);
  GptSpec full = tiny_llama();
  const ComputeGraph base = build_gpt_graph(full);
  CHECK(g.parameter_count() == base.parameter_count() + 2 * 13312);
  // Forward: A (T, r, in), B (T, out, r), the product added into the layer's output.
  CHECK(*find(g, "l0.qkv.lora_a.fwd").gemm == GemmShape{1, 256, 8, 256});
  CHECK(*find(g, "l0.qkv.lora_b.fwd").gemm == GemmShape{1, 256, 384, 8});
  const Kernel& sum = find(g, "l0.qkv.lora_add.fwd");
  CHECK(sum.flops.in(units::flops) == 2.0 * 256 * 384);
  const auto id = [&](const Kernel& k) { return static_cast<KernelId>(&k - g.kernels().data()); };
  CHECK(std::find(sum.deps.begin(), sum.deps.end(), id(find(g, "l0.qkv.fwd"))) != sum.deps.end());
  // No weight gradient for any base weight, the head or the embedding; each adapter's two.
  std::size_t wgrads = 0;
  for (const Kernel& k : g.kernels()) {
    if (k.phase != Phase::kBackwardWeight) continue;
    CHECK(k.name.find(".lora_") != std::string::npos);
    ++wgrads;
  }
  CHECK(wgrads == 2 * 2 * 2);  // two layers, two adapters, A and B
  CHECK(*find(g, "l0.fc2.lora_a.wgrad").gemm == GemmShape{1, 768, 8, 256});
  // The base layers' data gradients stay (the adapters below need them); the proj and fc1
  // layers have no adapter and no weight gradient.
  CHECK(*find(g, "l0.proj.dgrad").gemm == *find(base, "l0.proj.dgrad").gemm);
  // The optimizer steps only the adapters: each layer's update over 13,312 elements, and no
  // embedding or final-norm update.
  CHECK(find(g, "l1.update").flops == find(base, "l1.update").flops *
                                           (13312.0 / static_cast<double>(
                                                          gpt_layer_parameters(full, 1))));
  CHECK(std::none_of(g.kernels().begin(), g.kernels().end(), [](const Kernel& k) {
    return k.name == "embedding.update" || k.name == "final_ln.update" ||
           k.name == "embedding.bwd" || k.name == "logits.wgrad";
  }));
  // Model FLOPs: the frozen linears twice (forward, data gradient), the attention core and the
  // adapters three times. Per token and layer the adapters' forward is 2·8·(256 + 384) +
  // 2·8·(768 + 256) = 26,624 FLOP.
  const double tokens = 4.0 * 128, linear = 2.0 * (256.0 * 384 + 256.0 * 256 + 3 * 256.0 * 768),
               core = 2.0 * 128 * 512, head = 2.0 * 256 * 1024;
  CHECK(gpt_model_flops(s) ==
        Approx(tokens * (2.0 * (2 * linear + head) + 3.0 * 2 * (core + 26624.0))).epsilon(1e-12));
  CHECK(gpt_model_flops(full) ==
        Approx(3.0 * tokens * (2 * (linear + core) + head)).epsilon(1e-12));
}

TEST_CASE("LoRA with tensor parallelism: A split or whole, its small collectives", "[graph]") {
  GptSpec s = tiny_llama();
  s.lora_rank = 8;
  s.lora_targets = kLoraAll;
  GptPartition tp2;
  tp2.tensor = 2;
  const ComputeGraph g = build_gpt_graph(s, tp2);
  // Beside the column-parallel QKV: A's r/t = 4 outputs, all-gathered (T·r·2 B = 4,096 B),
  // B (T, 192, 8) for this rank's half of the 384 outputs.
  CHECK(*find(g, "l0.qkv.lora_a.fwd").gemm == GemmShape{1, 256, 4, 256});
  CHECK(find(g, "l0.qkv.lora_a.gather.fwd").comm->bytes.in(units::bytes) == 4096.0);
  CHECK(*find(g, "l0.qkv.lora_b.fwd").gemm == GemmShape{1, 256, 192, 8});
  // Beside the row-parallel fc2: A over this rank's 384 inputs to all 8 outputs, all-reduced.
  CHECK(*find(g, "l0.fc2.lora_a.fwd").gemm == GemmShape{1, 256, 8, 384});
  CHECK(find(g, "l0.fc2.lora_a.reduce.fwd").comm->kind == CommKind::kAllReduce);
  // SwiGLU's gate and up each have one; backward, the gather's reduce-scatter.
  CHECK(find(g, "l0.up.lora_b.fwd").gemm->n == 384);
  CHECK(find(g, "l0.qkv.lora_a.scatter.bwd").comm->kind == CommKind::kReduceScatter);
  // Per rank: QKV 256·4 + 8·192, proj 128·8 + 8·256, gate and up 2·(256·4 + 8·384),
  // fc2 384·8 + 8·256 = 2,560 + 3,072 + 8,192 + 5,120 = 18,944.
  CHECK(gpt_layer_trainable_parameters(s, 2) == 18944);
  CHECK(build_gpt_graph(s, tp2).trainable_parameter_count() == 2 * 18944);
}
