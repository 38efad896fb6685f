// Tests for engine/parallel/strategy.hpp: both notations parse, to_string round-trips, YAML reads
// the same, and every class of bad input gives one exact message.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "engine/config/node.hpp"
#include "engine/parallel/strategy.hpp"
#include "tests/test_support.hpp"

using namespace pathfinder;
using pathfinder::test::error_of;

namespace {

std::string parse_error(const std::string& text) {
  return error_of([&] { (void)parse_strategy(text); });
}
// The message alone, without the location.
std::string error(const std::string& text) {
  try {
    (void)parse_strategy(text);
  } catch (const ConfigError& e) {
    return e.diagnostics().front().message;
  }
  return "no error";
}
// The value of the file's one key, `strategy:`, a string or a map (ConfigNode::child wants a map).
Strategy from_yaml(const std::string& yaml) {
  return read_strategy(ConfigNode::load_string(yaml, "s.yaml").entries().at(0).second);
}
std::string yaml_error(const std::string& yaml) {
  return error_of([&] { (void)from_yaml(yaml); });
}

const std::string kValid =
    "expected tpN, ppN, dpN, cpN, ulysses, epN, etp1, mbN, gpipe, 1f1b, interleaved, dualpipe, vN, sp, "
    "zero0..zero3 or recompute=none|selective|full";

}  // namespace

TEST_CASE("Megatron tokens parse in any order, absent ones take the defaults", "[dist]") {
  const Strategy s = parse_strategy("tp8-pp8-dp16-mb1-1f1b-recompute=selective");
  CHECK(s.split == KernelSplit::kTensor);
  CHECK(s.tp == 8);
  CHECK(s.tp2 == 1);
  CHECK(s.pp == 8);
  CHECK(s.dp == 16);
  CHECK(s.micro_batch == 1);
  CHECK(s.schedule == PipelineSchedule::kOneFOneB);
  CHECK(s.virtual_stages == 1);
  CHECK_FALSE(s.sequence_parallel);
  CHECK(s.zero == 0);
  CHECK(s.recompute == Recompute::kSelective);
  CHECK(s.devices() == 1024);

  CHECK(parse_strategy("recompute=selective-dp16-1f1b-mb1-pp8-tp8") == s);
  CHECK(parse_strategy("dp4") == Strategy{.dp = 4});
  const Strategy all = parse_strategy("zero3-sp-v4-interleaved-mb2-dp2-pp4-tp2-recompute=full");
  CHECK(all == Strategy{.tp = 2,
                        .pp = 4,
                        .dp = 2,
                        .micro_batch = 2,
                        .schedule = PipelineSchedule::kInterleaved,
                        .virtual_stages = 4,
                        .sequence_parallel = true,
                        .zero = 3,
                        .recompute = Recompute::kFull});
  CHECK(parse_strategy("interleaved-pp2").virtual_stages == 1);  // check_strategy rejects v1
  CHECK(parse_strategy("mb0").micro_batch == 0);                 // the whole per-replica batch
  CHECK(parse_strategy("gpipe").schedule == PipelineSchedule::kGpipe);
}

TEST_CASE("the paper's RC and CR notations parse with micro_batch 0", "[dist]") {
  CHECK(
      parse_strategy("RC-4-2-d8-p2") ==
      Strategy{
          .split = KernelSplit::kRowColumn, .tp = 4, .tp2 = 2, .pp = 2, .dp = 8, .micro_batch = 0});
  CHECK(parse_strategy("CR-8-d8-p1") ==
        Strategy{.split = KernelSplit::kColumnRow, .tp = 8, .pp = 1, .dp = 8, .micro_batch = 0});
  CHECK(parse_strategy("rc-1-1-d64-p1") == parse_strategy("RC-1-1-d64-p1"));
  // Option tokens may follow.
  const Strategy s = parse_strategy("CR-2-d4-p4-mb8-gpipe-zero2");
  CHECK(s.micro_batch == 8);
  CHECK(s.schedule == PipelineSchedule::kGpipe);
  CHECK(s.zero == 2);
}

TEST_CASE("to_string is canonical and parse_strategy round-trips it", "[dist][property]") {
  CHECK(to_string(parse_strategy("recompute=selective-dp16-pp8-tp8")) ==
        "tp8-pp8-dp16-mb1-1f1b-recompute=selective");
  CHECK(to_string(Strategy{}) == "tp1-pp1-dp1-mb1-1f1b");
  CHECK(to_string(parse_strategy("zero3-sp-v4-interleaved-mb2-dp2-pp4-tp2-recompute=full")) ==
        "tp2-pp4-dp2-mb2-interleaved-v4-sp-zero3-recompute=full");
  CHECK(to_string(parse_strategy("RC-4-2-d8-p2")) == "RC-4-2-d8-p2");
  CHECK(to_string(parse_strategy("CR-2-d4-p4-zero2-mb8-gpipe")) == "CR-2-d4-p4-mb8-gpipe-zero2");

  // Every combination of the options over a few degrees, in both notations.
  std::vector<Strategy> all;
  for (const KernelSplit split :
       {KernelSplit::kTensor, KernelSplit::kRowColumn, KernelSplit::kColumnRow}) {
    for (const int tp : {1, 8}) {
      for (const int pp : {1, 3}) {
        for (const int mb : {0, 1, 16}) {
          for (const auto sched : {PipelineSchedule::kGpipe, PipelineSchedule::kOneFOneB,
                                   PipelineSchedule::kInterleaved}) {
            for (const bool sp : {false, true}) {
              for (int zero = 0; zero <= 3; ++zero) {
                for (const auto r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
                  Strategy s{.split = split, .tp = tp, .pp = pp, .dp = 5, .micro_batch = mb};
                  s.tp2 = split == KernelSplit::kRowColumn ? 2 : 1;
                  s.schedule = sched;
                  s.virtual_stages = sched == PipelineSchedule::kInterleaved ? 3 : 1;
                  s.sequence_parallel = sp;
                  s.zero = zero;
                  s.recompute = r;
                  all.push_back(s);
                }
              }
            }
          }
        }
      }
    }
  }
  CHECK(all.size() == 3 * 2 * 2 * 3 * 3 * 2 * 4 * 3);
  for (const Strategy& s : all) {
    INFO(to_string(s));
    CHECK(parse_strategy(to_string(s)) == s);
  }
}

TEST_CASE("bad strategy strings name the token and what is valid", "[dist][config-error]") {
  const std::string e = "strategy: error: ";
  CHECK(parse_error("tp8-tpp8") ==
        e + "\"tpp8\": unknown token; " + kValid + "; did you mean \"tp8\"?");
  CHECK(parse_error("tp8-interleave") ==
        e + "\"interleave\": unknown token; " + kValid + "; did you mean \"interleaved\"?");
  // Two neighbours swapped is one edit: 1f1b, not mb1.
  CHECK(parse_error("tp8-1fb1") ==
        e + "\"1fb1\": unknown token; " + kValid + "; did you mean \"1f1b\"?");
  CHECK(parse_error("dp8-seq") ==
        e + "\"seq\": unknown token; " + kValid + "; did you mean \"sp\"?");
  CHECK(parse_error("dp8-sequence") == e + "\"sequence\": unknown token; " + kValid);
  CHECK(parse_error("recompute=selectve") ==
        e + "\"recompute=selectve\": unknown recompute mode \"selectve\"; expected none, "
            "selective or full, or modules joined by '+' of core_attn, mla_up_proj, mlp, moe, "
            "moe_act, layernorm or shared_experts; did you mean \"selective\"?");
  CHECK(parse_error("tp2-tp4") == e + "\"tp4\": tensor-parallel degree given twice (tp2 and tp4)");
  CHECK(parse_error("gpipe-pp2-1f1b") ==
        e + "\"1f1b\": pipeline schedule given twice (gpipe and 1f1b)");
  CHECK(parse_error("sp-tp2-sp") == e + "\"sp\": sequence parallel given twice (sp and sp)");
  CHECK(parse_error("tp0") == e + "\"tp0\": the tensor-parallel degree must be at least 1");
  CHECK(parse_error("pp2-dp0") == e + "\"dp0\": the data-parallel degree must be at least 1");
  CHECK(parse_error("tp99999999999") ==
        e + "\"tp99999999999\": the tensor-parallel degree is too large");
  CHECK(parse_error("zero4") == e + "\"zero4\": the ZeRO stage must be 0, 1, 2 or 3");
  CHECK(parse_error("pp2-v2") == e + "\"v2\": virtual stages need the interleaved schedule");
  CHECK(parse_error("v1-1f1b") == e + "\"v1\": virtual stages need the interleaved schedule");
  CHECK(parse_error("") == e + "empty strategy; expected tokens such as tp8-pp8-dp16-mb1-1f1b");
  CHECK(parse_error("tp8--pp2") ==
        e + "empty token in \"tp8--pp2\" (a '-' at an end or two in a row)");
  CHECK(parse_error("tp8-") == e + "empty token in \"tp8-\" (a '-' at an end or two in a row)");
}

TEST_CASE("bad paper notations say which part is wrong", "[dist][config-error]") {
  const std::string e = "strategy: error: ";
  const std::string rc = "RC-{kp1}-{kp2}-d{dp}-p{lp}, e.g. RC-4-2-d8-p2";
  const std::string cr = "CR-{kp1}-d{dp}-p{lp}, e.g. CR-8-d8-p1";
  CHECK(parse_error("RC-4-d8-p2") == e + "\"d8\": expected kp2 (a number) in " + rc);
  CHECK(parse_error("RC-4-2") == e + "\"RC-4-2\" ends before d{dp}; expected " + rc);
  CHECK(parse_error("CR-8-dp8-p1") == e + "\"dp8\": expected d{dp} in " + cr);
  CHECK(parse_error("CR-8-d8-8") == e + "\"8\": expected p{lp} in " + cr);
  CHECK(parse_error("CR-0-d8-p1") == e + "\"0\": kp1 must be at least 1");
  CHECK(parse_error("RC-4-2-d8-p0") == e + "\"p0\": lp must be at least 1");
  CHECK(parse_error("RC-4-2-d8-p2-tp2") ==
        e + "\"tp2\": the paper notation already gives kp, dp and lp");
  CHECK(parse_error("tp2-RC-4-2-d8-p2") ==
        e + "\"RC\": the paper notation must come first, as in RC-4-2-d8-p2 or CR-8-d8-p1");
  CHECK(parse_error("RX-4-2-d8-p2") ==
        e + "\"RX\": unknown token; " + kValid + "; did you mean \"RC\"?");
}

TEST_CASE("read_strategy takes a string or a map", "[dist]") {
  CHECK(from_yaml("strategy: tp8-pp8-dp16-mb1-1f1b-recompute=selective\n") ==
        parse_strategy("tp8-pp8-dp16-mb1-1f1b-recompute=selective"));
  CHECK(from_yaml("strategy:\n  tp: 8\n  pp: 8\n  dp: 16\n  recompute: selective\n") ==
        parse_strategy("tp8-pp8-dp16-mb1-1f1b-recompute=selective"));
  CHECK(from_yaml("strategy:\n  split: rc\n  tp: 4\n  tp2: 2\n  dp: 8\n  pp: 2\n") ==
        parse_strategy("RC-4-2-d8-p2"));
  CHECK(from_yaml("strategy:\n  tp: 2\n  pp: 4\n  dp: 2\n  micro_batch: 2\n  schedule: "
                  "interleaved\n  virtual_stages: 4\n  sequence_parallel: true\n  zero: 3\n  "
                  "recompute: full\n") ==
        parse_strategy("zero3-sp-v4-interleaved-mb2-dp2-pp4-tp2-recompute=full"));
  CHECK(from_yaml("strategy: {}\n") == Strategy{});
}

TEST_CASE("bad YAML strategies are located errors", "[dist][config-error]") {
  CHECK(yaml_error("strategy: tp8-tpp8\n") ==
        "s.yaml:1:11: error: strategy: \"tpp8\": unknown token; " + kValid +
            "; did you mean \"tp8\"?");
  // finish()'s suggestion: the first of the read keys, alphabetically, one edit away.
  CHECK(yaml_error("strategy:\n  tp: 8\n  tpp: 2\n") ==
        "s.yaml:3:3: error: strategy.tpp: unknown key; did you mean \"pp\"?");
  CHECK(yaml_error("strategy:\n  tp: 0\n") ==
        "s.yaml:2:7: error: strategy.tp: expected a positive number, got \"0\"");
  CHECK(yaml_error("strategy:\n  tp2: 2\n") ==
        "s.yaml:2:8: error: strategy.tp2: tp2 is the second kernel dimension of split rc; split "
        "is tensor");
  CHECK(yaml_error("strategy:\n  pp: 2\n  virtual_stages: 2\n") ==
        "s.yaml:3:19: error: strategy.virtual_stages: virtual stages need schedule: interleaved");
  CHECK(yaml_error("strategy:\n  zero: 4\n") ==
        "s.yaml:2:9: error: strategy.zero: expected a ZeRO stage 0, 1, 2 or 3, got \"4\"");
  CHECK(yaml_error("strategy:\n  schedule: 1f1f\n") ==
        "s.yaml:2:13: error: strategy.schedule: expected one of gpipe, 1f1b, interleaved or dualpipe, got "
        "\"1f1f\"; did you mean \"1f1b\"?");
  // Ulysses context parallelism: a boolean beside cp.
  CHECK(from_yaml("strategy:\n  cp: 4\n  ulysses: true\n  dp: 2\n").ulysses);
  CHECK(yaml_error("strategy:\n  cp: 4\n  ulysses: maybe\n") ==
        "s.yaml:3:12: error: strategy.ulysses: expected true or false, got \"maybe\"");
  CHECK(yaml_error("strategy:\n  split: RCC\n") ==
        "s.yaml:2:10: error: strategy.split: expected one of tensor, rc or cr, got \"RCC\"; did "
        "you mean \"rc\"?");
  CHECK(yaml_error("strategy:\n  - tp8\n") ==
        "s.yaml:2:3: error: strategy: expected a strategy such as \"tp8-pp8-dp16-mb1-1f1b\" or a "
        "map of tp, tp2, pp, dp, cp, ulysses, ep, etp, micro_batch, schedule, virtual_stages, "
        "sequence_parallel, zero, recompute and split");
}

TEST_CASE("enum spellings", "[dist]") {
  CHECK(valid_pipeline_schedules() ==
        std::vector<std::string>{"gpipe", "1f1b", "interleaved", "dualpipe"});
  CHECK(valid_kernel_splits() == std::vector<std::string>{"tensor", "rc", "cr"});
  for (const auto& name : valid_pipeline_schedules()) {
    CHECK(to_string(*parse_pipeline_schedule(name)) == name);
  }
  for (const auto& name : valid_kernel_splits())
    CHECK(to_string(*parse_kernel_split(name)) == name);
  CHECK_FALSE(parse_pipeline_schedule("1F1B"));
}

TEST_CASE("a partial strategy says whether dp and the micro-batch were written", "[dist]") {
  const PartialStrategy bare = parse_partial_strategy("tp8-pp8");
  CHECK(bare.strategy == parse_strategy("tp8-pp8"));
  CHECK_FALSE(bare.has_dp);
  CHECK_FALSE(bare.has_micro_batch);
  const PartialStrategy full = parse_partial_strategy("mb2-dp16-tp8-pp8");
  CHECK(full.has_dp);
  CHECK(full.has_micro_batch);
  CHECK(full.strategy.dp == 16);
  CHECK(full.strategy.micro_batch == 2);
  // The paper notation writes d{dp} and defines micro-batch 0.
  const PartialStrategy paper = parse_partial_strategy("CR-8-d8-p1");
  CHECK(paper.has_dp);
  CHECK(paper.has_micro_batch);
  CHECK(paper.strategy.micro_batch == 0);

  const auto yaml = [](const std::string& text) {
    return read_partial_strategy(ConfigNode::load_string(text, "s.yaml").entries().at(0).second);
  };
  const PartialStrategy map = yaml("strategy:\n  tp: 8\n  pp: 8\n");
  CHECK_FALSE(map.has_dp);
  CHECK_FALSE(map.has_micro_batch);
  const PartialStrategy map_full = yaml("strategy:\n  dp: 2\n  micro_batch: 4\n");
  CHECK(map_full.has_dp);
  CHECK(map_full.has_micro_batch);
  CHECK(yaml("strategy: tp8-dp2\n").has_dp);
  CHECK(yaml("strategy:\n  split: cr\n  tp: 8\n").has_micro_batch);  // the paper's mb0
}

namespace pathfinder {

TEST_CASE("context parallel: cpN in the grammar, cp in YAML, counted in the devices", "[dist]") {
  const Strategy s = parse_strategy("cp4-tp2-dp2");
  CHECK(s.cp == 4);
  CHECK(s.devices() == 2 * 4 * 2);
  CHECK(to_string(s) == "tp2-pp1-dp2-cp4-mb1-1f1b");  // cp written only when not 1
  CHECK(parse_strategy(to_string(s)) == s);
  CHECK(to_string(parse_strategy("tp2-dp2")).find("cp") == std::string::npos);
  CHECK(error("cp0") == "\"cp0\": the context-parallel degree must be at least 1");
  CHECK(error("ep0") == "\"ep0\": the expert-parallel degree must be at least 1");
  CHECK(to_string(parse_strategy("ep4-dp8")) == "tp1-pp1-dp8-ep4-mb1-1f1b");
  CHECK(error("cp2-cp4") == "\"cp4\": context-parallel degree given twice (cp2 and cp4)");
  CHECK(error("tp2-cp") ==
        "\"cp\": expected a whole number after \"cp\" (cpN, e.g. cp4; '-' separates tokens)");
  // All-to-all (DeepSpeed-Ulysses) context parallelism: one token beside cpN, written after it.
  const Strategy u = parse_strategy("ulysses-cp4-tp2-dp2");
  CHECK(u.ulysses);
  CHECK(u.devices() == 16);
  CHECK(to_string(u) == "tp2-pp1-dp2-cp4-ulysses-mb1-1f1b");
  CHECK(parse_strategy(to_string(u)) == u);
  CHECK(!parse_strategy("cp4-tp2-dp2").ulysses);
  CHECK(error("cp2-ulysses-ulysses") ==
        "\"ulysses\": context-parallel kind given twice (ulysses and ulysses)");
  CHECK(error("cp2-ulyses") ==
        "\"ulyses\": unknown token; " + kValid + "; did you mean \"ulysses\"?");
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("expert tensor parallelism: etp1 keeps experts whole, etpN equal to tp is the default",
          "[dist]") {
  // Megatron-Core's --expert-tensor-parallel-size 1 beside --tensor-model-parallel-size 2.
  const Strategy s = parse_strategy("tp2-pp8-dp64-ep64-sp-etp1");
  CHECK(s.etp == 1);
  CHECK(s.expert_tp() == 1);
  CHECK(s.devices() == 2 * 8 * 64);  // not a factor of the devices
  CHECK(to_string(s) == "tp2-pp8-dp64-ep64-etp1-mb1-1f1b-sp");
  CHECK(parse_strategy(to_string(s)) == s);
  // etp equal to tp is the default (experts split like the dense layers): one spelling.
  CHECK(parse_strategy("tp4-etp4-dp2") == parse_strategy("tp4-dp2"));
  CHECK(parse_strategy("tp4-dp2").expert_tp() == 4);
  CHECK(parse_strategy("etp1-dp2") == parse_strategy("dp2"));  // tp1: the same
  CHECK(error("tp4-etp2") == "\"etp2\": the experts' tensor-parallel degree is 1 (whole "
                             "experts) or the tensor-parallel degree (tp4)");
  CHECK(error("etp0") == "\"etp0\": the expert tensor-parallel degree must be at least 1");
  CHECK(error("etp1-etp1") ==
        "\"etp1\": expert tensor-parallel degree given twice (etp1 and etp1)");
  CHECK(from_yaml("strategy:\n  tp: 8\n  etp: 1\n").etp == 1);
  CHECK(from_yaml("strategy:\n  tp: 8\n  etp: 8\n").etp == 0);
  CHECK(yaml_error("strategy:\n  tp: 8\n  etp: 4\n") ==
        "s.yaml:3:8: error: strategy.etp: expected 1 or 8: the experts' tensor-parallel degree "
        "is 1 (whole experts) or the tensor-parallel degree (tp8), got \"4\"");
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("recomputed modules: recompute=mla_up_proj+mlp, core_attn alone is selective",
          "[dist]") {
  // NVIDIA's DeepSeek-V3 H100 run: --recompute-granularity selective --recompute-modules
  // mla_up_proj mlp.
  const Strategy s = parse_strategy("tp2-pp8-dp64-ep64-recompute=mla_up_proj+mlp");
  CHECK(s.recompute == Recompute::kSelective);
  CHECK(s.recompute_modules == (kRecomputeMlaUpProj | kRecomputeMlp));
  CHECK(to_string(s) == "tp2-pp8-dp64-ep64-mb1-1f1b-recompute=mla_up_proj+mlp");
  CHECK(parse_strategy(to_string(s)) == s);
  // Written in any order, shown in one.
  CHECK(parse_strategy("recompute=mlp+mla_up_proj") == parse_strategy("recompute=mla_up_proj+mlp"));
  // Megatron-Core's default module is the attention core: Korthikanti's selective.
  CHECK(parse_strategy("recompute=core_attn") == parse_strategy("recompute=selective"));
  CHECK(to_string(parse_strategy("recompute=core_attn+layernorm")) ==
        "tp1-pp1-dp1-mb1-1f1b-recompute=core_attn+layernorm");
  CHECK(error("recompute=mlp+attn") ==
        "\"recompute=mlp+attn\": unknown recompute mode \"mlp+attn\"; expected none, selective "
        "or full, or modules joined by '+' of core_attn, mla_up_proj, mlp, moe, moe_act, "
        "layernorm or shared_experts");
  CHECK(from_yaml("strategy:\n  recompute: moe_act+layernorm\n").recompute_modules ==
        (kRecomputeMoeAct | kRecomputeLayernorm));
  CHECK(yaml_error("strategy:\n  recompute: moe+\n") ==
        "s.yaml:2:14: error: strategy.recompute: expected none, selective or full, or modules "
        "joined by '+' of core_attn, mla_up_proj, mlp, moe, moe_act, layernorm or "
        "shared_experts, got \"moe+\"");
}

}  // namespace pathfinder
