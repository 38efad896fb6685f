// What a device does in an iteration, for energy accounting (issue 16; energy.hpp): the
// dynamic energy its kernels spend (KernelTime's, from the technology's energies at the
// operating point) and the bytes it sends on each network tier.
#pragma once

#include <algorithm>
#include <array>

#include "engine/system/system_graph.hpp"

namespace pathfinder {

struct Activity {
  Energy core;         // arithmetic
  Energy on_chip;      // SRAM traffic
  Energy main_memory;  // main-memory traffic
  std::array<Bytes, kMaxTiers> link_bytes{};  // sent, indexed by Tier
  Power peak_power;    // the most power-hungry kernel's dynamic power

  [[nodiscard]] Energy kernel_energy() const { return core + on_chip + main_memory; }
  // Adds `n` repetitions of `a` (its peak is a peak, not repeated).
  void add(const Activity& a, double n = 1.0) {
    core += n * a.core;
    on_chip += n * a.on_chip;
    main_memory += n * a.main_memory;
    for (std::size_t t = 0; t < link_bytes.size(); ++t) link_bytes[t] += n * a.link_bytes[t];
    if (n > 0.0) peak_power = std::max(peak_power, a.peak_power);
  }
  void add_link_bytes(const std::array<Bytes, kMaxTiers>& bytes, double n = 1.0) {
    for (std::size_t t = 0; t < link_bytes.size(); ++t) link_bytes[t] += n * bytes[t];
  }
};

}  // namespace pathfinder
