// The paper's distributed GEMM (RC / CR kernel parallelism) on 8 A100s.
#include <catch2/catch.hpp>

#include "engine/system/collectives.hpp"
#include "engine/train/distributed_gemm.hpp"
#include "tests/train/train_fixtures.hpp"

namespace pathfinder {

TEST_CASE("RC and CR split a 8192^3 GEMM and add their collective", "[train]") {
  const test::ShippedSystem& s = test::shipped_system("a100");
  KernelTimer timer(make_perf_machine(s.spec, s.arch));
  const SystemGraph g = make_system_graph(s.spec, s.arch, 8);
  const GemmSpec w{8192, 8192, 8192, DataType::kFp16};
  // RC 2 x 4: each device multiplies (4096 x 2048) = A[4096 x 8192] B[8192 x 2048], then the
  // kp2 = 4 row group all-gathers its 4096 x 8192 fp16 block (64 MiB).
  const DistributedGemmResult rc =
      evaluate_distributed_gemm(w, parse_strategy("RC-2-4-d1-p1"), timer, g);
  CHECK(rc.local == GemmShape{1, 4096, 2048, 8192});
  const GroupPlacement four = place_group(g, 4, 1);
  CHECK(rc.communication.si() ==
        Approx(collective_time(four, Collective::kAllGather, bytes(4096.0 * 8192 * 2)).si()));
  // Launch latency, the product, the gather.
  CHECK(rc.time.si() == Approx(5e-6 + rc.local_time.device.si() + rc.communication.si()));
  // CR 8: each device multiplies with k / 8 = 1024, then reduce-scatters the 8192^2 partial sums.
  const DistributedGemmResult cr =
      evaluate_distributed_gemm(w, parse_strategy("CR-8-d1-p1"), timer, g);
  CHECK(cr.local == GemmShape{1, 8192, 8192, 1024});
  const GroupPlacement eight = place_group(g, 8, 1);
  CHECK(cr.communication.si() ==
        Approx(collective_time(eight, Collective::kReduceScatter, bytes(8192.0 * 8192 * 2)).si()));
  // The outer product's local GEMM keeps all of m x n: lower intensity than RC's.
  CHECK(cr.local_time.intensity() < rc.local_time.intensity());
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("GemmTraining: the distributed GEMM as a training result", "[train]") {
  const test::ShippedSystem& s = test::shipped_system("a100");
  const GemmSpec w{8192, 8192, 8192, DataType::kFp16};
  const Strategy cr = parse_strategy("CR-8-d1-p1");
  KernelTimer timer(make_perf_machine(s.spec, s.arch));
  const DistributedGemmResult g =
      evaluate_distributed_gemm(w, cr, timer, make_system_graph(s.spec, s.arch, 8));
  GemmTraining model(w, make_perf_machine(s.spec, s.arch), make_system_graph(s.spec, s.arch, 8),
                     s.arch.core.peak);
  const TrainingResult r = model.evaluate(cr);
  REQUIRE(r.feasible);
  // One call: launch (5 us), the 8192 x 8192 x 1024 product, the reduce-scatter.
  CHECK(r.iteration_time == g.time);
  CHECK(r.breakdown.compute == g.local_time.device);
  CHECK(r.breakdown.tensor_comm == g.communication);
  CHECK(r.breakdown.host.si() == Approx(5e-6).epsilon(1e-9));
  CHECK(r.breakdown.total().si() == Approx(r.iteration_time.si()).epsilon(1e-12));
  REQUIRE(r.stages.size() == 1);
  CHECK(r.stages[0].total().si() == r.breakdown.total().si());
  REQUIRE(r.local_gemm.has_value());
  CHECK(r.local_gemm->shape == GemmShape{1, 8192, 8192, 1024});
  CHECK(r.local_gemm->intensity == g.local_time.intensity());
  // MFU: 2·8192³ model FLOP over 8 devices' peak for the call's time.
  CHECK(r.model_flops.si() == 2.0 * 8192.0 * 8192.0 * 8192.0);
  CHECK(r.mfu ==
        Approx(r.model_flops.si() / (r.iteration_time.si() * 8 * s.arch.core.peak.si())));
}

}  // namespace pathfinder
