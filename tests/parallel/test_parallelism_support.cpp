// What a software stack can run: a strategy outside its schedules, ZeRO stages, context and
// expert forms is refused with the reason.
#include <catch2/catch.hpp>

#include "engine/parallel/parallelism_support.hpp"

namespace pathfinder {

TEST_CASE("a stack runs a strategy only with every part of it offered", "[parallel]") {
  ParallelismSupport nanotron;  // 1F1B and all-forward-all-backward, ZeRO 0 and 1
  nanotron.schedules = 1U << static_cast<unsigned>(PipelineSchedule::kOneFOneB) |
                       1U << static_cast<unsigned>(PipelineSchedule::kGpipe);
  nanotron.zero_stages = 0b0011;
  CHECK(nanotron.runs(parse_strategy("tp2-pp4-dp2-mb1-1f1b-zero1")));
  CHECK(nanotron.refuses(parse_strategy("tp2-pp4-dp2-mb1-1f1b-zero1"), "nanotron").empty());
  const Strategy interleaved = parse_strategy("tp2-pp4-dp2-mb1-interleaved-v2");
  CHECK_FALSE(nanotron.runs(interleaved));
  CHECK(nanotron.refuses(interleaved, "nanotron") ==
        "nanotron runs no interleaved pipeline schedule (its software profile's "
        "parallelism.schedules)");
  // One stage runs no schedule: whatever the strategy names, nothing is refused for it.
  CHECK(nanotron.runs(parse_strategy("tp8-pp1-dp2-mb1-interleaved-v2")));
  CHECK(nanotron.refuses(parse_strategy("pp1-dp8-zero3"), "nanotron") ==
        "nanotron runs no ZeRO stage 3 (its software profile's parallelism.zero)");

  ParallelismSupport fsdp;  // ring context parallelism only, no sequence parallelism here
  fsdp.ulysses = false;
  fsdp.sequence_parallel = false;
  CHECK(fsdp.runs(parse_strategy("tp2-cp4-dp2")));
  CHECK(fsdp.refuses(parse_strategy("tp2-cp4-ulysses-dp2"), "fsdp") ==
        "fsdp runs no all-to-all context parallelism (its software profile's "
        "parallelism.context)");
  CHECK(fsdp.refuses(parse_strategy("tp2-dp4-sp"), "fsdp") ==
        "fsdp runs no sequence parallelism (its software profile's "
        "parallelism.sequence_parallel)");
  CHECK(fsdp.runs(parse_strategy("tp1-dp8-sp")));  // no tensor group: nothing to split

  ParallelismSupport megatron_2021;
  megatron_2021.ring_context = megatron_2021.ulysses = megatron_2021.expert = false;
  CHECK(megatron_2021.refuses(parse_strategy("tp2-cp2-dp2"), "megatron-lm") ==
        "megatron-lm runs no ring context parallelism (its software profile's "
        "parallelism.context)");
  CHECK(megatron_2021.refuses(parse_strategy("tp1-dp8-ep8"), "megatron-lm") ==
        "megatron-lm runs no expert parallelism (its software profile's parallelism.expert)");
  // The default offers everything.
  CHECK(ParallelismSupport{}.runs(parse_strategy("tp2-pp4-dp2-cp2-ulysses-ep2-mb1-gpipe-sp-zero3")));
}

}  // namespace pathfinder
