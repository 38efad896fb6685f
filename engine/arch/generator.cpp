#include "engine/arch/generator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pathfinder {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// floor() that forgives the last bits of rounding: 128 x 0.84375 is 108, not 107.
int whole(double x) {
  if (!(x > 0.0)) return 0;
  const double f = std::floor(x + 1e-9);
  return f > 2e9 ? 2000000000 : static_cast<int>(f);
}

BudgetUse budget_of(const ArchTemplate& t, const ResourceSplit& s, int i) {
  BudgetUse u;
  u.area_budget = s.area(i) * t.budget.chip_area;
  u.power_budget = s.power(i) * t.budget.power;
  u.perimeter_budget = s.perimeter(i) * t.budget.perimeter;
  return u;
}

// Core: MCUs that fit the area, whole bundles, harvested bundles off; then voltage-frequency
// scaling to the power budget; at Vmin, bundles are dropped until the power fits (paper §4.4.1).
CoreStats make_core(const ArchSpec& spec, const ResourceSplit& split) {
  const ArchTemplate& t = spec.tmpl;
  const LogicNode& n = spec.logic;
  CoreStats c;
  c.use = budget_of(t, split, ComponentIndex::core());
  c.flop_per_cycle_per_mcu = t.core.flop_per_cycle();
  // The library's reference MCU scales linearly in area and power with its FMA count.
  const double size = c.flop_per_cycle_per_mcu / n.flop_per_cycle;
  const Area mcu_area = n.mcu_area * size;
  const Power mcu_power = n.mcu_power * size * t.core.mcu_power_ratio;
  const int per_bundle = t.core.mcus_per_bundle;
  c.bundles_built = whole(c.use.area_budget / mcu_area) / per_bundle;
  c.bundles = whole(c.bundles_built * t.core.enabled_bundle_fraction);
  c.use.area_used = mcu_area * static_cast<double>(c.bundles_built * per_bundle);
  c.count_binding = CountBinding::kArea;
  if (c.bundles == 0) return c;

  const double max_ratio =
      n.max_frequency ? *n.max_frequency / n.nominal_frequency : kInf;
  const Power nominal = mcu_power * static_cast<double>(c.bundles * per_bundle);
  VfPoint p = scale_to_power(n.vf, c.use.power_budget / nominal, max_ratio);
  if (p.binding == VfBinding::kMinVoltage) {
    // Paper §4.4.1: drop bundles until the rest fit the budget at Vmin, then let the survivors
    // spend the whole budget (their voltage rises back above Vmin).
    const double vmin_ratio = power_ratio_at(n.vf, n.vf.minimum.si());
    const Power bundle_power = mcu_power * static_cast<double>(per_bundle) * vmin_ratio;
    c.bundles = std::min(c.bundles, whole(c.use.power_budget / bundle_power));
    c.count_binding = CountBinding::kPowerAtMinVoltage;
    if (c.bundles == 0) return c;
    const Power survivors = mcu_power * static_cast<double>(c.bundles * per_bundle);
    p = scale_to_power(n.vf, c.use.power_budget / survivors, max_ratio);
  }
  c.mcus = c.bundles * per_bundle;
  c.voltage = volts(p.voltage_v);
  c.frequency = n.nominal_frequency * p.rate_ratio;
  c.frequency_binding = p.binding;
  c.peak = Throughput::from_si(c.mcus * c.flop_per_cycle_per_mcu * c.frequency.si());
  c.effective = c.peak * t.core.max_utilization;
  c.vector_peak = c.peak * t.core.vector_throughput_ratio;
  c.fp8_peak = c.peak * t.core.fp8_throughput_ratio;
  c.fp4_peak = c.peak * t.core.fp4_throughput_ratio;
  c.use.power_used = mcu_power * static_cast<double>(c.mcus) * p.power_ratio;
  return c;
}

// On-chip SRAM level: banks with periphery and controller, plus a crossbar port to every client
// under the level's scope, fill the area (paper §4.4.2); static power comes first, the rest of
// the power is dynamic and sets the bandwidth (eqs. 2-3).
LevelStats make_level(const ArchSpec& spec, const ResourceSplit& split, const CoreStats& core,
                      int li) {
  const ArchTemplate& t = spec.tmpl;
  const MemoryLevelSpec& ls = t.levels[li];
  const SramTech& m = spec.level_tech[li];
  LevelStats l;
  l.name = ls.name;
  l.technology = m.name;
  l.scope = ls.scope;
  l.latency = m.latency;
  l.use = budget_of(t, split, ComponentIndex{static_cast<int>(t.levels.size())}.level(li));
  const int per_bundle = t.core.mcus_per_bundle;
  int built = 1;
  switch (ls.scope) {
    case Scope::kGlobal:
      built = 1;
      l.instances = 1;
      l.clients_per_instance = core.bundles_built;
      break;
    case Scope::kBundle:
      built = core.bundles_built;
      l.instances = core.bundles;
      l.clients_per_instance = per_bundle;
      break;
    case Scope::kMcu:
      built = core.bundles_built * per_bundle;
      l.instances = core.mcus;
      l.clients_per_instance = 1;
      break;
  }
  if (built == 0 || l.instances == 0) {
    l.count_binding = CountBinding::kArea;
    return l;
  }
  const Area array = m.bank_capacity * m.area_per_byte / (1.0 - m.periphery_overhead);
  const Area per_bank =
      array + m.controller_area + m.crossbar_area_per_port * static_cast<double>(l.clients_per_instance);
  int banks = whole((l.use.area_budget / static_cast<double>(built)) / per_bank);
  l.count_binding = CountBinding::kArea;
  const Power static_per_bank = m.static_power * m.bank_capacity + m.controller_power;
  if (static_per_bank.si() > 0.0) {
    const int by_static =
        whole(l.use.power_budget / (static_per_bank * static_cast<double>(l.instances)));
    if (by_static < banks) {
      banks = by_static;
      l.count_binding = CountBinding::kStaticPower;
    }
  }
  l.banks_per_instance = banks;
  const double enabled_banks = static_cast<double>(banks) * l.instances;
  const double built_banks = static_cast<double>(banks) * built;
  l.capacity_per_instance = m.bank_capacity * static_cast<double>(banks);
  l.capacity = m.bank_capacity * enabled_banks;
  l.bank_area = array * built_banks;
  l.controller_area = m.controller_area * built_banks;
  l.crossbar_area = m.crossbar_area_per_port * (built_banks * l.clients_per_instance);
  l.use.area_used = l.bank_area + l.controller_area + l.crossbar_area;
  l.static_power = static_per_bank * enabled_banks;
  l.dynamic_power = max(l.use.power_budget - l.static_power, Power{});
  l.bandwidth = banks > 0 ? l.dynamic_power / m.dynamic_energy : Bandwidth{};
  l.use.power_used = l.static_power + l.dynamic_power;
  return l;
}

// Main memory: devices = min(package room, controller+PHY area, perimeter links) (paper eq. 4);
// link rate from voltage-frequency scaling of the interface to the power left after static
// power, capped at the standard's maximum pin rate.
MainMemoryStats make_main_memory(const ArchSpec& spec, const ResourceSplit& split) {
  const ArchTemplate& t = spec.tmpl;
  const MemoryTech& m = spec.memory;
  MainMemoryStats s;
  s.technology = m.name;
  s.latency = m.latency;
  s.use = budget_of(t, split, ComponentIndex{static_cast<int>(t.levels.size())}.main_memory());
  s.devices_by_package = whole((t.budget.node_area - t.budget.chip_area) / m.device_area);
  s.devices_by_controller = whole(s.use.area_budget / (m.controller_area + m.phy_area));
  s.devices_by_perimeter =
      whole(s.use.perimeter_budget * m.links_per_mm / static_cast<double>(m.links_per_device));
  s.devices = s.devices_by_controller;
  s.count_binding = CountBinding::kControllerArea;
  if (s.devices_by_package < s.devices) {
    s.devices = s.devices_by_package;
    s.count_binding = CountBinding::kPackageArea;
  }
  if (s.devices_by_perimeter < s.devices) {
    s.devices = s.devices_by_perimeter;
    s.count_binding = CountBinding::kPerimeter;
  }
  const Bytes per_device = m.capacity_per_layer * static_cast<double>(spec.memory_layers);
  const Power static_per_device = m.static_power * per_device;
  if (static_per_device.si() > 0.0) {
    const int by_static = whole(s.use.power_budget / static_per_device);
    if (by_static < s.devices) {
      s.devices = by_static;
      s.count_binding = CountBinding::kStaticPower;
    }
  }
  s.links = s.devices * m.links_per_device;
  s.capacity = per_device * static_cast<double>(s.devices);
  s.static_power = static_per_device * static_cast<double>(s.devices);
  s.use.area_used = (m.controller_area + m.phy_area) * static_cast<double>(s.devices);
  s.use.perimeter_used = static_cast<double>(s.links) / m.links_per_mm;
  if (s.devices == 0) {
    s.use.power_used = s.static_power;
    return s;
  }
  const Power nominal = (m.energy * m.nominal_pin_rate) * static_cast<double>(s.links);
  const VfPoint p = scale_to_power(m.vf, (s.use.power_budget - s.static_power) / nominal,
                                   m.max_pin_rate / m.nominal_pin_rate);
  s.voltage = volts(p.voltage_v);
  s.pin_rate = m.nominal_pin_rate * p.rate_ratio;
  s.rate_binding = p.binding;
  s.bandwidth = s.pin_rate * static_cast<double>(s.links);
  s.effective_bandwidth = s.bandwidth * t.main_memory.max_utilization;
  s.dynamic_power = nominal * p.power_ratio;
  s.use.power_used = s.static_power + s.dynamic_power;
  return s;
}

// Network: lanes that fit the area, the perimeter and the technology's lane count; lane rate
// from voltage-frequency scaling to the power budget, capped at the standard's rate (§4.4.4).
NetworkStats make_network(const ArchSpec& spec, const ResourceSplit& split, const NetworkSpec& ns,
                          const NetworkTech& tech, int index) {
  const ArchTemplate& t = spec.tmpl;
  NetworkStats s;
  s.tier = ns.tier;
  s.technology = tech.name;
  s.topology = ns.topology;
  s.latency = tech.latency;
  s.use = budget_of(t, split, index);
  const int by_area = whole(s.use.area_budget / tech.area_per_lane);
  const int by_perimeter = whole(s.use.perimeter_budget * tech.lanes_per_mm);
  s.lanes = by_area;
  s.count_binding = CountBinding::kArea;
  if (by_perimeter < s.lanes) {
    s.lanes = by_perimeter;
    s.count_binding = CountBinding::kPerimeter;
  }
  if (tech.max_lanes && *tech.max_lanes < s.lanes) {
    s.lanes = *tech.max_lanes;
    s.count_binding = CountBinding::kMaxLanes;
  }
  if (s.use.area_budget.si() == 0.0 && s.use.perimeter_budget.si() == 0.0) {
    s.count_binding = CountBinding::kUnused;
  }
  s.use.area_used = tech.area_per_lane * static_cast<double>(s.lanes);
  s.use.perimeter_used = static_cast<double>(s.lanes) / tech.lanes_per_mm;
  if (s.lanes == 0) return s;
  const Power nominal = (tech.energy * tech.nominal_lane_rate) * static_cast<double>(s.lanes);
  const VfPoint p = scale_to_power(tech.vf, s.use.power_budget / nominal,
                                   tech.max_lane_rate / tech.nominal_lane_rate);
  s.voltage = volts(p.voltage_v);
  s.lane_rate = tech.nominal_lane_rate * p.rate_ratio;
  s.rate_binding = p.binding;
  s.bandwidth = s.lane_rate * static_cast<double>(s.lanes);
  s.per_direction = s.bandwidth / 2.0;
  s.power = nominal * p.power_ratio;
  s.use.power_used = s.power;
  return s;
}

void add_use(BudgetUse& total, const BudgetUse& u) {
  total.area_budget += u.area_budget;
  total.area_used += u.area_used;
  total.power_budget += u.power_budget;
  total.power_used += u.power_used;
  total.perimeter_budget += u.perimeter_budget;
  total.perimeter_used += u.perimeter_used;
}

std::string infeasibility(const MicroArch& a, const ArchTemplate& t) {
  if (a.core.mcus == 0) {
    return a.core.bundles_built == 0 ? "core: no bundle of MCUs fits the core area budget"
                                     : "core: the power budget cannot run one bundle at Vmin";
  }
  for (const auto& l : a.levels) {
    if (l.capacity.si() == 0.0) return l.name + ": no bank fits its area and static-power budget";
    if (l.bandwidth.si() == 0.0) return l.name + ": no power left for accesses after leakage";
  }
  if (a.main_memory.devices == 0) {
    return "main_memory: no device fits (" + std::string(to_string(a.main_memory.count_binding)) +
           ")";
  }
  if (a.main_memory.bandwidth.si() == 0.0) return "main_memory: no power for the interface";
  if (t.nodes_per_package > 1) {
    const NetworkStats* n = a.network(NetworkTier::kIntraPackage);
    if (n == nullptr || n->bandwidth.si() == 0.0) {
      return "intra_package: several nodes per package but no intra-package bandwidth";
    }
  }
  if (t.packages > 1) {
    const NetworkStats* n = a.network(NetworkTier::kInterPackage);
    if (n == nullptr || n->bandwidth.si() == 0.0) {
      return "inter_package: several packages but no inter-package bandwidth";
    }
  }
  return "";
}

}  // namespace

const char* to_string(CountBinding b) {
  switch (b) {
    case CountBinding::kArea: return "area";
    case CountBinding::kStaticPower: return "static-power";
    case CountBinding::kPowerAtMinVoltage: return "power-at-min-voltage";
    case CountBinding::kPackageArea: return "package-area";
    case CountBinding::kControllerArea: return "controller-area";
    case CountBinding::kPerimeter: return "perimeter";
    case CountBinding::kMaxLanes: return "max-lanes";
    case CountBinding::kUnused: return "unused";
  }
  return "?";
}

const NetworkStats* MicroArch::network(NetworkTier tier) const {
  for (const auto& n : networks) {
    if (n.tier == tier) return &n;
  }
  return nullptr;
}

MicroArch generate_micro_arch(const ArchSpec& spec, const ResourceSplit& split) {
  MicroArch a;
  generate_micro_arch(spec, split, a);
  return a;
}

void generate_micro_arch(const ArchSpec& spec, const ResourceSplit& split, MicroArch& a) {
  const ArchTemplate& t = spec.tmpl;
  const ComponentIndex idx{static_cast<int>(t.levels.size())};
  PF_ASSERT(split.components() == idx.count());
  // A fresh design in `a`, keeping its vectors' and strings' storage.
  std::vector<LevelStats> levels = std::move(a.levels);
  std::vector<NetworkStats> networks = std::move(a.networks);
  std::string name = std::move(a.name), logic = std::move(a.logic);
  levels.clear();
  networks.clear();
  name.assign(t.name);
  logic.assign(spec.logic.name);
  a = MicroArch{};
  a.name = std::move(name);
  a.logic = std::move(logic);
  a.levels = std::move(levels);
  a.networks = std::move(networks);
  a.core = make_core(spec, split);
  a.levels.reserve(t.levels.size());
  for (int i = 0; i < static_cast<int>(t.levels.size()); ++i) {
    a.levels.push_back(make_level(spec, split, a.core, i));
  }
  a.main_memory = make_main_memory(spec, split);
  for (const auto& ns : t.networks) {
    const bool intra = ns.tier == NetworkTier::kIntraPackage;
    a.networks.push_back(make_network(spec, split, ns, intra ? *spec.intra : *spec.inter,
                                      intra ? idx.intra() : idx.inter()));
  }
  a.total.area_budget = t.budget.chip_area;
  a.total.power_budget = t.budget.power;
  a.total.perimeter_budget = t.budget.perimeter;
  BudgetUse sum;
  add_use(sum, a.core.use);
  for (const auto& l : a.levels) add_use(sum, l.use);
  add_use(sum, a.main_memory.use);
  for (const auto& n : a.networks) add_use(sum, n.use);
  a.total.area_used = sum.area_used;
  a.total.power_used = sum.power_used;
  a.total.perimeter_used = sum.perimeter_used;
  a.node_area_used = t.budget.chip_area + spec.memory.device_area * static_cast<double>(a.main_memory.devices);
  a.infeasible_reason = infeasibility(a, t);
  a.feasible = a.infeasible_reason.empty();
}

MicroArch generate_micro_arch(const TechLibrary& lib, const ArchTemplate& t) {
  return generate_micro_arch(bind_template(lib, t), ResourceSplit::from_template(t));
}

}  // namespace pathfinder
