// Tests for engine/arch/template_loader.hpp and bind_template: the shipped templates parse to
// the right values, and each class of bad template gives one exact, located message.
#include "engine/arch/template_loader.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "engine/arch/arch_spec.hpp"
#include "engine/config/node.hpp"
#include "engine/techlib/techlib_loader.hpp"
#include "tests/test_paths.hpp"
#include "tests/test_support.hpp"

using namespace pathfinder;
using pathfinder::test::error_of;
using pathfinder::test::kKnownMemory;
using pathfinder::test::kKnownNetwork;
using pathfinder::test::data_path;
using pathfinder::test::source_path;

namespace {

std::string fixture(const std::string& name) { return data_path("templates/" + name + ".yaml"); }
std::string load_error(const std::string& name) {
  return error_of([&] { (void)load_template(fixture(name)); });
}
// check_template's diagnostics for a fixture that parses, one rendered line each.
std::vector<std::string> check_errors(const std::string& name) {
  std::vector<std::string> out;
  for (const auto& d : check_template(load_template(fixture(name)), test::shipped_techlib())) out.push_back(d.str());
  return out;
}

// The message for minimal.yaml with its text `from` replaced by `to`, read as "patched.yaml".
std::string patched_error(const std::string& from, const std::string& to) {
  std::ifstream in(fixture("minimal"));
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  const auto at = yaml.find(from);
  if (at == std::string::npos) return "<\"" + from + "\" not in minimal.yaml>";
  yaml.replace(at, from.size(), to);
  return error_of([&] { (void)read_template(ConfigNode::load_string(yaml, "patched.yaml")); });
}

}  // namespace

TEST_CASE("shipped templates load and check cleanly", "[arch]") {
  for (const char* name : {"a100", "v100", "h100", "deepflow_v100"}) {
    INFO("template " << name);
    const std::string path = source_path(std::string("templates/") + name + ".yaml");
    ArchTemplate t;
    REQUIRE_NOTHROW(t = load_template(path));
    CHECK(t.file == path);
    CHECK(check_template(t, test::shipped_techlib()).empty());
    CHECK_NOTHROW((void)bind_template(test::shipped_techlib(), t));
  }
}

TEST_CASE("A100 template values", "[arch]") {
  const ArchTemplate t = load_template(source_path("templates/a100.yaml"));
  CHECK(t.name == "A100-SXM4-80GB");
  CHECK(t.logic == "N7");
  CHECK(t.core.array_rows == 16);
  CHECK(t.core.array_cols == 16);
  CHECK(t.core.flop_per_cycle() == Approx(512.0));  // 2 FLOP per FMA x 16 x 16
  CHECK(t.core.dataflow == Dataflow::kBest);
  CHECK(t.core.mcus_per_bundle == 4);
  CHECK(t.core.enabled_bundle_fraction == Approx(0.84375));  // 108 / 128 SMs
  // chip_area "826 mm^2" = 826e-6 m^2; power "400 W"; node_area "1500 mm^2"
  CHECK(t.budget.chip_area.si() == Approx(826e-6));
  CHECK(t.budget.power.in(units::watts) == Approx(400.0));
  CHECK(t.budget.node_area.si() == Approx(1500e-6));
  // perimeter not given: 4 x sqrt(826 mm^2) = 4 x 28.740 mm = 114.96 mm
  CHECK(t.budget.perimeter.in(units::millimeters) == Approx(114.96).epsilon(1e-4));
  REQUIRE(t.levels.size() == 3);
  CHECK(t.levels[0].name == "RF");
  CHECK(t.levels[0].scope == Scope::kMcu);
  CHECK_FALSE(t.levels[0].bank_capacity.has_value());
  CHECK(t.levels[1].scope == Scope::kBundle);
  CHECK(t.levels[2].name == "L2");
  CHECK(t.levels[2].scope == Scope::kGlobal);
  REQUIRE(t.levels[2].bank_capacity.has_value());
  CHECK(t.levels[2].bank_capacity->si() == Approx(524288.0));  // 512 KiB = 512 x 1024 B
  CHECK(t.main_memory.technology == "HBM2e");
  CHECK(t.main_memory.layers == 8);
  REQUIRE(t.networks.size() == 1);
  CHECK(t.networks[0].tier == NetworkTier::kInterPackage);
  CHECK(t.networks[0].technology == "NVLink3");
  CHECK(t.networks[0].topology == Topology::kSwitch);
  CHECK(t.find_network(NetworkTier::kIntraPackage) == nullptr);
  CHECK(t.packages == 8);
  // Split in component order; intra_package is absent and gets zeros.
  const std::vector<std::string> names{"core", "RF", "L1", "L2", "main_memory", "intra_package",
                                       "inter_package"};
  CHECK(component_names(t) == names);
  REQUIRE(t.split.size() == 7);
  for (std::size_t i = 0; i < names.size(); ++i) CHECK(t.split[i].name == names[i]);
  CHECK(t.split[5].area == 0.0);
  CHECK(t.split[5].power == 0.0);
  CHECK(t.split[5].perimeter == 0.0);
}

TEST_CASE("other shipped templates and the bound bank override", "[arch]") {
  const ArchTemplate v = load_template(source_path("templates/v100.yaml"));
  CHECK(v.logic == "N12");
  CHECK(v.core.flop_per_cycle() == Approx(128.0));  // 2 x 8 x 8
  // V100 overrides the N12 L2 bank (512 KiB in the library) with 96 KiB = 98304 B.
  const ArchSpec vs = bind_template(test::shipped_techlib(), v);
  REQUIRE(vs.level_tech.size() == 3);
  CHECK(test::shipped_techlib().find_logic("N12")->find_sram("L2")->bank_capacity.si() == Approx(524288.0));
  CHECK(vs.level_tech[2].bank_capacity.si() == Approx(98304.0));
  CHECK(vs.memory.name == "HBM2");
  CHECK(vs.memory_layers == 4);  // template layers: 4, library default 8

  const ArchTemplate h = load_template(source_path("templates/h100.yaml"));
  CHECK(h.logic == "N4");
  CHECK(h.core.flop_per_cycle() == Approx(1024.0));  // 2 x 16 x 32
  CHECK(h.budget.power.in(units::watts) == Approx(700.0));

  const ArchTemplate d = load_template(source_path("templates/deepflow_v100.yaml"));
  CHECK(d.logic == "DF-N14");
  CHECK(d.core.enabled_bundle_fraction == 1.0);  // default when absent
  const ArchSpec ds = bind_template(test::shipped_techlib(), d);
  CHECK(ds.memory_layers == 1);  // no template layers: DF-HBM default of 1
  REQUIRE(ds.inter.has_value());
  CHECK(ds.inter->name == "DF-inter");
  CHECK_FALSE(ds.intra.has_value());
}

TEST_CASE("minimal fixture is valid", "[arch]") {
  const ArchTemplate t = load_template(fixture("minimal"));
  CHECK(check_template(t, test::shipped_techlib()).empty());
  CHECK(t.levels.size() == 2);
  CHECK(t.core.max_utilization == 1.0);  // default
  // Defaults of the optional derates and of an absent host section.
  CHECK(t.core.vector_throughput_ratio == 1.0);
  CHECK(t.main_memory.max_utilization == 1.0);
  CHECK(t.host.dispatch.si() == 0.0);
  CHECK(t.host.launch_latency.si() == 0.0);
  CHECK(t.host.synchronize.si() == 0.0);
  CHECK(t.host.iteration.si() == 0.0);
  CHECK(t.host.host_to_device.si() == 0.0);
}

TEST_CASE("host section, vector ratio and memory utilization of shipped templates", "[arch]") {
  const ArchTemplate a = load_template(source_path("templates/a100.yaml"));
  CHECK(a.core.vector_throughput_ratio == Approx(0.0625));  // 19.5 / 312 TFLOP/s
  CHECK(a.main_memory.max_utilization == Approx(0.9));
  CHECK(a.host.launch_latency.si() == Approx(5e-6));
  CHECK(a.host.synchronize.si() == Approx(11e-6));
  // The software stack's costs come from a profile, not the hardware template.
  CHECK(a.host.dispatch.si() == 0.0);
  CHECK(a.host.training_dispatch.si() == 0.0);
  CHECK(a.host.iteration.si() == 0.0);
  CHECK(a.main_memory.stream_utilization == Approx(0.675));
  CHECK(a.host.host_to_device.si() == Approx(25e9));        // "25 GB/s"
  // deepflow_v100: only the reference's 9 us launch overhead, its H2D rate 12.4 GiB/s =
  // 12.4 x 2^30 B/s = 13314398617.6 B/s, and DRAM util 1.
  const ArchTemplate d = load_template(source_path("templates/deepflow_v100.yaml"));
  CHECK(d.host.launch_latency.si() == Approx(9e-6));
  CHECK(d.main_memory.stream_utilization == 1.0);  // defaults to max_utilization
  CHECK(d.host.synchronize.si() == 0.0);
  CHECK(d.host.iteration.si() == 0.0);
  CHECK(d.host.host_to_device.si() == Approx(13314398617.6));
  CHECK(d.main_memory.max_utilization == 1.0);
}

TEST_CASE("host, vector ratio and memory utilization errors are exact", "[arch][config-error]") {
  // Host section appended after line 30 of minimal.yaml: "host:" is line 31, its keys line 32.
  const std::string split_end = "perimeter: 0.2}\n";
  // Framework costs are refused with a pointer to the software profile.
  CHECK(patched_error(split_end, split_end + "host:\n  dispatch: 12 us\n") ==
        "patched.yaml:32:13: error: host.dispatch: expected hardware only here; host.dispatch is "
        "a software-stack cost: set it in a software profile (templates/software/*.yaml, "
        "--software), got \"12 us\"");
  CHECK(patched_error(split_end, split_end + "host:\n  launch_latency: -5 us\n") ==
        "patched.yaml:32:19: error: host.launch_latency: expected a non-negative time, got "
        "\"-5 us\"");
  CHECK(patched_error(split_end, split_end + "host:\n  synchronize: 5 GB\n") ==
        "patched.yaml:32:16: error: host.synchronize: expected a time such as \"1.5 us\", got "
        "\"5 GB\" (a size)");
  CHECK(patched_error(split_end, split_end + "host:\n  launch_latncy: 5 us\n") ==
        "patched.yaml:32:3: error: host.launch_latncy: unknown key; did you mean "
        "\"launch_latency\"?");
  CHECK(patched_error(split_end, split_end + "host:\n  host_to_device: 25 GB\n") ==
        "patched.yaml:32:19: error: host.host_to_device: expected a bandwidth such as "
        "\"900 GB/s\", got \"25 GB\" (a size)");
  // memory.main.max_utilization on line 16, after "    technology: HBM2e" on line 15.
  const std::string main_tech = "technology: HBM2e\n";
  CHECK(patched_error(main_tech, main_tech + "    max_utilization: 0\n") ==
        "patched.yaml:16:22: error: memory.main.max_utilization: expected a fraction in [0.01, 1], "
        "got \"0\"");
  CHECK(patched_error(main_tech, main_tech + "    max_utilization: 1.5\n") ==
        "patched.yaml:16:22: error: memory.main.max_utilization: expected a fraction in [0.01, 1], "
        "got \"1.5\"");
  // core.vector_throughput_ratio on line 10, after "  mcus_per_bundle: 4" on line 9.
  const std::string mcus = "mcus_per_bundle: 4\n";
  CHECK(patched_error(mcus, mcus + "  vector_throughput_ratio: 1.2\n") ==
        "patched.yaml:10:28: error: core.vector_throughput_ratio: expected a fraction in [0.01, 1], "
        "got \"1.2\"");
  CHECK(patched_error(mcus, mcus + "  sustained_fraction: 0\n") ==
        "patched.yaml:10:23: error: core.sustained_fraction: expected a fraction in [0.01, 1], "
        "got \"0\"");
  CHECK(patched_error(mcus, mcus + "  warp_mma_fraction: 0\n") ==
        "patched.yaml:10:22: error: core.warp_mma_fraction: expected a fraction in [0.01, 1], "
        "got \"0\"");
  CHECK(patched_error(mcus, mcus + "  warp_mma_peak_fraction: 0\n") ==
        "patched.yaml:10:27: error: core.warp_mma_peak_fraction: expected a fraction in "
        "[0.01, 1], got \"0\"");
  // FlashAttention-2 cannot run faster than the instructions it is written in.
  CHECK(patched_error(mcus, mcus + "  warp_mma_peak_fraction: 0.6\n  warp_mma_fraction: 0.7\n") ==
        "patched.yaml:11:22: error: core.warp_mma_fraction: expected at most "
        "warp_mma_peak_fraction (\"0.6\"), got \"0.7\"");
  CHECK(patched_error(mcus, mcus + "  attention_backward_fraction: 1.5\n") ==
        "patched.yaml:10:32: error: core.attention_backward_fraction: expected a fraction in "
        "[0.01, 1], got \"1.5\"");
  CHECK(patched_error(mcus, mcus + "  attention_fraction: 0\n") ==
        "patched.yaml:10:23: error: core.attention_fraction: expected a fraction in [0.01, 1], "
        "got \"0\"");
  CHECK(patched_error(mcus, mcus + "  cudnn_causal_fraction: 0\n") ==
        "patched.yaml:10:26: error: core.cudnn_causal_fraction: expected a fraction in "
        "[0.01, 1], got \"0\"");
  CHECK(patched_error(mcus, mcus + "  cudnn_causal_backward_fraction: 1.2\n") ==
        "patched.yaml:10:35: error: core.cudnn_causal_backward_fraction: expected a fraction in "
        "[0.01, 1], got \"1.2\"");
  CHECK(patched_error(mcus, mcus + "  warp_mma_backward_fraction: 2\n") ==
        "patched.yaml:10:31: error: core.warp_mma_backward_fraction: expected a fraction in "
        "[0.01, 1], got \"2\"");
  CHECK(patched_error(mcus, mcus + "  attention_overlap: sometimes\n") ==
        "patched.yaml:10:22: error: core.attention_overlap: expected true or false, got "
        "\"sometimes\"");
  CHECK(patched_error(mcus, mcus + "  fp8_promoted_accumulation_fraction: 1.5\n") ==
        "patched.yaml:10:39: error: core.fp8_promoted_accumulation_fraction: expected a fraction "
        "in [0.01, 1], got \"1.5\"");
  CHECK(patched_error(mcus, mcus + "  mcu_power_ratio: 1.5\n") ==
        "patched.yaml:10:20: error: core.mcu_power_ratio: expected a fraction in [0.01, 1], "
        "got \"1.5\"");
  CHECK(patched_error(mcus, mcus + "  fp8_sustained_fraction: 2\n") ==
        "patched.yaml:10:27: error: core.fp8_sustained_fraction: expected a fraction in [0.01, 1], "
        "got \"2\"");
  // FP4: none (0) or at least the FP8 ratio (1 in this fixture), at most 16.
  CHECK(patched_error(mcus, mcus + "  fp4_throughput_ratio: 0.5\n") ==
        "patched.yaml:10:25: error: core.fp4_throughput_ratio: expected 0 (no FP4 units) or a "
        "ratio from fp8_throughput_ratio to 16 (FP4 over FP16 dense throughput), got \"0.5\"");
  CHECK(patched_error(mcus, mcus + "  fp4_throughput_ratio: 32\n") ==
        "patched.yaml:10:25: error: core.fp4_throughput_ratio: expected 0 (no FP4 units) or a "
        "ratio from fp8_throughput_ratio to 16 (FP4 over FP16 dense throughput), got \"32\"");
  CHECK(patched_error(mcus, mcus + "  fp4_sustained_fraction: 2\n") ==
        "patched.yaml:10:27: error: core.fp4_sustained_fraction: expected a fraction in [0.01, 1], "
        "got \"2\"");
  CHECK(patched_error(mcus, mcus + "  fp4_flop_energy_factor: 0.5\n") ==
        "patched.yaml:10:27: error: core.fp4_flop_energy_factor: expected a factor in [1, 10] "
        "(energy per FLOP on real operands over the provisioned), got \"0.5\"");
  // Device-to-device variation: a relative standard deviation, and the fit's job size.
  CHECK(patched_error(mcus, mcus + "  device_variation: 0.5\n") ==
        "patched.yaml:10:21: error: core.device_variation: expected a relative standard "
        "deviation in [0, 0.2], got \"0.5\"");
  CHECK(patched_error(mcus, mcus + "  device_variation: -0.01\n") ==
        "patched.yaml:10:21: error: core.device_variation: expected a relative standard "
        "deviation in [0, 0.2], got \"-0.01\"");
  CHECK(patched_error(mcus, mcus + "  sustained_devices: 0\n") ==
        "patched.yaml:10:22: error: core.sustained_devices: expected a positive number, got "
        "\"0\"");
  CHECK(patched_error(mcus, mcus + "  sustained_devices: 2000000\n") ==
        "patched.yaml:10:22: error: core.sustained_devices: expected at most 1000000 devices, got "
        "\"2000000\"");
  CHECK(patched_error(mcus, mcus + "  block_scaled_mma: sometimes\n") ==
        "patched.yaml:10:21: error: core.block_scaled_mma: expected true or false, got "
        "\"sometimes\"");
  CHECK(patched_error(main_tech, main_tech + "    stream_utilization: 1.1\n") ==
        "patched.yaml:16:25: error: memory.main.stream_utilization: expected a fraction in "
        "[0.01, 1], got \"1.1\"");
}

TEST_CASE("at most kMaxOnChipLevels on-chip levels, the seventh located", "[arch][config-error]") {
  // Six levels is what a GEMM plan tiles (engine/perf/gemm_model.hpp); a seventh was an
  // internal assertion in the timer, now the template's error at that level's entry.
  const std::string two = "    - {name: L2, technology: L2, scope: global}\n";
  std::string seven = two;
  for (int i = 3; i <= 7; ++i) {
    seven += "    - {name: X" + std::to_string(i) + ", technology: L2, scope: global}\n";
  }
  CHECK(patched_error(two, seven) ==
        "patched.yaml:18:14: error: memory.levels[6].name: expected at most 6 on-chip levels, "
        "got more");
  std::string six = two;
  for (int i = 3; i <= 6; ++i) {
    six += "    - {name: X" + std::to_string(i) + ", technology: L2, scope: global}\n";
  }
  // Six pass the levels (the next complaint is the split's, which names no X3 yet).
  CHECK(patched_error(two, six) == "patched.yaml:30:3: error: split.X3: missing required key "
                                    "(expected {area: …, power: …})");
}

TEST_CASE("template parse errors are exact and located", "[arch][config-error]") {
  CHECK(load_error("unknown_key") == fixture("unknown_key") +
        ":8:3: error: core.max_utilisation: unknown key; did you mean \"max_utilization\"?");
  // The key is absent, so the position is the budget map's (its first key).
  CHECK(load_error("missing_key") == fixture("missing_key") +
        ":21:3: error: budget.power: missing required key (expected a power such as \"300 W\")");
  CHECK(load_error("wrong_unit") == fixture("wrong_unit") +
        ":23:10: error: budget.power: expected a power such as \"300 W\", got \"400 GB/s\" "
        "(a bandwidth)");
  CHECK(load_error("bare_number") == fixture("bare_number") +
        ":22:14: error: budget.chip_area: expected an area such as \"826 mm^2\", got \"826\" "
        "(a bare number needs a unit)");
  CHECK(load_error("non_numeric_fraction") == fixture("non_numeric_fraction") +
        ":26:14: error: split.L1.area: expected a number, got \"lots\"");
  CHECK(load_error("negative_budget") == fixture("negative_budget") +
        ":23:10: error: budget.power: expected a positive power, got \"-400 W\"");
  CHECK(load_error("zero_budget") == fixture("zero_budget") +
        ":22:14: error: budget.chip_area: expected a positive area, got \"0 mm^2\"");
  CHECK(load_error("bad_enum") == fixture("bad_enum") +
        ":7:13: error: core.dataflow: expected one of weight-stationary, activation-stationary, "
        "output-stationary or best, got \"weight_stationary\"; did you mean \"weight-stationary\"?");
  CHECK(load_error("unknown_component") == fixture("unknown_component") +
        ":28:15: error: split.mainmemory: unknown component (expected one of core, L1, L2, "
        "main_memory, intra_package or inter_package); did you mean \"main_memory\"?");
  CHECK(load_error("malformed") == fixture("malformed") +
        ":28:14: error: malformed YAML: end of map flow not found");
  CHECK(load_error("nope") ==
        fixture("nope") + ": error: cannot read file: No such file or directory");
}

TEST_CASE("template semantic errors come from check_template", "[arch][config-error]") {
  // area: 0.65 + 0.1 + 0.2 + 0.1 + 0.05 = 1.1
  CHECK(check_errors("split_over") == std::vector<std::string>{fixture("split_over") +
        ":25:3: error: split: expected area fractions summing to at most 1, got 1.100000"});
  CHECK(check_errors("unknown_logic") == std::vector<std::string>{fixture("unknown_logic") +
        ":4:10: error: technology.logic: unknown logic technology \"N07\" (known: DF-N14, DF-N10, "
        "DF-N7, DF-N5, DF-N3, DF-N2, DF-N1, N12, N10, N7, N5, N4, N3, N2 or N1); did you mean "
        "\"N7\"?"});
  CHECK(check_errors("unknown_sram") == std::vector<std::string>{fixture("unknown_sram") +
        ":12:30: error: memory.levels[1].technology: unknown SRAM macro of N7 \"LL2\" (known: RF, "
        "L1 or L2); did you mean \"L2\"?"});
  CHECK(check_errors("two_problems") == std::vector<std::string>{
        fixture("two_problems") + ":14:17: error: memory.main.technology: unknown memory "
            "technology \"HBM2-e\" " + kKnownMemory + "; did you mean \"HBM2e\"?",
        fixture("two_problems") + ":16:31: error: network.inter_package.technology: unknown "
            "network technology \"NVLink-3\" " + kKnownNetwork + "; did you mean \"NVLink3\"?"});
}

TEST_CASE("bind_template throws one ConfigError carrying every problem", "[arch][config-error]") {
  const ArchTemplate t = load_template(fixture("several_problems"));
  const std::string f = fixture("several_problems");
  const std::vector<std::string> expected{
      f + ":14:17: error: memory.main.technology: unknown memory technology \"HBM9\" " +
          kKnownMemory + "; did you mean \"HBM2\"?",
      f + ":16:31: error: network.inter_package.technology: unknown network technology "
          "\"NVLink-3\" " + kKnownNetwork + "; did you mean \"NVLink3\"?",
      // power: 0.65 + 0.1 + 0.1 + 0.2 + 0.05 = 1.1
      f + ":25:3: error: split: expected power fractions summing to at most 1, got 1.100000"};
  std::vector<std::string> got;
  std::string what;
  try {
    (void)bind_template(test::shipped_techlib(), t);
  } catch (const ConfigError& e) {
    for (const auto& d : e.diagnostics()) got.push_back(d.str());
    what = e.what();
  }
  CHECK(got == expected);
  CHECK(what == expected[0] + "\n" + expected[1] + "\n" + expected[2]);
}

TEST_CASE("apply_overrides rebinds logic, memory and network", "[arch]") {
  const ArchTemplate base = load_template(fixture("minimal"));
  const ArchTemplate t = apply_overrides(base, TechOverrides{"N5", "HBM3", "NDR-x8", ""});
  CHECK(t.logic == "N5");
  CHECK(t.logic_loc.file == "command line");
  CHECK(t.logic_loc.key_path == "--tech");
  CHECK(t.main_memory.technology == "HBM3");
  CHECK(t.main_memory.technology_loc.key_path == "--memory");
  REQUIRE(t.networks.size() == 1);
  CHECK(t.networks[0].technology == "NDR-x8");
  CHECK(t.networks[0].technology_loc.key_path == "--network");
  const ArchSpec s = bind_template(test::shipped_techlib(), t);
  CHECK(s.logic.name == "N5");
  // N5 nominal_frequency "1.55 GHz"; its L2 area_per_bit "0.1323 um^2/bit" = 1.0584e-12 m^2/B
  CHECK(s.logic.nominal_frequency.si() == Approx(1.55e9));
  REQUIRE(s.level_tech.size() == 2);
  CHECK(s.level_tech[1].area_per_byte.si() == Approx(1.0584e-12));
  CHECK(s.memory.name == "HBM3");
  CHECK(s.memory_layers == 8);  // HBM3 default, the template gives no layers
  REQUIRE(s.inter.has_value());
  CHECK(s.inter->name == "NDR-x8");
  // Empty overrides change nothing.
  const ArchTemplate same = apply_overrides(base, TechOverrides{});
  CHECK(same.logic == "N7");
  CHECK(same.main_memory.technology == "HBM2e");
  CHECK(same.networks[0].technology == "NVLink3");
}

TEST_CASE("an unknown override is reported against the command line", "[arch][config-error]") {
  const ArchTemplate t =
      apply_overrides(load_template(fixture("minimal")), TechOverrides{"N55", "", "", ""});
  CHECK(error_of([&] { (void)bind_template(test::shipped_techlib(), t); }) ==
        "command line: error: --tech: unknown logic technology \"N55\" (known: DF-N14, DF-N10, "
        "DF-N7, DF-N5, DF-N3, DF-N2, DF-N1, N12, N10, N7, N5, N4, N3, N2 or N1); did you mean "
        "\"N5\"?");
}

TEST_CASE("a YAML key given twice is rejected", "[arch][config-error]") {
  // budget.power is 400 W on line 23 and 300 W on line 24; yaml-cpp keeps the first silently.
  const std::string msg = load_error("duplicate_key");
  CHECK_THAT(msg, Catch::StartsWith(fixture("duplicate_key") + ":24:3: error: budget.power: "));
  CHECK_THAT(msg, Catch::Contains("duplicate"));
}

TEST_CASE("a network override on a template without a network is an error", "[arch][config-error]") {
  try {
    (void)apply_overrides(load_template(fixture("no_network")), TechOverrides{"", "", "NDR-x8", ""});
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) ==
          "command line: error: --network: template \"minimal\" defines no "
          "network.inter_package to replace");
  }
}

TEST_CASE("scale-out tier and network behavior of shipped templates", "[arch]") {
  const ArchTemplate raw = load_template(source_path("templates/a100.yaml"));
  REQUIRE(raw.scale_out.has_value());
  // The template names its NIC; binding fills what the map leaves out from the library.
  CHECK(raw.scale_out->nic == "HDR200");
  CHECK_FALSE(raw.scale_out->given.bandwidth);
  const ArchTemplate a = bind_template(test::shipped_techlib(), raw).tmpl;
  // DGX A100: HDR 200 Gb/s per GPU = 25 GB/s per direction (techlib nic HDR200).
  CHECK(a.scale_out->bandwidth.si() == Approx(25e9));
  CHECK(a.scale_out->latency.si() == Approx(5e-6));
  CHECK(a.scale_out->topology == Topology::kFatTree);
  CHECK(a.scale_out->oversubscription == 1.0);
  CHECK(a.scale_out->behavior.leaf_size == 32);
  // "a top speed of 190 GB/s" over 8 NICs (NVIDIA/nccl issue 689): 190 / 200.
  CHECK(a.scale_out->behavior.max_utilization == Approx(0.95));
  CHECK(a.scale_out->behavior.half_bandwidth_message.si() == Approx(65536.0));  // 64 KiB
  CHECK(a.scale_out->behavior.bandwidth_congestion == 1.0);
  CHECK(a.scale_out->behavior.latency_congestion == 1.0);
  const NetworkSpec* nv = a.find_network(NetworkTier::kInterPackage);
  REQUIRE(nv != nullptr);
  CHECK(nv->behavior.max_utilization == Approx(0.78));  // 235 of 300 GB/s (NCCL busbw)
  CHECK(nv->behavior.half_bandwidth_message.si() == Approx(65536.0));
  // A GEMM 1.18 -> 2.08 ms beside an NVLink AllGather (NVIDIA/nccl issue 1428): 0.76 s a second
  // where the collective's 234 GB/s is 0.1275 of main memory's 1,835: 5.96 per unit share.
  CHECK(nv->behavior.memory_contention == Approx(5.96));
  CHECK(a.nodes_per_package * a.packages == 8);  // one DGX A100 is one scale-up domain
  // DGX H100: NDR 400 Gb/s per GPU = 50 GB/s; DGX-1: 4 x EDR 100 Gb/s per 8 GPUs = 6.25 GB/s.
  const auto bound = [](const char* file) {
    return bind_template(test::shipped_techlib(), load_template(source_path(file))).tmpl;
  };
  CHECK(bound("templates/h100.yaml").scale_out->bandwidth.si() == Approx(50e9));
  CHECK(bound("templates/h100.yaml").scale_out->behavior.max_utilization == Approx(0.94));
  CHECK(load_template(source_path("templates/v100.yaml")).scale_out->bandwidth.si() ==
        Approx(6.25e9));
  // Absent everywhere else: one scale-up domain, behavior at its defaults.
  const ArchTemplate m = load_template(data_path("templates/minimal.yaml"));
  CHECK_FALSE(m.scale_out.has_value());
  CHECK(m.networks[0].behavior.max_utilization == 1.0);
  CHECK(m.networks[0].behavior.half_bandwidth_message.si() == 0.0);
  CHECK(m.networks[0].behavior.bandwidth_congestion == 1.0);
  CHECK(m.networks[0].behavior.memory_contention == 0.0);
  CHECK(m.system_loc.line == 19);  // the system map's first key
}

TEST_CASE("scale-out and congestion keys parse strictly", "[arch]") {
  std::ifstream in(data_path("templates/minimal.yaml"));
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  const std::string nv = "{technology: NVLink3, topology: switch}\n";
  yaml.replace(yaml.find(nv), nv.size(),
               "{technology: NVLink3, topology: switch, congestion: {bandwidth: 2, latency: 3.5}}\n"
               "  scale_out: {bandwidth: 400 Gb/s, latency: 2 us, topology: fat-tree,\n"
               "              oversubscription: 2, leaf_size: 16, max_utilization: 0.9,\n"
               "              half_bandwidth_message: 256 KiB}\n");
  const ArchTemplate t = read_template(ConfigNode::load_string(yaml, "patched.yaml"));
  CHECK(t.networks[0].behavior.bandwidth_congestion == 2.0);
  CHECK(t.networks[0].behavior.latency_congestion == 3.5);
  REQUIRE(t.scale_out.has_value());
  CHECK(t.scale_out->bandwidth.si() == Approx(50e9));  // 400 Gb/s = 50 GB/s
  CHECK(t.scale_out->latency.si() == Approx(2e-6));
  CHECK(t.scale_out->oversubscription == 2.0);
  CHECK(t.scale_out->behavior.leaf_size == 16);
  CHECK(t.scale_out->behavior.max_utilization == 0.9);
  CHECK(t.scale_out->behavior.half_bandwidth_message.si() == Approx(262144.0));
  CHECK(t.scale_out->loc.line == 18);
}

TEST_CASE("scale-out and congestion errors are exact", "[arch][config-error]") {
  // network.inter_package is line 17 ("  inter_package: {" puts its keys from column 19); a
  // scale_out map inserted after it is line 18 (its keys from column 15). Positions are the
  // offending value's, or the key's when the key itself is the problem.
  const std::string nv = "{technology: NVLink3, topology: switch}\n";
  auto with_nv = [&](const std::string& keys) {
    return patched_error(nv, "{technology: NVLink3, topology: switch, " + keys + "}\n");
  };
  auto with_scale_out = [&](const std::string& map) {
    return patched_error(nv, nv + "  scale_out: " + map + "\n");
  };
  CHECK(with_nv("congestion: {bandwidth: 0.5}") ==
        "patched.yaml:17:82: error: network.inter_package.congestion.bandwidth: expected a "
        "congestion impact factor >= 1, got \"0.5\"");
  CHECK(with_nv("congestion: {latncy: 2}") ==
        "patched.yaml:17:71: error: network.inter_package.congestion.latncy: unknown key; did you "
        "mean \"latency\"?");
  CHECK(with_nv("leaf_size: 16") ==
        "patched.yaml:17:69: error: network.inter_package.leaf_size: only a fat-tree has leaf "
        "switches (topology is \"switch\")");
  CHECK(with_nv("max_utilization: 0") ==
        "patched.yaml:17:75: error: network.inter_package.max_utilization: expected a fraction in "
        "[0.01, 1], got \"0\"");
  CHECK(with_nv("memory_contention: 25") ==
        "patched.yaml:17:77: error: network.inter_package.memory_contention: expected a factor "
        "in [0, 20], got \"25\"");
  CHECK(with_nv("half_bandwidth_message: 64 kB/s") ==
        "patched.yaml:17:82: error: network.inter_package.half_bandwidth_message: expected a size "
        "such as \"80 GiB\", got \"64 kB/s\" (a bandwidth)");
  CHECK(with_scale_out("{latency: 5 us, topology: fat-tree}") ==
        "patched.yaml:18:14: error: network.scale_out.bandwidth: missing required key (expected a "
        "bandwidth such as \"900 GB/s\")");
  CHECK(with_scale_out("{bandwidth: 25 GB/s, latency: -1 us, topology: fat-tree}") ==
        "patched.yaml:18:44: error: network.scale_out.latency: expected a non-negative time, got "
        "\"-1 us\"");
  CHECK(with_scale_out("{bandwidth: 25 GB/s, latency: 5 us, topology: fat-tree, "
                       "oversubscription: 0.5}") ==
        "patched.yaml:18:88: error: network.scale_out.oversubscription: expected a ratio >= 1, "
        "got \"0.5\"");
  CHECK(with_scale_out("{bandwidth: 25 GB/s, latency: 5 us, topology: fat-tre}") ==
        "patched.yaml:18:60: error: network.scale_out.topology: expected one of ring, mesh-2d, "
        "torus-2d, switch, fat-tree, mesh-3d, torus-3d or full-mesh, got \"fat-tre\"; did you mean "
        "\"fat-tree\"?");
  CHECK(with_scale_out("{bandwidth: 25 GB/s, latency: 5 us, topology: switch, technology: HDR-x8}") ==
        "patched.yaml:18:68: error: network.scale_out.technology: unknown key");
  CHECK(with_scale_out("{nic: \"\", topology: fat-tree}") ==
        "patched.yaml:18:20: error: network.scale_out.nic: expected a NIC of the technology "
        "library's nic section, got \"\"");
}

TEST_CASE("a scale-out NIC from the technology library, overridden key by key", "[arch]") {
  // XDR800 (techlib/network.yaml): 100 GB/s, 0.94, 5 us, 160 W; the map's bandwidth wins.
  const ArchSpec s = bind_template(
      test::shipped_techlib(),
      load_template(source_path("templates/h100.yaml"),
                    {ConfigOverride{"network.scale_out.nic", "XDR800", "--set", std::nullopt}}));
  CHECK(s.tmpl.scale_out->bandwidth.si() == Approx(100e9));
  CHECK(s.tmpl.scale_out->behavior.max_utilization == Approx(0.94));
  CHECK(s.tmpl.scale_out->power.si() == Approx(160.0));
  const ArchSpec given = bind_template(
      test::shipped_techlib(),
      load_template(source_path("templates/h100.yaml"),
                    {ConfigOverride{"network.scale_out.nic", "XDR800", "--set", std::nullopt},
                     ConfigOverride{"network.scale_out.bandwidth", "80 GB/s", "--set", std::nullopt}}));
  CHECK(given.tmpl.scale_out->bandwidth.si() == Approx(80e9));
  CHECK(given.tmpl.scale_out->power.si() == Approx(160.0));
  // An unknown NIC: located at the value, the library's names offered.
  std::string err;
  try {
    (void)bind_template(
        test::shipped_techlib(),
        load_template(source_path("templates/h100.yaml"),
                      {ConfigOverride{"network.scale_out.nic", "NDR401",
                                      "--set network.scale_out.nic", std::nullopt}}));
  } catch (const ConfigError& e) {
    err = e.what();
  }
  CHECK(err == "command line: error: --set network.scale_out.nic: unknown scale-out NIC "
               "\"NDR401\" (known: HDR200, NDR400, XDR800 or RoCE400); did you mean \"NDR400\"?");
  // Every shipped NIC binds (techlib/network.yaml's nic section).
  for (const char* n : {"HDR200", "NDR400", "XDR800", "RoCE400"}) {
    INFO(n);
    CHECK(test::shipped_techlib().find_nic(n) != nullptr);
  }
}

TEST_CASE("energy keys: scale-out and node power per device, located errors", "[arch][energy]") {
  // templates/a100.yaml: 60 W of NIC, optics and switch ports; 390 W of node beyond the GPU.
  const ArchTemplate a =
      bind_template(test::shipped_techlib(), load_template(source_path("templates/a100.yaml"))).tmpl;
  REQUIRE(a.scale_out.has_value());
  CHECK(a.scale_out->power.si() == 60.0);  // techlib nic HDR200
  CHECK(a.overhead_power.si() == 390.0);
  // Absent: none (minimal.yaml).
  CHECK(load_template(fixture("minimal")).overhead_power.si() == 0.0);
  // system is line 18 ("  packages: 1" on line 20); a negative power is refused at its value.
  CHECK(patched_error("  packages: 1\n", "  packages: 1\n  overhead_power: -5 W\n") ==
        "patched.yaml:21:19: error: system.overhead_power: expected a non-negative power, got "
        "\"-5 W\"");
  // A cost section (issue 16): the A100's, and errors at the key.
  REQUIRE(a.cost.has_value());
  CHECK(a.cost->amortization.si() == Approx(4.0 * 365.25 * 86400.0));  // "4 yr"
  CHECK(a.cost->pue == 1.2);
  CHECK(a.cost->system_usd == 10000.0);
  CHECK_FALSE(load_template(fixture("minimal")).cost.has_value());
  CHECK(patched_error("  packages: 1\n", "  packages: 1\ncost: {amortization: 4 yr, pue: 0.9}\n") ==
        "patched.yaml:21:33: error: cost.pue: expected a power usage effectiveness >= 1, got "
        "\"0.9\"");
  CHECK(patched_error("  packages: 1\n", "  packages: 1\ncost: {pue: 1.2}\n") ==
        "patched.yaml:21:7: error: cost.amortization: missing required key (expected a time such "
        "as \"1.5 us\")");
  const std::string nv = "{technology: NVLink3, topology: switch}\n";
  CHECK(patched_error(nv, nv + "  scale_out: {bandwidth: 25 GB/s, latency: 5 us, topology: "
                               "fat-tree, power: -1 W}\n") ==
        "patched.yaml:18:77: error: network.scale_out.power: expected a non-negative power, got "
        "\"-1 W\"");
  CHECK(patched_error("  packages: 1\n", "  packages: 1\n  overhead_power: 5 GB/s\n") ==
        "patched.yaml:21:19: error: system.overhead_power: expected a power such as \"300 W\", "
        "got \"5 GB/s\" (a bandwidth)");
}

TEST_CASE("the techlib key resolves against the template's folder", "[arch]") {
  const auto with_key = [](const std::string& key, const std::string& file) {
    std::ifstream in(fixture("minimal"));
    std::stringstream text;
    text << in.rdbuf();
    return read_template(ConfigNode::load_string("techlib: " + key + "\n" + text.str(), file));
  };
  CHECK_FALSE(load_template(fixture("minimal")).techlib.has_value());
  const ArchTemplate rel = with_key("../techlib", "/work/x/templates/t.yaml");
  CHECK(rel.techlib == "/work/x/techlib");
  CHECK(rel.techlib_loc.line == 1);
  CHECK(rel.techlib_loc.col == 10);
  CHECK(with_key("lib", "t.yaml").techlib == "lib");  // a template in the working directory
  CHECK(with_key("/opt/lib", "/work/t.yaml").techlib == "/opt/lib");
  CHECK(error_of([&] { (void)with_key("''", "t.yaml"); }) ==
        "t.yaml:1:10: error: techlib: expected a directory path, got \"\"");
  CHECK(error_of([&] { (void)with_key("[a, b]", "t.yaml"); }) ==
        "t.yaml:1:10: error: techlib: expected a string, got a list");
}

TEST_CASE("the power limit and the energy per FLOP on real operands are range-checked",
          "[arch][config-error]") {
  // budget.power_limit: a power (engine/arch/arch_template.hpp), absent = budget.power.
  CHECK(load_template(fixture("minimal")).budget.power_limit.si() == 0.0);
  CHECK(patched_error("  power: 400 W\n", "  power: 400 W\n  power_limit: -5 W\n") ==
        "patched.yaml:25:16: error: budget.power_limit: expected a positive power, got \"-5 W\"");
  // core.flop_energy_factor and fp8_flop_energy_factor: factors in [1, 10].
  CHECK(patched_error("  dataflow: best\n", "  dataflow: best\n  flop_energy_factor: 0.5\n") ==
        "patched.yaml:9:23: error: core.flop_energy_factor: expected a factor in [1, 10] (energy "
        "per FLOP on real operands over the provisioned), got \"0.5\"");
  CHECK(patched_error("  dataflow: best\n", "  dataflow: best\n  fp8_flop_energy_factor: 11\n") ==
        "patched.yaml:9:27: error: core.fp8_flop_energy_factor: expected a factor in [1, 10] "
        "(energy per FLOP on real operands over the provisioned), got \"11\"");
  CHECK(patched_error("  dataflow: best\n", "  dataflow: best\n  flop_energy_factor: .nan\n") ==
        "patched.yaml:9:23: error: core.flop_energy_factor: expected a number, got \".nan\"");
}
