// Number formatting shared by the report writers (arch and perf reports): printf into a
// std::string, rounding to significant digits, and times in adaptive units.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace pathfinder {

// snprintf into a std::string of whatever length the result needs.
// (Not named `fmt`: that would hide spdlog's fmt namespace inside namespace pathfinder.)
template <class... A>
[[nodiscard]] std::string printf_string(const char* format, A... v) {
  char buf[128];
  const int n = std::snprintf(buf, sizeof buf, format, v...);
  if (n < 0) return {};
  const auto len = static_cast<std::size_t>(n);
  if (len < sizeof buf) return std::string(buf, len);
  std::string out(len + 1, '\0');
  std::snprintf(out.data(), out.size(), format, v...);
  out.resize(len);
  return out;
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
