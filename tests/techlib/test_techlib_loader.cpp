// Tests for engine/techlib/techlib_loader.hpp: the shipped library loads with the expected
// entries and units, and bad library files give exact, located messages.
#include "engine/techlib/techlib_loader.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "engine/config/node.hpp"
#include "tests/test_paths.hpp"
#include "tests/test_support.hpp"

using namespace pathfinder;
using pathfinder::test::error_of;
using pathfinder::test::kKnownMemory;
using pathfinder::test::kKnownNetwork;
using pathfinder::test::data_path;
using pathfinder::test::source_path;

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& e : v) {
    if (e == s) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("shipped library has every logic node, memory and network", "[techlib]") {
  const TechLibrary& lib = test::shipped_techlib();
  const std::vector<std::string> logic = lib.logic_names();
  for (const char* n : {"N12", "N10", "N7", "N5", "N4", "N3", "N2", "N1", "DF-N14", "DF-N10",
                        "DF-N7", "DF-N5", "DF-N3", "DF-N2", "DF-N1"}) {
    INFO("logic node " << n);
    CHECK(contains(logic, n));
    CHECK(lib.find_logic(n) != nullptr);
  }
  const std::vector<std::string> memory = lib.memory_names();
  for (const char* n : {"HBM2", "HBM2e", "HBM3", "HBM3e", "HBM4", "GDDR5", "DF-HBM"}) {
    INFO("memory " << n);
    CHECK(contains(memory, n));
    CHECK(lib.find_memory(n) != nullptr);
  }
  const std::vector<std::string> network = lib.network_names();
  for (const char* n : {"NVLink2", "NVLink3", "NVLink4", "HDR-x8", "NDR-x8", "XDR-x8", "DF-inter"}) {
    INFO("network " << n);
    CHECK(contains(network, n));
    CHECK(lib.find_network(n) != nullptr);
  }
  // Files load in name order: deepflow_reference.yaml before logic.yaml.
  REQUIRE(logic.size() >= 15);
  CHECK(logic.front() == "DF-N14");
  CHECK(lib.find_logic("N6") == nullptr);
  CHECK(lib.find_memory("HBM5") == nullptr);
  CHECK(lib.find_network("NVLink9") == nullptr);
}

TEST_CASE("shipped memory values are converted to SI", "[techlib]") {
  const MemoryTech* m = test::shipped_techlib().find_memory("HBM2e");
  REQUIRE(m != nullptr);
  // nominal_pin_rate "3.2 Gb/s" = 3.2e9 bit/s / 8 = 0.4e9 B/s
  CHECK(m->nominal_pin_rate.si() == Approx(0.4e9));
  // max_pin_rate "3.6 Gb/s" = 0.45e9 B/s
  CHECK(m->max_pin_rate.si() == Approx(0.45e9));
  // energy "4.5 pJ/bit" = 4.5e-12 J / 0.125 B = 36e-12 J/B
  CHECK(m->energy.si() == Approx(36e-12));
  // static_power "0.6 pW/bit" = 0.6e-12 W / 0.125 B = 4.8e-12 W/B
  CHECK(m->static_power.si() == Approx(4.8e-12));
  // capacity_per_layer "2 GiB" = 2 x 2^30 B
  CHECK(m->capacity_per_layer.si() == Approx(2147483648.0));
  // device_area "110 mm^2" = 110e-6 m^2
  CHECK(m->device_area.si() == Approx(110e-6));
  // links_per_mm "160 /mm" = 160e3 per m
  CHECK(m->links_per_mm.si() == Approx(160e3));
  // latency "100 ns" = 1e-7 s
  CHECK(m->latency.si() == Approx(1e-7));
  CHECK(m->layers == 8);
  CHECK(m->links_per_device == 1024);
  CHECK(m->vf.nominal.in(units::volts) == Approx(1.2));
  CHECK(m->vf.threshold.in(units::volts) == Approx(0.4));
  CHECK(m->vf.alpha == Approx(2.0));
  CHECK(m->loc.file == source_path("techlib") + "/memory.yaml");

  const MemoryTech* h4 = test::shipped_techlib().find_memory("HBM4");
  REQUIRE(h4 != nullptr);
  CHECK(h4->links_per_device == 2048);
  // capacity_per_layer "3 GiB" = 3 x 2^30 B = 3221225472 B
  CHECK(h4->capacity_per_layer.si() == Approx(3221225472.0));
}

TEST_CASE("shipped logic node and SRAM values are converted to SI", "[techlib]") {
  const LogicNode* n7 = test::shipped_techlib().find_logic("N7");
  REQUIRE(n7 != nullptr);
  CHECK(n7->flop_per_cycle == Approx(512.0));
  // mcu area "0.5904 mm^2" = 0.5904e-6 m^2
  CHECK(n7->mcu_area.si() == Approx(0.5904e-6));
  CHECK(n7->mcu_power.in(units::watts) == Approx(0.4620));
  // nominal_frequency "1.41 GHz" = 1.41e9 Hz
  CHECK(n7->nominal_frequency.si() == Approx(1.41e9));
  CHECK_FALSE(n7->max_frequency.has_value());
  CHECK(n7->vf.nominal.in(units::volts) == Approx(0.75));
  CHECK(n7->vf.threshold.in(units::volts) == Approx(0.30));
  CHECK(n7->vf.minimum.in(units::volts) == Approx(0.55));
  CHECK(n7->vf.maximum.in(units::volts) == Approx(1.0));
  CHECK(n7->vf.alpha == Approx(1.5));
  REQUIRE(n7->sram.size() == 3);
  CHECK(n7->sram[0].name == "RF");
  CHECK(n7->sram[1].name == "L1");
  CHECK(n7->sram[2].name == "L2");

  const SramTech* l2 = n7->find_sram("L2");
  REQUIRE(l2 != nullptr);
  // bank_capacity "512 KiB" = 512 x 1024 B = 524288 B
  CHECK(l2->bank_capacity.si() == Approx(524288.0));
  // area_per_bit "0.17 um^2/bit" = 0.17e-12 m^2 / 0.125 B = 1.36e-12 m^2/B
  CHECK(l2->area_per_byte.si() == Approx(1.36e-12));
  // dynamic_energy "0.5 pJ/bit" = 0.5e-12 J / 0.125 B = 4e-12 J/B
  CHECK(l2->dynamic_energy.si() == Approx(4e-12));
  // static_power "5 pW/bit" = 5e-12 W / 0.125 B = 40e-12 W/B
  CHECK(l2->static_power.si() == Approx(40e-12));
  CHECK(l2->periphery_overhead == Approx(0.52));
  // crossbar_area_per_port "0.00746 mm^2" = 7.46e-9 m^2
  CHECK(l2->crossbar_area_per_port.si() == Approx(7.46e-9));
  // latency "140 ns" = 1.4e-7 s
  CHECK(l2->latency.si() == Approx(1.4e-7));
  CHECK(n7->find_sram("L3") == nullptr);

  const LogicNode* df = test::shipped_techlib().find_logic("DF-N14");
  REQUIRE(df != nullptr);
  CHECK(df->flop_per_cycle == Approx(128.0));  // 4x4x4 V100 tensor core = 64 FMA
  // R dynamic_energy "2 fJ/bit" = 2e-15 J / 0.125 B = 16e-15 J/B
  REQUIRE(df->find_sram("R") != nullptr);
  CHECK(df->find_sram("R")->dynamic_energy.si() == Approx(16e-15));
}

TEST_CASE("shipped network values are converted to SI", "[techlib]") {
  const NetworkTech* nv3 = test::shipped_techlib().find_network("NVLink3");
  REQUIRE(nv3 != nullptr);
  // nominal_lane_rate "50 Gb/s" = 50e9 / 8 = 6.25e9 B/s
  CHECK(nv3->nominal_lane_rate.si() == Approx(6.25e9));
  // energy "6 pJ/bit" = 6e-12 / 0.125 = 48e-12 J/B
  CHECK(nv3->energy.si() == Approx(48e-12));
  // area_per_lane "0.236 mm^2" = 0.236e-6 m^2
  CHECK(nv3->area_per_lane.si() == Approx(0.236e-6));
  // latency "2 us" = 2e-6 s
  CHECK(nv3->latency.si() == Approx(2e-6));
  CHECK_FALSE(nv3->max_lanes.has_value());

  const NetworkTech* ndr = test::shipped_techlib().find_network("NDR-x8");
  REQUIRE(ndr != nullptr);
  REQUIRE(ndr->max_lanes.has_value());
  CHECK(*ndr->max_lanes == 16);
  // nominal_lane_rate "100 Gb/s" = 12.5e9 B/s; energy "10 pJ/bit" = 80e-12 J/B
  CHECK(ndr->nominal_lane_rate.si() == Approx(12.5e9));
  CHECK(ndr->energy.si() == Approx(80e-12));
  // lanes_per_mm "20 /mm" = 20e3 per m
  CHECK(ndr->lanes_per_mm.si() == Approx(20e3));
}

TEST_CASE("load_tech_library_files merges files and keeps each entry's location", "[techlib]") {
  const TechLibrary lib = load_tech_library_files({data_path("techlib/duplicate_a.yaml")});
  REQUIRE(lib.network.size() == 1);
  CHECK(lib.logic.empty());
  CHECK(lib.memory.empty());
  const NetworkTech& t = lib.network[0];
  CHECK(t.name == "TestLink");
  CHECK(t.loc.file == data_path("techlib/duplicate_a.yaml"));
  CHECK(t.loc.line == 4);  // the entry's map starts at its first key, "energy:" on line 4
  CHECK(t.loc.key_path == "network.TestLink");
  // nominal_lane_rate "100 Gb/s" = 12.5e9 B/s
  CHECK(t.nominal_lane_rate.si() == Approx(12.5e9));
}

TEST_CASE("techlib: a value in the wrong unit names file, position and key",
          "[techlib][config-error]") {
  const std::string f = data_path("techlib/bad_unit.yaml");
  CHECK(error_of([&] { (void)load_tech_library_files({f}); }) ==
        f + ":13:23: error: memory.TestMem.nominal_pin_rate: expected a bandwidth such as "
            "\"900 GB/s\", got \"3.2 GHz\" (a frequency)");
}

TEST_CASE("techlib: an unknown key suggests the closest known key", "[techlib][config-error]") {
  const std::string f = data_path("techlib/unknown_key.yaml");
  CHECK(error_of([&] { (void)load_tech_library_files({f}); }) ==
        f + ":9:5: error: network.TestLink.max_lane: unknown key; did you mean \"max_lanes\"?");
}

TEST_CASE("techlib: a missing key names the key and the expected kind", "[techlib][config-error]") {
  const std::string f = data_path("techlib/missing_key.yaml");
  // Points at the entry's map (its first key, line 4), since the key itself is absent.
  CHECK(error_of([&] { (void)load_tech_library_files({f}); }) ==
        f + ":4:5: error: memory.TestMem.latency: missing required key (expected a time such "
            "as \"1.5 us\")");
}

TEST_CASE("techlib: a threshold voltage above the minimum voltage is rejected",
          "[techlib][config-error]") {
  const std::string f = data_path("techlib/bad_voltage.yaml");
  CHECK(error_of([&] { (void)load_tech_library_files({f}); }) ==
        f + ":5:54: error: logic.TestNode.vf.threshold_voltage: expected a threshold voltage "
            "below minimum_voltage, got \"0.6 V\"");
}

TEST_CASE("techlib: energy shares outside 0 <= share < 1 are refused at the key", "[techlib][config-error]") {
  const std::string f = data_path("techlib/bad_static_share.yaml");
  CHECK(error_of([&] { (void)load_tech_library_files({f}); }) ==
        f + ":5:25: error: logic.TestNode.mcu.static_share: expected a fraction in [0, 1), got "
            "\"1.5\"");
}

TEST_CASE("techlib: the shipped energy shares (issue 16)", "[techlib][energy]") {
  // techlib/logic.yaml: FinFET 0.15 leakage, GAA 0.12; 0.85 of the dynamic power gated idle.
  const LogicNode* n7 = test::shipped_techlib().find_logic("N7");
  const LogicNode* n2 = test::shipped_techlib().find_logic("N2");
  REQUIRE((n7 != nullptr && n2 != nullptr));
  CHECK(n7->static_share == 0.15);
  CHECK(n2->static_share == 0.12);
  CHECK(n7->clock_gating == 0.85);
  // techlib/network.yaml: SerDes links 0.7 static, die-to-die 0.3.
  CHECK(test::shipped_techlib().find_network("NVLink4")->static_share == 0.7);
  CHECK(test::shipped_techlib().find_network("UCIe-advanced")->static_share == 0.3);
  // The reference's sweep has none: no leakage, all gated (absent keys).
  const LogicNode* df = test::shipped_techlib().find_logic("DF-N7");
  REQUIRE(df != nullptr);
  CHECK(df->static_share == 0.0);
  CHECK(df->clock_gating == 1.0);
}

TEST_CASE("techlib: a technology defined in two files is a duplicate", "[techlib][config-error]") {
  const std::string a = data_path("techlib/duplicate_a.yaml");
  const std::string b = data_path("techlib/duplicate_b.yaml");
  CHECK(error_of([&] { (void)load_tech_library_files({a, b}); }) ==
        b + ":4:5: error: network.TestLink: duplicate technology name \"TestLink\" (first "
            "defined at " + a + ":4)");
  // The same file twice is a duplicate too.
  CHECK(error_of([&] { (void)load_tech_library_files({a, a}); }) ==
        a + ":4:5: error: network.TestLink: duplicate technology name \"TestLink\" (first "
            "defined at " + a + ":4)");
}

TEST_CASE("techlib: a directory without yaml files and a missing directory",
          "[techlib][config-error]") {
  const std::string empty = data_path("techlib/no_yaml");
  CHECK(error_of([&] { (void)load_tech_library_dir(empty); }) ==
        empty + ": error: no technology library files (*.yaml) in directory");
  const std::string missing = data_path("techlib/does_not_exist");
  CHECK(error_of([&] { (void)load_tech_library_dir(missing); }) ==
        missing + ": error: cannot read technology library directory: No such file or directory");
  const std::string file = data_path("techlib/nope.yaml");
  CHECK(error_of([&] { (void)load_tech_library_files({file}); }) ==
        file + ": error: cannot read file: No such file or directory");
}

TEST_CASE("technology fields can be overridden without a copied library", "[techlib]") {
  // "2x NVLink" as a technology field: NVLink3's 50 Gb/s lanes (A100, hardware-facts D13) at
  // 100 Gb/s; the override reaches network.yaml, the file that defines NVLink3, and nothing else.
  const auto set = [](std::string key, std::string value) {
    ConfigOverride o;
    o.key = std::move(key);
    o.value = std::move(value);
    o.origin = "--set techlib." + o.key;
    return o;
  };
  const TechLibrary base = load_tech_library_dir(source_path("techlib"));
  const TechLibrary fast = load_tech_library_dir(
      source_path("techlib"), {set("network.NVLink3.nominal_lane_rate", "100 Gb/s"),
                               set("network.NVLink3.max_lane_rate", "100 Gb/s")});
  CHECK(fast.find_network("NVLink3")->nominal_lane_rate.si() == Approx(100e9 / 8));
  CHECK(base.find_network("NVLink3")->nominal_lane_rate.si() == Approx(50e9 / 8));
  CHECK(fast.find_network("NVLink4")->nominal_lane_rate.si() ==
        base.find_network("NVLink4")->nominal_lane_rate.si());
  // Checked as the file's own value, reported at the option.
  CHECK(error_of([&] {
          (void)load_tech_library_dir(source_path("techlib"),
                                      {set("network.NVLink3.nominal_lane_rate", "-1 Gb/s")});
        }) == "command line: error: --set techlib.network.NVLink3.nominal_lane_rate: expected a "
              "positive bandwidth, got \"-1 Gb/s\"");
  // A technology the library does not define: the section's technologies listed.
  const std::string unknown = error_of([&] {
    (void)load_tech_library_dir(source_path("techlib"), {set("network.NVLink9.latency", "1 us")});
  });
  CHECK(unknown.rfind("command line: error: --set techlib.network.NVLink9.latency: expected a "
                      "technology of the library's network section (", 0) == 0);
  CHECK(unknown.find("NVLink3") != std::string::npos);
  CHECK(error_of([&] {
          (void)load_tech_library_dir(source_path("techlib"), {set("links.x.y", "1")});
        }) == "command line: error: --set techlib.links.x.y: expected section.technology.field "
              "with section logic, memory, network or nic, got \"links.x.y\"");
  // The nic section's fields, checked as the file's own values.
  CHECK(error_of([&] {
          (void)load_tech_library_dir(source_path("techlib"),
                                      {set("nic.NDR400.max_utilization", "1.5")});
        }) == "command line: error: --set techlib.nic.NDR400.max_utilization: expected a fraction "
              "in [0.01, 1], got \"1.5\"");
  CHECK(error_of([&] {
          (void)load_tech_library_dir(source_path("techlib"), {set("nic.NDR400.power", "-1 W")});
        }) == "command line: error: --set techlib.nic.NDR400.power: expected a non-negative "
              "power, got \"-1 W\"");
  CHECK(error_of([&] {
          (void)load_tech_library_dir(source_path("techlib"),
                                      {set("nic.NDR400.bandwidth", "-5 GB/s")});
        }) == "command line: error: --set techlib.nic.NDR400.bandwidth: expected a positive "
              "bandwidth, got \"-5 GB/s\"");
  CHECK(error_of([&] {
          (void)load_tech_library_dir(source_path("techlib"), {set("nic.NDR400.latency", "-1 us")});
        }) == "command line: error: --set techlib.nic.NDR400.latency: expected a non-negative "
              "time, got \"-1 us\"");
  // Overridden, the NIC's value reaches what a template binds (templates/h100.yaml: NDR400).
  const TechLibrary lib =
      load_tech_library_dir(source_path("techlib"), {set("nic.NDR400.bandwidth", "100 GB/s")});
  CHECK(lib.find_nic("NDR400")->bandwidth.si() == Approx(100e9));
  CHECK(lib.find_nic("NDR400")->max_utilization == Approx(0.94));  // nccl-tests issue 290
}

namespace {

std::string techlib_error(const std::string& yaml) {
  return error_of([&] {
    TechLibrary lib;
    load_tech_file_into(ConfigNode::load_string(yaml, "t.yaml"), lib);
  });
}

}  // namespace

TEST_CASE("techlib: energy and cost keys are range-checked at the key", "[techlib][config-error]") {
  const std::string node =
      "logic:\n  T:\n    mcu: {flop_per_cycle: 512, area: 0.59 mm^2, power: 0.46 W, "
      "nominal_frequency: 1.41 GHz}\n    vf: {nominal_voltage: 0.75 V, threshold_voltage: 0.3 V, "
      "minimum_voltage: 0.55 V, maximum_voltage: 1.0 V}\n    sram: {}\n";
  CHECK(techlib_error(node + "    cost: {wafer_usd: 9346, defects_per_cm2: 200}\n") ==
        "t.yaml:6:46: error: logic.T.cost.defects_per_cm2: expected a defect density in [0, 100] "
        "per cm^2, got \"200\"");
  CHECK(techlib_error(node + "    cost: {wafer_usd: 0, defects_per_cm2: 0.1}\n") ==
        "t.yaml:6:23: error: logic.T.cost.wafer_usd: expected a positive number, got \"0\"");
  CHECK(techlib_error(node + "    cost: {wafer_usd: 9346, defects_per_cm2: 0.1, clustering: 0}\n") ==
        "t.yaml:6:63: error: logic.T.cost.clustering: expected a positive number, got \"0\"");
  const std::string link =
      "network:\n  L:\n    energy: 6 pJ/bit\n    area_per_lane: 0.2 mm^2\n    lanes_per_mm: 20 /mm\n"
      "    nominal_lane_rate: 50 Gb/s\n    max_lane_rate: 50 Gb/s\n    latency: 2 us\n"
      "    vf: {nominal_voltage: 1.2 V, threshold_voltage: 0.35 V, minimum_voltage: 0.85 V, "
      "maximum_voltage: 1.3 V}\n";
  CHECK(techlib_error(link + "    static_share: 1.5\n") ==
        "t.yaml:10:19: error: network.L.static_share: expected a fraction in [0, 1], got \"1.5\"");
}
