// Where a generated device's power goes while it works and while it waits (issue 16): the
// generator's full-activity powers (paper §4.4) split into what every unit of work costs and
// what is drawn regardless, at the operating point the generator chose (E ~ C·V², as its V-f
// model scales power).
//
//   core          the full-activity power P at (V, f) is static + dynamic; static is the
//                 technology's static_share of the nominal power, scaled by V/Vn (leakage
//                 current held constant), never above P. Of the dynamic part D the technology's
//                 clock_gating share g is spent per FLOP, g·D / peak J per matrix FLOP (FP8:
//                 over the FP8 peak; element-wise FLOPs: over the vector peak, the core at full
//                 element-wise rate drawing what it draws at full matrix rate [assumption]),
//                 times the template's core.flop_energy_factor (real operands draw more than
//                 the budget provisions: the power limiter, engine/perf/power_limiter.hpp,
//                 holds the board at its budget); (1 − g)·D, the clock tree, is drawn whenever
//                 the device is powered.
//   SRAM levels   leakage as generated; dynamic power / bandwidth J per byte served.
//   main memory   static power as generated; dynamic power / bandwidth J per byte moved.
//   links         the technology's static_share of the generated power always; the rest over
//                 the per-direction bandwidth J per byte sent (each device sends and receives).
//   scale-out     the template's network.scale_out.power per device, load-independent.
//   node          the template's system.overhead_power per device (host, fans, delivery).
// At full activity of every unit, on the operands the budget provisions for, the device draws
// exactly the power the generator spent.
#pragma once

#include <array>

#include "engine/arch/arch_spec.hpp"
#include "engine/arch/micro_arch.hpp"

namespace pathfinder {

struct DevicePower {
  // Core (W, and J per FLOP).
  double core_static = 0.0;
  double core_clock = 0.0;       // (1 − g)·D: drawn whenever powered
  double core_dynamic = 0.0;     // g·D: at full matrix rate, as provisioned
  double joule_per_flop = 0.0;   // matrix FLOP (FP16/BF16 operands)
  double joule_per_fp8_flop = 0.0;
  double joule_per_fp4_flop = 0.0;  // the same for FP4 (fp4_flop_energy_factor)
  double joule_per_vector_flop = 0.0;
  // On-chip levels, innermost first (W, J per byte served): the first `levels` entries.
  int levels = 0;
  std::array<double, kMaxOnChipLevels> level_static{};
  std::array<double, kMaxOnChipLevels> level_joule_per_byte{};
  std::array<double, kMaxOnChipLevels> level_dynamic{};  // W at full bandwidth
  double main_static = 0.0;
  double main_joule_per_byte = 0.0;
  double main_dynamic = 0.0;          // W at full bandwidth
  // Links by NetworkTier (intra_package, inter_package), then scale-out (W, J per byte sent).
  std::array<double, 3> link_static{};
  std::array<double, 3> link_joule_per_byte{};
  std::array<double, 3> link_dynamic{};  // W with the links busy both ways
  double overhead = 0.0;  // node share outside the device, W
  double limit = 0.0;     // the board's power limit, W: budget.power_limit, else budget.power

  // Drawn by the chip whenever it is powered, doing nothing: leakage, the core's clock tree,
  // the links' static share (scale-out and node overhead excluded).
  [[nodiscard]] double chip_idle() const;
  // Everything drawn whenever powered, per device: chip_idle, scale-out and node overhead.
  [[nodiscard]] double always_on() const;
  // The chip with every unit at its full rate at once: the power the generator spent.
  [[nodiscard]] double full_activity() const;
};

[[nodiscard]] DevicePower device_power(const ArchSpec& spec, const MicroArch& arch);

}  // namespace pathfinder
