#include "engine/techlib/techlib_loader.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include "engine/config/node.hpp"

namespace pathfinder {
namespace {

VfModel read_vf(const ConfigNode& n) {
  VfModel vf;
  vf.nominal = n.require_positive<Voltage>("nominal_voltage");
  vf.threshold = n.require<Voltage>("threshold_voltage");
  vf.minimum = n.require_positive<Voltage>("minimum_voltage");
  vf.maximum = n.require_positive<Voltage>("maximum_voltage");
  vf.alpha = n.get_or<double>("alpha", 2.0);
  if (!(vf.threshold.si() >= 0.0 && vf.threshold < vf.minimum)) {
    throw n.error_at("threshold_voltage", "expected a threshold voltage below minimum_voltage, got " +
                                              n.quoted("threshold_voltage"));
  }
  if (!(vf.minimum <= vf.nominal && vf.nominal <= vf.maximum)) {
    throw n.error_at("nominal_voltage",
                     "expected minimum_voltage <= nominal_voltage <= maximum_voltage, got " +
                         n.quoted("nominal_voltage"));
  }
  if (!(vf.alpha >= 1.0 && vf.alpha <= 2.0)) {
    throw n.error_at("alpha", "expected an alpha-power exponent in [1, 2], got " + n.quoted("alpha"));
  }
  return vf;
}

double read_fraction(const ConfigNode& n, std::string_view key, double hi_exclusive) {
  const double v = n.require<double>(key);
  if (!(v >= 0.0 && v < hi_exclusive)) {
    throw n.error_at(key, std::string("expected a fraction in [0, 1") + (hi_exclusive > 1 ? "]" : ")") +
                              ", got " + n.quoted(key));
  }
  return v;
}

SramTech read_sram(const std::string& name, const ConfigNode& n) {
  SramTech s;
  s.name = name;
  s.area_per_byte = n.require_positive<AreaPerByte>("area_per_bit");
  s.periphery_overhead = read_fraction(n, "periphery_overhead", 1.0);
  s.dynamic_energy = n.require_positive<EnergyPerByte>("dynamic_energy");
  s.static_power = n.require<PowerPerByte>("static_power");
  s.bank_capacity = n.require_positive<Bytes>("bank_capacity");
  s.controller_area = n.get_or<Area>("controller_area", Area{});
  s.controller_power = n.get_or<Power>("controller_power", Power{});
  s.crossbar_area_per_port = n.get_or<Area>("crossbar_area_per_port", Area{});
  s.latency = n.get_or<Time>("latency", Time{});
  n.finish();
  return s;
}

LogicNode read_logic(const std::string& name, const ConfigNode& n) {
  LogicNode l;
  l.name = name;
  l.loc = n.loc();
  const ConfigNode mcu = n.child("mcu");
  l.flop_per_cycle = mcu.require_positive<double>("flop_per_cycle");
  l.mcu_area = mcu.require_positive<Area>("area");
  l.mcu_power = mcu.require_positive<Power>("power");
  l.nominal_frequency = mcu.require_positive<Frequency>("nominal_frequency");
  l.max_frequency = mcu.optional_positive<Frequency>("max_frequency");
  if (mcu.has("static_share")) l.static_share = read_fraction(mcu, "static_share", 1.0);
  if (mcu.has("clock_gating")) l.clock_gating = read_fraction(mcu, "clock_gating", 1.0 + 1e-12);
  mcu.finish();
  l.vf = read_vf(n.child("vf"));
  if (auto cost = n.optional_child("cost")) {
    l.wafer_usd = cost->require_positive<double>("wafer_usd");
    l.defects_per_cm2 = cost->require<double>("defects_per_cm2");
    if (!(l.defects_per_cm2 >= 0.0 && l.defects_per_cm2 <= 100.0)) {
      throw cost->error_at("defects_per_cm2", "expected a defect density in [0, 100] per cm^2, got " +
                                                  cost->quoted("defects_per_cm2"));
    }
    l.clustering = cost->optional_positive<double>("clustering").value_or(3.0);
    cost->finish();
  }
  for (const auto& [sname, snode] : n.child("sram").entries()) {
    l.sram.push_back(read_sram(sname, snode));
  }
  n.finish();
  return l;
}

MemoryTech read_memory(const std::string& name, const ConfigNode& n) {
  MemoryTech m;
  m.name = name;
  m.loc = n.loc();
  m.capacity_per_layer = n.require_positive<Bytes>("capacity_per_layer");
  m.layers = n.require_positive<int>("layers");
  m.links_per_device = n.require_positive<int>("links_per_device");
  m.energy = n.require_positive<EnergyPerByte>("energy");
  m.usd_per_gb = n.optional_positive<double>("usd_per_gb");
  m.static_power = n.require<PowerPerByte>("static_power");
  m.device_area = n.require_positive<Area>("device_area");
  m.controller_area = n.require_positive<Area>("controller_area");
  m.phy_area = n.require<Area>("phy_area");
  m.links_per_mm = n.require_positive<PerLength>("links_per_mm");
  m.nominal_pin_rate = n.require_positive<Bandwidth>("nominal_pin_rate");
  m.max_pin_rate = n.require_positive<Bandwidth>("max_pin_rate");
  m.latency = n.require<Time>("latency");
  m.vf = read_vf(n.child("vf"));
  if (m.max_pin_rate < m.nominal_pin_rate) {
    throw n.error_at("max_pin_rate", "expected max_pin_rate >= nominal_pin_rate (" +
                                         n.quoted("nominal_pin_rate") + "), got " + n.quoted("max_pin_rate"));
  }
  n.finish();
  return m;
}

NetworkTech read_network(const std::string& name, const ConfigNode& n) {
  NetworkTech t;
  t.name = name;
  t.loc = n.loc();
  t.energy = n.require_positive<EnergyPerByte>("energy");
  if (n.has("static_share")) t.static_share = read_fraction(n, "static_share", 1.0 + 1e-12);
  t.area_per_lane = n.require_positive<Area>("area_per_lane");
  t.lanes_per_mm = n.require_positive<PerLength>("lanes_per_mm");
  t.nominal_lane_rate = n.require_positive<Bandwidth>("nominal_lane_rate");
  t.max_lane_rate = n.require_positive<Bandwidth>("max_lane_rate");
  t.max_lanes = n.optional_positive<int>("max_lanes");
  t.latency = n.require<Time>("latency");
  t.vf = read_vf(n.child("vf"));
  if (t.max_lane_rate < t.nominal_lane_rate) {
    throw n.error_at("max_lane_rate", "expected max_lane_rate >= nominal_lane_rate (" +
                                          n.quoted("nominal_lane_rate") + "), got " + n.quoted("max_lane_rate"));
  }
  n.finish();
  return t;
}

NicTech read_nic(const std::string& name, const ConfigNode& n) {
  NicTech t;
  t.name = name;
  t.loc = n.loc();
  t.bandwidth = n.require_positive<Bandwidth>("bandwidth");
  t.max_utilization = n.require<double>("max_utilization");
  if (!(t.max_utilization >= 0.01 && t.max_utilization <= 1.0)) {
    throw n.error_at("max_utilization",
                     "expected a fraction in [0.01, 1], got " + n.quoted("max_utilization"));
  }
  t.latency = n.get_non_negative_or<Time>("latency", Time{});
  t.power = n.get_non_negative_or<Power>("power", Power{});
  n.finish();
  return t;
}

template <class T>
void add_unique(std::vector<T>& v, T item, const ConfigNode& at) {
  for (const auto& e : v) {
    if (e.name == item.name) {
      throw at.error("duplicate technology name \"" + item.name + "\" (first defined at " +
                     e.loc.file + ":" + std::to_string(e.loc.line) + ")");
    }
  }
  v.push_back(std::move(item));
}

}  // namespace

void load_tech_file_into(const ConfigNode& root, TechLibrary& lib) {
  if (auto logic = root.optional_child("logic")) {
    for (const auto& [name, node] : logic->entries()) add_unique(lib.logic, read_logic(name, node), node);
  }
  if (auto memory = root.optional_child("memory")) {
    for (const auto& [name, node] : memory->entries()) {
      add_unique(lib.memory, read_memory(name, node), node);
    }
  }
  if (auto network = root.optional_child("network")) {
    for (const auto& [name, node] : network->entries()) {
      add_unique(lib.network, read_network(name, node), node);
    }
  }
  if (auto nic = root.optional_child("nic")) {
    for (const auto& [name, node] : nic->entries()) add_unique(lib.nic, read_nic(name, node), node);
  }
  root.finish();
}

TechLibrary load_tech_library_files(const std::vector<std::string>& files,
                                    const std::vector<ConfigOverride>& overrides) {
  TechLibrary lib;
  std::vector<bool> applied(overrides.size(), false);
  std::map<std::string, std::vector<std::string>> known;  // section -> technologies
  for (const auto& f : files) {
    ConfigNode root = ConfigNode::load_file(f);
    std::vector<ConfigOverride> mine;
    for (std::size_t i = 0; i < overrides.size(); ++i) {
      const std::string& key = overrides[i].key;
      const std::size_t dot = key.find('.');
      const std::size_t dot2 = dot == std::string::npos ? dot : key.find('.', dot + 1);
      if (dot2 == std::string::npos) continue;  // reported below
      const std::string section = key.substr(0, dot), name = key.substr(dot + 1, dot2 - dot - 1);
      const auto s = root.optional_child(section);
      if (s && s->is_map() && s->has(name)) {
        mine.push_back(overrides[i]);
        applied[i] = true;
      }
    }
    for (const char* section : {"logic", "memory", "network", "nic"}) {
      if (const auto s = root.optional_child(section); s && s->is_map()) {
        for (const auto& entry : s->entries()) known[section].push_back(entry.first);
      }
    }
    load_tech_file_into(mine.empty() ? root : root.with_overrides(mine), lib);
  }
  std::vector<Diagnostic> problems;
  for (std::size_t i = 0; i < overrides.size(); ++i) {
    if (applied[i]) continue;
    const ConfigOverride& o = overrides[i];
    const SourceLoc at = o.at ? *o.at : SourceLoc{"command line", 0, 0, o.origin};
    const std::string section = o.key.substr(0, o.key.find('.'));
    const auto it = known.find(section);
    std::string names;
    for (const std::string& n : it == known.end() ? std::vector<std::string>{} : it->second) {
      names += (names.empty() ? "" : ", ") + n;
    }
    problems.push_back(Diagnostic{
        at, it == known.end()
                ? "expected section.technology.field with section logic, memory, network or "
                  "nic, got \"" +
                      o.key + "\""
                : "expected a technology of the library's " + section + " section (" + names +
                      ") and a field, got \"" + o.key + "\""});
  }
  if (!problems.empty()) throw ConfigError(std::move(problems));
  return lib;
}

TechLibrary load_tech_library_dir(const std::string& dir,
                                  const std::vector<ConfigOverride>& overrides) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".yaml") files.push_back(it->path().string());
  }
  if (ec) {
    throw ConfigError(Diagnostic{SourceLoc{dir, 0, 0, ""},
                                 "cannot read technology library directory: " + ec.message()});
  }
  if (files.empty()) {
    throw ConfigError(Diagnostic{SourceLoc{dir, 0, 0, ""},
                                 "no technology library files (*.yaml) in directory"});
  }
  std::sort(files.begin(), files.end());
  return load_tech_library_files(files, overrides);
}

}  // namespace pathfinder
