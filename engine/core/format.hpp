// Number formatting shared by the report writers (arch and perf reports): printf-style into a
// std::string, rounding to significant digits, and times in adaptive units.
#pragma once

#include <fmt/printf.h>

#include <cmath>
#include <string>

namespace pathfinder {

// printf-style formatting into a std::string, by fmt (the library spdlog links): type-checked
// arguments, any length. (Not named `fmt`: that would hide the fmt namespace inside namespace
// pathfinder.)
template <class... A>
[[nodiscard]] std::string printf_string(const char* format, const A&... v) {
  return fmt::sprintf(format, v...);
}

// x rounded to `digits` significant digits (reports stay stable and readable); 0, inf and NaN
// unchanged.
[[nodiscard]] inline double round_significant(double x, int digits = 4) {
  if (x == 0.0 || !std::isfinite(x)) return x;
  const double scale =
      std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::abs(x)))));
  return std::round(x * scale) / scale;
}

// A duration in seconds with four significant digits in ns, us, ms or s, whichever keeps the
// number in [1, 1000): "512 ns", "28.12 us", "10.36 ms", "1.234 s"; whole seconds from 10^4 s
// ("12150 s"). 0 prints as "0 s".
[[nodiscard]] inline std::string format_seconds(double s) {
  if (s == 0.0 || !std::isfinite(s)) return printf_string("%g s", s);
  s = round_significant(s, 4);  // 999.96 us is "1 ms", not "1000 us"
  const double a = std::abs(s);
  if (a < 1e-6) return printf_string("%.4g ns", s * 1e9);
  if (a < 1e-3) return printf_string("%.4g us", s * 1e6);
  if (a < 1.0) return printf_string("%.4g ms", s * 1e3);
  if (a < 1e4) return printf_string("%.4g s", s);
  return printf_string("%.0f s", s);
}

}  // namespace pathfinder
