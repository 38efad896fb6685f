#include "engine/config/quantity.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <utility>
#include <vector>

namespace pathfinder {
namespace {

struct BaseUnit {
  std::string_view name;
  double si;
  DimVec dim;
};

// time, bytes, flops, energy, length, voltage
constexpr DimVec kTime{{1, 0, 0, 0, 0, 0}};
constexpr DimVec kBytes{{0, 1, 0, 0, 0, 0}};
constexpr DimVec kFlops{{0, 0, 1, 0, 0, 0}};
constexpr DimVec kEnergy{{0, 0, 0, 1, 0, 0}};
constexpr DimVec kLength{{0, 0, 0, 0, 1, 0}};
constexpr DimVec kVoltage{{0, 0, 0, 0, 0, 1}};
constexpr DimVec kFreq{{-1, 0, 0, 0, 0, 0}};
constexpr DimVec kPower{{-1, 0, 0, 1, 0, 0}};
constexpr DimVec kFlopRate{{-1, 0, 1, 0, 0, 0}};

const std::vector<BaseUnit>& base_units() {
  static const std::vector<BaseUnit> u = {
      {"s", 1.0, kTime},        {"Hz", 1.0, kFreq},       {"B", 1.0, kBytes},
      {"bit", 0.125, kBytes},   {"b", 0.125, kBytes},     {"FLOP", 1.0, kFlops},
      {"flop", 1.0, kFlops},    {"FLOPS", 1.0, kFlopRate}, {"J", 1.0, kEnergy},
      {"W", 1.0, kPower},       {"m", 1.0, kLength},      {"V", 1.0, kVoltage},
      // Long times (an amortization period): hour, day, Julian year; the watt-hour (kWh).
      {"h", 3600.0, kTime},     {"d", 86400.0, kTime},    {"yr", 31557600.0, kTime},
      {"Wh", 3600.0, kEnergy},
  };
  return u;
}

struct Prefix {
  std::string_view name;
  double factor;
};
const std::vector<Prefix>& prefixes() {
  static const std::vector<Prefix> p = {
      {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
      {"Pi", 1125899906842624.0}, {"f", 1e-15}, {"p", 1e-12}, {"n", 1e-9}, {"u", 1e-6},
      {"\xC2\xB5", 1e-6}, {"m", 1e-3}, {"c", 1e-2}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9},
      {"T", 1e12}, {"P", 1e15}, {"E", 1e18},
  };
  return p;
}

DimVec scale(const DimVec& d, int k) {
  DimVec r;
  for (std::size_t i = 0; i < 6; ++i) r.e[i] = d.e[i] * k;
  return r;
}
DimVec add(const DimVec& a, const DimVec& b) {
  DimVec r;
  for (std::size_t i = 0; i < 6; ++i) r.e[i] = a.e[i] + b.e[i];
  return r;
}

// One unit term such as "GB", "mm^2", "pJ". Returns false if unknown.
bool parse_term(std::string_view term, double* si, DimVec* dim, std::string* why) {
  int exponent = 1;
  // "mm2", "m3": a length with its exponent written without the caret, as people type it.
  if (term.find('^') == std::string_view::npos && term.size() >= 2 &&
      (term.back() == '2' || term.back() == '3') && term[term.size() - 2] == 'm') {
    exponent = term.back() - '0';
    term.remove_suffix(1);
  }
  if (const auto caret = term.find('^'); caret != std::string_view::npos) {
    const auto exp_text = term.substr(caret + 1);
    const auto res = std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
    if (res.ec != std::errc() || res.ptr != exp_text.data() + exp_text.size()) {
      *why = "bad exponent in \"" + std::string(term) + "\"";
      return false;
    }
    term = term.substr(0, caret);
  }
  auto finish = [&](double f, const DimVec& d) {
    *si = std::pow(f, exponent);
    *dim = scale(d, exponent);
    return true;
  };
  for (const auto& b : base_units()) {
    if (term == b.name) return finish(b.si, b.dim);
  }
  for (const auto& p : prefixes()) {
    if (term.size() <= p.name.size() || term.substr(0, p.name.size()) != p.name) continue;
    const auto rest = term.substr(p.name.size());
    for (const auto& b : base_units()) {
      if (rest == b.name) return finish(p.factor * b.si, b.dim);
    }
  }
  *why = "unknown unit \"" + std::string(term) + "\"";
  return false;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<ParsedQuantity> parse_quantity(std::string_view text, std::string* why) {
  text = trim(text);
  // Number: use strtod on a bounded copy (from_chars for double is fine in GCC 12 too, but
  // strtod accepts the same grammar users write: 1e-12, .5, 3.).
  const std::string copy(text);
  char* end = nullptr;
  const double number = std::strtod(copy.c_str(), &end);
  if (end == copy.c_str()) {
    *why = "no number";
    return std::nullopt;
  }
  if (!std::isfinite(number)) {
    *why = "not a finite number";
    return std::nullopt;
  }
  std::string_view unit = trim(std::string_view(copy).substr(static_cast<std::size_t>(end - copy.c_str())));
  ParsedQuantity out{number, DimVec{}};
  if (unit.empty()) {
    *why = "no unit";
    return std::nullopt;
  }
  // Split on '/', '*' and spaces; '/' divides by the next term only.
  int sign = 1;
  if (unit.substr(0, 4) == "per ") {  // "400 per mm" = 400 /mm
    unit = unit.substr(4);
    sign = -1;
  }
  std::size_t i = 0;
  bool expect_term = true;
  while (i < unit.size()) {
    const char c = unit[i];
    if (c == ' ') {
      ++i;
      continue;
    }
    if (c == '/' || c == '*') {
      sign = (c == '/') ? -1 : 1;
      expect_term = true;
      ++i;
      continue;
    }
    if (!expect_term) sign = 1;  // "J s" = J*s
    std::size_t j = i;
    while (j < unit.size() && unit[j] != '/' && unit[j] != '*' && unit[j] != ' ') ++j;
    double f = 1.0;
    DimVec d;
    if (!parse_term(unit.substr(i, j - i), &f, &d, why)) return std::nullopt;
    out.si = (sign > 0) ? out.si * f : out.si / f;
    out.dim = add(out.dim, scale(d, sign));
    sign = 1;
    expect_term = false;
    i = j;
  }
  if (expect_term) {
    *why = "unit ends with an operator";
    return std::nullopt;
  }
  return out;
}

std::string si_unit_string(const DimVec& d) {
  static const char* names[6] = {"s", "B", "FLOP", "J", "m", "V"};
  std::string num, den;
  for (std::size_t i = 0; i < 6; ++i) {
    const int e = d.e[i];
    if (e == 0) continue;
    std::string& s = e > 0 ? num : den;
    if (!s.empty()) s += e > 0 ? "*" : "/";  // '/' divides by the next term only
    s += names[i];
    if (std::abs(e) != 1) s += "^" + std::to_string(std::abs(e));
  }
  if (num.empty()) num = "1";
  return den.empty() ? num : num + "/" + den;
}

std::string describe_dimension(const DimVec& d) {
  static const std::vector<std::pair<DimVec, std::string>> known = {
      {dim_of<Time::dim_type>(), "a time such as \"1.5 us\""},
      {dim_of<Bytes::dim_type>(), "a size such as \"80 GiB\""},
      {dim_of<Flops::dim_type>(), "a FLOP count such as \"512 FLOP\""},
      {dim_of<Energy::dim_type>(), "an energy such as \"1 nJ\""},
      {dim_of<Length::dim_type>(), "a length such as \"28.7 mm\""},
      {dim_of<Voltage::dim_type>(), "a voltage such as \"0.8 V\""},
      {dim_of<Area::dim_type>(), "an area such as \"826 mm^2\""},
      {dim_of<Frequency::dim_type>(), "a frequency such as \"1.41 GHz\""},
      {dim_of<Bandwidth::dim_type>(), "a bandwidth such as \"900 GB/s\""},
      {dim_of<Throughput::dim_type>(), "a FLOP rate such as \"312 TFLOP/s\""},
      {dim_of<Power::dim_type>(), "a power such as \"300 W\""},
      {dim_of<EnergyPerByte::dim_type>(), "an energy per bit such as \"13 pJ/bit\""},
      {dim_of<EnergyPerFlop::dim_type>(), "an energy per FLOP such as \"0.5 pJ/FLOP\""},
      {dim_of<PowerPerByte::dim_type>(), "a static power per bit such as \"8 pW/bit\""},
      {dim_of<AreaPerByte::dim_type>(), "an area per bit such as \"0.064 um^2/bit\""},
      {dim_of<PerLength::dim_type>(), "a density per length such as \"400 /mm\""},
      {DimVec{}, "a plain number such as \"0.5\""},
  };
  for (const auto& [dim, text] : known) {
    if (dim == d) return text;
  }
  return "a quantity in " + si_unit_string(d);
}

}  // namespace pathfinder

namespace pathfinder {
std::string dimension_noun(const DimVec& d) {
  const std::string full = describe_dimension(d);
  return full.substr(0, full.find(" such as"));
}
}  // namespace pathfinder
