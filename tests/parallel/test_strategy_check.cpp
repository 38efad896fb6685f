// Tests for engine/parallel/strategy_check.hpp: valid strategies pass, each rule's message is exact,
// every problem is listed, and the message-free check agrees with the full one.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "engine/parallel/strategy_check.hpp"
#include "tests/parallel/parallel_specs.hpp"
#include "tests/test_support.hpp"

using namespace pathfinder;
using pathfinder::test::error_of;
using pathfinder::test::shipped_gpt;
using pathfinder::test::shipped_workload;
using pathfinder::test::tiny_gpt;

namespace {

// The messages of check_strategy, one per problem.
std::vector<std::string> problems(const std::string& strategy, const WorkloadSpec& w, int devices) {
  std::vector<std::string> out;
  for (const auto& d : check_strategy(parse_strategy(strategy), w, devices)) {
    out.push_back(d.message);
  }
  return out;
}
std::vector<std::string> problems(const Strategy& s, const WorkloadSpec& w, int devices) {
  std::vector<std::string> out;
  for (const auto& d : check_strategy(s, w, devices)) out.push_back(d.message);
  return out;
}
using Lines = std::vector<std::string>;

}  // namespace

TEST_CASE("strategies used in the literature pass", "[dist]") {
  // GPT-3 175B as Narayanan et al. 2021 train it: 96 layers / pp8, 96 heads / tp8, 1536 / dp16.
  CHECK(problems("tp8-pp8-dp16-mb1-1f1b", shipped_gpt("gpt3_175b"), 1024).empty());
  CHECK(problems("tp8-pp8-dp16-mb1-interleaved-v2-sp-recompute=selective", shipped_gpt("gpt3_175b"),
                 1024)
            .empty());
  // Korthikanti et al. 2022 Table 3: 530B on tp8 x pp35 (105 layers, 3 per stage), 1T on tp8
  // x pp64 (128 layers, 2 per stage).
  CHECK(problems("tp8-pp35-dp1-mb1-sp-recompute=selective", shipped_gpt("megatron_530b"), 280)
            .empty());
  CHECK(problems("tp8-pp64-dp1-mb1-sp", shipped_gpt("megatron_1t"), 512).empty());
  // The paper's LSTM LM on 64 devices, and its GEMM on 8.
  CHECK(problems("RC-4-2-d8-p2", shipped_workload("lstm_lm"), 128).empty());
  CHECK(problems("CR-8-d8-p1", shipped_workload("lstm_lm"), 64).empty());
  CHECK(problems("RC-1-1-d16-p4", shipped_workload("lstm_lm"), 64).empty());  // emb, 2 x 1, sm
  CHECK(problems("tp1-pp1-dp64", shipped_workload("lstm_lm"), 64).empty());
  CHECK(problems("RC-4-2-d1-p1", shipped_workload("gemm"), 8).empty());
  CHECK(problems("CR-8-d1-p1", shipped_workload("gemm"), 8).empty());
}

TEST_CASE("the degrees must multiply to the device count", "[dist][config-error]") {
  const GptSpec g = shipped_gpt("gpt3_175b");
  CHECK(problems("tp8-pp8-dp16", g, 512) ==
        Lines{"tp8 x pp8 x dp16 = 1024 devices, but --devices is 512"});
  CHECK(problems("RC-4-2-d8-p2", shipped_workload("lstm_lm"), 64) ==
        Lines{"kp1 4 x kp2 2 x d8 x p2 = 128 devices, but --devices is 64"});
  CHECK(problems("CR-8-d8-p1", shipped_workload("lstm_lm"), 32) ==
        Lines{"kp1 8 x d8 x p1 = 64 devices, but --devices is 32"});
  CHECK(problems("tp8", g, 0) == Lines{"--devices must be at least 1, got 0",
                                       "tp8 x pp1 x dp1 = 8 devices, but --devices is 0"});
  const Strategy huge{.tp = 1 << 30, .pp = 1 << 30, .dp = 1 << 30};
  CHECK(problems(huge, g, 8).front() ==
        "tp1073741824 x pp1073741824 x dp1073741824 = too many devices, but --devices is 8");
}

TEST_CASE("a strategy built in code is range-checked", "[dist][config-error]") {
  const GptSpec g = tiny_gpt();
  CHECK(problems(Strategy{.tp = 0, .dp = -1, .micro_batch = -1, .zero = 5}, g, 1) ==
        Lines{"tp = 0 must be at least 1", "dp = -1 must be at least 1",
              "micro_batch = -1 must be at least 0", "zero = 5 must be 0, 1, 2 or 3"});
  CHECK(problems(Strategy{.tp2 = 2}, g, 2) ==
        Lines{"tp2 = 2 is RC's second kernel dimension; it must be 1 with split tensor"});
  CHECK(problems(Strategy{.pp = 2, .virtual_stages = 2}, g, 2) ==
        Lines{"virtual stages (v2) need the interleaved schedule"});
}

TEST_CASE("DualPipe: an even pp and at least 2 x pp micro-batches, as DualPipe asserts",
          "[dist][config-error]") {
  // Megatron 22B, global batch 4: tp8 x pp2 runs 4 micro-batches (>= 2 x 2) of one sequence.
  const GptSpec g = shipped_gpt("megatron_22b");
  CHECK(problems("tp8-pp2-dp1-mb1-dualpipe", g, 16).empty());
  CHECK(problems("tp8-pp4-dp1-mb1-dualpipe", g, 32) ==
        Lines{"dualpipe needs an even number of micro-batches per pipeline, at least 2 x pp = 8; "
              "global_batch / (dp x mb) = 4"});
  CHECK(problems("tp8-pp3-dp1-mb1-dualpipe", g, 24) ==
        Lines{"dualpipe needs an even pp (each device holds stage d and stage pp - 1 - d), got pp3",
              "dualpipe needs an even number of micro-batches per pipeline, at least 2 x pp = 6; "
              "global_batch / (dp x mb) = 4"});
}

TEST_CASE("GPT rules: Megatron divisibility, batch, sequence parallel, interleaving",
          "[dist][config-error]") {
  // Megatron 22B: 48 layers, h 6144 (= 6 x 1024), 64 heads, f 24576, s 2048, V 51200, batch 4.
  const GptSpec g = shipped_gpt("megatron_22b");
  // Every problem at once, in rule order: heads, hidden, ffn, vocabulary (51200 = 2^11 x 25:
  // not a multiple of 6), sequence, micro-batches per pipeline (4 / (1 x 1) = 4). 48 layers
  // over 5 x 2 chunks are uneven (4 and 5 a chunk, stage_layers), which is allowed.
  CHECK(problems("tp6-pp5-dp1-mb1-interleaved-v2-sp", g, 30) ==
        Lines{"heads = 64 is not a multiple of tp = 6",
              "vocabulary = 51200 is not a multiple of tp = 6",
              "sequence = 2048 is not a multiple of tp = 6 (sequence parallel splits it)",
              "interleaved needs the micro-batches per pipeline, global_batch / (dp x mb) = 4, to "
              "be a multiple of pp = 5"});
  // Every model chunk holds a layer: 48 layers cannot fill 4 x 16 chunks.
  CHECK(problems("tp8-pp4-dp1-mb1-interleaved-v16", g, 32) ==
        Lines{"layers = 48 is fewer than pp x v = 4 x 16 = 64: every model chunk holds a layer"});
  CHECK(problems("tp5-pp1-dp1", g, 5) == Lines{"heads = 64 is not a multiple of tp = 5",
                                               "hidden = 6144 is not a multiple of tp = 5",
                                               "ffn = 24576 is not a multiple of tp = 5"});
  // Stages may hold unequal layer ranges (48 over 5: 9, 10, 10, 10, 9), not fewer than one.
  CHECK(problems("tp8-pp5-dp1", g, 40).empty());
  GptSpec two = g;
  two.layers = 2;
  CHECK(problems("tp8-pp5-dp1", two, 40) ==
        Lines{"layers = 2 is fewer than pp = 5: every stage holds at least one layer"});
  CHECK(problems("tp8-dp3-mb1", g, 24) ==
        Lines{"global_batch = 4 is not a multiple of dp x mb = 3 x 1 = 3"});
  // Issue 14 item 3: mb0 reached gpt_training's PF_ASSERT(micro_batch > 0) and aborted.
  CHECK(problems("tp8-dp1-mb0", g, 8) ==
        Lines{"mb0 (the whole batch at once) is for LSTM and GEMM workloads; a GPT needs a "
              "micro-batch of at least 1 sequence (mbN)"});
  CHECK(problems("tp8-dp2-mb4", g, 16) ==
        Lines{"global_batch = 4 is not a multiple of dp x mb = 2 x 4 = 8"});
  CHECK(problems("tp8-interleaved", g, 8) ==
        Lines{"interleaved needs pp > 1, got pp1",
              "interleaved needs at least 2 virtual stages (v2), got v1"});
  CHECK(problems("tp8-pp2-interleaved-v2-mb1", g, 16).empty());  // 4 micro-batches, a multiple of 2
  CHECK(problems("RC-8-1-d1-p1", g, 8) ==
        Lines{"RC is DeepFlow's kernel split for LSTM and GEMM workloads; split a GPT with tpN "
              "(Megatron tensor parallel)"});
}

TEST_CASE("GQA: tp splits the KV heads or replicates them", "[dist][config-error]") {
  // Llama 3 8B: 32 query heads, 8 KV heads. tp8 gives each rank one KV head; tp16 and tp32
  // replicate each KV head on 2 and 4 ranks (local_kv_heads = 1): all valid.
  const GptSpec l = shipped_gpt("llama3_8b");
  CHECK(problems("tp8-pp1-dp1", l, 8).empty());
  CHECK(problems("tp16-pp1-dp1", l, 16).empty());
  CHECK(problems("tp32-pp1-dp1", l, 32).empty());
  // 12 query heads in 3 KV groups on tp4: 4 divides the heads, but neither 3 nor 4 divides the
  // other, so the KV heads can be neither split nor replicated evenly.
  GptSpec g = tiny_gpt();
  g.hidden = 96;
  g.heads = 12;
  g.kv_heads = 3;
  g.ffn = 384;
  CHECK(problems("tp4-pp1-dp1", g, 4) ==
        Lines{"kv_heads = 3 and tp = 4: one must be a multiple of the other (KV heads split or "
              "replicated over tp)"});
}

TEST_CASE("packed documents: no context parallelism across them", "[dist][config-error]") {
  GptSpec l = shipped_gpt("llama3_8b");
  l.document = 512;
  CHECK(problems("tp1-pp1-dp2", l, 2).empty());
  CHECK(problems("tp1-pp1-dp1-cp2", l, 2) ==
        Lines{"context parallel (cp2) over packed documents is not modelled"});
}

TEST_CASE("LSTM rules: DeepFlow's kernel splits and stages", "[dist][config-error]") {
  // The paper's LM: B 16384, D 16384, V 800000 (= 2^8 x 5^5), 2 layers.
  const WorkloadSpec lm = shipped_workload("lstm_lm");
  CHECK(problems("RC-3-3-d7-p4", lm, 252) ==
        Lines{"batch = 16384 is not a multiple of dp = 7",
              "hidden = 16384 is not a multiple of kp1 = 3 (RC splits the weight-gradient rows)",
              "hidden = 16384 is not a multiple of kp2 = 3 (RC splits the gate columns)",
              "vocabulary = 800000 is not a multiple of kp2 = 3 (RC splits the softmax columns)"});
  CHECK(problems("RC-3-1-d1-p1", lm, 3) ==
        Lines{"batch / dp = 16384 is not a multiple of kp1 = 3 (RC splits the rows)",
              "hidden = 16384 is not a multiple of kp1 = 3 (RC splits the weight-gradient rows)"});
  CHECK(problems("RC-4-1-d1-p1-mb6", lm, 4) ==
        Lines{"batch / dp = 16384 is not a multiple of mb = 6",
              "mb = 6 is not a multiple of kp1 = 4 (RC splits the rows)"});
  CHECK(problems("CR-3-d1-p1", lm, 3) ==
        Lines{"hidden = 16384 is not a multiple of kp1 = 3 (CR splits the inner dimension)",
              "vocabulary = 800000 is not a multiple of kp1 = 3 (CR splits the embedding rows)"});
  // pp 5: the embedding and softmax take a stage each, 3 stages for 2 layers.
  CHECK(problems("RC-1-1-d1-p5", lm, 5) ==
        Lines{"layers = 2 is not a multiple of pp - 2 = 3 (with pp > 2 the embedding and the "
              "softmax take a stage each)"});
  CHECK(problems("RC-1-1-d1-p3", lm, 3).empty());  // 1 stage for both layers
  CHECK(problems("tp4-dp16", lm, 64) ==
        Lines{"tp4: Megatron tensor parallel applies to GPT workloads; split an LSTM's kernels "
              "with RC-{kp1}-{kp2}-d{dp}-p{lp} or CR-{kp1}-d{dp}-p{lp}"});
  CHECK(problems("RC-1-1-d2-p2-sp-recompute=full-interleaved-v2", lm, 4) ==
        Lines{"sequence parallel (sp) applies to GPT workloads only, not to an LSTM",
              "recompute=full applies to GPT workloads only, not to an LSTM",
              "the interleaved schedule applies to GPT workloads only, not to an LSTM"});
}

TEST_CASE("GEMM rules: a single product split by RC or CR", "[dist][config-error]") {
  const WorkloadSpec gemm = shipped_workload("gemm");  // 8192^3
  CHECK(problems("RC-3-5-d1-p1", gemm, 15) ==
        Lines{"m = 8192 is not a multiple of kp1 = 3", "n = 8192 is not a multiple of kp2 = 5"});
  CHECK(problems("CR-3-d1-p1", gemm, 3) == Lines{"k = 8192 is not a multiple of kp1 = 3"});
  CHECK(problems("RC-1-1-d2-p1", gemm, 2) ==
        Lines{"a GEMM has no batch or layers to split: dp and pp must be 1, got dp2 and pp1"});
  CHECK(problems("tp2", gemm, 2) ==
        Lines{"tp2: Megatron tensor parallel applies to GPT workloads; split a GEMM with "
              "RC-{kp1}-{kp2}-d1-p1 or CR-{kp1}-d1-p1"});
  CHECK(problems("tp1-mb7", gemm, 1).empty());  // micro_batch means nothing to a GEMM
}

TEST_CASE("validate_strategy throws every problem at the caller's location",
          "[dist][config-error]") {
  const SourceLoc where{"study.yaml", 4, 13, "runs[0].strategy"};
  CHECK(error_of([&] {
          validate_strategy(parse_strategy("tp6-pp5"), shipped_gpt("megatron_22b"), 30, where);
        }) ==
        "study.yaml:4:13: error: runs[0].strategy: heads = 64 is not a multiple of tp = 6\n"
        "study.yaml:4:13: error: runs[0].strategy: vocabulary = 51200 is not a multiple of "
        "tp = 6");
  CHECK(error_of([&] { validate_strategy(parse_strategy("tp7"), tiny_gpt(), 8); }) ==
        "strategy: error: tp7 x pp1 x dp1 = 7 devices, but --devices is 8\n"
        "strategy: error: heads = 4 is not a multiple of tp = 7\n"
        "strategy: error: hidden = 64 is not a multiple of tp = 7\n"
        "strategy: error: ffn = 256 is not a multiple of tp = 7\n"
        "strategy: error: vocabulary = 128 is not a multiple of tp = 7");
}

TEST_CASE("is_valid_strategy agrees with check_strategy", "[dist][property]") {
  const std::vector<WorkloadSpec> workloads{tiny_gpt(), shipped_workload("lstm_lm"),
                                            shipped_workload("gemm")};
  int valid = 0, checked = 0;
  for (const auto& w : workloads) {
    for (const auto split :
         {KernelSplit::kTensor, KernelSplit::kRowColumn, KernelSplit::kColumnRow}) {
      for (int tp = 1; tp <= 4; ++tp) {
        for (int pp = 1; pp <= 4; ++pp) {
          for (int mb = 0; mb <= 3; ++mb) {
            for (const auto sched : {PipelineSchedule::kOneFOneB, PipelineSchedule::kInterleaved}) {
              for (const bool sp : {false, true}) {
                Strategy s{.split = split, .tp = tp, .pp = pp, .dp = 2, .micro_batch = mb};
                s.schedule = sched;
                s.virtual_stages = sched == PipelineSchedule::kInterleaved ? 2 : 1;
                s.sequence_parallel = sp;
                const bool ok = is_valid_strategy(s, w, s.devices());
                CHECK(ok == check_strategy(s, w, s.devices()).empty());
                valid += ok ? 1 : 0;
                ++checked;
              }
            }
          }
        }
      }
    }
  }
  CHECK(checked == 3 * 3 * 4 * 4 * 4 * 2 * 2);
  CHECK(valid > 0);
}

TEST_CASE("complete_strategy takes the workload's micro-batch and derives dp", "[dist]") {
  const SourceLoc at{"command line", 0, 0, "--devices"};
  GptSpec g = shipped_gpt("gpt3_175b");  // 96 layers, 96 heads, micro_batch 1, global 1536
  g.micro_batch = 2;
  // No mbN: the workload's micro_batch; no dp and no device count: dp 1.
  const Strategy bare = complete_strategy(parse_partial_strategy("tp8-pp8"), g, 0, at);
  CHECK(bare == parse_strategy("tp8-pp8-dp1-mb2"));
  // A written mbN wins over the workload's.
  CHECK(complete_strategy(parse_partial_strategy("tp8-pp8-mb4"), g, 0, at).micro_batch == 4);
  // 1024 devices / (tp8 x pp8 = 64) = dp16.
  CHECK(complete_strategy(parse_partial_strategy("tp8-pp8"), g, 1024, at) ==
        parse_strategy("tp8-pp8-dp16-mb2"));
  // No strategy at all: data parallelism over every device.
  CHECK(complete_strategy(PartialStrategy{}, g, 64, at) == parse_strategy("dp64-mb2"));
  // A written dp that agrees passes unchanged.
  CHECK(complete_strategy(parse_partial_strategy("tp8-pp8-dp16"), g, 1024, at).dp == 16);
  // Workloads without a micro_batch key keep Strategy's default (LSTM) or the paper's mb0.
  CHECK(complete_strategy(parse_partial_strategy("dp2"), shipped_workload("lstm_lm"), 0, at)
            .micro_batch == 1);
  CHECK(complete_strategy(parse_partial_strategy("CR-8-d8-p1"), shipped_workload("lstm_lm"), 64,
                          at)
            .micro_batch == 0);

  // 1000 / 64 = 15.6: no whole dp.
  CHECK(error_of([&] {
          (void)complete_strategy(parse_partial_strategy("tp8-pp8"), g, 1000, at);
        }) == "command line: error: --devices: 1000 is not a multiple of tp8 x pp8 = 64: no "
              "whole data-parallel degree dp fills 1000 devices");
  // tp8 x pp8 x dp16 = 1024 != 1000.
  CHECK(error_of([&] {
          (void)complete_strategy(parse_partial_strategy("tp8-pp8-dp16"), g, 1000, at);
        }) == "command line: error: --devices: --devices is 1000, but the strategy's tp8 x pp8 "
              "x dp16 = 1024 devices (leave dp out to derive it)");
  CHECK(error_of([&] {
          (void)complete_strategy(parse_partial_strategy("RC-4-2-d8-p2"),
                                  shipped_workload("lstm_lm"), 64, at);
        }) == "command line: error: --devices: --devices is 64, but the strategy's kp1 4 x kp2 "
              "2 x p2 x d8 = 128 devices (leave dp out to derive it)");
  // Degrees whose product overflows 64 bits are reported, not wrapped.
  CHECK(error_of([&] {
          (void)complete_strategy(parse_partial_strategy("tp2147483647-pp2147483647"), g, 8, at);
        }) == "command line: error: --devices: 8 is not a multiple of tp2147483647 x pp2147483647 "
              "= too many: no whole data-parallel degree dp fills 8 devices");
}

namespace pathfinder {

TEST_CASE("context parallel rules: 2 x cp chunks of the sequence, fused attention, GPT only",
          "[dist][config-error]") {
  // Llama 3 8B: s 8192, flash attention. cp2 x dp4 on 8 devices; the device count counts cp.
  const GptSpec w = shipped_gpt("llama3_8b");
  CHECK(problems("tp1-dp4-cp2-mb1", w, 8).empty());
  CHECK(problems("tp1-dp4-cp2-mb1", w, 4) ==
        Lines{"tp1 x cp2 x pp1 x dp4 = 8 devices, but --devices is 4"});
  // Causal load balancing splits the sequence in 2·cp chunks (with sp, each again over tp).
  GptSpec odd = w;
  odd.sequence = 8192 + 2;  // 2 x 4097: two chunks, not four
  CHECK(problems("tp1-dp4-cp2-mb1", odd, 8) ==
        Lines{"sequence = 8194 is not a multiple of 2 x cp = 4 (context parallel splits it in 2 "
              "x cp chunks)"});
  // The ring passes keys and values between fused attention kernels.
  GptSpec unfused = w;
  unfused.attention = AttentionKind::kUnfused;
  CHECK(problems("tp1-dp4-cp2-mb1", unfused, 8) ==
        Lines{"context parallel (cp2) passes keys and values around a ring of fused attention "
              "kernels; set the workload's attention: flash"});
  CHECK(problems("CR-2-d1-p1-cp2", shipped_workload("lstm_lm"), 4) ==
        Lines{"context parallel (cp2) applies to GPT workloads only, not to an LSTM"});
  // complete_strategy derives dp with cp counted: 64 / (tp4 x cp2 x pp2) = 4.
  CHECK(complete_strategy(parse_partial_strategy("tp4-cp2-pp2"), w, 64, strategy_source()).dp == 4);
  // All-to-all (Ulysses): the sequence in cp pieces (no causal chunks), the tensor group's
  // heads over cp; Llama 3 8B has 32 heads and 8 KV heads: tp2 leaves 16 and 4, so cp4 splits
  // both, cp8 replicates the KV heads, and cp32 splits no whole head.
  CHECK(problems("tp2-dp1-cp4-ulysses-mb1", w, 8).empty());
  CHECK(problems("tp2-dp1-cp8-ulysses-mb1", w, 16).empty());
  CHECK(problems("tp1-dp1-cp64-ulysses-mb1", w, 64) ==
        Lines{"heads / tp = 32 is not a multiple of cp = 64 (ulysses splits heads over cp)"});
  CHECK(problems("tp1-dp8-ulysses-mb1", w, 8) ==
        Lines{"ulysses is a kind of context parallelism: give cpN, N > 1"});
  GptSpec odd_ulysses = w;
  odd_ulysses.sequence = 8192 + 2;  // 2 x 4097: two pieces suffice for Ulysses
  CHECK(problems("tp1-dp4-cp2-ulysses-mb1", odd_ulysses, 8).empty());
  CHECK(problems("tp1-dp4-cp2-ulysses-mb1", unfused, 8) ==
        Lines{"context parallel (cp2-ulysses) regroups heads for fused attention kernels; set the "
              "workload's attention: flash"});
  CHECK(problems("CR-2-d1-p1-cp2-ulysses", shipped_workload("lstm_lm"), 4) ==
        Lines{"context parallel (cp2) applies to GPT workloads only, not to an LSTM",
              "context parallel by all-to-all (ulysses) applies to GPT workloads only, not to an "
              "LSTM"});
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("expert parallel rules: a mixture of experts, experts and dp divisible by ep",
          "[dist][config-error]") {
  const GptSpec mixtral = shipped_gpt("mixtral_8x7b");  // 8 experts
  CHECK(problems("tp1-pp4-dp16-ep8-mb1", mixtral, 64).empty());
  CHECK(problems("tp1-pp4-dp16-ep16-mb1", mixtral, 64) ==
        Lines{"experts = 8 is not a multiple of ep = 16"});
  CHECK(problems("tp1-pp16-dp4-ep8-mb1", mixtral, 64) ==
        Lines{"cp x dp = 4 is not a multiple of ep = 8 (the expert group is made of context and "
              "data-parallel ranks)"});
  CHECK(problems("tp1-dp8-ep2-mb1", shipped_gpt("llama3_8b"), 8) ==
        Lines{"expert parallel (ep2) splits a mixture of experts; the workload has no experts"});
  CHECK(problems("tp2-pp4-dp8-ep8-mb1", mixtral, 64) ==
        Lines{"a mixture of experts with tp2 needs sequence parallelism (sp), as Megatron-Core's "
              "MoE layers do"});
  CHECK(problems("tp2-pp4-dp8-ep8-mb1-sp", mixtral, 64).empty());
  // ep is not a factor of the device count: 64 = tp1 x pp4 x dp16.
  CHECK(parse_strategy("tp1-pp4-dp16-ep8").devices() == 64);
  // Whole experts (etp1): the expert group is made of tensor and data ranks, so ep8 fits
  // tp2 x dp4 (Megatron-MoE-ModelZoo's Qwen3-235B H100 run: TP2, DP16, EP32, EDP1).
  CHECK(problems("tp2-pp8-dp4-ep8-mb1-sp-etp1", mixtral, 64).empty());
  CHECK(problems("tp2-pp8-dp4-ep8-mb1-sp", mixtral, 64) ==
        Lines{"cp x dp = 4 is not a multiple of ep = 8 (the expert group is made of context and "
              "data-parallel ranks)"});
  CHECK(problems("tp2-pp16-dp2-ep8-mb1-sp-etp1", mixtral, 64) ==
        Lines{"tp x cp x dp = 4 is not a multiple of ep = 8 (with etp1 the expert group is made "
              "of tensor, context and data-parallel ranks)"});
  // Megatron-Core folds the expert group over the context ranks too (etp·ep·edp = tp·cp·dp):
  // NVIDIA's Qwen3-235B runs at 128K, TP4 CP8 EP8 on 256 GPUs with dp 1.
  const GptSpec qwen = shipped_gpt("qwen3_235b_a22b");
  GptSpec long_qwen = qwen;
  long_qwen.sequence = 131072;
  long_qwen.global_batch = 256;
  CHECK(problems("tp4-pp8-dp1-cp8-ep8-mb1-sp-etp1", long_qwen, 256).empty());
  CHECK(problems("tp1-pp8-dp4-cp8-ep32-mb1", long_qwen, 256).empty());
  CHECK(problems("tp2-dp4-mb1-sp-etp1", shipped_gpt("llama3_8b"), 8) ==
        Lines{"etp1 keeps a mixture of experts' experts whole; the workload has no experts"});
  CHECK(problems("tp1-pp4-dp16-ep8-mb1-recompute=moe_act+layernorm", mixtral, 64).empty());
  CHECK(problems("tp1-pp4-dp16-ep8-mb1-recompute=mla_up_proj+moe", mixtral, 64) ==
        Lines{"recompute=mla_up_proj+moe: mla_up_proj needs multi-head latent attention; the "
              "workload has none"});
  CHECK(problems("tp1-dp8-mb1-recompute=moe_act", shipped_gpt("llama3_8b"), 8) ==
        Lines{"recompute=moe_act: moe_act needs a mixture of experts; the workload has none"});
  CHECK(problems("CR-2-d1-p1-etp1", shipped_workload("lstm_lm"), 2) ==
        Lines{"expert tensor parallelism (etp1) applies to GPT workloads only, not to an LSTM"});
}

}  // namespace pathfinder
