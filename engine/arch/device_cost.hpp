// What one device costs to make and to own (issue 16), from its die area, its main memory and
// the template's cost section; every price is a public estimate (techlib/, templates/).
//
//   dies per 300 mm wafer   DPW = π r² / A − π d / √(2A), d = 2r = 300 mm, A the die area
//                           (de Vries, "Investigation of gross die per wafer formulas", IEEE
//                           Trans. Semicond. Manuf. 18(1), 2005: the usual edge-loss form)
//   yield                   negative binomial Y = (1 + A·D0/α)^−α (Stapper; α the clustering,
//                           D0 the defect density of the logic node)
//   die                     wafer price / (DPW · Y), per good die; `dies` dies of area
//                           chip_area / dies per device
//   device                  dies + main memory (capacity x price per GB) + packaging
//   capital per device      device x markup + the system share (servers, switches, racks)
//   per iteration           capital x devices x iteration time / amortization, plus the
//                           energy (J x PUE) at the electricity price
#pragma once

#include "engine/arch/arch_spec.hpp"
#include "engine/arch/micro_arch.hpp"

namespace pathfinder {

struct DeviceCost {
  bool modelled = false;  // the template has a cost section and its technologies have prices
  double die_area_mm2 = 0.0;   // one die
  double dies_per_wafer = 0.0;
  double yield = 0.0;
  double die_usd = 0.0;        // one good die
  double memory_usd = 0.0;
  double packaging_usd = 0.0;
  double device_usd = 0.0;     // manufacturing: dies, memory, packaging
  double capital_usd = 0.0;    // per device: device x markup + system share
  double usd_per_second = 0.0;  // capital_usd over its amortization
  double usd_per_joule = 0.0;   // electricity x PUE
};

// Gross dies of `area_mm2` on a 300 mm wafer (formula above); 0 when none fits.
[[nodiscard]] double dies_per_wafer(double area_mm2);
// Negative-binomial yield of a die of `area_mm2` at `defects_per_cm2` and clustering `alpha`.
[[nodiscard]] double die_yield(double area_mm2, double defects_per_cm2, double alpha);

[[nodiscard]] DeviceCost device_cost(const ArchSpec& spec, const MicroArch& arch);

}  // namespace pathfinder
