// The board's power limiter (issue 16): a GPU holds its board power at the limit by lowering
// the core's clock and voltage when the work draws more (NVIDIA's "SW power cap" throttle;
// He 2024, "Strangely, matrix multiplications on GPUs run faster when given predictable data":
// an A100's 8192^3 FP16 GEMM runs at 295 TFLOP/s on zeros and 257 on random inputs at its
// 400 W limit; DeepGEMM issue 120: an H800's clock falls from 1,980 to 1,575 MHz once
// communication overlaps its GEMMs).
//
// The limiter settles each kernel's clock over its run: the largest clock ratio r <= 1 at which
// the kernel's average power is within the limit,
//   idle + (E_v·(V/V_r)² + E_m) / T(r) <= cap,
// with E_v the kernel's dynamic energy on the core's supply at the rated point (arithmetic and
// on-chip traffic: E ~ C·V²), E_m its main memory's (own clock and supply), V the voltage at
// which the core's V-f curve (vf_scaling.hpp) runs at r times its rated rate, held at the
// minimum voltage below it (the clock then falls alone), and T(r) its duration: the part on
// the core's clock (arithmetic, on-chip traffic) takes 1/r as long, main-memory traffic and
// latencies do not.
// Idle power (leakage, clock tree, links) is taken at the rated point throughout, as the energy
// accounting takes it (engine/train/energy.hpp): the lower voltage's leakage and clock-tree
// saving is not credited, so the clock settles a little lower than a real limiter's
// [assumption: a few watts at an A100's 0.92 throttle]. Per kernel, not averaged over several
// [assumption: no published response time for the limiter; a training GEMM lasting
// milliseconds is taken to settle as a benchmark loop of it does]. Links the kernel's
// collectives keep busy beside it are not in its power (the peak reported is held at the
// limit: engine/train/energy.cpp).
#pragma once

#include "engine/techlib/tech_library.hpp"

namespace pathfinder {

// What the limiter knows of a generated device (PerfMachine::power_limit).
struct PowerLimit {
  double cap = 0.0;           // W at the board; 0: no limiter (one call timed alone)
  double idle = 0.0;          // W the chip draws whatever it does (DevicePower::chip_idle)
  double rated_voltage = 0.0; // the core's generated operating point
  VfModel vf;                 // the core's logic V-f curve
  [[nodiscard]] bool active() const { return cap > 0.0; }
};

// The clock the limiter settles at: its ratio to the rated clock, and the dynamic energy per
// operation on the core's supply against the rated point's, (V / V_rated)².
struct Throttle {
  double rate = 1.0;
  double energy = 1.0;
  [[nodiscard]] bool throttled() const { return rate < 1.0; }
};

// A kernel's work as the limiter sees it, at the rated point.
struct PowerWindow {
  double core_energy = 0.0;    // J on the core's supply (KernelTime core + on-chip energy)
  double memory_energy = 0.0;  // J of main-memory traffic
  double clocked = 0.0;        // s on the core's clock, when it binds (KernelTime::clocked)
  double unclocked = 0.0;      // s that no clock moves: main memory when it binds, latencies
};

// Whether the work at the rated clock draws more than the limit.
[[nodiscard]] bool exceeds(const PowerLimit& limit, const PowerWindow& w);
// The clock for the work (the rated one unless it exceeds the limit). A memory-bound kernel
// counts as unclocked at every clock the limiter may choose (a throttle that makes it
// clock-bound lengthens it, which only lowers its power: the limit still holds).
[[nodiscard]] Throttle settle(const PowerLimit& limit, const PowerWindow& w);

}  // namespace pathfinder
