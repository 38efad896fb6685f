#include "engine/arch/device_cost.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace pathfinder {

double dies_per_wafer(double area_mm2) {
  if (!(area_mm2 > 0.0)) return 0.0;
  constexpr double kDiameter = 300.0;  // mm
  const double r = kDiameter / 2.0;
  const double n = std::numbers::pi * r * r / area_mm2 -
                   std::numbers::pi * kDiameter / std::sqrt(2.0 * area_mm2);
  return std::max(0.0, n);
}

double die_yield(double area_mm2, double defects_per_cm2, double alpha) {
  const double faults = area_mm2 / 100.0 * defects_per_cm2;  // mm^2 -> cm^2
  return std::pow(1.0 + faults / alpha, -alpha);
}

DeviceCost device_cost(const ArchSpec& spec, const MicroArch& arch) {
  DeviceCost c;
  const std::optional<CostSpec>& cs = spec.tmpl.cost;
  if (!cs || !spec.logic.wafer_usd || !spec.memory.usd_per_gb) return c;
  c.die_area_mm2 = spec.tmpl.budget.chip_area.si() * 1e6 / cs->dies;
  c.dies_per_wafer = dies_per_wafer(c.die_area_mm2);
  c.yield = die_yield(c.die_area_mm2, spec.logic.defects_per_cm2, spec.logic.clustering);
  const double good = c.dies_per_wafer * c.yield;
  if (!(good > 0.0)) return c;  // no die fits the wafer: no cost model
  c.die_usd = *spec.logic.wafer_usd / good;
  c.memory_usd = arch.main_memory.capacity.si() / 1e9 * *spec.memory.usd_per_gb;
  c.packaging_usd = cs->packaging_usd;
  c.device_usd = c.die_usd * cs->dies + c.memory_usd + c.packaging_usd;
  c.capital_usd = c.device_usd * cs->markup + cs->system_usd;
  c.usd_per_second = c.capital_usd / cs->amortization.si();
  c.usd_per_joule = cs->usd_per_kwh * cs->pue / 3.6e6;
  c.modelled = true;
  return c;
}

}  // namespace pathfinder
