// The generator's output (paper §4.4): every derived figure, the budget each component used,
// and which constraint binds it.
#pragma once

#include <string>
#include <vector>

#include "engine/arch/arch_template.hpp"
#include "engine/arch/vf_scaling.hpp"
#include "engine/core/units.hpp"

namespace pathfinder {

// What limited a component's count (MCUs, banks, devices, lanes).
enum class CountBinding {
  kArea,            // its area budget
  kStaticPower,     // leakage alone would exceed its power budget
  kPowerAtMinVoltage,  // core: MCUs dropped at Vmin (paper §4.4.1)
  kPackageArea,     // memory devices: room on the package
  kControllerArea,  // memory devices: controller and PHY area on the die
  kPerimeter,       // die edge for I/O
  kMaxLanes,        // the technology's lane count ("x8")
  kUnused,          // no budget given
};
[[nodiscard]] const char* to_string(CountBinding b);

struct BudgetUse {
  Area area_budget, area_used;
  Power power_budget, power_used;
  Length perimeter_budget, perimeter_used;
};

struct CoreStats {
  int bundles_built = 0;   // fit in the area
  int bundles = 0;         // enabled and powered
  int mcus = 0;            // bundles x MCUs per bundle
  double flop_per_cycle_per_mcu = 0.0;
  Voltage voltage;
  Frequency frequency;
  Throughput peak;         // mcus x FLOP/cycle x f (paper eq. 1)
  Throughput effective;    // peak x max_utilization
  Throughput vector_peak;  // peak x vector_throughput_ratio: the element-wise units
  Throughput fp8_peak;     // peak x fp8_throughput_ratio: dense FP8 matrix throughput
  Throughput fp4_peak;     // peak x fp4_throughput_ratio: dense FP4 (0: no FP4 units)
  CountBinding count_binding = CountBinding::kArea;
  VfBinding frequency_binding = VfBinding::kPower;
  BudgetUse use;
};

struct LevelStats {
  std::string name;
  std::string technology;
  Scope scope = Scope::kGlobal;
  int instances = 0;           // enabled copies (1, bundles or MCUs)
  int banks_per_instance = 0;
  int clients_per_instance = 0;  // crossbar ports per bank
  Bytes capacity;              // all enabled instances
  Bytes capacity_per_instance;
  Bandwidth bandwidth;         // all enabled instances (paper eq. 3)
  Power static_power;
  Power dynamic_power;
  Area bank_area, controller_area, crossbar_area;
  Time latency;
  CountBinding count_binding = CountBinding::kArea;
  BudgetUse use;
};

struct MainMemoryStats {
  std::string technology;
  int devices = 0;
  int devices_by_package = 0, devices_by_controller = 0, devices_by_perimeter = 0;
  int links = 0;
  Voltage voltage;
  Bandwidth pin_rate;          // per link
  Bandwidth bandwidth;
  Bandwidth effective_bandwidth;  // bandwidth x max_utilization (what a streaming kernel gets)
  Bytes capacity;
  Power static_power, dynamic_power;
  Time latency;
  CountBinding count_binding = CountBinding::kArea;
  VfBinding rate_binding = VfBinding::kPower;
  BudgetUse use;
};

struct NetworkStats {
  NetworkTier tier = NetworkTier::kInterPackage;
  std::string technology;
  Topology topology = Topology::kSwitch;
  int lanes = 0;               // transmit plus receive lanes
  Voltage voltage;
  Bandwidth lane_rate;
  Bandwidth bandwidth;         // all lanes, both directions (datasheet convention)
  Bandwidth per_direction;     // injection bandwidth one way
  Power power;
  Time latency;
  CountBinding count_binding = CountBinding::kArea;
  VfBinding rate_binding = VfBinding::kPower;
  BudgetUse use;
};

struct MicroArch {
  std::string name;
  std::string logic;
  CoreStats core;
  std::vector<LevelStats> levels;
  MainMemoryStats main_memory;
  std::vector<NetworkStats> networks;
  Area node_area_used;  // die plus memory devices
  BudgetUse total;      // die area, node power, die perimeter
  bool feasible = true;
  std::string infeasible_reason;

  [[nodiscard]] const NetworkStats* network(NetworkTier tier) const;
};

}  // namespace pathfinder
