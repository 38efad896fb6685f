// The timer's view of a generated device (engine/perf/perf_machine.cpp): the scale-up tier's
// contention derived from its achieved rate's share of main memory.
#include <catch2/catch.hpp>

#include "tests/perf/perf_fixtures.hpp"

namespace pathfinder {

TEST_CASE("scale-up contention: the measured rate per main-memory share, at each device's share",
          "[perf]") {
  // contention = memory_contention x (per-direction NVLink x max_utilization) / (HBM x
  // max_utilization); memory_contention 5.96 everywhere (a100.yaml's measured, the others [R]).
  //   A100-80GB: 300 x 0.78 = 234 GB/s of 2,039 x 0.9 = 1,835: 0.1275 -> 0.76 (the measurement)
  //   A100-40GB: 234 of 1,555 x 0.9 = 1,400: 0.1672 -> 1.00
  //   H100:      450 x 0.82 = 369 of 3,350 x 0.9 = 3,015: 0.1224 -> 0.73
  //   H200:      369 of 4,800 x 0.9 = 4,320: 0.0854 -> 0.51
  //   H800:      200 x 0.80 = 160 of 3,015: 0.0531 -> 0.32
  // A device without the key keeps only the SMs' share (0 here).
  CHECK(test::shipped_machine("a100").scale_up_contention == Approx(0.76).epsilon(0.02));
  CHECK(test::shipped_machine("a100_40gb").scale_up_contention == Approx(1.00).epsilon(0.03));
  CHECK(test::shipped_machine("h100").scale_up_contention == Approx(0.73).epsilon(0.03));
  CHECK(test::shipped_machine("h200").scale_up_contention == Approx(0.51).epsilon(0.03));
  CHECK(test::shipped_machine("h800").scale_up_contention == Approx(0.32).epsilon(0.03));
  // MI300X: xGMI 7 x 64 = 448 GB/s x 0.82 = 367 of 5,300 x 0.9 = 4,770: 0.077 -> 0.46 [R].
  CHECK(test::shipped_machine("mi300x").scale_up_contention == Approx(0.46).epsilon(0.05));
  // TPU v5p: ICI collectives run on the chip's DMA engines, not on its cores: none stated.
  CHECK(test::shipped_machine("tpu_v5p").scale_up_contention == 0.0);
  // A faster memory on the same device takes a smaller share: HBM3e in place of HBM2e.
  CHECK(test::shipped_machine("a100", TechOverrides{"", "HBM3e", "", ""}).scale_up_contention <
        test::shipped_machine("a100").scale_up_contention);
}

}  // namespace pathfinder
