// Parsing "900 GB/s", "80 GiB", "826 mm^2", "13 pJ/bit" into typed quantities.
// k M G T P are powers of 1000, Ki Mi Gi Ti Pi powers of 1024; never context dependent.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "engine/core/units.hpp"

namespace pathfinder {

// Run-time dimension: exponents of time, bytes, flops, energy, length, voltage.
struct DimVec {
  std::array<int, 6> e{};
  friend bool operator==(const DimVec&, const DimVec&) = default;
};

template <class D>
[[nodiscard]] constexpr DimVec dim_of() {
  return DimVec{{D::time, D::bytes, D::flops, D::energy, D::length, D::voltage}};
}

struct ParsedQuantity {
  double si = 0.0;
  DimVec dim;
};

// The magnitudes (SI units) a quantity may have: zero, or between these (parse_typed_quantity).
inline constexpr double kMinQuantity = 1e-24;
inline constexpr double kMaxQuantity = 1e24;

// Parse "<number> <unit>". Returns nullopt and sets *why on failure.
[[nodiscard]] std::optional<ParsedQuantity> parse_quantity(std::string_view text, std::string* why);

// "a bandwidth such as \"900 GB/s\"" for messages.
[[nodiscard]] std::string describe_dimension(const DimVec& d);

// "a size" -- describe_dimension without the example.
[[nodiscard]] std::string dimension_noun(const DimVec& d);

// The SI spelling of a dimension, e.g. "B/s".
[[nodiscard]] std::string si_unit_string(const DimVec& d);

// Parse text and check it has the dimension of Q. On failure returns nullopt and sets *why to
// `expected a bandwidth such as "900 GB/s", got "900"`.
template <class D>
[[nodiscard]] std::optional<Quantity<D>> parse_typed_quantity(std::string_view text,
                                                              std::string* why) {
  std::string inner;
  const auto p = parse_quantity(text, &inner);
  const DimVec want = dim_of<D>();
  if (!p || !(p->dim == want)) {
    *why = "expected " + describe_dimension(want) + ", got \"" + std::string(text) + "\"";
    if (!p && !inner.empty()) *why += " (" + inner + ")";
    else if (p) *why += " (" + dimension_noun(p->dim) + ")";
    return std::nullopt;
  }
  // Physical inputs span about 1e-15 (pJ per bit) to 1e21 (FLOP/s of a system) in SI units;
  // beyond 1e-24..1e24 a value is a typo or an attack, and its products overflow to inf.
  const double a = p->si < 0.0 ? -p->si : p->si;
  if (a != 0.0 && (a > kMaxQuantity || a < kMinQuantity)) {
    *why = "expected " + describe_dimension(want) + " of a physical size (between 1e-24 and 1e24 " +
           si_unit_string(want) + "), got \"" + std::string(text) + "\"";
    return std::nullopt;
  }
  return Quantity<D>::from_si(p->si);
}

}  // namespace pathfinder
