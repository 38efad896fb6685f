// Tests for engine/system/collectives.hpp: alpha-beta formulas on exact numbers, nccl-tests'
// bus bandwidth on 8 A100s, and properties (monotone in bandwidth, ring limit, hierarchy).
#include "engine/system/collectives.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "tests/system/system_fixtures.hpp"

using namespace pathfinder;
using pathfinder::test::shipped_system;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr Collective kAllCollectives[] = {Collective::kAllReduce, Collective::kReduceScatter,
                                          Collective::kAllGather, Collective::kAllToAll,
                                          Collective::kBroadcast, Collective::kSendRecv};
constexpr CollectiveAlgorithm kAllAlgorithms[] = {
    CollectiveAlgorithm::kAuto, CollectiveAlgorithm::kRing, CollectiveAlgorithm::kTree,
    CollectiveAlgorithm::kRecursiveDoubling, CollectiveAlgorithm::kTorus,
    CollectiveAlgorithm::kHierarchical, CollectiveAlgorithm::kNcclTree};

TierSpan span(Tier tier, int members, int below, double gb_per_s, double latency_us,
              double half_bytes = 0.0) {
  TierSpan s;
  s.tier = tier;
  s.members = members;
  s.below = below;
  s.bandwidth = gigabytes_per_second(gb_per_s);
  s.latency = microseconds(latency_us);
  s.half_bandwidth_message = bytes(half_bytes);
  return s;
}

// p members on one switch: B GB/s per member and direction, alpha us per step.
GroupPlacement one_tier(int p, double gb_per_s, double latency_us, double half_bytes = 0.0) {
  GroupPlacement g;
  g.size = p;
  g.levels = 1;
  g.span[0] = span(Tier::kInterPackage, p, 1, gb_per_s, latency_us, half_bytes);
  g.outermost_tier = Tier::kInterPackage;
  return g;
}

// 4 domains of 8: NVSwitch-like 200 GB/s, 1 us inside; 25 GB/s, 5 us NICs across.
GroupPlacement two_tiers() {
  GroupPlacement g;
  g.size = 32;
  g.levels = 2;
  g.span[0] = span(Tier::kInterPackage, 8, 1, 200, 1);
  g.span[1] = span(Tier::kScaleOut, 4, 8, 25, 5);
  g.outermost_tier = Tier::kScaleOut;
  return g;
}

// The model on plain SI numbers (bytes in; seconds, B/s and bytes out), as the golden values
// below are written.
double collective_s(const GroupPlacement& g, Collective c, double n,
                    CollectiveAlgorithm a = CollectiveAlgorithm::kAuto) {
  return collective_time(g, c, bytes(n), a).si();
}
double bus_bandwidth_si(Collective c, int members, double n, double time_s) {
  return bus_bandwidth(c, members, bytes(n), seconds(time_s)).si();
}
CollectiveAlgorithm auto_algorithm_of(const GroupPlacement& g, Collective c, double n) {
  return auto_algorithm(g, c, bytes(n));
}
std::array<double, kMaxTiers> link_bytes_si(const GroupPlacement& g, Collective c, double n) {
  const std::array<Bytes, kMaxTiers> b = link_bytes(g, c, bytes(n));
  return {b[0].si(), b[1].si(), b[2].si()};
}

GroupPlacement scaled(GroupPlacement g, double bandwidth, double latency) {
  for (auto& s : g.span) {
    s.bandwidth *= bandwidth;
    s.bandwidth_x *= bandwidth;
    s.bandwidth_y *= bandwidth;
    s.latency *= latency;
    s.latency_x *= latency;
    s.latency_y *= latency;
  }
  return g;
}

}  // namespace

TEST_CASE("collective and algorithm names round-trip", "[system]") {
  for (const auto& n : valid_collectives()) CHECK(to_string(*parse_collective(n)) == n);
  for (const auto& n : valid_collective_algorithms()) {
    CHECK(to_string(*parse_collective_algorithm(n)) == n);
  }
  CHECK(valid_collectives() == std::vector<std::string>{"all-reduce", "reduce-scatter",
                                                        "all-gather", "all-to-all", "broadcast",
                                                        "send-recv"});
  CHECK_FALSE(parse_collective_algorithm("double-binary-tree").has_value());
}

TEST_CASE("one member or no bytes cost nothing", "[system][property]") {
  GroupPlacement single;  // size 1
  const GroupPlacement eight = one_tier(8, 100, 1);
  for (const Collective c : kAllCollectives) {
    for (const CollectiveAlgorithm a : kAllAlgorithms) {
      CHECK(collective_s(single, c, 1e9, a) == 0.0);
      CHECK(collective_s(eight, c, 0.0, a) == 0.0);
    }
  }
}

TEST_CASE("alpha-beta formulas on one tier", "[system][golden]") {
  // p = 8, B = 100 GB/s (beta = 1e-11 s/B), alpha = 1 us, n = 800 MB.
  const GroupPlacement g = one_tier(8, 100, 1);
  const double n = 800e6;
  auto t = [&](Collective c, CollectiveAlgorithm a) { return collective_s(g, c, n, a); };
  using C = Collective;
  using A = CollectiveAlgorithm;
  // Ring all-reduce 2(p-1)a + 2(p-1)/p n beta = 14 us + 1.75 x 8 ms = 14.014 ms.
  CHECK(t(C::kAllReduce, A::kRing) == Approx(0.014014));
  // Reduce-scatter and all-gather (p-1)a + (p-1)/p n beta = 7 us + 7 ms.
  CHECK(t(C::kReduceScatter, A::kRing) == Approx(0.007007));
  CHECK(t(C::kAllGather, A::kRing) == Approx(0.007007));
  // Recursive doubling all-reduce log2(p)(a + n beta) = 3 (1 us + 8 ms) = 24.003 ms.
  CHECK(t(C::kAllReduce, A::kRecursiveDoubling) == Approx(0.024003));
  // Recursive halving reduce-scatter log2(p) a + (p-1)/p n beta = 3 us + 7 ms.
  CHECK(t(C::kReduceScatter, A::kRecursiveDoubling) == Approx(0.007003));
  CHECK(t(C::kAllGather, A::kRecursiveDoubling) == Approx(0.007003));
  // Binomial tree: reduce + broadcast 2 log2(p)(a + n beta) = 48.006 ms; broadcast alone half.
  CHECK(t(C::kAllReduce, A::kTree) == Approx(0.048006));
  CHECK(t(C::kBroadcast, A::kTree) == Approx(0.024003));
  // Pipelined ring broadcast (p-1) a + n beta = 7 us + 8 ms; scatter + all-gather 2 x 7.003 ms.
  CHECK(t(C::kBroadcast, A::kRing) == Approx(0.008007));
  CHECK(t(C::kBroadcast, A::kRecursiveDoubling) == Approx(0.014006));
  // Pairwise all-to-all (p-1) a + (p-1)/p n beta = 7 us + 7 ms; send/recv a + n beta.
  CHECK(t(C::kAllToAll, A::kAuto) == Approx(0.007007));
  CHECK(t(C::kAllToAll, A::kRing) == Approx(0.007007));
  CHECK(t(C::kSendRecv, A::kAuto) == Approx(0.008001));
  CHECK(t(C::kSendRecv, A::kTree) == Approx(0.008001));  // send/recv has one algorithm
  // Hierarchical on one tier is the ring; torus needs a grid span; all-to-all is pairwise only.
  CHECK(t(C::kAllReduce, A::kHierarchical) == Approx(0.014014));
  CHECK(t(C::kAllReduce, A::kTorus) == kInf);
  CHECK(t(C::kAllToAll, A::kTree) == kInf);
  CHECK(t(C::kReduceScatter, A::kTree) == kInf);
  CHECK(t(C::kBroadcast, A::kHierarchical) == kInf);
  // Auto: the fastest that applies.
  CHECK(t(C::kAllReduce, A::kAuto) == Approx(0.014014));
  CHECK(auto_algorithm_of(g, C::kAllReduce, n) == A::kRing);
  CHECK(auto_algorithm_of(g, C::kAllReduce, 1e3) == A::kRecursiveDoubling);  // 3 vs 14 latencies
  CHECK(t(C::kBroadcast, A::kAuto) == Approx(0.008007));
}

TEST_CASE("alpha-beta formulas across two tiers", "[system][golden]") {
  // 32 members: 8 per domain on 200 GB/s, 1 us; 4 domains on 25 GB/s, 5 us.
  const GroupPlacement g = two_tiers();
  const double n = 3.2e9;
  using C = Collective;
  using A = CollectiveAlgorithm;
  // Ring: chunk n/p = 100 MB; inside 100 MB / 200 GB/s = 0.5 ms, across 8 rings each
  // 12.5 MB / 25 GB/s = 0.5 ms. Of the 32 hops 4 cross domains: mean latency
  // (28 x 1 + 4 x 5) / 32 = 1.5 us. 2 x 31 x (1.5 us + 0.5 ms) = 31.093 ms.
  CHECK(collective_s(g, C::kAllReduce, n, A::kRing) == Approx(0.031093));
  // Hierarchical: reduce-scatter inside 7 x (1 us + 400 MB / 200 GB/s = 2 ms) = 14.007 ms, the
  // same to all-gather; all-reduce across on 400 MB: 2 x 3 x (5 us + 100 MB / 25 GB/s = 4 ms)
  // = 24.03 ms. Total 52.044 ms.
  CHECK(collective_s(g, C::kAllReduce, n, A::kHierarchical) == Approx(0.052044));
  // Recursive doubling: 3 x (1 us + 16 ms) + 2 x (5 us + 128 ms) = 304.013 ms.
  CHECK(collective_s(g, C::kAllReduce, n, A::kRecursiveDoubling) == Approx(0.304013));
  // Reduce-scatter by tiers: 14.007 ms inside + 3 x (5 us + 100 MB / 25 GB/s) = 12.015 ms.
  CHECK(collective_s(g, C::kReduceScatter, n, A::kHierarchical) == Approx(0.026022));
  // All-to-all: 100 MB to each member; 7 inside at 200 GB/s (3.5 ms), 24 across at 25 GB/s
  // (96 ms) bind; latency 7 x 1 us + 24 x 5 us = 127 us. 96.127 ms.
  CHECK(collective_s(g, C::kAllToAll, n) == Approx(0.096127));
  // Send/recv across the outermost tier: 5 us + 3.2 GB / 25 GB/s = 128.005 ms.
  CHECK(collective_s(g, C::kSendRecv, n) == Approx(0.128005));
}

TEST_CASE("message-size efficiency and the reduction bound", "[system][golden]") {
  // A message of the half-bandwidth size reaches half the bandwidth: 64 KiB over 100 GB/s
  // takes 2 x 65536 / 1e11 s with no latency.
  const GroupPlacement g = one_tier(2, 100, 0, 65536);
  CHECK(collective_s(g, Collective::kSendRecv, 65536) == Approx(2 * 65536 / 1e11));
  // A large message almost reaches the peak: 1 GB -> efficiency 1e9 / (1e9 + 65536).
  CHECK(1e9 / collective_s(g, Collective::kSendRecv, 1e9) == Approx(1e11 / (1 + 65536 / 1e9)));
  // Memory that reduces 10 GB/s (slower than the 100 GB/s link) binds the reducing steps:
  // ring all-reduce on p = 8, n = 800 MB: 7 x max(1 us + 1 ms, 100 MB / 10 GB/s = 10 ms) +
  // 7 x 1.001 ms = 77.007 ms. All-gather does not reduce.
  GroupPlacement slow = one_tier(8, 100, 1);
  slow.reduction_bandwidth = gigabytes_per_second(10);
  CHECK(collective_s(slow, Collective::kAllReduce, 800e6, CollectiveAlgorithm::kRing) ==
        Approx(0.077007));
  CHECK(collective_s(slow, Collective::kAllGather, 800e6, CollectiveAlgorithm::kRing) ==
        Approx(0.007007));
}

TEST_CASE("NCCL all-reduce bus bandwidth on 8 A100s", "[system][calibration]") {
  // nccl-tests all_reduce_perf on one DGX/HGX A100 (NVSwitch): busbw = algbw x 2(p-1)/p reaches
  // 230-240 GB/s for large messages, against NVLink 3's 300 GB/s per direction. The template's
  // max_utilization 0.78 gives 234 GB/s; at 1 GiB NCCL's Simple protocol's 8.4 us a call and
  // 14 steps of 3.4 us (its tuning model, collectives.cpp) cost 0.7%.
  const SystemGraph sys = shipped_system("a100", 8);
  const GroupPlacement g = place_group(sys, 8, 1);
  std::printf("A100 x8 all-reduce (model)\n%12s %10s %10s  %s\n", "bytes", "time_us", "busbw_GBs",
              "algorithm");
  for (double n = 1024; n <= 4.0 * (1 << 30); n *= 4) {
    const double t = collective_s(g, Collective::kAllReduce, n);
    std::printf("%12.0f %10.1f %10.1f  %s\n", n, t * 1e6,
                bus_bandwidth_si(Collective::kAllReduce, 8, n, t) / 1e9,
                std::string(to_string(auto_algorithm_of(g, Collective::kAllReduce, n))).c_str());
  }
  for (const double n : {1.0 * (1 << 30), 4.0 * (1 << 30)}) {
    const double busbw = bus_bandwidth_si(Collective::kAllReduce, 8, n,
                                       collective_s(g, Collective::kAllReduce, n));
    CHECK(busbw > 230e9);
    CHECK(busbw < 240e9);
    CHECK(busbw / sys.tiers[0].bandwidth.si() == Approx(0.78).epsilon(0.01));
  }
  // Mid-size messages fall short of the peak, as the measured curves do (their knee lies
  // between 1 and 64 MB [R]): 8 MB reaches 100-200 GB/s (135 GB/s, LL128), 64 KB under 30
  // GB/s (6.8 GB/s, LL).
  const double t8m = collective_s(g, Collective::kAllReduce, 8 << 20);
  CHECK(bus_bandwidth_si(Collective::kAllReduce, 8, 8 << 20, t8m) > 100e9);
  CHECK(bus_bandwidth_si(Collective::kAllReduce, 8, 8 << 20, t8m) < 200e9);
  const double t64k = collective_s(g, Collective::kAllReduce, 65536);
  CHECK(bus_bandwidth_si(Collective::kAllReduce, 8, 65536, t64k) < 30e9);
}

TEST_CASE("a ring's byte rate: the slowest span times the rings crossing it at once", "[system]") {
  // One DGX A100: NVLink 3's 300 GB/s a direction at 0.78, 234 GB/s. Two nodes: eight rings
  // cross InfiniBand at once, each on its own HDR200 rail (25 GB/s at NCCL's measured 0.95),
  // 8 x 23.75 = 190 GB/s, the NCCL maintainer's "top speed of 190 GB/s" with 8 NICs (NVIDIA/nccl
  // issue 689), below NVLink's. One GPU per node (stride 8): one rail, 23.75 GB/s.
  const SystemGraph one = shipped_system("a100", 8), two = shipped_system("a100", 16);
  const double nvlink = one.tiers[0].usable_bandwidth().si();
  const double rail = two.tiers[1].usable_bandwidth().si();
  CHECK(nvlink == Approx(234e9).epsilon(1e-3));
  CHECK(rail == Approx(23.75e9).epsilon(1e-3));
  CHECK(ring_byte_rate(place_group(one, 8, 1)).si() == Approx(nvlink).epsilon(1e-12));
  CHECK(ring_byte_rate(place_group(two, 16, 1)).si() == Approx(8.0 * rail).epsilon(1e-12));
  CHECK(ring_byte_rate(place_group(two, 2, 8)).si() == Approx(rail).epsilon(1e-12));
  CHECK(ring_byte_rate(place_group(one, 1, 1)).si() == 0.0);
  // It is the bandwidth term of a large ring all-gather: (p-1)/p·n over the time, within the
  // 15 step latencies' and message overheads' share.
  const GroupPlacement g = place_group(two, 16, 1);
  const double n = 16.0 * (1 << 30);
  const double rate = 15.0 / 16.0 * n / collective_s(g, Collective::kAllGather, n,
                                                      CollectiveAlgorithm::kRing);
  CHECK(rate / ring_byte_rate(g).si() == Approx(1.0).epsilon(0.01));
}

TEST_CASE("all-to-all across two DGX nodes moves half its bytes over the NICs", "[system]") {
  // NCCL maintainer (nccl-tests issue 130): on 2 nodes 50% of all-to-all traffic is
  // inter-node, so busbw ~ 2x the network bandwidth per GPU (N/(N-1)x on N nodes).
  // Here busbw = algbw x 15/16 with algbw = 2 x 23.5 GB/s: 1.875 x.
  const SystemGraph sys = shipped_system("a100", 16);
  const GroupPlacement g = place_group(sys, 16, 1);
  const double n = 1 << 30;
  const double busbw = bus_bandwidth_si(Collective::kAllToAll, 16, n,
                                     collective_s(g, Collective::kAllToAll, n));
  CHECK(busbw / sys.tiers[1].usable_bandwidth().si() == Approx(1.875).epsilon(0.01));
}

TEST_CASE("ring all-reduce approaches 2 n beta as members grow", "[system][property]") {
  // No latency: T(p) = 2(p-1)/p n beta rises with p towards 2 n beta = 20 ms (1 GB, 100 GB/s).
  double last = 0.0;
  for (int p = 2; p <= 1024; p *= 2) {
    const double t = collective_s(one_tier(p, 100, 0), Collective::kAllReduce, 1e9,
                                     CollectiveAlgorithm::kRing);
    CHECK(t == Approx(2.0 * (p - 1) / p * 0.01));
    CHECK(t > last);
    CHECK(t < 0.02);
    last = t;
  }
  CHECK(last / 0.02 > 0.999);
}

TEST_CASE("more bandwidth never slows, more latency never speeds", "[system][property]") {
  std::vector<GroupPlacement> groups{one_tier(8, 100, 1, 65536), two_tiers()};
  const SystemGraph a100 = shipped_system("a100", 1024);
  for (const auto& [size, stride] : std::vector<std::pair<int, int>>{
           {8, 1}, {128, 8}, {16, 4}, {1024, 1}, {64, 16}}) {
    groups.push_back(place_group(a100, size, stride));
  }
  const SystemGraph wafer = shipped_system("waferscale", 128);
  groups.push_back(place_group(wafer, 64, 1));
  groups.push_back(place_group(wafer, 128, 1));
  groups.push_back(place_group(wafer, 16, 4));
  const SystemGraph mcm = shipped_system("mcm4", 32);
  groups.push_back(place_group(mcm, 32, 1));
  groups.push_back(place_group(mcm, 8, 2));
  int checked = 0;
  for (const auto& g : groups) {
    for (const Collective c : kAllCollectives) {
      for (const CollectiveAlgorithm a : kAllAlgorithms) {
        for (const double n : {1e3, 1e6, 1e9}) {
          const double t = collective_s(g, c, n, a);
          CHECK(t >= 0.0);
          CHECK(collective_s(scaled(g, 2.0, 1.0), c, n, a) <= t * (1 + 1e-12));
          CHECK(collective_s(scaled(g, 1.0, 2.0), c, n, a) >= t * (1 - 1e-12));
          CHECK(collective_s(g, c, 2 * n, a) >= t);  // more bytes never faster
          if (a == CollectiveAlgorithm::kAuto) {  // the best of the library's algorithms
            for (const CollectiveAlgorithm b : kAllAlgorithms) {
              const bool nccl_has = b == CollectiveAlgorithm::kRing ||
                                    (b == CollectiveAlgorithm::kNcclTree &&
                                     g.outermost_tier == Tier::kScaleOut);
              if (g.library == CollectiveLibrary::kNccl && !nccl_has) continue;
              if (g.library == CollectiveLibrary::kAny && b == CollectiveAlgorithm::kNcclTree) {
                continue;
              }
              CHECK(t <= collective_s(g, c, n, b) * (1 + 1e-12));
            }
          }
          ++checked;
        }
      }
    }
  }
  CHECK(checked == 12 * 6 * 7 * 3);
}

TEST_CASE("hierarchical beats a flat ring across a slow scale-out tier at scale", "[system]") {
  // 1024 A100s (128 DGX nodes), one all-reduce of 64 MB over all of them. The flat ring's
  // 2 x 1023 steps each cost the mean hop latency (~2.4 us) plus a NIC transfer; the
  // hierarchical one crosses the NICs in 2 x 127 steps on 1/8 of the data.
  GroupPlacement all = place_group(shipped_system("a100", 1024), 1024, 1);
  all.library = CollectiveLibrary::kAny;  // every algorithm, the paper's idealized system
  const double n = 64e6;
  const double flat = collective_s(all, Collective::kAllReduce, n, CollectiveAlgorithm::kRing);
  const double hier =
      collective_s(all, Collective::kAllReduce, n, CollectiveAlgorithm::kHierarchical);
  CHECK(hier < 0.5 * flat);
  CHECK(auto_algorithm_of(all, Collective::kAllReduce, n) == CollectiveAlgorithm::kHierarchical);
  // Small messages: recursive doubling's 3 + 7 steps beat both.
  CHECK(auto_algorithm_of(all, Collective::kAllReduce, 4096) ==
        CollectiveAlgorithm::kRecursiveDoubling);
  // Two nodes and a large message: the flat ring's 8 rings use all 8 NICs at once and beat
  // the hierarchy, which runs its NVLink and NIC phases one after the other.
  const GroupPlacement two = place_group(shipped_system("a100", 16), 16, 1);
  CHECK(collective_s(two, Collective::kAllReduce, 1e9, CollectiveAlgorithm::kRing) <
        collective_s(two, Collective::kAllReduce, 1e9, CollectiveAlgorithm::kHierarchical));
}

TEST_CASE("2-D torus all-reduce runs rings along each dimension", "[system][golden]") {
  // 4 x 4 positions, 400 GB/s per device over 4 ports (100 GB/s each), 1 us per hop.
  for (const Topology topo : {Topology::kMesh2D, Topology::kTorus2D}) {
    SystemGraph sys;
    sys.devices = 16;
    TierLink l = test::simple_tier(Tier::kIntraPackage, topo, 16, 400, 1);
    l.grid_x = 4;
    l.grid_y = 4;
    sys.tiers.push_back(l);
    const GroupPlacement g = place_group(sys, 16, 1);
    REQUIRE(g.levels == 1);
    CHECK(g.span[0].grid_x == 4);
    CHECK(g.span[0].grid_y == 4);
    const double n = 1.6e9;
    const double t = collective_s(g, Collective::kAllReduce, n, CollectiveAlgorithm::kTorus);
    if (topo == Topology::kMesh2D) {
      // A mesh line of 4 embeds its ring with dilation 2: 100 GB/s, 2 us per step.
      // x: reduce-scatter 3 x (2 us + 1.6 GB/4 / 100 GB/s = 4 ms) = 12.006 ms, all-gather the
      // same; y on n/4: 2 x 3 x (2 us + 1 ms) = 6.012 ms. Total 30.024 ms.
      CHECK(t == Approx(0.030024));
    } else {
      // A torus line wraps: both directions, 200 GB/s, 1 us per step.
      // x: 2 x 3 x (1 us + 2 ms) = 12.006 ms; y: 2 x 3 x (1 us + 0.5 ms) = 3.006 ms.
      CHECK(t == Approx(0.015012));
    }
    // Same bandwidth as a flat ring through the block, but 12 steps instead of 30.
    CHECK(t < collective_s(g, Collective::kAllReduce, n, CollectiveAlgorithm::kRing));
  }
}

TEST_CASE("congestion divides bandwidth and multiplies latency", "[system]") {
  SystemGraph calm = shipped_system("a100", 1024);
  SystemGraph busy = calm;
  busy.tiers[1].bandwidth_congestion = 2.0;
  busy.tiers[1].latency_congestion = 10.0;
  const GroupPlacement a = place_group(calm, 128, 8);  // data parallel across the NICs
  const GroupPlacement b = place_group(busy, 128, 8);
  CHECK(b.span[0].bandwidth.si() == Approx(a.span[0].bandwidth.si() / 2));
  CHECK(b.span[0].latency.si() == Approx(a.span[0].latency.si() * 10));
  // A large all-reduce is bandwidth-bound: about twice as long (NCCL's ring over 128 nodes
  // pays 254 network steps of 14 us x 1.4 = 5 ms of latency, 50 ms congested: 40 GB keeps
  // that within the 5%).
  const double n = 4e10;
  CHECK(collective_s(b, Collective::kAllReduce, n) /
            collective_s(a, Collective::kAllReduce, n) ==
        Approx(2.0).epsilon(0.05));
  // A tiny one is latency-bound: about ten times as long.
  CHECK(collective_s(b, Collective::kAllReduce, 8) / collective_s(a, Collective::kAllReduce, 8) ==
        Approx(10.0).epsilon(0.4));
}

TEST_CASE("bytes each member sends per tier: the bandwidth-optimal volume", "[system][energy]") {
  constexpr auto kIn = static_cast<std::size_t>(Tier::kInterPackage);
  constexpr auto kOut = static_cast<std::size_t>(Tier::kScaleOut);
  const double n = 1e9;
  // One tier of 8: ring all-reduce 2·7/8·n, reduce-scatter and all-gather 7/8·n, all there.
  const GroupPlacement g8 = one_tier(8, 200, 1);
  CHECK(link_bytes_si(g8, Collective::kAllReduce, n)[kIn] == Approx(2.0 * 7.0 / 8.0 * n));
  CHECK(link_bytes_si(g8, Collective::kReduceScatter, n)[kIn] == Approx(7.0 / 8.0 * n));
  CHECK(link_bytes_si(g8, Collective::kAllGather, n)[kIn] == Approx(7.0 / 8.0 * n));
  CHECK(link_bytes_si(g8, Collective::kAllToAll, n)[kIn] == Approx(7.0 / 8.0 * n));
  CHECK(link_bytes_si(g8, Collective::kSendRecv, n)[kIn] == n);
  // 4 domains of 8: a ring through all 32 crosses the network 4 times (the wrap-around
  // included) and stays inside 28 times, so 4/32 of 2·31/32·n goes out.
  const GroupPlacement g32 = two_tiers();
  const auto ar = link_bytes_si(g32, Collective::kAllReduce, n);
  CHECK(ar[kOut] == Approx(2.0 * 31.0 / 32.0 * n * 4.0 / 32.0));
  CHECK(ar[kIn] == Approx(2.0 * 31.0 / 32.0 * n * 28.0 / 32.0));
  // All-to-all: n/32 to each of the 7 domain peers inside, to the 24 others outside.
  const auto a2a = link_bytes_si(g32, Collective::kAllToAll, n);
  CHECK(a2a[kIn] == Approx(7.0 * n / 32.0));
  CHECK(a2a[kOut] == Approx(24.0 * n / 32.0));
  // Send/recv crosses the outermost span only.
  const auto sr = link_bytes_si(g32, Collective::kSendRecv, n);
  CHECK(sr[kOut] == n);
  CHECK(sr[kIn] == 0.0);
  // One member or no bytes: nothing.
  CHECK(link_bytes_si(one_tier(1, 200, 1), Collective::kAllReduce, n)[kIn] == 0.0);
  CHECK(link_bytes_si(g8, Collective::kAllReduce, 0.0)[kIn] == 0.0);
}

namespace {

TEST_CASE("NCCL's ring: the fastest of its three protocols at NCCL's own latencies",
          "[system][golden]") {
  // 8 members at 234 GB/s (one DGX A100's NVLink 3 at 0.78). NCCL's tuning model
  // (src/graph/tuning.cc): LL 6.6 us a call + 0.6 us a step over NVLink at 1/4 of the
  // bandwidth, LL128 14 + 1.9 at 0.92, Simple 8.4 + 3.4 at all of it; an all-reduce is
  // 2(p-1) = 14 steps of n/8, a reduce-scatter or all-gather 7. The link's own 2 us and
  // 64 KiB half-bandwidth message do not enter (NCCL's steps cost its protocol's).
  GroupPlacement g = one_tier(8, 234, 2, 65536);
  g.library = CollectiveLibrary::kNccl;
  const double b = 234e9;
  const auto protocol = [&](double base_us, double step_us, double share, int steps, double n) {
    return base_us * 1e-6 + steps * (step_us * 1e-6 + n / 8 / (share * b));
  };
  const auto nccl = [&](int steps, double n) {
    return std::min({protocol(6.6, 0.6, 0.25, steps, n), protocol(14.0, 1.9, 0.92, steps, n),
                     protocol(8.4, 3.4, 1.0, steps, n)});
  };
  // 4 KiB: LL, 6.6 + 14 x (0.6 + 512 B / 58.5 GB/s) = 15.12 us.
  CHECK(collective_s(g, Collective::kAllReduce, 4096) == Approx(protocol(6.6, 0.6, 0.25, 14, 4096)));
  CHECK(collective_s(g, Collective::kAllReduce, 4096) == Approx(15.1225e-6).epsilon(1e-4));
  // 4 MiB: LL128, 14 + 14 x (1.9 + 512 KiB / 215.3 GB/s) = 74.7 us (Simple 87.4, LL 140.4):
  // bus bandwidth 98 GB/s, as nccl-tests measure on one node of A100s at this size.
  const double mib4 = 4.0 * (1 << 20);
  CHECK(collective_s(g, Collective::kAllReduce, mib4) == Approx(protocol(14.0, 1.9, 0.92, 14, mib4)));
  CHECK(collective_s(g, Collective::kAllReduce, mib4) == Approx(74.69e-6).epsilon(1e-3));
  // 256 MiB: Simple, 8.4 + 14 x (3.4 + 32 MiB / 234 GB/s) = 2,063.6 us, 227.6 GB/s bus bandwidth.
  const double mib256 = 256.0 * (1 << 20);
  CHECK(collective_s(g, Collective::kAllReduce, mib256) == Approx(protocol(8.4, 3.4, 1.0, 14, mib256)));
  CHECK(collective_s(g, Collective::kAllReduce, mib256) == Approx(2063.6e-6).epsilon(1e-3));
  for (const double n : {4096.0, 1e5, mib4, 3e7, mib256}) {
    INFO(n);
    CHECK(collective_s(g, Collective::kAllReduce, n) == Approx(nccl(14, n)));
    CHECK(collective_s(g, Collective::kReduceScatter, n) == Approx(nccl(7, n)));
    CHECK(collective_s(g, Collective::kAllGather, n) == Approx(nccl(7, n)));
    // The links' latency and half-bandwidth message are the library `any`'s, not NCCL's.
    GroupPlacement other = one_tier(8, 234, 40, 0);
    other.library = CollectiveLibrary::kNccl;
    CHECK(collective_s(other, Collective::kAllReduce, n) == collective_s(g, Collective::kAllReduce, n));
    other.library = CollectiveLibrary::kAny;
    CHECK(collective_s(other, Collective::kAllReduce, n, CollectiveAlgorithm::kRing) >
          collective_s(g, Collective::kAllReduce, n));
  }
  // Across nodes a ring's steps over the network cost 2.7, 4.0 and 14 us (LL, LL128, Simple):
  // two_tiers() (4 nodes of 8) has 4 of its 32 hops on the NICs; Simple's mean step is
  // (28 x 3.4 + 4 x 14) / 32 = 4.725 us. At 1 GB the all-gather's 31 steps of n/32 run at
  // the NICs' 25 GB/s shared by the 8 rings crossing them: 8.4 + 31 x (4.725 + 31.25e6 / 8 /
  // 25e9 s) us.
  GroupPlacement two = two_tiers();
  two.library = CollectiveLibrary::kNccl;
  CHECK(collective_s(two, Collective::kAllGather, 1e9) ==
        Approx(8.4e-6 + 31 * (4.725e-6 + 1e9 / 32 / 8 / 25e9)));
  // An all-reduce across nodes under Simple pays 1.4x its latency (the "plateau effect of
  // ring", Ampere and later): 1.4 x (8.4 + 62 x 4.725) us + 62 transfers of n/32.
  CHECK(collective_s(two, Collective::kAllReduce, 1e9, CollectiveAlgorithm::kRing) ==
        Approx(1.4 * (8.4e-6 + 62 * 4.725e-6) + 62 * 1e9 / 32 / 8 / 25e9));
  // Across nodes each step inside a node costs at least the network's post overhead, 1 us
  // (LL's 0.6 us NVLink step becomes 1.0), and LL's bus bandwidth is capped at 20.4 GB/s over
  // more than two nodes (NCCL's llMaxBws): a 4 KiB all-gather under LL, mean step
  // (28 x 1.0 + 4 x 2.7) / 32 = 1.2125 us, 128 B a step at 20.4 GB/s (the quarter of 200 GB/s
  // inside, or of 25 GB/s shared by 8 rings, is faster): 6.6 + 31 x (1.2125 + 0.00627) us.
  CHECK(collective_s(two, Collective::kAllGather, 4096) ==
        Approx(6.6e-6 + 31 * (1.2125e-6 + 128.0 / 20.4e9)));
  CHECK(collective_s(two, Collective::kAllGather, 4096) == Approx(44.38e-6).epsilon(1e-3));
}

TEST_CASE("NCCL's collectives: rings, and the tree for all-reduces across nodes", "[system]") {
  // two_tiers(): 4 nodes of 8, 200 GB/s and 1 us inside, 25 GB/s and 5 us across; n = 8 MB.
  GroupPlacement g = two_tiers();
  g.library = CollectiveLibrary::kNccl;
  const double n = 8e6;
  // NCCL's tree by NCCL's tuning model (src/graph/tuning.cc): latency base + 2((ppn - 1) x
  // intra + floor(log2 nodes) x network), each member's n/8 = 1 MB up and down its NIC at 0.92
  // of 25 GB/s times the protocol's share and the correction for n's size class
  // (floor(log2(8e6 / 64)) = 16: LL 0.7, LL128 0.8, Simple 0.7):
  //   LL     6.8 + 2(7 x 0.6 + 2 x 5.0) = 35.2 us + 2e6 / (25e9 x 0.92 / 3.8 x 0.7) = 507.4 us
  //   LL128  14 + 2(7 x 1.25 + 2 x 8.5) = 65.5 us + 2e6 / (25e9 x 0.92 x 0.9375 x 0.8) = 181.4 us
  //   Simple 2(7 x 28 + 2 x 28) = 504 us + 2e6 / (25e9 x 0.92 x 0.7) = 628.2 us
  // The link's own 1 and 5 us do not enter.
  const double tree = collective_s(g, Collective::kAllReduce, n, CollectiveAlgorithm::kNcclTree);
  CHECK(tree == Approx(65.5e-6 + 2e6 / (25e9 * 0.92 * 0.9375 * 0.8)));
  CHECK(tree == Approx(181.4e-6).epsilon(1e-3));
  GroupPlacement slow_links = g;
  for (int l = 0; l < 2; ++l) slow_links.span[static_cast<std::size_t>(l)].latency *= 10.0;
  CHECK(collective_s(slow_links, Collective::kAllReduce, n, CollectiveAlgorithm::kNcclTree) == tree);
  // 4 KiB (size class 6: LL 0.7): LL, its bus bandwidth 8 x 25 GB/s x 0.92 / 3.8 = 48.4 GB/s
  // capped at NCCL's 20.4 (llMaxBws, more than two nodes): 35.2 us + 2 x 4096 B / (20.4 GB/s x
  // 0.7) = 35.77 us.
  CHECK(collective_s(g, Collective::kAllReduce, 4096, CollectiveAlgorithm::kNcclTree) ==
        Approx(35.2e-6 + 8192.0 / (20.4e9 * 0.7)));
  // 1 GB (beyond 256 MB: no correction): Simple, 504 us + 2 x 125 MB / 23 GB/s = 11,374 us.
  CHECK(collective_s(g, Collective::kAllReduce, 1e9, CollectiveAlgorithm::kNcclTree) ==
        Approx(504e-6 + 2.5e8 / (25e9 * 0.92)));
  const double ring = collective_s(g, Collective::kAllReduce, n, CollectiveAlgorithm::kRing);
  CHECK(collective_s(g, Collective::kAllReduce, n) == Approx(std::min(tree, ring)));
  // Reduce-scatter, all-gather and broadcast: the ring alone, though recursive halving and
  // doubling or the hierarchy would be faster here.
  for (const Collective c :
       {Collective::kReduceScatter, Collective::kAllGather, Collective::kBroadcast}) {
    INFO(to_string(c));
    CHECK(auto_algorithm_of(g, c, 4096) == CollectiveAlgorithm::kRing);
    CHECK(collective_s(g, c, 4096) == collective_s(g, c, 4096, CollectiveAlgorithm::kRing));
    g.library = CollectiveLibrary::kAny;
    CHECK(collective_s(g, c, 4096) < collective_s(g, c, 4096, CollectiveAlgorithm::kRing));
    g.library = CollectiveLibrary::kNccl;
  }
  // One node: no tree ("NCCL only enables the tree algorithm in multi-node cases"), the ring
  // even where recursive doubling's 3 steps would beat its 14 on a small message.
  GroupPlacement node = one_tier(8, 200, 1);
  node.library = CollectiveLibrary::kNccl;
  CHECK(auto_algorithm_of(node, Collective::kAllReduce, 4096) == CollectiveAlgorithm::kRing);
  node.library = CollectiveLibrary::kAny;
  CHECK(auto_algorithm_of(node, Collective::kAllReduce, 4096) ==
        CollectiveAlgorithm::kRecursiveDoubling);
  // At 1,024 A100s (128 nodes) a 4 KB all-reduce takes NCCL's tree: 2 x 7 hops of the node's
  // rings and 2 x ceil(log2 128) = 14 tree steps, not the flat ring's 2 x 1,023.
  const GroupPlacement all = place_group(shipped_system("a100", 1024), 1024, 1);
  REQUIRE(all.library == CollectiveLibrary::kNccl);  // megatron-lm.yaml
  CHECK(auto_algorithm_of(all, Collective::kAllReduce, 4096) == CollectiveAlgorithm::kNcclTree);
}

}  // namespace

namespace {

TEST_CASE("3-D torus all-reduce: rings along x, y and z", "[system][golden]") {
  // One 4 x 4 x 4 span, 100 GB/s per axis ring, 1 us per step, n = 64 MB. Reduce-scatter along
  // x on n (3 steps of n/4), along y on n/4, along z on n/16, then all-gather back:
  // 2 x 3 x [(1 us + 16 MB/100 GB/s) + (1 us + 4 MB/..) + (1 us + 1 MB/..)]
  // = 6 x 3 us + 6 x (160 + 40 + 10) us = 18 + 1260 us.
  GroupPlacement g;
  g.size = 64;
  g.levels = 1;
  TierSpan& s = g.span[0];
  s.tier = Tier::kInterPackage;
  s.topology = Topology::kTorus3D;
  s.members = 64;
  s.grid_x = s.grid_y = s.grid_z = 4;
  s.bandwidth_x = s.bandwidth_y = s.bandwidth_z = gigabytes_per_second(100);
  s.latency_x = s.latency_y = s.latency_z = microseconds(1);
  s.bandwidth = gigabytes_per_second(100);
  s.latency = microseconds(1);
  const double n = 64e6;
  CHECK(collective_s(g, Collective::kAllReduce, n, CollectiveAlgorithm::kTorus) ==
        Approx(1278e-6));
  CHECK(collective_s(g, Collective::kReduceScatter, n, CollectiveAlgorithm::kTorus) ==
        Approx(639e-6));
  CHECK(collective_s(g, Collective::kAllGather, n, CollectiveAlgorithm::kTorus) ==
        Approx(639e-6));
  // The flat ring over the same 64: 2 x 63 steps of n/64 at 100 GB/s: 126 us + 1260 us.
  CHECK(collective_s(g, Collective::kAllReduce, n, CollectiveAlgorithm::kRing) ==
        Approx(126e-6 + 2.0 * 63 / 64 * 640e-6));
  CHECK(auto_algorithm_of(g, Collective::kAllReduce, n) == CollectiveAlgorithm::kTorus);
}

}  // namespace

TEST_CASE("a forwarded all-to-all: each remote domain crossed once, forwarded inside",
          "[system][golden]") {
  // 4 domains of 8 (200 GB/s, 1 us inside; 25 GB/s, 5 us across), n = 32 MB each member
  // holds, c = n/32 = 1 MB per peer. Flat: 7 chunks over NVLink, 24 over the NICs:
  // 7·1 us + 24·5 us + max(7 MB/200, 24 MB/25 GB/s) = 127 us + 960 us.
  const GroupPlacement g = two_tiers();
  const double n = 32e6;
  CHECK(collective_s(g, Collective::kAllToAll, n) == Approx(127e-6 + 960e-6));
  // Half the copies cross (a token's distinct remote domains over its copies, 0.5): 12 MB over
  // the NICs; every copy landing on the domain's 7 other members, from all 4 domains, over
  // NVLink: 7·4 = 28 MB at 200 GB/s = 140 us, hidden behind the 480 us across.
  CHECK(forwarded_all_to_all(g, bytes(n), 0.5).si() == Approx(127e-6 + 480e-6));
  const std::array<Bytes, kMaxTiers> b = forwarded_all_to_all_link_bytes(g, bytes(n), 0.5);
  CHECK(b[static_cast<std::size_t>(Tier::kInterPackage)].si() == Approx(28e6));
  CHECK(b[static_cast<std::size_t>(Tier::kScaleOut)].si() == Approx(12e6));
  // Everything crossing, or one domain: the flat all-to-all.
  CHECK(forwarded_all_to_all(g, bytes(n), 1.0).si() ==
        Approx(collective_s(g, Collective::kAllToAll, n)));
  const GroupPlacement one = one_tier(8, 200, 1);
  CHECK(forwarded_all_to_all(one, bytes(n), 0.5).si() ==
        Approx(collective_s(one, Collective::kAllToAll, n)));
}
