// Partitioned GPT graphs: Megatron tensor parallelism, sequence parallelism, recomputation and
// pipeline stages, checked against closed forms.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/graph/workload.hpp"

namespace pathfinder {
namespace {

// Megatron 22B's shape at micro-batch 4 (Korthikanti Table 4's run): h 6144, a 64, s 2048.
GptSpec spec22b() {
  return GptSpec{48, 6144, 64, 4 * 6144, 2048, 51200, 4, 4, DataType::kFp16, Optimizer::kAdam};
}

struct Census {
  double gemm_flops = 0, fwd_gemm_flops = 0, bwd_gemm_flops = 0;
  int all_reduce = 0, reduce_scatter = 0, all_gather = 0, overlapped = 0;
  double comm_bytes = 0;
};

Census census(const ComputeGraph& g) {
  Census c;
  for (const Kernel& k : g.kernels()) {
    if (k.gemm) {
      const double f = k.gemm->flops().si();
      c.gemm_flops += f;
      (k.phase == Phase::kForward ? c.fwd_gemm_flops : c.bwd_gemm_flops) += f;
    }
    if (k.comm) {
      c.comm_bytes += k.comm->bytes.si();
      c.overlapped += k.comm->overlapped ? 1 : 0;
      switch (k.comm->kind) {
        case CommKind::kAllReduce: ++c.all_reduce; break;
        case CommKind::kReduceScatter: ++c.reduce_scatter; break;
        case CommKind::kAllGather: ++c.all_gather; break;
        case CommKind::kSendRecv:
        case CommKind::kAllToAll: break;
      }
    }
  }
  return c;
}

GptPartition one_layer(int t, bool sp, Recompute r) {
  GptPartition p;
  p.tensor = t;
  p.sequence_parallel = sp;
  p.recompute = r;
  p.layers = 1;
  p.embedding = false;
  p.head = false;
  return p;
}

}  // namespace

TEST_CASE("tensor parallelism divides every layer GEMM by t", "[graph]") {
  // One layer forward: 24·T·h² + 4·T·s·h FLOPs (T = b·s), backward twice that; per device /8.
  const GptSpec s = spec22b();
  const double T = 4.0 * 2048, h = 6144;
  const double fwd = 24 * T * h * h + 4 * T * 2048 * h;
  const Census c1 = census(build_gpt_graph(s, one_layer(1, false, Recompute::kNone)));
  const Census c8 = census(build_gpt_graph(s, one_layer(8, false, Recompute::kNone)));
  CHECK(c1.fwd_gemm_flops == Approx(fwd));
  CHECK(c1.bwd_gemm_flops == Approx(2 * fwd));
  CHECK(c8.fwd_gemm_flops == Approx(fwd / 8));
  CHECK(c8.gemm_flops == Approx(3 * fwd / 8));
  CHECK(c1.all_reduce + c1.reduce_scatter + c1.all_gather == 0);
}

TEST_CASE("a tensor-parallel layer all-reduces its activations twice each way", "[graph]") {
  // Megatron: f/g operators, 2 all-reduces forward and 2 backward of T·h·2 bytes.
  const double act = 4.0 * 2048 * 6144 * 2;
  const Census c = census(build_gpt_graph(spec22b(), one_layer(8, false, Recompute::kNone)));
  CHECK(c.all_reduce == 4);
  CHECK(c.comm_bytes == Approx(4 * act));
  // Sequence parallel: all-gather before each column-parallel GEMM and reduce-scatter after
  // each row-parallel one, both ways, plus 2 re-gathers for the weight gradients: on the
  // compute stream by default, on the side stream when the partition overlaps them.
  const Census sp = census(build_gpt_graph(spec22b(), one_layer(8, true, Recompute::kNone)));
  CHECK(sp.all_reduce == 0);
  CHECK(sp.reduce_scatter == 4);
  CHECK(sp.all_gather == 6);
  CHECK(sp.overlapped == 0);
  GptPartition overlapped = one_layer(8, true, Recompute::kNone);
  overlapped.overlap_sp_regather = true;
  const Census spo = census(build_gpt_graph(spec22b(), overlapped));
  CHECK(spo.all_gather == 6);
  CHECK(spo.overlapped == 2);
}

TEST_CASE("recomputation repeats forward work in the backward pass", "[graph]") {
  // Full: the layer's forward again (GEMMs 4/3 of no recompute). Selective: the attention
  // core again, scores and context: 2 · 2·b·s²·h/t FLOPs.
  const GptSpec s = spec22b();
  const double T = 4.0 * 2048, h = 6144;
  const double fwd8 = (24 * T * h * h + 4 * T * 2048 * h) / 8;
  const Census none = census(build_gpt_graph(s, one_layer(8, false, Recompute::kNone)));
  const Census full = census(build_gpt_graph(s, one_layer(8, false, Recompute::kFull)));
  const Census sel = census(build_gpt_graph(s, one_layer(8, false, Recompute::kSelective)));
  CHECK(full.gemm_flops == Approx(none.gemm_flops + fwd8));
  CHECK(sel.gemm_flops == Approx(none.gemm_flops + 4 * T * 2048 * h / 8));
  CHECK(full.all_reduce == 6);  // the forward's two all-reduces run again
}

TEST_CASE("pipeline stages partition the layers with the embedding first and the head last", "[graph]") {
  GptSpec s = spec22b();
  s.layers = 8;
  const double total = census(build_gpt_graph(s)).gemm_flops;
  double sum = 0.0;
  std::int64_t params = 0;
  for (int stage = 0; stage < 4; ++stage) {
    GptPartition p;
    p.first_layer = 2 * stage;
    p.layers = 2;
    p.embedding = stage == 0;
    p.head = stage == 3;
    const ComputeGraph g = build_gpt_graph(s, p);
    sum += census(g).gemm_flops;
    params += g.parameter_count();
    CHECK(g.kernels().front().layer == (stage == 0 ? -1 : 2 * stage));
  }
  CHECK(sum == Approx(total));
  // The last stage holds a copy of the tied word embedding (Megatron): V·h more parameters.
  CHECK(params == build_gpt_graph(s).parameter_count() + 51200 * 6144);
}

TEST_CASE("per-device parameters of a tensor-parallel layer", "[graph]") {
  // qkv h·3h/t + 3h/t, proj (h/t)·h + h, fc1 h·f/t + f/t, fc2 (f/t)·h + h, two layernorms 4h.
  const double h = 6144, f = 4 * h, t = 8;
  const double expect = h * 3 * h / t + 3 * h / t + h / t * h + h + h * f / t + f / t +
                        f / t * h + h + 4 * h;
  CHECK(static_cast<double>(
            build_gpt_graph(spec22b(), one_layer(8, false, Recompute::kNone)).parameter_count()) ==
        expect);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("Megatron-LM's separate bias kernels and the unfused attention's layout copies",
          "[graph]") {
  // Korthikanti's 22B layer at tp 8: T = 4·2048 = 8192 tokens, h = 6144, f = 24576, fp16.
  const GptSpec s = spec22b();
  const double T = 8192, h = 6144, f = 24576, t = 8, p = 2;
  const auto find = [](const ComputeGraph& g, const std::string& name) -> const Kernel* {
    for (const Kernel& k : g.kernels()) {
      if (k.name == name) return &k;
    }
    return nullptr;
  };
  GptPartition part = one_layer(8, true, Recompute::kNone);
  const ComputeGraph fused = build_gpt_graph(s, part);
  part.separate_bias = true;
  const ComputeGraph separate = build_gpt_graph(s, part);
  // The context's [b·a/t, s, d] -> [s, b, a/t·d] copy forward: T·h/t elements read and written.
  const Kernel* permute = find(fused, "l0.attn.context.permute.fwd");
  REQUIRE(permute != nullptr);
  CHECK(permute->bytes().si() == Approx(2 * T * h / t * p));
  // The q, k and v gradients concatenated into the fused QKV output's: T·3h/t both ways.
  const Kernel* concat = find(fused, "l0.qkv.grad.concat");
  REQUIRE(concat != nullptr);
  CHECK(concat->bytes().si() == Approx(2 * T * 3 * h / t * p));
  // Epilogue (default): the QKV bias in the GEMM, no bias kernels.
  CHECK(find(fused, "l0.qkv.bias.fwd") == nullptr);
  CHECK(find(fused, "l0.fc1.bias.grad") == nullptr);
  CHECK(find(fused, "l0.qkv.fwd")->flops.si() == Approx(2 * T * (3 * h / t) * h + T * 3 * h / t));
  // Separate: `output + bias` over the T x 3h/t product (read it and the bias, write it) ...
  const Kernel* add = find(separate, "l0.qkv.bias.fwd");
  REQUIRE(add != nullptr);
  CHECK(add->bytes_read.si() == Approx(T * 3 * h / t * p + 3 * h / t * p));
  CHECK(add->bytes_written.si() == Approx(T * 3 * h / t * p));
  CHECK(find(separate, "l0.qkv.fwd")->flops.si() == Approx(2 * T * (3 * h / t) * h));
  // ... and each bias gradient a column sum of its output gradient: the column-parallel QKV
  // and FFN1 over all T rows, the row-parallel projection and FFN2 over T/t with SP.
  const auto reads = [&](const std::string& n) { return find(separate, n)->bytes_read.si(); };
  CHECK(reads("l0.qkv.bias.grad") == Approx(T * 3 * h / t * p));
  CHECK(reads("l0.fc1.bias.grad") == Approx(T * f / t * p));
  CHECK(reads("l0.proj.bias.grad") == Approx(T / t * h * p));
  CHECK(reads("l0.fc2.bias.grad") == Approx(T / t * h * p));
  CHECK(separate.size() == fused.size() + 5);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("Megatron's fused softmax takes b·a/t in multiples of its batches per block",
          "[graph]") {
  // FusedScaleMaskSoftmax.is_kernel_available with a causal mask: 16 < s <= 4096, s % 4 == 0,
  // b·a/t % 4 == 0 and % batches-per-block (128 threads / 32 lanes, one row a warp for s > 128:
  // 4). GPT-3 13B (40 heads) at s = 2048: tp8 and micro-batch 1 gives 5 rows -> PyTorch's ops;
  // micro-batch 4 gives 20 -> the fused kernel.
  GptSpec s{40, 5120, 40, 4 * 5120, 2048, 51200, 1, 8, DataType::kFp16, Optimizer::kAdam};
  const auto names = [&](int mb) {
    s.micro_batch = mb;
    const ComputeGraph g = build_gpt_graph(s, one_layer(8, false, Recompute::kNone));
    std::vector<std::string> out;
    for (const Kernel& k : g.kernels()) out.push_back(k.name);
    return out;
  };
  const auto has = [](const std::vector<std::string>& v, const std::string& n) {
    return std::find(v.begin(), v.end(), n) != v.end();
  };
  const std::vector<std::string> unfused = names(1), fused = names(4);
  for (const char* k : {"l0.attn.softmax.to_fp32.fwd", "l0.attn.softmax.scale.fwd",
                        "l0.attn.softmax.mask.fwd", "l0.attn.softmax.fwd",
                        "l0.attn.softmax.to_16bit.fwd", "l0.attn.softmax.to_fp32.bwd"}) {
    CHECK(has(unfused, k));
  }
  CHECK_FALSE(has(fused, "l0.attn.softmax.to_fp32.fwd"));
  CHECK(has(fused, "l0.attn.softmax.fwd"));
  CHECK(unfused.size() == fused.size() + 8);  // 4 more kernels each way
  // The unfused forward's traffic: 5·2048² scores, 2 B in and 4 B out, then three fp32 passes,
  // then 4 B in and 2 B out: (2 + 4) + 3·8 + (4 + 2) = 36 B per score.
  s.micro_batch = 1;
  double bytes = 0.0;
  const ComputeGraph g = build_gpt_graph(s, one_layer(8, false, Recompute::kNone));
  for (const Kernel& k : g.kernels()) {
    if (k.phase == Phase::kForward && k.name.rfind("l0.attn.softmax", 0) == 0) bytes += k.bytes().si();
  }
  CHECK(bytes == Approx(36.0 * 5 * 2048.0 * 2048.0));
}

}  // namespace pathfinder
