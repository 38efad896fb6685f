// What one training iteration costs in energy (issue 16; computed by energy.hpp).
#pragma once

#include <array>
#include <utility>

#include "engine/core/units.hpp"

namespace pathfinder {

// Energy by where it is spent; the parts add up to the total.
struct EnergyByComponent {
  Energy core;         // arithmetic, leakage and clock tree
  Energy on_chip;      // SRAM levels' traffic and leakage
  Energy main_memory;  // traffic and static power
  Energy network;      // scale-up links, scale-out NICs and switches
  Energy node;         // the node's share beyond the devices (host, fans, delivery)
  [[nodiscard]] std::array<std::pair<const char*, Energy>, 5> parts() const {
    return {{{"core", core}, {"on_chip", on_chip}, {"main_memory", main_memory},
             {"network", network}, {"node", node}}};
  }
  [[nodiscard]] Energy total() const { return core + on_chip + main_memory + network + node; }
};

// Energy by what the devices were doing: the always-on power over each part of the time
// breakdown plus the dynamic energy of that part's work; the parts add up to the total.
struct EnergyByPhase {
  Energy compute;        // the passes' kernels (TrainingBreakdown compute, embedding_head)
  Energy communication;  // every byte sent and the exposed communication's time
  Energy optimizer;      // the step
  Energy idle;           // pipeline bubble and host time
  [[nodiscard]] std::array<std::pair<const char*, Energy>, 4> parts() const {
    return {{{"compute", compute}, {"communication", communication}, {"optimizer", optimizer},
             {"idle", idle}}};
  }
  [[nodiscard]] Energy total() const { return compute + communication + optimizer + idle; }
};

struct EnergyReport {
  Energy joules;             // per iteration: every device and its node share
  Energy chip_joules;        // of which the devices' chips (what a GPU's meter reads)
  Energy joules_per_token;   // 0 for a workload without tokens (a GEMM)
  Power device_power;        // one device's chip, averaged over devices and time
  Power peak_device_power;   // the most power-hungry kernel with every used link busy, at
                             // most the board's limit
  Power system_power;        // per device with its scale-out and node share
  double flop_per_joule = 0.0;     // the workload's model FLOPs per joule
  EnergyByComponent by_component;
  EnergyByPhase by_phase;
};

}  // namespace pathfinder
