#include "engine/arch/device_power.hpp"
#include <catch2/catch.hpp>
#include <cstdio>
#include "tests/arch/arch_fixtures.hpp"
#include "engine/arch/generator.hpp"
using namespace pathfinder;
TEST_CASE("zz dump power", "[zz]") {
  for (const char* name : {"a100", "h100"}) {
    ArchTemplate t = test::shipped_template(name);
    ArchSpec spec = bind_template(test::shipped_techlib(), t);
    MicroArch a = generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl));
    DevicePower d = device_power(spec, a);
    std::printf("%s core f=%.3g V=%.3g static %.1f clock %.1f dyn %.1f\n", name, a.core.frequency.si(), a.core.voltage.si(), d.core_static, d.core_clock, d.core_dynamic);
    for (size_t i = 0; i < d.level_static.size(); ++i) std::printf(" L%zu static %.1f dyn %.1f J/B %.3g\n", i, d.level_static[i], d.level_dynamic[i], d.level_joule_per_byte[i]);
    std::printf(" main static %.1f dyn %.1f; links static %.1f %.1f dyn %.1f %.1f; full %.1f idle %.1f\n", d.main_static, d.main_dynamic, d.link_static[0], d.link_static[1], d.link_dynamic[0], d.link_dynamic[1], d.full_activity(), d.chip_idle());
  }
}
