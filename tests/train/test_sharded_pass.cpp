// The ZeRO-3 two-stream pass against hand-derived schedules.
#include <catch2/catch.hpp>

#include "engine/train/sharded_pass.hpp"

namespace pathfinder {

TEST_CASE("ZeRO-3 forward bound by the gathers: layers x gather + the last compute", "[train]") {
  // 4 layers, gather 10, compute 1. Gather i+1 is issued when compute i starts, which is when
  // gather i arrives (compute i-1 ended long before): gathers run back to back, arriving at
  // 10, 20, 30, 40; each compute runs on arrival; the last ends at 4·10 + 1 = 41.
  ShardedPass f;
  for (int i = 0; i < 4; ++i) f.layer(seconds(10.0), seconds(1.0));
  CHECK(f.span().si() == Approx(41.0).epsilon(1e-9));
  CHECK(f.compute().si() == Approx(4.0).epsilon(1e-9));
  CHECK(f.exposed().si() == Approx(37.0).epsilon(1e-9));
}

TEST_CASE("ZeRO-3 forward bound by the compute: only the first gather is exposed", "[train]") {
  // Gather 1, compute 10: gather 0 arrives at 1; each later gather is issued when the compute
  // before it starts and arrives 1 later, long before that compute ends: 1 + 4·10 = 41.
  ShardedPass f;
  for (int i = 0; i < 4; ++i) f.layer(seconds(1.0), seconds(10.0));
  CHECK(f.span().si() == Approx(41.0).epsilon(1e-9));
  CHECK(f.exposed().si() == Approx(1.0).epsilon(1e-9));
}

TEST_CASE("ZeRO-3 backward: reduce-scatters share the stream with the gathers", "[train]") {
  SECTION("compute-bound: the first gather and the last reduce-scatter are exposed") {
    // Gather 1, compute 10, reduce-scatter 2, 3 layers. Stream: G0 [0,1]; C0 [1,11];
    // G1 issued at 1: [1,2]; RS0 issued at 11: [11,13]; C1 [11,21]; G2 issued at 11, behind
    // RS0: [13,14]; RS1 [21,23]; C2 [21,31]; RS2 [31,33]. Span 1 + 3·10 + 2 = 33.
    ShardedPass b;
    for (int i = 0; i < 3; ++i) b.layer(seconds(1.0), seconds(10.0), seconds(2.0));
    CHECK(b.span().si() == Approx(33.0).epsilon(1e-9));
    CHECK(b.exposed().si() == Approx(3.0).epsilon(1e-9));
  }
  SECTION("communication-bound: the stream's whole chain") {
    // Gather 10, compute 1, reduce-scatter 5, 3 layers. G0 [0,10]; C0 [10,11]; G1 issued at
    // 10: [10,20]; RS0 [20,25]; C1 [20,21]; G2 issued at 20, behind RS0: [25,35]; RS1 [35,40];
    // C2 [35,36]; RS2 [40,45]. Span 3·(10 + 5) = 45: the stream never idles.
    ShardedPass b;
    for (int i = 0; i < 3; ++i) b.layer(seconds(10.0), seconds(1.0), seconds(5.0));
    CHECK(b.span().si() == Approx(45.0).epsilon(1e-9));
    CHECK(b.exposed().si() == Approx(42.0).epsilon(1e-9));
  }
}

TEST_CASE("ZeRO-3 backward: the stream beside each layer's compute slows it", "[train]") {
  // As the compute-bound backward above (gather 1, compute 10, reduce-scatter 2, 3 layers), the
  // collectives holding SMs: each second beside a layer's compute adds 0.25 s to it. G0 [0,1];
  // C0 [1,11] beside G1 [1,2]: ends 11.25. RS0 [11.25,13.25], G2 [13.25,14.25]; C1 [11.25,
  // 21.25] beside 3 s of them: ends 22. RS1 [22,24]; C2 [22,32] beside RS1: ends 32.5; RS2
  // [32.5,34.5]. Span 34.5 = 33 + 0.25 x (1 + 3 + 2).
  ShardedPass b(0.25);
  for (int i = 0; i < 3; ++i) b.layer(seconds(1.0), seconds(10.0), seconds(2.0));
  CHECK(b.span().si() == Approx(34.5).epsilon(1e-12));
  CHECK(b.exposed().si() == Approx(4.5).epsilon(1e-12));
}

TEST_CASE("ZeRO-3 pass without communication is the compute chain", "[train]") {
  // dp = 1: every collective costs 0, so the layers run back to back: 2 + 3 + 4 = 9.
  ShardedPass p;
  p.layer(seconds(0.0), seconds(2.0), seconds(0.0));
  p.layer(seconds(0.0), seconds(3.0), seconds(0.0));
  p.layer(seconds(0.0), seconds(4.0), seconds(0.0));
  CHECK(p.span().si() == Approx(9.0).epsilon(1e-9));
  CHECK(p.exposed().si() == Approx(0.0).margin(1e-12));
}

}  // namespace pathfinder
