// Tests for engine/system/group_placement.hpp: which tiers a group spans and the bandwidth and
// latency its topology, oversubscription and spacing leave each member.
#include "engine/system/group_placement.hpp"

#include <catch2/catch.hpp>

#include <vector>

#include "tests/system/system_fixtures.hpp"

using namespace pathfinder;
using pathfinder::test::shipped_system;
using pathfinder::test::simple_tier;

namespace {

// 8 devices per domain on a 200 GB/s switch; `domains` on a fat-tree of 25 GB/s per device.
SystemGraph two_level(int domains, double oversubscription, int leaf_size) {
  SystemGraph g;
  g.devices = 8 * domains;
  g.nodes_per_package = 1;
  g.packages_per_domain = 8;
  g.tiers.push_back(simple_tier(Tier::kInterPackage, Topology::kSwitch, 8, 200, 1));
  TierLink out = simple_tier(Tier::kScaleOut, Topology::kFatTree, domains, 25, 5, 8);
  out.oversubscription = oversubscription;
  out.leaf_size = leaf_size;
  g.tiers.push_back(out);
  return g;
}

// One ring of 8 positions, 100 GB/s per device over its 2 ports, 1 us per hop.
SystemGraph ring8() {
  SystemGraph g;
  g.devices = 8;
  g.tiers.push_back(simple_tier(Tier::kIntraPackage, Topology::kRing, 8, 100, 1));
  return g;
}

}  // namespace

TEST_CASE("groups on 1024 A100s span the tiers their strides reach", "[system]") {
  const SystemGraph sys = shipped_system("a100", 1024);
  const double nvlink = sys.tiers[0].usable_bandwidth().si();  // 300 x 0.78 = 234 GB/s
  const double hdr = sys.tiers[1].usable_bandwidth().si();     // 25 x 0.94 = 23.5 GB/s
  // Tensor parallel inside one DGX: 8 contiguous devices, NVSwitch only.
  const GroupPlacement tp = place_group(sys, 8, 1);
  REQUIRE(tp.levels == 1);
  CHECK(tp.outermost_tier == Tier::kInterPackage);
  CHECK(tp.span[0].members == 8);
  CHECK(tp.span[0].below == 1);
  CHECK(tp.span[0].bandwidth.si() == Approx(nvlink));
  CHECK(tp.span[0].latency.si() == Approx(2e-6));
  CHECK(tp.reduction_bandwidth.si() == Approx(sys.memory_bandwidth.si() / 3));
  // Data parallel with stride 8: one member per DGX, each on its own NIC (a rail).
  const GroupPlacement dp = place_group(sys, 128, 8);
  REQUIRE(dp.levels == 1);
  CHECK(dp.outermost_tier == Tier::kScaleOut);
  CHECK(dp.span[0].members == 128);
  CHECK(dp.span[0].bandwidth.si() == Approx(hdr));
  // 16 members 4 apart: 2 per DGX (positions 0 and 4), 8 DGX nodes.
  const GroupPlacement mixed = place_group(sys, 16, 4);
  REQUIRE(mixed.levels == 2);
  CHECK(mixed.span[0].tier == Tier::kInterPackage);
  CHECK(mixed.span[0].members == 2);
  CHECK(mixed.span[0].spacing == 4);
  CHECK(mixed.span[1].tier == Tier::kScaleOut);
  CHECK(mixed.span[1].members == 8);
  CHECK(mixed.span[1].below == 2);
  // A single member spans nothing.
  CHECK(place_group(sys, 1, 64).levels == 0);
}

TEST_CASE("irregular strides are counted exactly", "[system]") {
  // Two tiers of 4: members 0, 3, 6, 9 sit at inner positions 0, 3, 2, 1 (all four) and
  // outer positions 0, 0, 1, 2 (three).
  SystemGraph g;
  g.devices = 16;
  g.tiers.push_back(simple_tier(Tier::kIntraPackage, Topology::kSwitch, 4, 100, 1));
  g.tiers.push_back(simple_tier(Tier::kInterPackage, Topology::kSwitch, 4, 100, 1, 4));
  CHECK(tier_members(g, 0, 4, 3) == 4);
  CHECK(tier_members(g, 1, 4, 3) == 3);
  // Closed forms: stride <= inner size, and multiples of it.
  CHECK(tier_members(g, 0, 16, 1) == 4);
  CHECK(tier_members(g, 1, 16, 1) == 4);
  CHECK(tier_members(g, 0, 4, 4) == 1);
  CHECK(tier_members(g, 1, 4, 4) == 4);
  CHECK(tier_members(g, 1, 2, 8) == 2);
}

TEST_CASE("fat-tree oversubscription binds groups that span leaves", "[system]") {
  // Leaves of 32 devices (4 domains), 2:1 oversubscribed above them.
  const SystemGraph g = two_level(16, 2.0, 32);
  // 4 members 8 apart: devices 0, 8, 16, 24 under one leaf: full 25 GB/s.
  CHECK(place_group(g, 4, 8).span[0].bandwidth.si() == Approx(25e9));
  // 8 members 8 apart reach device 56, the next leaf: 12.5 GB/s.
  CHECK(place_group(g, 8, 8).span[0].bandwidth.si() == Approx(12.5e9));
  // A block that does not tile the leaves (3 x 8 = 24 devices) straddles one somewhere.
  CHECK(place_group(g, 3, 8).span[0].bandwidth.si() == Approx(12.5e9));
  // The inner switch tier never sees the oversubscription.
  CHECK(place_group(g, 64, 1).span[0].bandwidth.si() == Approx(200e9));
}

TEST_CASE("rings derate by spacing and segments", "[system]") {
  const SystemGraph g = ring8();  // 2 ports of 50 GB/s per device, 1 us per hop
  // The whole ring: both directions, 100 GB/s, one hop per step.
  const GroupPlacement whole = place_group(g, 8, 1);
  CHECK(whole.span[0].bandwidth.si() == Approx(100e9));
  CHECK(whole.span[0].latency.si() == Approx(1e-6));
  // Half the ring, contiguous: a segment embeds its ring with dilation 2: 50 GB/s, 2 hops.
  const GroupPlacement segment = place_group(g, 4, 1);
  CHECK(segment.span[0].bandwidth.si() == Approx(50e9));
  CHECK(segment.span[0].latency.si() == Approx(2e-6));
  // Every other position all the way round: wraps, but each link carries the sibling group's
  // ring too (spacing 2): 2 x 50 / 2 = 50 GB/s, 2 hops per step.
  const GroupPlacement strided = place_group(g, 4, 2);
  CHECK(strided.span[0].spacing == 2);
  CHECK(strided.span[0].bandwidth.si() == Approx(50e9));
  CHECK(strided.span[0].latency.si() == Approx(2e-6));
  // Two members 4 apart: 4 sibling pairs over each link: 25 GB/s, 4 hops.
  const GroupPlacement pair = place_group(g, 2, 4);
  CHECK(pair.span[0].bandwidth.si() == Approx(25e9));
  CHECK(pair.span[0].latency.si() == Approx(4e-6));
}

TEST_CASE("2-D mesh placements form blocks", "[system]") {
  // waferscale: 8 x 8 mesh of nodes per package, 4 ports each.
  const SystemGraph sys = shipped_system("waferscale", 64);
  const double port = sys.tiers[0].usable_bandwidth().si() / 4;
  // A row of 8: a line ring (no wrap on a mesh) through one port per direction.
  const GroupPlacement row = place_group(sys, 8, 1);
  CHECK(row.span[0].grid_x == 8);
  CHECK(row.span[0].grid_y == 1);
  CHECK(row.span[0].bandwidth.si() == Approx(port));
  CHECK(row.span[0].latency.si() == Approx(2 * sys.tiers[0].latency.si()));
  // A column: 8 members 8 apart.
  const GroupPlacement column = place_group(sys, 8, 8);
  CHECK(column.span[0].grid_x == 1);
  CHECK(column.span[0].grid_y == 8);
  CHECK(column.span[0].bandwidth.si() == Approx(port));
  // 2 x 8 columns of stride 4: 2 along x (4 apart), 8 along y.
  const GroupPlacement block = place_group(sys, 16, 4);
  CHECK(block.span[0].grid_x == 2);
  CHECK(block.span[0].grid_y == 8);
  CHECK(block.span[0].bandwidth_x.si() == Approx(port / 4));
  CHECK(block.span[0].bandwidth_y.si() == Approx(port));
  CHECK(block.span[0].bandwidth.si() == Approx(port / 4));  // a cycle through it: the far axis binds
}

namespace {

TEST_CASE("3-D torus placements form blocks, a torus covered whole wraps every axis", "[system]") {
  // 64 positions as 4 x 4 x 4 (set_grid: the least z), six ports of 600 / 6 = 100 GB/s, 1 us.
  SystemGraph sys;
  sys.devices = 64;
  TierLink l = simple_tier(Tier::kInterPackage, Topology::kTorus3D, 64, 600, 1);
  l.grid_x = 4;
  l.grid_y = 4;
  l.grid_z = 4;
  sys.tiers.push_back(l);
  REQUIRE(sys.tiers[0].ports() == 6);
  const double port = 100e9;
  // A row of 4: the x ring wraps, both directions: 200 GB/s, one hop.
  const GroupPlacement row = place_group(sys, 4, 1);
  CHECK((row.span[0].grid_x == 4 && row.span[0].grid_y == 1 && row.span[0].grid_z == 1));
  CHECK(row.span[0].bandwidth.si() == Approx(2 * port));
  CHECK(row.span[0].latency.si() == Approx(1e-6));
  // 4 members 16 apart: a z line.
  const GroupPlacement z = place_group(sys, 4, 16);
  CHECK((z.span[0].grid_x == 1 && z.span[0].grid_y == 1 && z.span[0].grid_z == 4));
  CHECK(z.span[0].bandwidth_z.si() == Approx(2 * port));
  // 16 consecutive: a 4 x 4 plane, both axes whole; 32 members 2 apart: 2 x 4 x 4 (x 2 apart).
  const GroupPlacement plane = place_group(sys, 16, 1);
  CHECK((plane.span[0].grid_x == 4 && plane.span[0].grid_y == 4 && plane.span[0].grid_z == 1));
  CHECK(plane.span[0].bandwidth.si() == Approx(2 * port));
  const GroupPlacement half = place_group(sys, 32, 2);
  CHECK((half.span[0].grid_x == 2 && half.span[0].grid_y == 4 && half.span[0].grid_z == 4));
  // The x ring: 2 of 4 positions 2 apart, wrapping: 2 x 100 / 2 GB/s, 2 hops per step.
  CHECK(half.span[0].bandwidth_x.si() == Approx(port));
  CHECK(half.span[0].latency_x.si() == Approx(2e-6));
  CHECK(half.span[0].bandwidth_y.si() == Approx(2 * port));
  // All 64: the whole torus, a cycle through every position using both directions.
  const GroupPlacement all = place_group(sys, 64, 1);
  CHECK((all.span[0].grid_x == 4 && all.span[0].grid_y == 4 && all.span[0].grid_z == 4));
  CHECK(all.span[0].bandwidth.si() == Approx(2 * port));
}

}  // namespace

TEST_CASE("a full mesh gives a group its own direct links, m - 1 of them", "[system]") {
  // 8 positions wired pairwise (an MI300X hive: 7 Infinity Fabric links per GPU), 448 GB/s per
  // device and direction over its 7 ports: 64 GB/s a link.
  SystemGraph g;
  g.devices = 8;
  g.tiers.push_back(simple_tier(Tier::kInterPackage, Topology::kFullMesh, 8, 448, 1));
  CHECK(g.tiers[0].ports() == 7);
  // All 8: every link, 448 GB/s, one hop.
  CHECK(place_group(g, 8, 1).span[0].bandwidth.si() == Approx(448e9));
  CHECK(place_group(g, 8, 1).span[0].latency.si() == Approx(1e-6));
  // A pair has one link: 64 GB/s (a switch would give it the device's 448).
  CHECK(place_group(g, 2, 1).span[0].bandwidth.si() == Approx(64e9));
  CHECK(place_group(g, 2, 4).span[0].bandwidth.si() == Approx(64e9));  // spacing costs nothing
  // Four members: three links, 192 GB/s, and no sharing with a concurrent group: the groups
  // {0,1,2,3} and {0,4} through device 0 use disjoint links.
  PortSharing two;
  two.sharers[0] = 2;
  CHECK(place_group(g, 4, 1, two).span[0].bandwidth.si() == Approx(192e9));
}
