#include "engine/perf/perf_machine.hpp"

#include "engine/arch/device_power.hpp"
#include "engine/perf/device_variation.hpp"

namespace pathfinder {

Bytes PerfMachine::nested_capacity(int level) const {
  // One instance of `level` contains instances of the inner levels in the ratio of their counts
  // (a bundle holds its MCUs' register files; the global level holds everything).
  const PerfLevel& outer = levels[static_cast<std::size_t>(level)];
  Bytes total = outer.capacity;
  for (int i = 0; i < level; ++i) {
    const PerfLevel& inner = levels[static_cast<std::size_t>(i)];
    total += inner.capacity * inner.instances / outer.instances;
  }
  return total;
}

double PerfMachine::job_pace(long long devices) const {
  return pathfinder::job_pace(device_variation, sustained_devices, devices);
}

PerfMachine make_perf_machine(const ArchSpec& spec, const MicroArch& arch, PerfMode mode) {
  PerfMachine m;
  m.name = arch.name;
  const double sustained = mode == PerfMode::kSustained ? spec.tmpl.core.sustained_fraction : 1.0;
  m.matrix_flops = arch.core.effective * sustained;
  const double fp8_sustained =
      mode == PerfMode::kSustained ? spec.tmpl.core.fp8_sustained_fraction : 1.0;
  m.fp8_matrix_flops =
      arch.core.effective * spec.tmpl.core.fp8_throughput_ratio * fp8_sustained;
  const double fp4_sustained =
      mode == PerfMode::kSustained ? spec.tmpl.core.fp4_sustained_fraction : 1.0;
  m.fp4_matrix_flops =
      arch.core.effective * spec.tmpl.core.fp4_throughput_ratio * fp4_sustained;
  m.block_scaled_mma = spec.tmpl.core.block_scaled_mma;
  if (mode == PerfMode::kSustained) {
    m.device_variation = spec.tmpl.core.device_variation;
    m.sustained_devices = spec.tmpl.core.sustained_devices;
  }
  m.vector_flops = arch.core.peak * spec.tmpl.core.vector_throughput_ratio * sustained;
  m.warp_mma_peak_fraction = spec.tmpl.core.warp_mma_peak_fraction;
  m.warp_mma_fraction = spec.tmpl.core.warp_mma_fraction;
  m.attention_backward_fraction = spec.tmpl.core.attention_backward_fraction;
  m.attention_fraction = spec.tmpl.core.attention_fraction;
  m.cudnn_causal_fraction = spec.tmpl.core.cudnn_causal_fraction;
  m.cudnn_causal_backward_fraction = spec.tmpl.core.cudnn_causal_backward_fraction;
  m.warp_mma_backward_fraction = spec.tmpl.core.warp_mma_backward_fraction;
  m.attention_overlap = spec.tmpl.core.attention_overlap;
  m.fp8_promoted_accumulation_fraction = spec.tmpl.core.fp8_promoted_accumulation_fraction;
  m.bundles = arch.core.bundles;
  m.mcus_per_bundle = spec.tmpl.core.mcus_per_bundle;
  m.array_rows = spec.tmpl.core.array_rows;
  m.array_cols = spec.tmpl.core.array_cols;
  m.dataflow = spec.tmpl.core.dataflow;
  const DevicePower power = device_power(spec, arch);
  // DevicePower's figures are plain J per FLOP and per byte: typed here.
  m.energy_per_flop = EnergyPerFlop::from_si(power.joule_per_flop);
  m.energy_per_fp8_flop = EnergyPerFlop::from_si(power.joule_per_fp8_flop);
  m.energy_per_fp4_flop = EnergyPerFlop::from_si(power.joule_per_fp4_flop);
  m.energy_per_vector_flop = EnergyPerFlop::from_si(power.joule_per_vector_flop);
  if (mode != PerfMode::kBurst) {
    m.power_limit = {power.limit, power.chip_idle(), arch.core.voltage.si(), spec.logic.vf};
  }
  m.levels.reserve(arch.levels.size());
  for (std::size_t i = 0; i < arch.levels.size(); ++i) {
    const LevelStats& l = arch.levels[i];
    m.levels.push_back({l.name, l.scope, l.instances, l.capacity_per_instance, l.bandwidth,
                        l.latency, EnergyPerByte::from_si(power.level_joule_per_byte[i])});
  }
  const MainMemoryStats& mm = arch.main_memory;
  m.main_memory = {mm.technology, Scope::kGlobal, 1, mm.capacity,
                   mm.bandwidth * spec.tmpl.main_memory.max_utilization, mm.latency,
                   EnergyPerByte::from_si(power.main_joule_per_byte)};
  m.stream_bandwidth = mm.bandwidth * spec.tmpl.main_memory.stream_utilization;
  // The scale-up tier's collectives take main-memory bandwidth in proportion to their link
  // rate (LinkBehavior::memory_contention): the share of it the achieved rate is, times that.
  const NetworkSpec* up = spec.tmpl.find_network(NetworkTier::kInterPackage);
  const NetworkStats* link = arch.network(NetworkTier::kInterPackage);
  if (up != nullptr && link != nullptr && m.main_memory.bandwidth.si() > 0.0) {
    m.scale_up_rate = link->per_direction * up->behavior.max_utilization;
    m.scale_up_contention =
        up->behavior.memory_contention * m.scale_up_rate.si() / m.main_memory.bandwidth.si();
  }
  m.host = spec.tmpl.host;
  return m;
}

}  // namespace pathfinder
