#include "engine/arch/template_loader.hpp"

#include <cmath>
#include <filesystem>

#include "engine/config/enum_read.hpp"
#include "engine/config/node.hpp"
#include "engine/core/text.hpp"

namespace pathfinder {
namespace {

double read_fraction(const ConfigNode& n, std::string_view key) {
  const double v = n.get_or<double>(key, 0.0);
  if (!(v >= 0.0 && v <= 1.0)) {
    throw n.error_at(key, "expected a fraction in [0, 1], got " + n.quoted(key));
  }
  return v;
}

// An optional derate in (0, 1], 1 when absent.
// A derating factor: at least 1% (below, a typo or an attack that makes every time absurd).
double read_derate(const ConfigNode& n, std::string_view key) {
  const double v = n.get_or<double>(key, 1.0);
  if (!(v >= 0.01 && v <= 1.0)) {
    throw n.error_at(key, "expected a fraction in [0.01, 1], got " + n.quoted(key));
  }
  return v;
}

CoreSpec read_core(const ConfigNode& n) {
  CoreSpec c;
  const auto array = n.items("array");
  if (array.size() != 2) {
    throw n.error_at("array", "expected [rows, cols] of the MCU systolic array, got a list of " +
                                  std::to_string(array.size()));
  }
  c.array_rows = array[0].as<int>();
  c.array_cols = array[1].as<int>();
  if (c.array_rows <= 0 || c.array_cols <= 0) {
    throw n.error_at("array", "expected positive array dimensions");
  }
  c.dataflow = read_enum<Dataflow>(n, "dataflow", parse_dataflow, valid_dataflows, Dataflow::kBest);
  c.max_utilization = read_derate(n, "max_utilization");
  c.mcus_per_bundle = n.require_positive<int>("mcus_per_bundle");
  c.enabled_bundle_fraction = read_derate(n, "enabled_bundle_fraction");
  c.mcu_power_ratio = read_derate(n, "mcu_power_ratio");
  c.vector_throughput_ratio = read_derate(n, "vector_throughput_ratio");
  c.fp8_throughput_ratio = n.get_or<double>("fp8_throughput_ratio", 1.0);
  if (!(c.fp8_throughput_ratio >= 1.0 && c.fp8_throughput_ratio <= 8.0)) {
    throw n.error_at("fp8_throughput_ratio", "expected a ratio in [1, 8] (FP8 over FP16 dense "
                                             "throughput), got " + n.quoted("fp8_throughput_ratio"));
  }
  c.fp4_throughput_ratio = n.get_or<double>("fp4_throughput_ratio", 0.0);
  if (!(c.fp4_throughput_ratio == 0.0 ||
        (c.fp4_throughput_ratio >= c.fp8_throughput_ratio && c.fp4_throughput_ratio <= 16.0))) {
    throw n.error_at("fp4_throughput_ratio",
                     "expected 0 (no FP4 units) or a ratio from fp8_throughput_ratio to 16 (FP4 "
                     "over FP16 dense throughput), got " + n.quoted("fp4_throughput_ratio"));
  }
  c.block_scaled_mma = n.get_or<bool>("block_scaled_mma", false);
  c.sustained_fraction = read_derate(n, "sustained_fraction");
  c.device_variation = n.get_or<double>("device_variation", 0.0);
  if (!(c.device_variation >= 0.0 && c.device_variation <= 0.2)) {
    throw n.error_at("device_variation",
                     "expected a relative standard deviation in [0, 0.2], got " +
                         n.quoted("device_variation"));
  }
  c.sustained_devices =
      n.has("sustained_devices") ? n.require_positive<int>("sustained_devices") : 1;
  if (c.sustained_devices > 1000000) {
    throw n.error_at("sustained_devices", "expected at most 1000000 devices, got " +
                                              n.quoted("sustained_devices"));
  }
  const auto energy_factor = [&](std::string_view key, double fallback) {
    const double v = n.get_or<double>(key, fallback);
    if (!(v >= 1.0 && v <= 10.0)) {
      throw n.error_at(key, "expected a factor in [1, 10] (energy per FLOP on real operands "
                            "over the provisioned), got " + n.quoted(key));
    }
    return v;
  };
  c.flop_energy_factor = energy_factor("flop_energy_factor", 1.0);
  c.fp8_flop_energy_factor = energy_factor("fp8_flop_energy_factor", c.flop_energy_factor);
  c.fp8_sustained_fraction = n.has("fp8_sustained_fraction")
                                 ? read_derate(n, "fp8_sustained_fraction")
                                 : c.sustained_fraction;
  c.fp4_flop_energy_factor = energy_factor("fp4_flop_energy_factor", c.fp8_flop_energy_factor);
  c.fp4_sustained_fraction = n.has("fp4_sustained_fraction")
                                 ? read_derate(n, "fp4_sustained_fraction")
                                 : c.fp8_sustained_fraction;
  c.warp_mma_peak_fraction = read_derate(n, "warp_mma_peak_fraction");
  c.warp_mma_fraction = read_derate(n, "warp_mma_fraction");
  if (c.warp_mma_fraction > c.warp_mma_peak_fraction) {
    throw n.error_at("warp_mma_fraction",
                     "expected at most warp_mma_peak_fraction (" +
                         n.quoted("warp_mma_peak_fraction") + "), got " +
                         n.quoted("warp_mma_fraction"));
  }
  c.attention_backward_fraction = read_derate(n, "attention_backward_fraction");
  c.attention_fraction = read_derate(n, "attention_fraction");
  c.cudnn_causal_fraction = read_derate(n, "cudnn_causal_fraction");
  c.cudnn_causal_backward_fraction = read_derate(n, "cudnn_causal_backward_fraction");
  c.warp_mma_backward_fraction = read_derate(n, "warp_mma_backward_fraction");
  c.attention_overlap = n.get_or<bool>("attention_overlap", false);
  c.fp8_promoted_accumulation_fraction = read_derate(n, "fp8_promoted_accumulation_fraction");
  n.finish();
  return c;
}

// An optional factor >= 1, 1 when absent (oversubscription, congestion impact).
double read_factor(const ConfigNode& n, std::string_view key, std::string_view what) {
  const double v = n.get_or<double>(key, 1.0);
  if (!(v >= 1.0)) {
    throw n.error_at(key, "expected " + std::string(what) + " >= 1, got " + n.quoted(key));
  }
  return v;
}

// Keys every network section may carry beside its link (templates/README.md).
LinkBehavior read_behavior(const ConfigNode& n, Topology topology) {
  LinkBehavior b;
  b.max_utilization = read_derate(n, "max_utilization");
  b.half_bandwidth_message = n.get_non_negative_or<Bytes>("half_bandwidth_message", Bytes{});
  b.memory_contention = n.get_or<double>("memory_contention", 0.0);
  if (!(b.memory_contention >= 0.0 && b.memory_contention <= 20.0)) {
    throw n.error_at("memory_contention",
                     "expected a factor in [0, 20], got " + n.quoted("memory_contention"));
  }
  if (auto c = n.optional_child("congestion")) {
    b.bandwidth_congestion = read_factor(*c, "bandwidth", "a congestion impact factor");
    b.latency_congestion = read_factor(*c, "latency", "a congestion impact factor");
    c->finish();
  }
  if (n.has("leaf_size")) {
    if (topology != Topology::kFatTree) {
      throw n.error_at("leaf_size", "only a fat-tree has leaf switches (topology is \"" +
                                        std::string(to_string(topology)) + "\")");
    }
    b.leaf_size = n.require_positive<int>("leaf_size");
  }
  return b;
}

NetworkSpec read_network(NetworkTier tier, const ConfigNode& n) {
  NetworkSpec s;
  s.tier = tier;
  s.technology = n.require<std::string>("technology");
  s.technology_loc = n.loc_of("technology");
  s.topology = read_enum<Topology>(n, "topology", parse_topology, valid_topologies);
  s.oversubscription = read_factor(n, "oversubscription", "a ratio");
  s.behavior = read_behavior(n, s.topology);
  n.finish();
  return s;
}

ScaleOutSpec read_scale_out(const ConfigNode& n) {
  ScaleOutSpec s;
  s.loc = n.loc();
  if (n.has("nic")) {
    s.nic = n.require<std::string>("nic");
    s.nic_loc = n.loc_of("nic");
    if (s.nic.empty()) {
      throw n.error_at("nic", "expected a NIC of the technology library's nic section, got \"\"");
    }
  }
  // A named NIC supplies what is left out; without one, bandwidth and latency are required.
  const bool named = !s.nic.empty();
  s.given = {n.has("bandwidth"), n.has("latency"), n.has("max_utilization"), n.has("power")};
  if (!named || s.given.bandwidth) s.bandwidth = n.require_positive<Bandwidth>("bandwidth");
  if (!named || s.given.latency) {
    s.latency = n.require<Time>("latency");
    if (s.latency.si() < 0.0) {
      throw n.error_at("latency", "expected a non-negative time, got " + n.quoted("latency"));
    }
  }
  s.topology = read_enum<Topology>(n, "topology", parse_topology, valid_topologies);
  s.oversubscription = read_factor(n, "oversubscription", "a ratio");
  s.behavior = read_behavior(n, s.topology);
  s.power = n.get_non_negative_or<Power>("power", Power{});
  n.finish();
  return s;
}

CostSpec read_cost(const ConfigNode& n) {
  CostSpec c;
  c.loc = n.loc();
  c.dies = n.optional_positive<int>("dies").value_or(1);
  c.packaging_usd = n.get_non_negative_or<double>("packaging_usd", 0.0);
  c.markup = n.optional_positive<double>("markup").value_or(1.0);
  c.system_usd = n.get_non_negative_or<double>("system_usd", 0.0);
  c.usd_per_kwh = n.get_non_negative_or<double>("usd_per_kwh", 0.0);
  c.pue = n.optional_positive<double>("pue").value_or(1.0);
  if (c.pue < 1.0) throw n.error_at("pue", "expected a power usage effectiveness >= 1, got " + n.quoted("pue"));
  c.amortization = n.require_positive<Time>("amortization");
  n.finish();
  return c;
}

HostSpec read_host(const ConfigNode& n) {
  HostSpec h;
  // Framework costs belong to the software stack, not the hardware (templates/software/).
  for (const char* key : {"dispatch", "training_dispatch", "iteration"}) {
    if (n.has(key)) {
      throw n.error_at(key, "expected hardware only here; host." + std::string(key) +
                                " is a software-stack cost: set it in a software profile "
                                "(templates/software/*.yaml, --software), got " +
                                n.quoted(key));
    }
  }
  h.launch_latency = n.get_non_negative_or<Time>("launch_latency", Time{});
  h.synchronize = n.get_non_negative_or<Time>("synchronize", Time{});
  h.host_to_device = n.get_non_negative_or<Bandwidth>("host_to_device", Bandwidth{});
  n.finish();
  return h;
}

}  // namespace

ArchTemplate read_template(const ConfigNode& root) {
  ArchTemplate t;
  t.file = root.file();
  t.name = root.require<std::string>("name");
  (void)root.optional<std::string>("description");
  if (const auto lib = root.optional<std::string>("techlib")) {
    if (lib->empty()) throw root.error_at("techlib", "expected a directory path, got \"\"");
    const std::filesystem::path p(*lib);
    t.techlib = (p.is_absolute() ? p : std::filesystem::path(t.file).parent_path() / p)
                    .lexically_normal()
                    .string();
    t.techlib_loc = root.loc_of("techlib");
  }
  const ConfigNode tech = root.child("technology");
  t.logic = tech.require<std::string>("logic");
  t.logic_loc = tech.loc_of("logic");
  tech.finish();

  t.core = read_core(root.child("core"));

  const ConfigNode memory = root.child("memory");
  for (const auto& ln : memory.items("levels")) {
    if (t.levels.size() == static_cast<std::size_t>(kMaxOnChipLevels)) {
      throw ln.error_at("name", "expected at most " + std::to_string(kMaxOnChipLevels) +
                                    " on-chip levels, got more");
    }
    MemoryLevelSpec l;
    l.name = ln.require<std::string>("name");
    l.technology = ln.require<std::string>("technology");
    l.technology_loc = ln.loc_of("technology");
    l.scope = read_enum<Scope>(ln, "scope", parse_scope, valid_scopes);
    l.bank_capacity = ln.optional_positive<Bytes>("bank_capacity");
    ln.finish();
    for (const auto& prev : t.levels) {
      if (prev.name == l.name) throw ln.error_at("name", "duplicate memory level \"" + l.name + "\"");
    }
    if (l.name == "core" || l.name == "main_memory" || l.name == "intra_package" ||
        l.name == "inter_package") {
      throw ln.error_at("name", "expected a level name other than the reserved \"" + l.name + "\"");
    }
    t.levels.push_back(std::move(l));
  }
  if (t.levels.empty()) throw memory.error_at("levels", "expected at least one on-chip level");
  const ConfigNode main = memory.child("main");
  t.main_memory.technology = main.require<std::string>("technology");
  t.main_memory.technology_loc = main.loc_of("technology");
  t.main_memory.layers = main.optional_positive<int>("layers");
  t.main_memory.max_utilization = read_derate(main, "max_utilization");
  t.main_memory.stream_utilization =
      main.has("stream_utilization") ? read_derate(main, "stream_utilization")
                                     : t.main_memory.max_utilization;
  main.finish();
  memory.finish();

  if (auto net = root.optional_child("network")) {
    if (auto intra = net->optional_child("intra_package")) {
      t.networks.push_back(read_network(NetworkTier::kIntraPackage, *intra));
    }
    if (auto inter = net->optional_child("inter_package")) {
      t.networks.push_back(read_network(NetworkTier::kInterPackage, *inter));
    }
    if (auto out = net->optional_child("scale_out")) t.scale_out = read_scale_out(*out);
    net->finish();
  }

  if (auto host = root.optional_child("host")) t.host = read_host(*host);
  if (auto cost = root.optional_child("cost")) t.cost = read_cost(*cost);

  const ConfigNode sys = root.child("system");
  t.system_loc = sys.loc();
  t.nodes_per_package = sys.require_positive<int>("nodes_per_package");
  t.packages = sys.require_positive<int>("packages");
  t.overhead_power = sys.get_non_negative_or<Power>("overhead_power", Power{});
  sys.finish();

  const ConfigNode b = root.child("budget");
  t.budget_loc = b.loc_of("node_area");
  t.budget.node_area = b.require_positive<Area>("node_area");
  t.budget.chip_area = b.require_positive<Area>("chip_area");
  t.budget.power = b.require_positive<Power>("power");
  t.budget.power_limit = b.optional_positive<Power>("power_limit").value_or(Power{});
  // Paper §4.3: perimeter inferred from area (a square die) unless given.
  t.budget.perimeter = b.optional_positive<Length>("perimeter")
                           .value_or(4.0 * sqrt(t.budget.chip_area));
  b.finish();

  const ConfigNode split = root.child("split");
  t.split_loc = split.loc();
  const std::vector<std::string> names = component_names(t);
  for (const auto& [name, node] : split.entries()) {
    bool known = false;
    for (const auto& n : names) known = known || (n == name);
    if (!known) {
      throw ConfigError(Diagnostic{split.loc_of(name), "unknown component (expected one of " +
                                                           join_alternatives(names) + ")" +
                                                           did_you_mean(name, names)});
    }
  }
  for (const auto& name : names) {
    ComponentShare s;
    s.name = name;
    const bool is_network = (name == "intra_package" || name == "inter_package");
    const bool present = split.has(name);
    if (!present) {
      if (!is_network) {
        throw split.error_at(name, "missing required key (expected {area: …, power: …})");
      }
      s.loc = split.loc();
      t.split.push_back(s);
      continue;
    }
    const ConfigNode c = split.child(name);
    s.loc = c.loc();
    s.area = read_fraction(c, "area");
    s.power = read_fraction(c, "power");
    if (name == "main_memory" || is_network) s.perimeter = read_fraction(c, "perimeter");
    c.finish();
    t.split.push_back(s);
  }
  split.finish();
  root.finish();
  return t;
}

ArchTemplate load_template(const std::string& path, const std::vector<ConfigOverride>& overrides) {
  const ConfigNode root = ConfigNode::load_file(path);
  return read_template(overrides.empty() ? root : root.with_overrides(overrides));
}

bool is_template_section(std::string_view key) {
  for (const char* s : {"technology", "core", "memory", "network", "system", "host", "budget",
                        "split", "techlib", "cost"}) {
    if (key == s) return true;
  }
  return false;
}

ArchTemplate apply_overrides(ArchTemplate t, const TechOverrides& o) {
  const SourceLoc cli{"command line", 0, 0, ""};
  if (!o.nic.empty()) {
    SourceLoc loc = cli;
    loc.key_path = "--nic";
    if (!t.scale_out) {
      throw ConfigError(Diagnostic{loc, "template \"" + t.name +
                                            "\" defines no network.scale_out to replace"});
    }
    // Another NIC: all of its figures, not only those the template left to its own.
    t.scale_out->nic = o.nic;
    t.scale_out->nic_loc = loc;
    t.scale_out->given = {false, false, false, false};
  }
  if (!o.logic.empty()) {
    t.logic = o.logic;
    t.logic_loc = cli;
    t.logic_loc.key_path = "--tech";
  }
  if (!o.memory.empty()) {
    t.main_memory.technology = o.memory;
    t.main_memory.technology_loc = cli;
    t.main_memory.technology_loc.key_path = "--memory";
  }
  if (!o.network.empty()) {
    if (t.find_network(NetworkTier::kInterPackage) == nullptr) {
      SourceLoc loc = cli;
      loc.key_path = "--network";
      throw ConfigError(Diagnostic{loc, "template \"" + t.name +
                                            "\" defines no network.inter_package to replace"});
    }
    for (auto& n : t.networks) {
      if (n.tier != NetworkTier::kInterPackage) continue;
      n.technology = o.network;
      n.technology_loc = cli;
      n.technology_loc.key_path = "--network";
    }
  }
  return t;
}

std::vector<Diagnostic> check_template(const ArchTemplate& t, const TechLibrary& lib) {
  std::vector<Diagnostic> out;
  auto unknown = [&](const SourceLoc& loc, const std::string& what, const std::string& name,
                     const std::vector<std::string>& valid) {
    out.push_back(Diagnostic{loc, "unknown " + what + " \"" + name + "\" (known: " +
                                      join_alternatives(valid) + ")" + did_you_mean(name, valid)});
  };
  const LogicNode* logic = lib.find_logic(t.logic);
  if (logic == nullptr) unknown(t.logic_loc, "logic technology", t.logic, lib.logic_names());
  for (const auto& l : t.levels) {
    if (logic != nullptr && logic->find_sram(l.technology) == nullptr) {
      std::vector<std::string> valid;
      for (const auto& s : logic->sram) valid.push_back(s.name);
      unknown(l.technology_loc, "SRAM macro of " + logic->name, l.technology, valid);
    }
  }
  if (lib.find_memory(t.main_memory.technology) == nullptr) {
    unknown(t.main_memory.technology_loc, "memory technology", t.main_memory.technology,
            lib.memory_names());
  }
  for (const auto& n : t.networks) {
    if (lib.find_network(n.technology) == nullptr) {
      unknown(n.technology_loc, "network technology", n.technology, lib.network_names());
    }
  }
  if (t.scale_out && !t.scale_out->nic.empty() && lib.find_nic(t.scale_out->nic) == nullptr) {
    unknown(t.scale_out->nic_loc, "scale-out NIC", t.scale_out->nic, lib.nic_names());
  }
  // Paper §7: sum of fractions <= 1 per budget.
  double area = 0.0, power = 0.0, perimeter = 0.0;
  for (const auto& s : t.split) {
    area += s.area;
    power += s.power;
    perimeter += s.perimeter;
  }
  auto over = [&](const char* what, double sum) {
    if (sum > 1.0 + 1e-9) {
      SourceLoc loc = t.split_loc;
      loc.key_path = "split";
      out.push_back(Diagnostic{loc, std::string("expected ") + what +
                                        " fractions summing to at most 1, got " +
                                        std::to_string(sum)});
    }
  };
  over("area", area);
  over("power", power);
  over("perimeter", perimeter);
  for (const auto& s : t.split) {
    const bool is_network = (s.name == "intra_package" || s.name == "inter_package");
    if (!is_network || (s.area == 0.0 && s.power == 0.0 && s.perimeter == 0.0)) continue;
    const NetworkTier tier =
        s.name == "intra_package" ? NetworkTier::kIntraPackage : NetworkTier::kInterPackage;
    if (t.find_network(tier) == nullptr) {
      SourceLoc loc = s.loc;
      loc.key_path = "split." + s.name;
      out.push_back(Diagnostic{loc, "budget given to a network the template does not define "
                                    "(add network." + s.name + ")"});
    }
  }
  if (!(t.budget.chip_area <= t.budget.node_area)) {
    out.push_back(Diagnostic{t.budget_loc,
                             "expected node_area >= chip_area (the package holds the die)"});
  }
  return out;
}

}  // namespace pathfinder
