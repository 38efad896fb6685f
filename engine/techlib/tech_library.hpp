// Technology library: logic nodes (MCU and on-chip SRAM macros), main-memory devices and
// network links. Values only; loaded from techlib/*.yaml by techlib_loader.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/core/units.hpp"

namespace pathfinder {

// Voltage-frequency model shared by logic, DRAM interfaces and link SerDes (alpha-power law,
// Sakurai-Newton): rate(V) = rate_nom · [(V - Vt)^alpha / V] / [(Vn - Vt)^alpha / Vn],
// dynamic power P(V) = P_nom · (rate / rate_nom) · (V / Vn)^2. The nominal rate itself (clock or
// per-lane bit rate) lives with the component, in its own unit.
struct VfModel {
  Voltage nominal;
  Voltage threshold;
  Voltage minimum;
  Voltage maximum;
  double alpha = 2.0;
};

// One on-chip SRAM macro flavour of a logic node (register file, L1, L2, ...), per bank.
struct SramTech {
  std::string name;
  AreaPerByte area_per_byte;          // bit-cell array area (periphery excluded)
  double periphery_overhead = 0.0;    // periphery share of a bank's total area, in [0, 1)
  EnergyPerByte dynamic_energy;       // per byte read or written
  PowerPerByte static_power;          // leakage per byte of capacity
  Bytes bank_capacity;
  Area controller_area;               // per bank (tags, ECC, queues)
  Power controller_power;             // per bank, static
  Area crossbar_area_per_port;        // per (bank x client) crossbar port
  Time latency;
};

struct LogicNode {
  std::string name;
  double flop_per_cycle = 0.0;  // dense FP16 FLOP per cycle of the reference MCU
  Area mcu_area;                // reference MCU area, with its share of bundle overhead
  Power mcu_power;              // at nominal voltage and frequency, full activity
  Frequency nominal_frequency;
  std::optional<Frequency> max_frequency;  // timing-closure cap, if any
  // Energy accounting (issue 16): leakage share of mcu_power at nominal voltage, and the share
  // of the dynamic power gated off while the MCUs idle.
  double static_share = 0.0;
  double clock_gating = 1.0;
  // Cost (issue 16), public estimates: a processed 300 mm wafer (USD), the defect density
  // (per cm^2) and the negative-binomial clustering parameter of the yield model. No wafer
  // price: the node has no cost model.
  std::optional<double> wafer_usd;
  double defects_per_cm2 = 0.0;
  double clustering = 3.0;
  VfModel vf;
  std::vector<SramTech> sram;
  SourceLoc loc;
  [[nodiscard]] const SramTech* find_sram(const std::string& name) const;
};

struct MemoryTech {
  std::string name;
  Bytes capacity_per_layer;     // one DRAM die
  int layers = 1;               // default stack height
  int links_per_device = 0;     // data I/O width
  EnergyPerByte energy;         // interface + array energy per byte moved
  std::optional<double> usd_per_gb;  // cost (issue 16), a public estimate
  PowerPerByte static_power;    // per byte of capacity
  Area device_area;             // package footprint of one device
  Area controller_area;         // on the compute die, per device
  Area phy_area;                // on the compute die, per device
  PerLength links_per_mm;       // die-edge escape density
  Bandwidth nominal_pin_rate;   // per data pin, at nominal voltage ("3.2 Gb/s")
  Bandwidth max_pin_rate;       // signalling-standard cap
  VfModel vf;
  Time latency;
  SourceLoc loc;
};

struct NetworkTech {
  std::string name;
  EnergyPerByte energy;         // per byte sent
  double static_share = 0.0;    // of the links' power, drawn whether or not they carry data
  Area area_per_lane;           // transceiver area on the compute die
  PerLength lanes_per_mm;       // die-edge escape density
  Bandwidth nominal_lane_rate;  // per lane and direction, at nominal voltage
  Bandwidth max_lane_rate;      // signalling-standard cap
  VfModel vf;
  std::optional<int> max_lanes; // e.g. "x8" parts
  Time latency;
  SourceLoc loc;
};

// A scale-out network interface: one NIC per device and the fabric behind it (off the die, so
// given rather than generated), as a template's network.scale_out names it with `nic:`.
struct NicTech {
  std::string name;
  Bandwidth bandwidth;           // per device and direction, line rate
  double max_utilization = 1.0;  // of the line rate NCCL's collectives reach (measured)
  Time latency;                  // per message, switch hops included
  // Per device, drawn whether or not it sends: the NIC, its optics and its share of the
  // switch ports (energy accounting only).
  Power power;
  SourceLoc loc;
};

struct TechLibrary {
  std::vector<LogicNode> logic;
  std::vector<MemoryTech> memory;
  std::vector<NetworkTech> network;
  std::vector<NicTech> nic;

  [[nodiscard]] const LogicNode* find_logic(const std::string& name) const;
  [[nodiscard]] const MemoryTech* find_memory(const std::string& name) const;
  [[nodiscard]] const NetworkTech* find_network(const std::string& name) const;
  [[nodiscard]] const NicTech* find_nic(const std::string& name) const;
  [[nodiscard]] std::vector<std::string> logic_names() const;
  [[nodiscard]] std::vector<std::string> memory_names() const;
  [[nodiscard]] std::vector<std::string> network_names() const;
  [[nodiscard]] std::vector<std::string> nic_names() const;
};

}  // namespace pathfinder
