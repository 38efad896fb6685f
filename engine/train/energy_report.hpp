// What one training iteration costs in energy (issue 16; computed by energy.hpp).
#pragma once

#include <array>
#include <utility>

namespace pathfinder {

// Joules by where they are spent; the parts add up to the total.
struct EnergyByComponent {
  double core = 0.0;         // arithmetic, leakage and clock tree
  double on_chip = 0.0;      // SRAM levels' traffic and leakage
  double main_memory = 0.0;  // traffic and static power
  double network = 0.0;      // scale-up links, scale-out NICs and switches
  double node = 0.0;         // the node's share beyond the devices (host, fans, delivery)
  [[nodiscard]] std::array<std::pair<const char*, double>, 5> parts() const {
    return {{{"core", core}, {"on_chip", on_chip}, {"main_memory", main_memory},
             {"network", network}, {"node", node}}};
  }
  [[nodiscard]] double total() const { return core + on_chip + main_memory + network + node; }
};

// Joules by what the devices were doing: the always-on power over each part of the time
// breakdown plus the dynamic energy of that part's work; the parts add up to the total.
struct EnergyByPhase {
  double compute = 0.0;        // the passes' kernels (TrainingBreakdown compute, embedding_head)
  double communication = 0.0;  // every byte sent and the exposed communication's time
  double optimizer = 0.0;      // the step
  double idle = 0.0;           // pipeline bubble and host time
  [[nodiscard]] std::array<std::pair<const char*, double>, 4> parts() const {
    return {{{"compute", compute}, {"communication", communication}, {"optimizer", optimizer},
             {"idle", idle}}};
  }
  [[nodiscard]] double total() const { return compute + communication + optimizer + idle; }
};

struct EnergyReport {
  double joules = 0.0;             // per iteration: every device and its node share
  double chip_joules = 0.0;        // of which the devices' chips (what a GPU's meter reads)
  double joules_per_token = 0.0;   // 0 for a workload without tokens (a GEMM)
  double device_power = 0.0;       // W: one device's chip, averaged over devices and time
  double peak_device_power = 0.0;  // W: the most power-hungry kernel with every used link busy
  double system_power = 0.0;       // W per device with its scale-out and node share
  double flop_per_joule = 0.0;     // the workload's model FLOPs per joule
  EnergyByComponent by_component;
  EnergyByPhase by_phase;
};

}  // namespace pathfinder
