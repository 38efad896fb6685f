// Tests for engine/graph/workload_loader.hpp: the shipped workload files load with the sizes
// their sources give, defaults apply, and each class of bad file gives one exact, located message.
#include "engine/graph/workload_loader.hpp"

#include "engine/config/node.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include "tests/test_paths.hpp"
#include "tests/test_support.hpp"

using namespace pathfinder;
using pathfinder::test::data_path;
using pathfinder::test::error_of;
using pathfinder::test::source_path;

namespace {

std::string fixture(const std::string& name) { return data_path("workloads/" + name + ".yaml"); }
std::string load_error(const std::string& name) {
  return error_of([&] { (void)load_workload_file(fixture(name)); });
}
std::string shipped(const std::string& name) {
  return source_path("studies/workloads/" + name + ".yaml");
}

}  // namespace

TEST_CASE("shipped GPT workloads have their published sizes and parameter counts",
          "[graph][golden]") {
  struct Row {
    const char* file;
    std::int64_t layers, hidden, heads, micro, global;
    double billions;  // the model's name
    double tolerance;
  };
  // Parameter counts 12·l·h² + 13·l·h + (V + s)·h + 2h against the models' names:
  //   1.3B: 1.2080e9 + 0.0006e9 + 0.1091e9 = 1.3177e9      (name rounds; 2%)
  //   13B: 12.5829e9 + 0.0027e9 + 0.2726e9 = 12.858e9      (1.1% under "13B")
  //   175B: 174.616e9; 22B: 22.074e9; 530B: 528.49e9 + 0.028e9 + 1.09e9 = 529.6e9;
  //   1T: 1006.63e9 + 0.043e9 + 1.36e9 = 1008.0e9
  const std::vector<Row> rows{
      {"gpt3_1.3b", 24, 2048, 16, 1, 512, 1.3, 0.02},
      {"gpt3_13b", 40, 5120, 40, 1, 1024, 13.0, 0.02},
      {"gpt3_175b", 96, 12288, 96, 1, 1536, 175.0, 0.01},
      {"megatron_22b", 48, 6144, 64, 4, 4, 22.0, 0.01},
      {"megatron_530b", 105, 20480, 128, 1, 280, 530.0, 0.01},
      {"megatron_1t", 128, 25600, 160, 1, 512, 1000.0, 0.01},
  };
  for (const auto& r : rows) {
    INFO(r.file);
    const WorkloadFile f = load_workload_file(shipped(r.file));
    REQUIRE(std::holds_alternative<GptSpec>(f.spec));
    const GptSpec& s = std::get<GptSpec>(f.spec);
    CHECK(s.layers == r.layers);
    CHECK(s.hidden == r.hidden);
    CHECK(s.heads == r.heads);
    CHECK(s.ffn == 4 * r.hidden);
    CHECK(s.sequence == 2048);
    CHECK(s.vocabulary == 51200);  // 50257 padded to a multiple of 1024
    CHECK(s.micro_batch == r.micro);
    CHECK(s.global_batch == r.global);
    CHECK(s.precision == DataType::kFp16);
    CHECK(s.optimizer == Optimizer::kAdam);
    const double l = double(s.layers), h = double(s.hidden);
    const double params = 12.0 * l * h * h + 13.0 * l * h + (51200.0 + 2048.0) * h + 2.0 * h;
    const Workload w = load_workload(shipped(r.file));
    CHECK(double(w.stats.parameters) == Approx(params).epsilon(1e-15));
    CHECK(double(w.stats.parameters) == Approx(r.billions * 1e9).epsilon(r.tolerance));
    CHECK(w.stats.micro_batches == r.global / r.micro);
    CHECK(w.file == shipped(r.file));
  }
}

TEST_CASE("shipped GEMM and LSTM workloads", "[graph][golden]") {
  const Workload g = load_workload(shipped("gemm"));
  CHECK(g.name == "gemm-8192");
  // 2 · 8192³ = 1099511627776 FLOP
  CHECK(g.stats.flops_per_iteration.in(units::flops) == 1099511627776.0);

  const Workload l = load_workload(shipped("lstm_lm"));
  const LstmSpec& s = std::get<LstmSpec>(l.spec);
  CHECK(s.batch == 16384);
  CHECK(s.sequence == 20);
  CHECK(s.hidden == 16384);
  CHECK(s.vocabulary == 800000);
  CHECK(s.layers == 2);
  CHECK(s.optimizer == Optimizer::kSgd);
  // V·D + (2D+1)·4D·L + (D+1)·V = 30510298368 (test_workload.cpp derives it)
  CHECK(l.stats.parameters == 30510298368LL);
  CHECK(s.batching == LstmBatching::kPerStep);  // the default: the reference's counting

  // The same LM, batched over the sequence: the same parameters, and the model FLOPs less the
  // per-step weight-gradient sums, S·L·2D·4D = 20·2·8·16384² = 85899345920 adds.
  const Workload q = load_workload(shipped("lstm_lm_sequence"));
  const LstmSpec& qs = std::get<LstmSpec>(q.spec);
  CHECK(qs.batching == LstmBatching::kSequence);
  CHECK(q.stats.parameters == l.stats.parameters);
  CHECK(l.stats.flops_per_iteration.in(units::flops) -
            q.stats.flops_per_iteration.in(units::flops) ==
        Approx(85899345920.0).epsilon(1e-6));
}

TEST_CASE("workload fixtures and defaults", "[graph]") {
  const WorkloadFile gpt = load_workload_file(fixture("gpt_defaults"));
  CHECK(gpt.name == "tiny-gpt");
  CHECK(gpt.file == fixture("gpt_defaults"));
  const GptSpec& s = std::get<GptSpec>(gpt.spec);
  CHECK(s.ffn == 1024);         // default 4 · hidden = 4 · 256
  CHECK(s.global_batch == 2);   // default: the micro-batch
  CHECK(s.precision == DataType::kFp16);
  CHECK(s.optimizer == Optimizer::kAdam);

  const WorkloadFile lstm = load_workload_file(fixture("lstm"));
  const LstmSpec& ls = std::get<LstmSpec>(lstm.spec);
  CHECK(ls.precision == DataType::kBf16);
  CHECK(ls.optimizer == Optimizer::kAdam);
  CHECK(ls.batch == 8);

  const Workload gemm = load_workload(fixture("gemm_fp8"));
  const GemmSpec& gs = std::get<GemmSpec>(gemm.spec);
  CHECK(gs.m == 512);
  CHECK(gs.n == 1024);
  CHECK(gs.k == 2048);
  CHECK(gs.precision == DataType::kFp8);
  // fp8 operands: read (512·2048 + 2048·1024) · 1 B = 3145728 B, write 512·1024 · 1 B = 524288 B
  CHECK(gemm.graph.kernel(0).bytes_read.in(units::bytes) == 3145728.0);
  CHECK(gemm.graph.kernel(0).bytes_written.in(units::bytes) == 524288.0);
}

TEST_CASE("workload parse errors are exact and located", "[graph][config-error]") {
  CHECK(load_error("unknown_key") == fixture("unknown_key") +
        ":10:1: error: global_bach: unknown key; did you mean \"global_batch\"?");
  // A key of another kind is unknown too.
  CHECK(load_error("gemm_with_optimizer") == fixture("gemm_with_optimizer") +
        ":7:1: error: optimizer: unknown key");
  // The key is absent, so the position is the map's (its first key).
  CHECK(load_error("missing_key") == fixture("missing_key") +
        ":2:1: error: vocabulary: missing required key (expected a whole number)");
  CHECK(load_error("zero_heads") == fixture("zero_heads") +
        ":6:8: error: heads: expected a positive number, got \"0\"");
  CHECK(load_error("fractional_size") == fixture("fractional_size") +
        ":5:11: error: sequence: expected a whole number, got \"4.5\"");
  CHECK(load_error("bad_kind") == fixture("bad_kind") +
        ":3:7: error: kind: expected one of gemm, lstm or gpt, got \"lstn\"; did you mean "
        "\"lstm\"?");
  CHECK(load_error("bad_precision") == fixture("bad_precision") +
        ":7:12: error: precision: expected one of fp32, fp16, bf16, fp8 or fp4, got \"fp64\"; "
        "did you mean \"fp4\"?");
  CHECK(load_error("lstm_bad_batching") == fixture("lstm_bad_batching") +
        ":9:11: error: batching: expected one of per_step or sequence, got \"sequense\"; did "
        "you mean \"sequence\"?");
  CHECK(load_error("nope") == fixture("nope") + ": error: cannot read file: No such file or "
        "directory");
}

TEST_CASE("workload semantic errors are collected into one ConfigError", "[graph][config-error]") {
  const std::string f = fixture("indivisible");
  const std::vector<std::string> expected{
      // 5140 / 40 = 128.5
      f + ":6:9: error: hidden: expected a multiple of heads (40), got \"5140\"",
      // 6 / 4 = 1.5
      f + ":11:15: error: global_batch: expected a multiple of micro_batch (4), got \"6\""};
  std::vector<std::string> got;
  try {
    (void)load_workload_file(f);
  } catch (const ConfigError& e) {
    for (const auto& d : e.diagnostics()) got.push_back(d.str());
  }
  CHECK(got == expected);
  CHECK(load_error("indivisible") == expected[0] + "\n" + expected[1]);
}

TEST_CASE("workload overrides pass the file's own checks", "[graph][override]") {
  const auto set = [](const std::string& s) { return parse_config_override(s); };
  // gpt3_1.3b.yaml: micro_batch 1, global_batch 512, sequence 2048.
  const auto g = std::get<GptSpec>(
      load_workload_file(shipped("gpt3_1.3b"), {set("micro_batch=4"), set("global_batch=256"),
                                                set("sequence=4096")})
          .spec);
  CHECK(g.micro_batch == 4);
  CHECK(g.global_batch == 256);
  CHECK(g.sequence == 4096);
  CHECK(g.layers == 24);  // untouched keys keep the file's values

  const auto error = [&](const std::vector<ConfigOverride>& o) {
    return error_of([&] { (void)load_workload_file(shipped("gpt3_1.3b"), o); });
  };
  CHECK(error({set("micro_batch=0")}) ==
        "command line: error: --set micro_batch: expected a positive number, got \"0\"");
  CHECK(error({set("micro_batch=two")}) ==
        "command line: error: --set micro_batch: expected a whole number, got \"two\"");
  CHECK(error({set("micro_bach=2")}) ==
        "command line: error: --set micro_bach: unknown key; did you mean \"micro_batch\"?");
  CHECK(error({set("precision=fp64")}) ==
        "command line: error: --set precision: expected one of fp32, fp16, bf16, fp8 or fp4, "
        "got \"fp64\"; did you mean \"fp4\"?");
  // The semantic pass too: 512 / 3 is not whole, reported at the file's global_batch.
  CHECK(error({set("micro_batch=3")}) == shipped("gpt3_1.3b") +
        ":17:15: error: global_batch: expected a multiple of micro_batch (3), got \"512\"");
  CHECK(error({set("global_batch=510"), set("micro_batch=4")}) ==
        "command line: error: --set global_batch: expected a multiple of micro_batch (4), got "
        "\"510\"");
}

// Issue 14 item 4: counts past 2^31 overflowed an int (an abort, a failed allocation, or an
// LSTM of 2^32 layers timed as 0 layers); each count is bounded at its key.
TEST_CASE("workload counts are bounded at their keys", "[graph][config-error][issue14]") {
  const auto error = [](const std::string& text) {
    return error_of([&] { (void)read_workload_file(ConfigNode::load_string(text, "w.yaml")); });
  };
  const std::string lstm = "name: l\nkind: lstm\nbatch: 8\nhidden: 32\nvocabulary: 100\n";
  CHECK(error(lstm + "sequence: 4\nlayers: 4294967296\n") ==
        "w.yaml:7:9: error: layers: expected a whole number in [1, 100000], got \"4294967296\"");
  CHECK(error(lstm + "sequence: 20\nlayers: 100000\n") ==
        "w.yaml:7:9: error: layers: expected layers x sequence <= 1048576 (the graph unrolls "
        "every layer at every step), got 100000 x 20");
  const std::string gpt = "name: g\nkind: gpt\nlayers: 2\nhidden: 256\nheads: 4\nvocabulary: 1024\n";
  CHECK(error(gpt + "sequence: 128\nmicro_batch: 1\nglobal_batch: 2147483648\n") ==
        "w.yaml:9:15: error: global_batch: expected a whole number in [1, 16777216], got "
        "\"2147483648\"");
  CHECK(error(gpt + "sequence: 2147483648\nmicro_batch: 1\n") ==
        "w.yaml:7:11: error: sequence: expected a whole number in [1, 16777216], got \"2147483648\"");
  CHECK(error(gpt + "sequence: 128\nmicro_batch: 1\nffn: 2097152\n") ==
        "w.yaml:9:6: error: ffn: expected a whole number in [1, 1048576], got \"2097152\"");
  CHECK(error("name: m\nkind: gemm\nm: 16777217\nn: 1\nk: 1\n") ==
        "w.yaml:3:4: error: m: expected a whole number in [1, 16777216], got \"16777217\"");
  // At the bounds the numbers stay exact.
  CHECK_NOTHROW(read_workload_file(ConfigNode::load_string(
      gpt + "sequence: 16777216\nmicro_batch: 16777216\n", "w.yaml")));
}

TEST_CASE("shipped Llama 3 workloads have their model cards' sizes and parameter counts",
          "[graph][golden]") {
  struct Row {
    const char* file;
    std::int64_t layers, hidden, heads, ffn, parameters;
  };
  // Hugging Face config.json (meta-llama/Meta-Llama-3-8B, -70B, Llama-3.1-405B): 8 KV heads,
  // vocabulary 128256, untied, no biases, RMSNorm. Head size d = h/a = 128 for all three.
  // Parameters l·(h·(a + 2·8)·d + h² + 3·h·f + 2h) + 2·V·h + h:
  //   8B:   32·(4096·48·128 + 4096² + 3·4096·14336 + 8192) + 2·128256·4096 + 4096
  //         = 32·218,112,000 + 1,050,673,152 + 4096 = 8,030,261,248 (model card 8.03B)
  //   70B:  80·855,654,400 + 2,101,346,304 + 8192 = 70,553,706,496 (70.6B)
  //   405B: 126·3,187,703,808 + 4,202,692,608 + 16384 = 405,853,388,800 (405B)
  const std::vector<Row> rows{
      {"llama3_8b", 32, 4096, 32, 14336, 8030261248LL},
      {"llama3_70b", 80, 8192, 64, 28672, 70553706496LL},
      {"llama3_405b", 126, 16384, 128, 53248, 405853388800LL},
  };
  for (const auto& r : rows) {
    INFO(r.file);
    const WorkloadFile f = load_workload_file(shipped(r.file));
    const GptSpec& s = std::get<GptSpec>(f.spec);
    CHECK(s.layers == r.layers);
    CHECK(s.hidden == r.hidden);
    CHECK(s.heads == r.heads);
    CHECK(s.kv_heads == 8);
    CHECK(s.ffn == r.ffn);
    CHECK(s.sequence == 8192);
    CHECK(s.vocabulary == 128256);
    CHECK(s.mlp == MlpKind::kSwiglu);
    CHECK(s.norm == NormKind::kRmsNorm);
    CHECK(s.position == PositionKind::kRotary);
    CHECK(s.attention == AttentionKind::kFlash);
    CHECK(!s.tied_embeddings);
    CHECK(!s.bias);
    CHECK(!s.dropout);
    CHECK(gpt_parameters(s) == r.parameters);
    // The graph's parameter tensors add up to the same count.
    CHECK(load_workload(shipped(r.file)).stats.parameters == r.parameters);
  }
}

TEST_CASE("the Llama keys default to the GPT-3 layout", "[graph]") {
  const GptSpec s = std::get<GptSpec>(load_workload_file(fixture("gpt_defaults")).spec);
  CHECK(s.kv_heads == 4);  // = heads: multi-head attention
  CHECK(s.mlp == MlpKind::kGelu);
  CHECK(s.norm == NormKind::kLayerNorm);
  CHECK(s.position == PositionKind::kLearned);
  CHECK(s.attention == AttentionKind::kUnfused);
  CHECK(s.causal);
  CHECK(s.tied_embeddings);
  CHECK(s.bias);
}

TEST_CASE("Llama key errors are exact and located", "[graph][config-error]") {
  CHECK(load_error("llama_bad_kv_heads") == fixture("llama_bad_kv_heads") +
        ":7:11: error: kv_heads: expected a divisor of heads (32), got \"5\"");
  CHECK(load_error("llama_bad_mlp") == fixture("llama_bad_mlp") +
        ":10:6: error: mlp: expected one of gelu or swiglu, got \"swishglu\"; did you mean "
        "\"swiglu\"?");
  CHECK(load_error("llama_bad_bool") == fixture("llama_bad_bool") +
        ":10:18: error: tied_embeddings: expected true or false, got \"maybe\"");
}

TEST_CASE("mixture of experts: Mixtral 8x7B's sizes, and the MoE keys checked", "[graph][golden]") {
  const WorkloadFile f = load_workload_file(shipped("mixtral_8x7b"));
  const GptSpec& s = std::get<GptSpec>(f.spec);
  CHECK(s.experts == 8);
  CHECK(s.top_k == 2);
  CHECK(s.expert_width() == 14336);
  // l·(h·(a + 2g)·d + h² + h·E + E·3·h·f + 2h) + 2·V·h + h = 46,702,792,704 ("47B total").
  CHECK(gpt_parameters(s) == 46702792704LL);
  // Active per token: the router and top_k = 2 experts: 12,879,925,248 ("13B active"); model
  // FLOPs 6 per active parameter and token plus attention 6·2·s·h·l (the whole s×s, as
  // Megatron counts it) and nothing for the unused experts.
  const double tokens = static_cast<double>(s.global_batch * s.sequence);
  const double attention = 12.0 * 4096.0 * 4096.0 * 32.0;
  const double embedding = 32000.0 * 4096.0;  // the token table is a lookup, not a GEMM
  CHECK(gpt_model_flops(s) ==
        Approx(tokens * (6.0 * (12879925248.0 - embedding - 4096.0 - 64.0 * 4096.0) + attention))
            .epsilon(1e-9));
  const auto error = [](const std::string& text) {
    return error_of([&] { (void)read_workload_file(ConfigNode::load_string(text, "w.yaml")); });
  };
  const std::string gpt = "name: g\nkind: gpt\nlayers: 2\nhidden: 256\nheads: 4\nvocabulary: "
                          "1024\nsequence: 128\nmicro_batch: 1\n";
  CHECK(error(gpt + "experts: 4\ntop_k: 5\n") ==
        "w.yaml:10:8: error: top_k: expected at most experts (4), got \"5\"");
  CHECK(error(gpt + "top_k: 2\n") ==
        "w.yaml:9:8: error: top_k: applies to a mixture of experts; set experts");
  CHECK(error(gpt + "dense_layers: 1\n") ==
        "w.yaml:9:15: error: dense_layers: applies to a mixture of experts; set experts");
  CHECK(error(gpt + "experts: 4\ndense_layers: 2\n") ==
        "w.yaml:10:15: error: dense_layers: expected fewer than layers (2: at least one sparse "
        "layer), got \"2\"");
  CHECK(error(gpt + "experts: 4\nexpert_imbalance: 0.5\n") ==
        "w.yaml:10:19: error: expert_imbalance: expected a factor in [1, 64] (the busiest expert "
        "rank's tokens over the mean), got \"0.5\"");
  CHECK(error(gpt + "experts: 6\nexpert_groups: 4\nrouted_groups: 2\n") ==
        "w.yaml:10:16: error: expert_groups: expected a divisor of experts (6), got \"4\"");
  CHECK(error(gpt + "experts: 8\nexpert_groups: 4\nrouted_groups: 5\n") ==
        "w.yaml:11:16: error: routed_groups: expected a whole number in [1, 4], got \"5\"");
  CHECK(error(gpt + "routed_groups: 2\n") ==
        "w.yaml:9:16: error: routed_groups: applies to a mixture of experts; set experts");
  CHECK(error(gpt + "experts: 4\nshared_experts: 65\n") ==
        "w.yaml:10:17: error: shared_experts: expected at most 64 shared experts, got \"65\"");
  CHECK(error(gpt + "head_dim: 0\n") ==
        "w.yaml:9:11: error: head_dim: expected a positive number, got \"0\"");
  CHECK(error(gpt + "head_dim: 20000\n") ==
        "w.yaml:9:11: error: head_dim: expected a whole number in [1, 16384], got \"20000\"");
  CHECK(error(gpt + "experts: 5000\n") ==
        "w.yaml:9:10: error: experts: expected a whole number in [1, 4096], got \"5000\"");
  // Counts stay exact in 64 bits: 100,000 layers of 4,096 experts of 2^20 x 2^20 are refused.
  CHECK(error("name: g\nkind: gpt\nlayers: 100000\nhidden: 1048576\nheads: 4\nvocabulary: "
              "1024\nsequence: 128\nmicro_batch: 1\nexperts: 4096\nexpert_ffn: 1048576\n") ==
        "w.yaml:9:10: error: experts: expected at most 1e17 expert parameters (layers x experts x "
        "3 x hidden x expert_ffn), got 1.35e+21");
}

TEST_CASE("Qwen3 MoE workloads: a·d twice the hidden size, 128 experts, 8 per token",
          "[graph][golden]") {
  // l·(h·(a + 2g)·d + a·d·h + h·E + E·3·h·f_e + 2h) + 2·V·h + h with d = 128 (head_dim), no
  // shared experts: 235,093,610,496 ("235B") and 30,532,110,336 ("30.5B").
  const GptSpec big = std::get<GptSpec>(load_workload_file(shipped("qwen3_235b_a22b")).spec);
  CHECK(big.head_dim() == 128);
  CHECK(big.attention_width() == 8192);
  CHECK(gpt_parameters(big) == 235093610496LL);
  const GptSpec small = std::get<GptSpec>(load_workload_file(shipped("qwen3_30b_a3b")).spec);
  CHECK(gpt_parameters(small) == 30532110336LL);
  // The projection maps a·d = 4096 back to h = 2048 (a 4096 x 2048 weight per layer).
  const ComputeGraph g = build_gpt_graph(small);
  const auto& ks = g.kernels();
  const auto proj = std::find_if(ks.begin(), ks.end(),
                                 [](const Kernel& k) { return k.name == "l0.proj.fwd"; });
  REQUIRE(proj != ks.end());
  CHECK(*proj->gemm == GemmShape{1, 4096, 2048, 4096});  // (T = 4096 tokens, h, a·d)
}

TEST_CASE("DeepSeek-V3: latent attention, 3 dense layers, 256 + 1 experts", "[graph][golden]") {
  const GptSpec s = std::get<GptSpec>(load_workload_file(shipped("deepseek_v3")).spec);
  CHECK(s.mla());
  CHECK(s.value_width() == 128 * 128);
  // Per layer: attention 7168·1536 + 1536 + 1536·128·192 + 7168·(512 + 64) + 512 +
  // 512·128·(128 + 128) + 128·128·7168 = 187,107,328 (norms of the latents included), the two
  // RMSNorms 2·7168; dense MLP 3·7168·18432; sparse: router 7168·256, 257 experts of
  // 3·7168·2048. 58 sparse + 3 dense + 2·V·h + h = 671,026,404,352 ("671B total").
  CHECK(gpt_layer_parameters(s.dense_layer_spec(), 1) == 187107328 + 14336 + 396361728);
  CHECK(gpt_layer_parameters(s, 1) == 187107328 + 14336 + 1835008 + 257LL * 44040192);
  CHECK(gpt_parameters(s) == 671026404352LL);
  // Activated per token ("37B activated"): attention, the router, 8 + 1 experts of the sparse
  // layers, the dense MLPs and both vocabulary tables: 37,545,... within 2% of 37B. Model FLOPs
  // are 6 per activated GEMM weight (the token table is a lookup; norms are not GEMMs) plus the
  // whole s×s attention 6·s·a·(d + d_v) per token and layer.
  const double active = 61.0 * 187107328.0 + 58.0 * (1835008.0 + 9.0 * 44040192.0) +
                        3.0 * 396361728.0 + 2.0 * 129280.0 * 7168.0;
  CHECK(active == Approx(37.0e9).epsilon(0.02));
  const double gemm_weights = active - 129280.0 * 7168.0 - 61.0 * (1536.0 + 512.0);
  const double tokens = static_cast<double>(s.global_batch * s.sequence);
  CHECK(gpt_model_flops(s) ==
        Approx(tokens * (6.0 * gemm_weights + 61.0 * 6.0 * 4096.0 * 128.0 * (192.0 + 128.0)))
            .epsilon(1e-12));
  // The graph builds the same parameters.
  CHECK(build_gpt_graph(s).parameter_count() == gpt_parameters(s));
  const auto error = [](const std::string& text) {
    return error_of([&] { (void)read_workload_file(ConfigNode::load_string(text, "w.yaml")); });
  };
  const std::string gpt = "name: g\nkind: gpt\nlayers: 2\nhidden: 256\nheads: 4\nvocabulary: "
                          "1024\nsequence: 128\nmicro_batch: 1\nattention: flash\nbias: false\n";
  CHECK(error(gpt + "rope_head_dim: 16\n") ==
        "w.yaml:11:16: error: rope_head_dim: applies to multi-head latent attention; set "
        "kv_lora_rank");
  CHECK(error(gpt + "kv_lora_rank: 64\nrope_head_dim: 16\n") ==
        "w.yaml:11:15: error: kv_lora_rank: needs head_dim, each query and key head's width (its "
        "rotary and non-rotary parts together)");
  CHECK(error(gpt + "head_dim: 48\nkv_lora_rank: 64\nrope_head_dim: 48\n") ==
        "w.yaml:13:16: error: rope_head_dim: expected less than head_dim (48), got \"48\"");
  CHECK(error(gpt + "head_dim: 48\nkv_heads: 2\nkv_lora_rank: 64\nrope_head_dim: 16\n") ==
        "w.yaml:12:11: error: kv_heads: expected heads (4): latent attention up-projects keys and "
        "values for every head, got \"2\"");
  // Multi-token prediction at the depth DeepSeek-V3 was pre-trained with (report §2.2: one
  // module); its parameters are not the model's (the 671B stay), any model kind may carry it.
  CHECK(s.mtp_depth == 1);
  CHECK(std::get<GptSpec>(read_workload_file(ConfigNode::load_string(gpt + "mtp_depth: 1\n",
                                                                     "w.yaml"))
                              .spec)
            .mtp_depth == 1);
  CHECK(error(gpt + "mtp_depth: 17\n") ==
        "w.yaml:11:12: error: mtp_depth: expected at most 16 multi-token-prediction modules, got "
        "\"17\"");
  CHECK(error(gpt + "mtp_depth: -1\n").find("w.yaml:11:12: error: mtp_depth: expected") == 0);
}

TEST_CASE("fine-tuning keys: packed documents and LoRA, read and checked", "[graph][config-error]") {
  const auto error = [](const std::string& text) {
    return error_of([&] { (void)read_workload_file(ConfigNode::load_string(text, "w.yaml")); });
  };
  const std::string gpt = "name: g\nkind: gpt\nlayers: 2\nhidden: 256\nheads: 4\nvocabulary: "
                          "1024\nsequence: 128\nmicro_batch: 1\n";
  const auto spec = [](const std::string& text) {
    return std::get<GptSpec>(read_workload_file(ConfigNode::load_string(text, "w.yaml")).spec);
  };
  // Defaults: one document per sequence, every parameter trained.
  CHECK(spec(gpt).document == 0);
  CHECK(!spec(gpt).lora());
  CHECK(spec(gpt + "attention: flash\ndocument: 32\n").attention_span() == 32);
  const GptSpec all = spec(gpt + "lora_rank: 16\n");
  CHECK(all.lora_rank == 16);
  CHECK(all.lora_targets == kLoraAll);
  CHECK(spec(gpt + "lora_rank: 16\nlora_targets: qkv,fc2\n").lora_targets == (kLoraQkv | kLoraFc2));
  CHECK(error(gpt + "attention: flash\ndocument: 129\n") ==
        "w.yaml:10:11: error: document: expected at most sequence (128), got \"129\"");
  CHECK(error(gpt + "document: 32\n") ==
        "w.yaml:9:11: error: document: packed documents are timed with attention: flash (the "
        "variable-length kernel)");
  CHECK(error(gpt + "lora_targets: qkv\n") ==
        "w.yaml:9:15: error: lora_targets: applies to LoRA; set lora_rank");
  CHECK(error(gpt + "lora_rank: 8\nlora_targets: qkv,fc3\n") ==
        "w.yaml:10:15: error: lora_targets: expected a comma-separated list of qkv, proj, fc1, "
        "fc2 or all, got \"qkv,fc3\"; did you mean \"fc1\"?");
  CHECK(error(gpt + "lora_rank: 0\n") ==
        "w.yaml:9:12: error: lora_rank: expected a positive number, got \"0\"");
  // FP4 is an operand format, not a network's precision.
  CHECK(error(gpt + "precision: fp4\n") ==
        "w.yaml:9:12: error: precision: fp4 is an operand format: a network's activations and "
        "weights are fp32, fp16, bf16 or fp8 (its linear layers' GEMMs in FP4: the software "
        "profile's precision.linear_layers)");
  CHECK(error(gpt + "experts: 4\nlora_rank: 8\n") ==
        "w.yaml:10:12: error: lora_rank: LoRA is modelled for dense layers with multi-, grouped- "
        "or single-query attention (no experts, no latent attention)");
}
