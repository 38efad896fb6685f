#include "engine/arch/device_power.hpp"

#include <algorithm>

#include "engine/core/error.hpp"

namespace pathfinder {

double DevicePower::chip_idle() const {
  double w = core_static + core_clock + main_static + link_static[0] + link_static[1];
  for (int i = 0; i < levels; ++i) w += level_static[static_cast<std::size_t>(i)];
  return w;
}

double DevicePower::always_on() const { return chip_idle() + link_static[2] + overhead; }

double DevicePower::full_activity() const {
  double w = chip_idle() + core_dynamic + main_dynamic + link_dynamic[0] + link_dynamic[1];
  for (int i = 0; i < levels; ++i) w += level_dynamic[static_cast<std::size_t>(i)];
  return w;
}

DevicePower device_power(const ArchSpec& spec, const MicroArch& arch) {
  DevicePower d;
  const CoreStats& c = arch.core;
  const double full = c.use.power_used.si();
  // Nominal power from the operating point: P = P_nom · (f/fn) · (V/Vn)² (vf_scaling.hpp).
  const double v = c.voltage.si() / spec.logic.vf.nominal.si();
  const double f = c.frequency.si() / spec.logic.nominal_frequency.si();
  const double nominal = v > 0.0 && f > 0.0 ? full / (f * v * v) : 0.0;
  d.core_static = std::min(full, spec.logic.static_share * nominal * v);
  const double dynamic = full - d.core_static;
  d.core_clock = (1.0 - spec.logic.clock_gating) * dynamic;
  d.core_dynamic = spec.logic.clock_gating * dynamic;
  // Per FLOP on real operands: the provisioned energy times the template's factor.
  const double per_flop = d.core_dynamic * spec.tmpl.core.flop_energy_factor;
  const double peak = c.peak.si();
  d.joule_per_flop = peak > 0.0 ? per_flop / peak : 0.0;
  const double fp8 = c.fp8_peak.si(), vec = c.vector_peak.si();
  d.joule_per_fp8_flop = fp8 > 0.0
                             ? d.core_dynamic * spec.tmpl.core.fp8_flop_energy_factor / fp8
                             : d.joule_per_flop;
  const double fp4 = c.fp4_peak.si();
  d.joule_per_fp4_flop = fp4 > 0.0
                             ? d.core_dynamic * spec.tmpl.core.fp4_flop_energy_factor / fp4
                             : d.joule_per_fp8_flop;
  d.joule_per_vector_flop = vec > 0.0 ? per_flop / vec : 0.0;
  PF_ASSERT(arch.levels.size() <= static_cast<std::size_t>(kMaxOnChipLevels));  // the loader's
  for (const LevelStats& l : arch.levels) {
    const auto i = static_cast<std::size_t>(d.levels++);
    d.level_static[i] = l.static_power.si();
    const double bw = l.bandwidth.si();
    d.level_joule_per_byte[i] = bw > 0.0 ? l.dynamic_power.si() / bw : 0.0;
    d.level_dynamic[i] = l.dynamic_power.si();
  }
  const MainMemoryStats& m = arch.main_memory;
  d.main_static = m.static_power.si();
  d.main_joule_per_byte = m.bandwidth.si() > 0.0 ? m.dynamic_power.si() / m.bandwidth.si() : 0.0;
  d.main_dynamic = m.dynamic_power.si();
  for (const NetworkStats& n : arch.networks) {
    const NetworkTech* tech = n.tier == NetworkTier::kIntraPackage
                                  ? (spec.intra ? &*spec.intra : nullptr)
                                  : (spec.inter ? &*spec.inter : nullptr);
    const double share = tech != nullptr ? tech->static_share : 0.0;
    const auto i = static_cast<std::size_t>(n.tier == NetworkTier::kIntraPackage ? 0 : 1);
    const double w = n.power.si();
    d.link_static[i] = share * w;
    d.link_dynamic[i] = (1.0 - share) * w;
    const double bw = n.per_direction.si();
    d.link_joule_per_byte[i] = bw > 0.0 ? (1.0 - share) * w / bw : 0.0;
  }
  if (spec.tmpl.scale_out) d.link_static[2] = spec.tmpl.scale_out->power.si();
  d.overhead = spec.tmpl.overhead_power.si();
  const Budget& b = spec.tmpl.budget;
  d.limit = b.power_limit > Power{} ? b.power_limit.si() : b.power.si();
  return d;
}

}  // namespace pathfinder
