// Tests for engine/system/system_graph.hpp: the tier hierarchy a template and a device count
// give, and the exact errors for counts that do not fit it.
#include "engine/system/system_graph.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "engine/config/node.hpp"
#include "tests/system/system_fixtures.hpp"

using namespace pathfinder;
using pathfinder::test::data_path;
using pathfinder::test::error_of;
using pathfinder::test::shipped_system;

namespace {

// minimal.yaml (1 node x 1 package, NVLink3 switch) with `from` replaced by `to`, read as
// "patched.yaml", generated with its own split and filled with `devices` devices.
SystemGraph patched_system(const std::string& from, const std::string& to, int devices) {
  std::ifstream in(data_path("templates/minimal.yaml"));
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  const auto at = yaml.find(from);
  REQUIRE(at != std::string::npos);
  yaml.replace(at, from.size(), to);
  const ArchSpec spec = bind_template(test::shipped_techlib(),
                                      read_template(ConfigNode::load_string(yaml, "patched.yaml")));
  return make_system_graph(spec, generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl)),
                           devices);
}

}  // namespace

TEST_CASE("tier names round-trip", "[system]") {
  for (const auto& name : valid_tiers()) CHECK(to_string(*parse_tier(name)) == name);
  CHECK(valid_tiers() == std::vector<std::string>{"intra_package", "inter_package", "scale_out"});
  CHECK_FALSE(parse_tier("scale-out").has_value());
}

TEST_CASE("one DGX A100 is one NVSwitch tier", "[system]") {
  const SystemGraph g = shipped_system("a100", 8);
  CHECK(g.devices == 8);
  CHECK(g.domain_size() == 8);  // 1 node per package x 8 packages
  REQUIRE(g.tiers.size() == 1);
  const TierLink& nv = g.tiers[0];
  CHECK(nv.tier == Tier::kInterPackage);
  CHECK(nv.topology == Topology::kSwitch);
  CHECK(nv.group_size == 8);
  CHECK(nv.devices_below == 1);
  CHECK(nv.ports() == 1);
  // The generated NVLink 3: 600 GB/s both directions = 300 GB/s per direction (datasheet test
  // holds it within 0.3%); 2 us per message (techlib NVLink3).
  CHECK(nv.bandwidth.si() == Approx(300e9).epsilon(0.003));
  CHECK(nv.latency.si() == Approx(2e-6));
  CHECK(nv.max_utilization == Approx(0.78));
  CHECK(nv.half_bandwidth_message.si() == Approx(65536.0));
  // 300 x 0.78 = 234 GB/s usable, no congestion.
  CHECK(nv.usable_bandwidth().si() == Approx(234e9).epsilon(0.003));
  CHECK(nv.usable_latency().si() == Approx(2e-6));
  CHECK(g.find(Tier::kScaleOut) == nullptr);
  // Device memory bounds reductions: HBM2e 2.04 TB/s x 0.9.
  CHECK(g.memory_bandwidth.si() == Approx(1.84e12).epsilon(0.02));
}

TEST_CASE("1024 A100s: 128 DGX domains on HDR InfiniBand", "[system]") {
  const SystemGraph g = shipped_system("a100", 1024);
  REQUIRE(g.tiers.size() == 2);
  CHECK(g.tiers[0].tier == Tier::kInterPackage);
  CHECK(g.tiers[0].group_size == 8);
  const TierLink& ib = g.tiers[1];
  CHECK(ib.tier == Tier::kScaleOut);
  CHECK(ib.topology == Topology::kFatTree);
  CHECK(ib.group_size == 128);  // 1024 / 8 devices per domain
  CHECK(ib.devices_below == 8);
  CHECK(ib.bandwidth.si() == Approx(25e9));
  CHECK(ib.latency.si() == Approx(5e-6));
  CHECK(ib.leaf_size == 32);
  CHECK(ib.usable_bandwidth().si() == Approx(23.75e9));  // 25 x 0.95 (techlib nic HDR200)
  CHECK(g.find(Tier::kScaleOut) == &g.tiers[1]);
  CHECK(g.find(Tier::kIntraPackage) == nullptr);
}

TEST_CASE("partial packages and domains", "[system]") {
  // Fewer devices than a domain: a partial NVSwitch domain; one device: no tier at all.
  CHECK(shipped_system("a100", 4).tiers.at(0).group_size == 4);
  CHECK(shipped_system("a100", 1).tiers.empty());
  // mcm4: 4 nodes per package on a UCIe ring, packages on NVLink3.
  const SystemGraph m = shipped_system("mcm4", 8);
  REQUIRE(m.tiers.size() == 2);
  CHECK(m.tiers[0].tier == Tier::kIntraPackage);
  CHECK(m.tiers[0].topology == Topology::kRing);
  CHECK(m.tiers[0].group_size == 4);
  CHECK(m.tiers[0].ports() == 2);
  CHECK(m.tiers[1].group_size == 2);
  CHECK(m.tiers[1].devices_below == 4);
  CHECK(shipped_system("mcm4", 3).tiers.at(0).group_size == 3);  // part of one package
  // waferscale: 64 nodes on a 2-D mesh, the most square grid 8 x 8 with 4 ports per node.
  const SystemGraph w = shipped_system("waferscale", 128);
  REQUIRE(w.tiers.size() == 2);
  CHECK(w.tiers[0].topology == Topology::kMesh2D);
  CHECK(w.tiers[0].grid_x == 8);
  CHECK(w.tiers[0].grid_y == 8);
  CHECK(w.tiers[0].ports() == 4);
  CHECK(w.tiers[1].topology == Topology::kFatTree);
  CHECK(w.tiers[1].group_size == 2);
  // 32 of 64 nodes: a 4 x 8 sub-mesh.
  const SystemGraph half = shipped_system("waferscale", 32);
  CHECK(half.tiers.at(0).grid_x == 4);
  CHECK(half.tiers.at(0).grid_y == 8);
  // tpu_systolic: 64 chips on a 3-D torus, a 4 x 4 x 4 cube with 6 ports per chip; 16 chips the
  // most cubic 2 x 2 x 4 (the least z, then the least y), 8 chips 2 x 2 x 2.
  const SystemGraph tpu = shipped_system("tpu_systolic", 64);
  CHECK(tpu.tiers.at(0).topology == Topology::kTorus3D);
  CHECK((tpu.tiers[0].grid_x == 4 && tpu.tiers[0].grid_y == 4 && tpu.tiers[0].grid_z == 4));
  CHECK(tpu.tiers[0].ports() == 6);
  const SystemGraph s16 = shipped_system("tpu_systolic", 16);
  CHECK((s16.tiers.at(0).grid_x == 2 && s16.tiers[0].grid_y == 2 && s16.tiers[0].grid_z == 4));
  const SystemGraph s8 = shipped_system("tpu_systolic", 8);
  CHECK((s8.tiers.at(0).grid_x == 2 && s8.tiers[0].grid_y == 2 && s8.tiers[0].grid_z == 2));
}

TEST_CASE("congestion factors reach the tier", "[system]") {
  // minimal.yaml is one device per domain, so 4 devices are 4 domains on the scale-out tier.
  const std::string nv = "topology: switch}\n";
  const SystemGraph s = patched_system(
      nv,
      "topology: switch}\n  scale_out: {bandwidth: 10 GB/s, latency: 4 us, topology: fat-tree,\n"
      "              congestion: {bandwidth: 2, latency: 3}, max_utilization: 0.5}\n",
      4);
  REQUIRE(s.tiers.size() == 1);
  const TierLink& l = s.tiers[0];
  CHECK(l.tier == Tier::kScaleOut);
  CHECK(l.group_size == 4);
  CHECK(l.bandwidth_congestion == 2.0);
  CHECK(l.latency_congestion == 3.0);
  CHECK(l.usable_bandwidth().si() == Approx(2.5e9));  // 10 GB/s x 0.5 / 2
  CHECK(l.usable_latency().si() == Approx(12e-6));    // 4 us x 3
}

TEST_CASE("device counts that do not fit the hierarchy are exact errors", "[system][config-error]") {
  const std::string a100 = test::source_path("templates/a100.yaml");
  std::ifstream in(a100);
  int line = 0, system_line = 0;
  for (std::string s; std::getline(in, s);) {
    ++line;
    if (s == "system:") system_line = line + 1;  // the map's position is its first key's
  }
  const std::string at = a100 + ":" + std::to_string(system_line) + ":3: error: system: ";
  CHECK(error_of([] { (void)shipped_system("a100", 12); }) ==
        at + "12 devices do not fill whole scale-up domains of 8 (system.nodes_per_package 1 x "
             "system.packages 8)");
  CHECK(error_of([] { (void)shipped_system("a100", 0); }) ==
        at + "expected at least one device, got 0");
  const std::string nv = "topology: switch}\n";
  CHECK(error_of([&] { (void)patched_system(nv, nv, 2); }) ==
        "patched.yaml:19:3: error: system: 2 devices exceed one scale-up domain of 1 "
        "(system.nodes_per_package 1 x system.packages 1) and the template has no "
        "network.scale_out");
  CHECK(error_of([] { (void)shipped_system("mcm4", 6); }) ==
        test::source_path("templates/mcm4.yaml") +
            ":32:3: error: system: 6 devices do not fill whole packages of 4 "
            "(system.nodes_per_package)");
  // Two nodes per package and no intra-package network: the tier has nothing to run on.
  CHECK(error_of([] {
          (void)patched_system("nodes_per_package: 1", "nodes_per_package: 2", 2);
        }) == "patched.yaml:19:3: error: system: 2 nodes in a package need network.intra_package, "
              "which the template does not define");
}
