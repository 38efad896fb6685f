// Compile-time quantity types: SI inside, no implicit conversion from double.
//
// A Quantity carries six integer exponents (time, bytes, flops, energy, length, voltage).
// Arithmetic composes exponents at compile time; the run-time value is one double.
// Values are made and read in named units:  gigabytes_per_second(900), t.in(milli * seconds).
#pragma once

#include <cmath>
#include <compare>
#include <type_traits>

namespace pathfinder {

template <int T, int B, int F, int E, int L, int V>
struct Dim {
  static constexpr int time = T, bytes = B, flops = F, energy = E, length = L, voltage = V;
};

template <class D1, class D2>
using DimMul = Dim<D1::time + D2::time, D1::bytes + D2::bytes, D1::flops + D2::flops,
                   D1::energy + D2::energy, D1::length + D2::length, D1::voltage + D2::voltage>;
template <class D1, class D2>
using DimDiv = Dim<D1::time - D2::time, D1::bytes - D2::bytes, D1::flops - D2::flops,
                   D1::energy - D2::energy, D1::length - D2::length, D1::voltage - D2::voltage>;

template <class D>
class Quantity {
 public:
  using dim_type = D;
  constexpr Quantity() = default;
  // Only the unit helpers below (and raw()) build a quantity from a number.
  [[nodiscard]] static constexpr Quantity from_si(double v) { return Quantity(v); }
  [[nodiscard]] constexpr double si() const { return v_; }
  // Value in a unit of the same dimension: t.in(milliseconds).
  [[nodiscard]] constexpr double in(Quantity unit) const { return v_ / unit.v_; }

  constexpr Quantity& operator+=(Quantity o) { v_ += o.v_; return *this; }
  constexpr Quantity& operator-=(Quantity o) { v_ -= o.v_; return *this; }
  constexpr Quantity& operator*=(double s) { v_ *= s; return *this; }
  constexpr Quantity& operator/=(double s) { v_ /= s; return *this; }
  friend constexpr Quantity operator+(Quantity a, Quantity b) { return Quantity(a.v_ + b.v_); }
  friend constexpr Quantity operator-(Quantity a, Quantity b) { return Quantity(a.v_ - b.v_); }
  friend constexpr Quantity operator-(Quantity a) { return Quantity(-a.v_); }
  friend constexpr Quantity operator*(Quantity a, double s) { return Quantity(a.v_ * s); }
  friend constexpr Quantity operator*(double s, Quantity a) { return Quantity(a.v_ * s); }
  friend constexpr Quantity operator/(Quantity a, double s) { return Quantity(a.v_ / s); }
  friend constexpr auto operator<=>(Quantity a, Quantity b) = default;
  // Spelled out: GCC compiles the defaulted <=> on a double into branches, these into one
  // comparison (std::max of two times a maxsd), as for plain doubles.
  friend constexpr bool operator==(Quantity a, Quantity b) { return a.v_ == b.v_; }
  friend constexpr bool operator<(Quantity a, Quantity b) { return a.v_ < b.v_; }
  friend constexpr bool operator>(Quantity a, Quantity b) { return a.v_ > b.v_; }
  friend constexpr bool operator<=(Quantity a, Quantity b) { return a.v_ <= b.v_; }
  friend constexpr bool operator>=(Quantity a, Quantity b) { return a.v_ >= b.v_; }

 private:
  constexpr explicit Quantity(double v) : v_(v) {}
  double v_ = 0.0;
};

using Dimensionless = Dim<0, 0, 0, 0, 0, 0>;

template <class D1, class D2>
[[nodiscard]] constexpr auto operator*(Quantity<D1> a, Quantity<D2> b) {
  using R = DimMul<D1, D2>;
  if constexpr (std::is_same_v<R, Dimensionless>) {
    return a.si() * b.si();
  } else {
    return Quantity<R>::from_si(a.si() * b.si());
  }
}
template <class D1, class D2>
[[nodiscard]] constexpr auto operator/(Quantity<D1> a, Quantity<D2> b) {
  using R = DimDiv<D1, D2>;
  if constexpr (std::is_same_v<R, Dimensionless>) {
    return a.si() / b.si();
  } else {
    return Quantity<R>::from_si(a.si() / b.si());
  }
}
template <class D>
[[nodiscard]] constexpr auto operator/(double s, Quantity<D> a) {
  return Quantity<DimDiv<Dimensionless, D>>::from_si(s / a.si());
}
template <class D>
[[nodiscard]] constexpr Quantity<D> min(Quantity<D> a, Quantity<D> b) {
  return a < b ? a : b;
}
template <class D>
[[nodiscard]] constexpr Quantity<D> max(Quantity<D> a, Quantity<D> b) {
  return a < b ? b : a;
}
// Square root of a quantity with even exponents (area -> length).
template <int T, int B, int F, int E, int L, int V>
[[nodiscard]] inline auto sqrt(Quantity<Dim<T, B, F, E, L, V>> q) {
  static_assert(T % 2 == 0 && B % 2 == 0 && F % 2 == 0 && E % 2 == 0 && L % 2 == 0 &&
                V % 2 == 0);
  return Quantity<Dim<T / 2, B / 2, F / 2, E / 2, L / 2, V / 2>>::from_si(std::sqrt(q.si()));
}

// Aliases named by dimension.
using Time = Quantity<Dim<1, 0, 0, 0, 0, 0>>;
using Bytes = Quantity<Dim<0, 1, 0, 0, 0, 0>>;
using Flops = Quantity<Dim<0, 0, 1, 0, 0, 0>>;
using Energy = Quantity<Dim<0, 0, 0, 1, 0, 0>>;
using Length = Quantity<Dim<0, 0, 0, 0, 1, 0>>;
using Voltage = Quantity<Dim<0, 0, 0, 0, 0, 1>>;
using Area = Quantity<Dim<0, 0, 0, 0, 2, 0>>;
using Frequency = Quantity<Dim<-1, 0, 0, 0, 0, 0>>;
using Bandwidth = Quantity<Dim<-1, 1, 0, 0, 0, 0>>;
using Throughput = Quantity<Dim<-1, 0, 1, 0, 0, 0>>;
using Power = Quantity<Dim<-1, 0, 0, 1, 0, 0>>;
using EnergyPerByte = Quantity<Dim<0, -1, 0, 1, 0, 0>>;
using EnergyPerFlop = Quantity<Dim<0, 0, -1, 1, 0, 0>>;
using PowerPerByte = Quantity<Dim<-1, -1, 0, 1, 0, 0>>;
using AreaPerByte = Quantity<Dim<0, -1, 0, 0, 2, 0>>;
using PerLength = Quantity<Dim<0, 0, 0, 0, -1, 0>>;  // e.g. links per mm of die edge
using FlopsPerByte = Quantity<Dim<0, -1, 1, 0, 0, 0>>;

namespace units {
// Base and named units (each a Quantity equal to one of that unit).
inline constexpr Time seconds = Time::from_si(1.0);
inline constexpr Time milliseconds = Time::from_si(1e-3);
inline constexpr Time microseconds = Time::from_si(1e-6);
inline constexpr Time nanoseconds = Time::from_si(1e-9);
inline constexpr Bytes bytes = Bytes::from_si(1.0);
inline constexpr Bytes bits = Bytes::from_si(0.125);
inline constexpr Bytes kibibytes = Bytes::from_si(1024.0);
inline constexpr Bytes mebibytes = Bytes::from_si(1024.0 * 1024.0);
inline constexpr Bytes gibibytes = Bytes::from_si(1024.0 * 1024.0 * 1024.0);
inline constexpr Bytes megabytes = Bytes::from_si(1e6);
inline constexpr Bytes gigabytes = Bytes::from_si(1e9);
inline constexpr Flops flops = Flops::from_si(1.0);
inline constexpr Energy joules = Energy::from_si(1.0);
inline constexpr Energy picojoules = Energy::from_si(1e-12);
inline constexpr Length meters = Length::from_si(1.0);
inline constexpr Length millimeters = Length::from_si(1e-3);
inline constexpr Voltage volts = Voltage::from_si(1.0);
inline constexpr Area square_millimeters = Area::from_si(1e-6);
inline constexpr Frequency hertz = Frequency::from_si(1.0);
inline constexpr Frequency gigahertz = Frequency::from_si(1e9);
inline constexpr Bandwidth gigabytes_per_second = Bandwidth::from_si(1e9);
inline constexpr Bandwidth terabytes_per_second = Bandwidth::from_si(1e12);
inline constexpr Throughput teraflops_per_second = Throughput::from_si(1e12);
inline constexpr Power watts = Power::from_si(1.0);
inline constexpr EnergyPerByte picojoules_per_bit = EnergyPerByte::from_si(8e-12);
inline constexpr PerLength per_millimeter = PerLength::from_si(1e3);
}  // namespace units

// Helpers so call sites read as units: gigabytes_per_second(900).
[[nodiscard]] constexpr Time seconds(double v) { return v * units::seconds; }
[[nodiscard]] constexpr Time milliseconds(double v) { return v * units::milliseconds; }
[[nodiscard]] constexpr Time microseconds(double v) { return v * units::microseconds; }
[[nodiscard]] constexpr Bytes bytes(double v) { return v * units::bytes; }
[[nodiscard]] constexpr Bytes gibibytes(double v) { return v * units::gibibytes; }
[[nodiscard]] constexpr Bytes mebibytes(double v) { return v * units::mebibytes; }
[[nodiscard]] constexpr Flops flops(double v) { return v * units::flops; }
[[nodiscard]] constexpr Voltage volts(double v) { return v * units::volts; }
[[nodiscard]] constexpr Area square_millimeters(double v) { return v * units::square_millimeters; }
[[nodiscard]] constexpr Length millimeters(double v) { return v * units::millimeters; }
[[nodiscard]] constexpr Frequency gigahertz(double v) { return v * units::gigahertz; }
[[nodiscard]] constexpr Bandwidth gigabytes_per_second(double v) {
  return v * units::gigabytes_per_second;
}
[[nodiscard]] constexpr Throughput teraflops_per_second(double v) {
  return v * units::teraflops_per_second;
}
[[nodiscard]] constexpr Power watts(double v) { return v * units::watts; }
[[nodiscard]] constexpr EnergyPerByte picojoules_per_bit(double v) {
  return v * units::picojoules_per_bit;
}

}  // namespace pathfinder
