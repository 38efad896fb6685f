// The view of a generated micro-architecture that kernel timing needs (issue 3): typed
// quantities (engine/core/units.hpp) that the GEMM search and the kernel timer read as SI
// doubles (.si()), built once per micro-architecture and then read in the inner loop of every
// search, so nothing here allocates after construction.
#pragma once

#include <string>
#include <vector>

#include "engine/arch/arch_spec.hpp"
#include "engine/arch/micro_arch.hpp"
#include "engine/core/units.hpp"
#include "engine/perf/power_limiter.hpp"

namespace pathfinder {

struct PerfLevel {
  std::string name;
  Scope scope = Scope::kGlobal;
  int instances = 1;        // enabled copies: 1 (global), bundles, or MCUs
  Bytes capacity;           // per instance
  Bandwidth bandwidth;      // over all instances
  Time latency;
  EnergyPerByte energy_per_byte;  // dynamic energy per byte served (device_power.hpp)
};

struct PerfMachine {
  std::string name;
  Throughput matrix_flops;      // of the MCU arrays: peak x max_utilization
  Throughput fp8_matrix_flops;  // the same for FP8 operands (x fp8_throughput_ratio)
  Throughput fp4_matrix_flops;  // the same for FP4 operands (x fp4_throughput_ratio; 0: none)
  bool block_scaled_mma = false;  // the arrays apply per-block scales (MXFP8, NVFP4)
  Throughput vector_flops;      // for element-wise work
  double warp_mma_peak_fraction = 1.0;  // of matrix_flops, warp-MMA instructions' ceiling
  double warp_mma_fraction = 1.0;  // of matrix_flops, for warp-MMA kernels (FlashAttention-2)
  double attention_backward_fraction = 1.0;  // of the rate, a fused attention's backward
  double attention_fraction = 1.0;  // of matrix_flops, a native fused attention's main loop
  double cudnn_causal_fraction = 1.0;           // of the rate, cuDNN's with a causal mask
  double cudnn_causal_backward_fraction = 1.0;  // and its backward's
  double warp_mma_backward_fraction = 1.0;  // of the rate, a warp-MMA attention's backward
  bool attention_overlap = false;   // its softmax beside the matrix work (the longer binds)
  double fp8_promoted_accumulation_fraction = 1.0;  // of the FP8 rate, promoted accumulation
  // How much longer compute runs beside a collective in the scale-up domain, per second of it
  // (the inter-package tier's LinkBehavior::memory_contention times its achieved rate's share
  // of main memory's).
  double scale_up_contention = 0.0;
  Bandwidth scale_up_rate;  // that achieved rate, per direction: what the contention is for
  int bundles = 1;            // enabled bundles: the units output tiles are spread over
  int mcus_per_bundle = 1;
  int array_rows = 1;         // MCU systolic array (paper eq. 5's Nx, Ny)
  int array_cols = 1;
  Dataflow dataflow = Dataflow::kBest;
  std::vector<PerfLevel> levels;  // on-chip, innermost (registers) first
  PerfLevel main_memory;          // capacity per device, effective bandwidth
  Bandwidth stream_bandwidth;     // main memory as element-wise kernels see it
  HostSpec host;
  // Dynamic energy per FLOP of the matrix units, with FP8 operands, and of element-wise
  // work (device_power.hpp).
  EnergyPerFlop energy_per_flop;
  EnergyPerFlop energy_per_fp8_flop;
  EnergyPerFlop energy_per_fp4_flop;
  EnergyPerFlop energy_per_vector_flop;
  // The board's power limit (off for a single timed call, PerfMode::kBurst).
  PowerLimit power_limit;
  // Device-to-device variation (device_variation.hpp; none for a single timed call).
  double device_variation = 0.0;
  int sustained_devices = 1;
  // The pace of a job of `devices` devices against this machine's rates (its slowest device's).
  [[nodiscard]] double job_pace(long long devices) const;
  // Capacity available to one instance of level i and the levels inside it: what an output
  // tile held at level i may occupy (accumulators can sit in the inner levels).
  [[nodiscard]] Bytes nested_capacity(int level) const;
};

// Training runs at the template's sustained throughput under the board's power limit; a
// benchmark loop of one kernel (kBackToBack) under the power limit alone; a single timed kernel
// (a benchmark call, kBurst) at the full burst throughput and the rated clock.
enum class PerfMode { kSustained, kBackToBack, kBurst };

// From a template bound to its technologies and one generated micro-architecture.
[[nodiscard]] PerfMachine make_perf_machine(const ArchSpec& spec, const MicroArch& arch,
                                            PerfMode mode = PerfMode::kSustained);

}  // namespace pathfinder
