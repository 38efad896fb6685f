// What a device does in an iteration, for energy accounting (issue 16; energy.hpp): the
// dynamic energy its kernels spend (KernelTime's, from the technology's energies at the
// operating point) and the bytes it sends on each network tier.
#pragma once

#include <algorithm>
#include <array>

#include "engine/system/system_graph.hpp"

namespace pathfinder {

struct Activity {
  double core = 0.0;         // J: arithmetic
  double on_chip = 0.0;      // J: SRAM traffic
  double main_memory = 0.0;  // J: main-memory traffic
  std::array<double, kMaxTiers> link_bytes{};  // bytes sent, indexed by Tier
  double peak_power = 0.0;   // W: the most power-hungry kernel's dynamic power

  [[nodiscard]] double kernel_energy() const { return core + on_chip + main_memory; }
  // Adds `n` repetitions of `a` (its peak is a peak, not repeated).
  void add(const Activity& a, double n = 1.0) {
    core += n * a.core;
    on_chip += n * a.on_chip;
    main_memory += n * a.main_memory;
    for (std::size_t t = 0; t < link_bytes.size(); ++t) link_bytes[t] += n * a.link_bytes[t];
    if (n > 0.0) peak_power = std::max(peak_power, a.peak_power);
  }
  void add_link_bytes(const std::array<double, kMaxTiers>& bytes, double n = 1.0) {
    for (std::size_t t = 0; t < link_bytes.size(); ++t) link_bytes[t] += n * bytes[t];
  }
};

}  // namespace pathfinder
