#include "engine/arch/micro_arch_report.hpp"

#include <yaml-cpp/yaml.h>

#include <sstream>

#include "engine/core/format.hpp"

namespace pathfinder {
namespace {

double r4(double x) { return round_significant(x, 4); }

nlohmann::ordered_json use_json(const BudgetUse& u) {
  return {{"area_mm2", r4(u.area_used.in(units::square_millimeters))},
          {"area_budget_mm2", r4(u.area_budget.in(units::square_millimeters))},
          {"power_w", r4(u.power_used.in(units::watts))},
          {"power_budget_w", r4(u.power_budget.in(units::watts))},
          {"perimeter_mm", r4(u.perimeter_used.in(units::millimeters))},
          {"perimeter_budget_mm", r4(u.perimeter_budget.in(units::millimeters))}};
}

std::string pct(Area used, Area budget) {
  return budget.si() > 0 ? printf_string("%.0f%%", 100.0 * used.si() / budget.si()) : "-";
}
std::string pct(Power used, Power budget) {
  return budget.si() > 0 ? printf_string("%.0f%%", 100.0 * used.si() / budget.si()) : "-";
}

}  // namespace

nlohmann::ordered_json to_json(const MicroArch& a) {
  nlohmann::ordered_json j;
  j["name"] = a.name;
  j["logic"] = a.logic;
  j["feasible"] = a.feasible;
  if (!a.feasible) j["infeasible_reason"] = a.infeasible_reason;
  const auto& c = a.core;
  j["core"] = {{"bundles_built", c.bundles_built},
               {"bundles", c.bundles},
               {"mcus", c.mcus},
               {"flop_per_cycle_per_mcu", c.flop_per_cycle_per_mcu},
               {"voltage_v", r4(c.voltage.in(units::volts))},
               {"frequency_ghz", r4(c.frequency.in(units::gigahertz))},
               {"peak_tflops", r4(c.peak.in(units::teraflops_per_second))},
               {"effective_tflops", r4(c.effective.in(units::teraflops_per_second))},
               {"vector_peak_tflops", r4(c.vector_peak.in(units::teraflops_per_second))},
               {"fp8_peak_tflops", r4(c.fp8_peak.in(units::teraflops_per_second))},
               {"fp4_peak_tflops", r4(c.fp4_peak.in(units::teraflops_per_second))},
               {"count_binding", to_string(c.count_binding)},
               {"frequency_binding", to_string(c.frequency_binding)},
               {"use", use_json(c.use)}};
  auto levels = nlohmann::ordered_json::array();
  for (const auto& l : a.levels) {
    levels.push_back({{"name", l.name},
                      {"technology", l.technology},
                      {"scope", to_string(l.scope)},
                      {"instances", l.instances},
                      {"banks_per_instance", l.banks_per_instance},
                      {"capacity_mib", r4(l.capacity.in(units::mebibytes))},
                      {"bandwidth_tbps", r4(l.bandwidth.in(units::terabytes_per_second))},
                      {"static_power_w", r4(l.static_power.in(units::watts))},
                      {"dynamic_power_w", r4(l.dynamic_power.in(units::watts))},
                      {"bank_area_mm2", r4(l.bank_area.in(units::square_millimeters))},
                      {"controller_area_mm2", r4(l.controller_area.in(units::square_millimeters))},
                      {"crossbar_area_mm2", r4(l.crossbar_area.in(units::square_millimeters))},
                      {"count_binding", to_string(l.count_binding)},
                      {"use", use_json(l.use)}});
  }
  j["levels"] = levels;
  const auto& m = a.main_memory;
  j["main_memory"] = {{"technology", m.technology},
                      {"devices", m.devices},
                      {"devices_by_package", m.devices_by_package},
                      {"devices_by_controller", m.devices_by_controller},
                      {"devices_by_perimeter", m.devices_by_perimeter},
                      {"count_binding", to_string(m.count_binding)},
                      {"links", m.links},
                      {"voltage_v", r4(m.voltage.in(units::volts))},
                      {"pin_rate_gbps", r4(m.pin_rate.in(units::gigabytes_per_second) * 8.0)},
                      {"rate_binding", to_string(m.rate_binding)},
                      {"bandwidth_gbs", r4(m.bandwidth.in(units::gigabytes_per_second))},
                      {"effective_bandwidth_gbs",
                       r4(m.effective_bandwidth.in(units::gigabytes_per_second))},
                      {"capacity_gib", r4(m.capacity.in(units::gibibytes))},
                      {"static_power_w", r4(m.static_power.in(units::watts))},
                      {"dynamic_power_w", r4(m.dynamic_power.in(units::watts))},
                      {"use", use_json(m.use)}};
  auto nets = nlohmann::ordered_json::array();
  for (const auto& n : a.networks) {
    nets.push_back({{"tier", to_string(n.tier)},
                    {"technology", n.technology},
                    {"topology", to_string(n.topology)},
                    {"lanes", n.lanes},
                    {"count_binding", to_string(n.count_binding)},
                    {"voltage_v", r4(n.voltage.in(units::volts))},
                    {"lane_rate_gbps", r4(n.lane_rate.in(units::gigabytes_per_second) * 8.0)},
                    {"rate_binding", to_string(n.rate_binding)},
                    {"bandwidth_gbs", r4(n.bandwidth.in(units::gigabytes_per_second))},
                    {"per_direction_gbs", r4(n.per_direction.in(units::gigabytes_per_second))},
                    {"power_w", r4(n.power.in(units::watts))},
                    {"use", use_json(n.use)}});
  }
  j["networks"] = nets;
  j["total"] = use_json(a.total);
  j["total"]["node_area_mm2"] = r4(a.node_area_used.in(units::square_millimeters));
  return j;
}

namespace {
// JSON to YAML with yaml-cpp's emitter: strings double-quoted (so "true" or "12" stay strings
// and any character is escaped), numbers and booleans as JSON prints them (shortest form).
void emit(YAML::Emitter& out, const nlohmann::ordered_json& j) {
  if (j.is_object()) {
    out << YAML::BeginMap;
    for (const auto& [k, v] : j.items()) {
      out << YAML::Key << k << YAML::Value;
      emit(out, v);
    }
    out << YAML::EndMap;
  } else if (j.is_array()) {
    out << YAML::BeginSeq;
    for (const auto& v : j) emit(out, v);
    out << YAML::EndSeq;
  } else if (j.is_string()) {
    out << YAML::DoubleQuoted << j.get<std::string>();
  } else if (j.is_null()) {
    out << YAML::Null;
  } else {
    out << j.dump();
  }
}
}  // namespace

std::string to_yaml(const nlohmann::ordered_json& j) {
  YAML::Emitter out;
  emit(out, j);
  return std::string(out.c_str()) + "\n";
}

std::string format_table(const MicroArch& a) {
  std::ostringstream o;
  o << a.name << " on " << a.logic << (a.feasible ? "" : "  [INFEASIBLE: " + a.infeasible_reason + "]")
    << "\n\n";
  o << printf_string("%-16s%-44s%10s%7s%9s%7s", "component", "derived", "area mm2", "", "power W",
                     "")
    << "  binding\n";
  auto row = [&](const std::string& name, const std::string& what, const BudgetUse& u,
                 const std::string& binding) {
    char line[256];
    std::snprintf(line, sizeof line, "%-16s%-44s%10.1f%7s%9.1f%7s  %s\n", name.c_str(),
                  what.c_str(), u.area_used.in(units::square_millimeters),
                  pct(u.area_used, u.area_budget).c_str(), u.power_used.in(units::watts),
                  pct(u.power_used, u.power_budget).c_str(), binding.c_str());
    o << line;
  };
  const auto& c = a.core;
  row("core",
      std::to_string(c.mcus) + " MCUs/" + std::to_string(c.bundles) + " bundles, " +
          printf_string("%.3g GHz, ", c.frequency.in(units::gigahertz)) +
          printf_string("%.4g TFLOP/s", c.peak.in(units::teraflops_per_second)),
      c.use, std::string(to_string(c.count_binding)) + ", " + to_string(c.frequency_binding));
  for (const auto& l : a.levels) {
    row(l.name,
        printf_string("%.4g MiB, ", l.capacity.in(units::mebibytes)) +
            printf_string("%.4g TB/s", l.bandwidth.in(units::terabytes_per_second)) + " (" +
            std::to_string(l.banks_per_instance) + " banks x " + std::to_string(l.instances) + ")",
        l.use, to_string(l.count_binding));
  }
  const auto& m = a.main_memory;
  row("main_memory",
      std::to_string(m.devices) + "x " + m.technology +
          printf_string(", %.4g GiB, ", m.capacity.in(units::gibibytes)) +
          printf_string("%.4g GB/s", m.bandwidth.in(units::gigabytes_per_second)),
      m.use, std::string(to_string(m.count_binding)) + ", " + to_string(m.rate_binding));
  for (const auto& n : a.networks) {
    row(std::string(to_string(n.tier)),
        std::to_string(n.lanes) + " lanes " + n.technology +
            printf_string(", %.4g GB/s", n.bandwidth.in(units::gigabytes_per_second)),
        n.use, std::string(to_string(n.count_binding)) + ", " + to_string(n.rate_binding));
  }
  o << printf_string("\n%-16s", "total") << printf_string("%-44s", "")
    << printf_string("%10.1f", a.total.area_used.in(units::square_millimeters))
    << printf_string("%7s", pct(a.total.area_used, a.total.area_budget).c_str())
    << printf_string("%9.1f", a.total.power_used.in(units::watts))
    << printf_string("%7s", pct(a.total.power_used, a.total.power_budget).c_str()) << "\n";
  return o.str();
}

}  // namespace pathfinder
