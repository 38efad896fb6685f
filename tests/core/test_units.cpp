// Tests for engine/core/units.hpp: compile-time dimensions, conversions, named helpers.
#include "engine/core/units.hpp"

#include <catch2/catch.hpp>

#include <type_traits>

using namespace pathfinder;

// Quantities are never built from or silently turned into a bare double.
static_assert(!std::is_constructible_v<Time, double>);
static_assert(!std::is_convertible_v<double, Time>);
static_assert(!std::is_convertible_v<Time, double>);
static_assert(!std::is_constructible_v<Bandwidth, double>);
// Different dimensions do not mix.
static_assert(!std::is_convertible_v<Bytes, Bandwidth>);
static_assert(!std::is_convertible_v<Time, Frequency>);
// A quantity is still a cheap value type.
static_assert(std::is_trivially_copyable_v<Bandwidth>);
static_assert(sizeof(Bandwidth) == sizeof(double));

TEST_CASE("arithmetic composes dimensions", "[core][units]") {
  SECTION("bandwidth x time = bytes") {
    const auto b = gigabytes_per_second(900) * milliseconds(2);
    static_assert(std::is_same_v<decltype(b), const Bytes>);
    // 900e9 B/s × 2e-3 s = 1.8e9 B
    CHECK(b.si() == Approx(1.8e9));
    CHECK(b.in(units::gigabytes) == Approx(1.8));
  }
  SECTION("bytes / bandwidth = time") {
    const auto t = gibibytes(80) / gigabytes_per_second(2000);
    static_assert(std::is_same_v<decltype(t), const Time>);
    // 80 × 2^30 B / 2e12 B/s = 85899345920 / 2e12 s = 42.94967296 ms
    CHECK(t.in(units::milliseconds) == Approx(42.94967296));
  }
  SECTION("power / bandwidth = energy per byte") {
    const auto e = watts(10) / gigabytes_per_second(1000);
    static_assert(std::is_same_v<decltype(e), const EnergyPerByte>);
    // 10 W / 1e12 B/s = 1e-11 J/B = 1e-11 / 8e-12 pJ/bit = 1.25 pJ/bit
    CHECK(e.si() == Approx(1e-11));
    CHECK(e.in(units::picojoules_per_bit) == Approx(1.25));
  }
  SECTION("energy per byte x bandwidth = power") {
    const auto p = picojoules_per_bit(13) * gigabytes_per_second(900);
    static_assert(std::is_same_v<decltype(p), const Power>);
    // 13 × 8e-12 J/B × 9e11 B/s = 93.6 W
    CHECK(p.in(units::watts) == Approx(93.6));
  }
  SECTION("throughput / bandwidth = FLOP per byte") {
    const auto ai = teraflops_per_second(312) / gigabytes_per_second(2000);
    static_assert(std::is_same_v<decltype(ai), const FlopsPerByte>);
    // 312e12 FLOP/s / 2e12 B/s = 156 FLOP/B
    CHECK(ai.si() == Approx(156.0));
  }
  SECTION("length x length = area; area / area is a plain double") {
    const auto a = millimeters(2) * millimeters(3);
    static_assert(std::is_same_v<decltype(a), const Area>);
    // 2 mm × 3 mm = 6 mm^2 = 6e-6 m^2
    CHECK(a.si() == Approx(6e-6));
    const auto ratio = square_millimeters(826) / square_millimeters(413);
    static_assert(std::is_same_v<decltype(ratio), const double>);
    CHECK(ratio == Approx(2.0));
    const auto r2 = gigahertz(1.41) * seconds(1);  // Hz × s is dimensionless
    static_assert(std::is_same_v<decltype(r2), const double>);
    CHECK(r2 == Approx(1.41e9));
  }
  SECTION("double / quantity inverts the dimension") {
    const auto f = 1.0 / microseconds(4);
    static_assert(std::is_same_v<decltype(f), const Frequency>);
    // 1 / 4e-6 s = 250 kHz
    CHECK(f.in(units::hertz) == Approx(2.5e5));
    const auto pl = 400.0 / units::millimeters;
    static_assert(std::is_same_v<decltype(pl), const PerLength>);
    // 400 / 1e-3 m = 4e5 /m = 400 /mm
    CHECK(pl.in(units::per_millimeter) == Approx(400.0));
  }
}

TEST_CASE("same-dimension arithmetic and comparison", "[core][units]") {
  Time t = milliseconds(3) + microseconds(500);
  CHECK(t.in(units::microseconds) == Approx(3500.0));
  t -= milliseconds(1);
  CHECK(t.in(units::milliseconds) == Approx(2.5));
  t *= 4.0;
  CHECK(t.in(units::milliseconds) == Approx(10.0));
  t /= 5.0;
  CHECK(t.in(units::milliseconds) == Approx(2.0));
  CHECK((-t).si() == Approx(-2e-3));
  CHECK((t * 3.0).in(units::milliseconds) == Approx(6.0));
  CHECK((3.0 * t).in(units::milliseconds) == Approx(6.0));
  CHECK((t / 4.0).in(units::microseconds) == Approx(500.0));
  CHECK((milliseconds(5) - seconds(1)).si() == Approx(-0.995));

  CHECK(milliseconds(1) < seconds(1));
  CHECK(microseconds(1000) == milliseconds(1));
  CHECK(gigabytes_per_second(900) > gigabytes_per_second(800));
  CHECK(pathfinder::min(watts(300), watts(400)).in(units::watts) == Approx(300.0));
  CHECK(pathfinder::max(watts(300), watts(400)).in(units::watts) == Approx(400.0));
  CHECK(Time{}.si() == 0.0);  // default-constructed quantity is zero
}

TEST_CASE("in() converts to named units", "[core][units]") {
  CHECK(gigabytes_per_second(900).in(units::terabytes_per_second) == Approx(0.9));
  CHECK(seconds(1.5).in(units::milliseconds) == Approx(1500.0));
  CHECK(microseconds(2).in(units::nanoseconds) == Approx(2000.0));
  // 1 GiB = 2^30 B = 1024 MiB; in decimal GB: 1073741824 / 1e9
  CHECK(gibibytes(1).in(units::mebibytes) == Approx(1024.0));
  CHECK(gibibytes(1).in(units::gigabytes) == Approx(1.073741824));
  // 64 MiB = 64 × 2^20 B = 67108864 B = 67.108864 MB
  CHECK(mebibytes(64).in(units::megabytes) == Approx(67.108864));
  CHECK(mebibytes(2).in(units::kibibytes) == Approx(2048.0));
  CHECK(bytes(3).in(units::bits) == Approx(24.0));  // 1 B = 8 bit
  CHECK(flops(2e12).si() == Approx(2e12));
  CHECK(volts(0.8).in(units::volts) == Approx(0.8));
  CHECK(square_millimeters(826).si() == Approx(826e-6));
  CHECK(millimeters(28.7).in(units::meters) == Approx(0.0287));
  CHECK(gigahertz(1.41).in(units::hertz) == Approx(1.41e9));
  CHECK(teraflops_per_second(312).si() == Approx(3.12e14));
  // 13 pJ/bit = 13e-12 J / 0.125 B = 1.04e-10 J/B
  CHECK(picojoules_per_bit(13).si() == Approx(1.04e-10));
  CHECK((picojoules_per_bit(1) * units::bits).in(units::picojoules) == Approx(1.0));
  CHECK(Energy::from_si(5e-9).in(units::picojoules) == Approx(5000.0));
}

TEST_CASE("sqrt of an area is a length", "[core][units]") {
  const auto side = pathfinder::sqrt(square_millimeters(826));
  static_assert(std::is_same_v<decltype(side), const Length>);
  // sqrt(826 mm^2) = 28.7402... mm
  CHECK(side.in(units::millimeters) == Approx(28.74021573));
  const auto s4 = sqrt(square_millimeters(4));  // found by ADL
  CHECK(s4.in(units::millimeters) == Approx(2.0));
  // sqrt(1/s^2) = 1/s: even exponents in any slot are allowed
  const auto f = pathfinder::sqrt(gigahertz(2) * gigahertz(8));
  static_assert(std::is_same_v<decltype(f), const Frequency>);
  CHECK(f.in(units::gigahertz) == Approx(4.0));
}

TEST_CASE("constexpr quantities", "[core][units]") {
  constexpr Bandwidth bw = gigabytes_per_second(900);
  constexpr Bytes moved = bw * seconds(2);
  static_assert(moved.si() == 1.8e12);  // 900e9 B/s × 2 s
  static_assert(units::kibibytes.si() == 1024.0);
  static_assert(units::picojoules_per_bit.si() == 8e-12);  // 1e-12 J / 0.125 B
  CHECK(moved.in(units::gigabytes) == Approx(1800.0));
}
