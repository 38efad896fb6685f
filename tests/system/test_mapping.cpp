// Tests for engine/system/mapping.hpp: link sharing between concurrent dimensions, the best
// order of dimensions, determinism and strategy errors.
#include "engine/system/mapping.hpp"

#include <catch2/catch.hpp>

#include <vector>

#include "tests/system/system_fixtures.hpp"

using namespace pathfinder;
using pathfinder::test::error_of;
using pathfinder::test::shipped_system;

TEST_CASE("concurrent dimensions share a switch port", "[system]") {
  const SystemGraph sys = shipped_system("a100", 1024);
  const double nvlink = sys.tiers[0].usable_bandwidth().si();
  // tp 4 (contiguous) and dp 256 (stride 4: two members per DGX) both cross NVSwitch.
  std::vector<ParallelDim> dims{{"tp", 4, bytes(1e9)}, {"dp", 256, bytes(1e9)}};
  const std::vector<int> order{0, 1};
  const Mapping both = map_dims(sys, dims, order);
  CHECK(both.groups[0].span[0].bandwidth.si() == Approx(nvlink / 2));
  CHECK(both.groups[1].span[0].tier == Tier::kInterPackage);
  CHECK(both.groups[1].span[0].bandwidth.si() == Approx(nvlink / 2));
  CHECK(both.groups[1].span[1].bandwidth.si() ==
        Approx(sys.tiers[1].usable_bandwidth().si()));  // alone
  // Tensor-parallel traffic not overlapping the gradient reduction: each has the port.
  dims[0].concurrent = false;
  const Mapping apart = map_dims(sys, dims, order);
  CHECK(apart.groups[0].span[0].bandwidth.si() == Approx(nvlink));
  CHECK(apart.groups[1].span[0].bandwidth.si() == Approx(nvlink));
  // The score is the sum of each dimension's all-reduce of its weight.
  CHECK(both.score.si() ==
        Approx((collective_time(both.groups[0], Collective::kAllReduce, bytes(1e9)) +
                collective_time(both.groups[1], Collective::kAllReduce, bytes(1e9)))
                   .si()));
  CHECK(both.order == order);
}

TEST_CASE("dimensions that never communicate at once share no port", "[system]") {
  // tp 4 and pp 2 on one DGX A100, both inside its NVSwitch: as concurrent dimensions they
  // halve the port; apart from each other (the tensor group's collectives inside a stage's
  // passes, the pipeline's sends between them) each has it whole.
  const SystemGraph sys = shipped_system("a100", 8);
  const double nvlink = sys.tiers[0].usable_bandwidth().si();
  std::vector<ParallelDim> dims{{"tp", 4, bytes(1e9)}, {"pp", 2, bytes(1e8)}};
  const std::vector<int> order{0, 1};
  CHECK(map_dims(sys, dims, order).groups[0].span[0].bandwidth.si() == Approx(nvlink / 2));
  dims[0].apart_from = 1u << 1;
  const Mapping apart = map_dims(sys, dims, order);
  CHECK(apart.groups[0].span[0].bandwidth.si() == Approx(nvlink));
  CHECK(apart.groups[1].span[0].bandwidth.si() == Approx(nvlink));
  // Either side's mark suffices.
  dims[0].apart_from = 0;
  dims[1].apart_from = 1u << 0;
  CHECK(map_dims(sys, dims, order).groups[0].span[0].bandwidth.si() == Approx(nvlink));
  dims.push_back({"ep", 1, bytes(0)});  // degree 1: crosses nothing, shares nothing
  const std::vector<int> three{0, 1, 2};
  CHECK(map_dims(sys, dims, three).groups[1].span[0].bandwidth.si() == Approx(nvlink));
}

TEST_CASE("best mapping puts the heavy dimension on the fast tier", "[system]") {
  const SystemGraph sys = shipped_system("a100", 1024);
  // Tensor parallel moves 10x the data parallel bytes: tensor first (contiguous, NVSwitch).
  std::vector<ParallelDim> dims{{"dp", 128, bytes(1e9)}, {"tp", 8, bytes(1e10)}};
  const Mapping m = best_mapping(sys, dims);
  CHECK(m.order == std::vector<int>{1, 0});
  CHECK(m.groups[1].stride == 1);
  CHECK(m.groups[1].outermost_tier == Tier::kInterPackage);
  CHECK(m.groups[0].stride == 8);
  CHECK(m.groups[0].outermost_tier == Tier::kScaleOut);
  // The other order is worse, and best_mapping's score is the map_dims score of its order.
  const std::vector<int> other{0, 1};
  CHECK(map_dims(sys, dims, other).score.si() > m.score.si());
  CHECK(map_dims(sys, dims, m.order).score.si() == Approx(m.score.si()));
  // Swap the weights and data parallel takes NVSwitch.
  dims[0].weight = bytes(1e10);
  dims[1].weight = bytes(1e9);
  CHECK(best_mapping(sys, dims).order == std::vector<int>{0, 1});
}

TEST_CASE("best mapping is deterministic and keeps degree-1 dimensions last", "[system]") {
  const SystemGraph sys = shipped_system("a100", 1024);
  // Two identical dimensions: both orders score the same; the first (0, 1) is kept.
  const std::vector<ParallelDim> twins{{"a", 32, bytes(1e9)}, {"b", 32, bytes(1e9)}};
  const Mapping t = best_mapping(sys, twins);
  CHECK(t.order == std::vector<int>{0, 1});
  CHECK(map_dims(sys, twins, std::vector<int>{1, 0}).score.si() == Approx(t.score.si()));
  // Degree 1 dimensions: placed last, size 1, no span, no cost.
  const std::vector<ParallelDim> dims{{"pp", 1, bytes(1e9), Collective::kSendRecv},
                                      {"tp", 8, bytes(1e10)},
                                      {"ep", 1, Bytes{}}, {"dp", 128, bytes(1e9)}};
  const Mapping m = best_mapping(sys, dims);
  CHECK(m.order == std::vector<int>{1, 3, 0, 2});
  CHECK(m.groups[0].size == 1);
  CHECK(m.groups[0].levels == 0);
  CHECK(collective_time(m.groups[0], Collective::kSendRecv, bytes(1e9)) == Time{});
  CHECK(m.groups.size() == 4);
}

TEST_CASE("an oversubscribed fat-tree keeps data parallel inside the leaves", "[system]") {
  // tp 8 | pp 16 | dp 8 on 1024 A100s with 4:1 oversubscription above leaves of 64 devices.
  // Pipeline sends are light; data parallel's all-reduce is not: dp takes stride 8, its 8
  // members inside one leaf (devices 0..63), pipeline stages go across leaves (stride 64), and
  // tp stays innermost. The other way round both would cross leaves.
  SystemGraph sys = shipped_system("a100", 1024);
  sys.tiers[1].oversubscription = 4.0;
  sys.tiers[1].leaf_size = 64;
  const std::vector<ParallelDim> dims{{"tp", 8, bytes(1e10)},
                                      {"pp", 16, bytes(1e8), Collective::kSendRecv},
                                      {"dp", 8, bytes(2e9)}};
  const Mapping m = best_mapping(sys, dims);
  CHECK(m.order == std::vector<int>{0, 2, 1});
  CHECK(m.groups[2].stride == 8);
  CHECK(m.groups[1].stride == 64);
  // Both cross the NICs at the same time, so each has half a port; pp also crosses leaves.
  CHECK(m.groups[2].span[0].bandwidth.si() == Approx(sys.tiers[1].usable_bandwidth().si() / 2));
  CHECK(m.groups[1].span[0].bandwidth.si() ==
        Approx(sys.tiers[1].usable_bandwidth().si() / 2 / 4));
  // With leaves of 32 both orders cross them: a tie, and the first order (tp, pp, dp) stays.
  sys.tiers[1].leaf_size = 32;
  CHECK(best_mapping(sys, dims).order == std::vector<int>{0, 1, 2});
}

TEST_CASE("strategies that do not fit the devices are exact errors", "[system][config-error]") {
  const SystemGraph sys = shipped_system("a100", 1024);
  const std::vector<ParallelDim> short_by_2{{"tp", 8, bytes(1e9)}, {"dp", 64, bytes(1e9)}};
  CHECK(error_of([&] { (void)best_mapping(sys, short_by_2); }) ==
        "strategy: error: the degrees (tp 8 x dp 64) do not multiply to the 1024 devices");
  const std::vector<ParallelDim> zero{{"tp", 0, bytes(1e9)}, {"dp", 64, bytes(1e9)}};
  CHECK(error_of([&] { (void)map_dims(sys, zero, std::vector<int>{0, 1}); }) ==
        "strategy: error: dimension \"tp\": expected a degree >= 1, got 0");
}
