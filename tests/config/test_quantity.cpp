// Tests for engine/config/quantity.hpp: "<number> <unit>" parsing and dimension names.
#include "engine/config/quantity.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace pathfinder;

namespace {

// Parse text that must succeed; fails the test with the reason otherwise.
ParsedQuantity parse_ok(const std::string& text) {
  std::string why;
  const auto p = parse_quantity(text, &why);
  INFO("parsing \"" << text << "\": " << why);
  REQUIRE(p.has_value());
  return *p;
}

// Parse text that must fail; returns the reason.
std::string parse_err(const std::string& text) {
  std::string why;
  const auto p = parse_quantity(text, &why);
  INFO("parsing \"" << text << "\"");
  REQUIRE_FALSE(p.has_value());
  return why;
}

template <class Q>
bool has_dim(const ParsedQuantity& p) {
  return p.dim == dim_of<typename Q::dim_type>();
}

}  // namespace

TEST_CASE("parse_quantity: values from GPU datasheets", "[config][quantity]") {
  auto p = parse_ok("900 GB/s");
  CHECK(p.si == Approx(9e11));  // 900 × 1e9 B / 1 s
  CHECK(has_dim<Bandwidth>(p));

  p = parse_ok("80 GiB");
  CHECK(p.si == Approx(85899345920.0));  // 80 × 2^30 B
  CHECK(has_dim<Bytes>(p));

  p = parse_ok("826 mm^2");
  CHECK(p.si == Approx(826e-6));  // 826 × (1e-3 m)^2
  CHECK(has_dim<Area>(p));

  p = parse_ok("1.41 GHz");
  CHECK(p.si == Approx(1.41e9));
  CHECK(has_dim<Frequency>(p));

  p = parse_ok("13 pJ/bit");
  CHECK(p.si == Approx(13e-12 * 8));  // 13e-12 J / 0.125 B = 1.04e-10 J/B
  CHECK(has_dim<EnergyPerByte>(p));

  p = parse_ok("826 mm2");  // as people type it: mm2 = mm^2
  CHECK(p.si == Approx(826e-6));
  CHECK(has_dim<Area>(p));
  CHECK(parse_ok("1 m2").si == Approx(1.0));  // 1 m^2 in SI

  p = parse_ok("0.38 mm^2");
  CHECK(p.si == Approx(0.38e-6));  // 0.38 × 1e-6 m^2
  CHECK(has_dim<Area>(p));

  p = parse_ok("300 W");
  CHECK(p.si == Approx(300.0));
  CHECK(has_dim<Power>(p));

  p = parse_ok("1e-12 J/bit");
  CHECK(p.si == Approx(8e-12));  // 1e-12 J / 0.125 B
  CHECK(has_dim<EnergyPerByte>(p));

  p = parse_ok("0.064 um^2/bit");
  CHECK(p.si == Approx(5.12e-13));  // 0.064 × 1e-12 m^2 / 0.125 B
  CHECK(has_dim<AreaPerByte>(p));

  p = parse_ok("312 TFLOP/s");
  CHECK(p.si == Approx(3.12e14));  // 312 × 1e12 FLOP / s
  CHECK(has_dim<Throughput>(p));

  p = parse_ok("312 TFLOPS");  // FLOPS is already a rate
  CHECK(p.si == Approx(3.12e14));
  CHECK(has_dim<Throughput>(p));

  p = parse_ok("8 pW/bit");
  CHECK(p.si == Approx(6.4e-11));  // 8e-12 W / 0.125 B
  CHECK(has_dim<PowerPerByte>(p));

  p = parse_ok("100 ns");
  CHECK(p.si == Approx(1e-7));  // 100 × 1e-9 s
  CHECK(has_dim<Time>(p));

  p = parse_ok("0.8 V");
  CHECK(p.si == Approx(0.8));
  CHECK(has_dim<Voltage>(p));
}

TEST_CASE("parse_quantity: densities per length", "[config][quantity]") {
  auto p = parse_ok("400 /mm");
  CHECK(p.si == Approx(4e5));  // 400 / 1e-3 m
  CHECK(has_dim<PerLength>(p));

  p = parse_ok("400 mm^-1");
  CHECK(p.si == Approx(4e5));  // 400 × (1e-3 m)^-1
  CHECK(has_dim<PerLength>(p));
}

TEST_CASE("parse_quantity: hours, days and years, kWh is an energy", "[config][quantity]") {
  auto p = parse_ok("4 yr");  // Julian years: 4 x 365.25 x 86,400 s
  CHECK(p.si == Approx(4.0 * 365.25 * 86400.0));
  CHECK(has_dim<Time>(p));
  CHECK(parse_ok("2 h").si == 7200.0);
  CHECK(parse_ok("3 d").si == 3.0 * 86400.0);
  p = parse_ok("1 kWh");  // 1e3 W x 3,600 s
  CHECK(p.si == Approx(3.6e6));
  CHECK(has_dim<Energy>(p));
}

TEST_CASE("parse_quantity: \"per\" spelling of a density", "[config][quantity]") {
  // "400 per mm" means the same as "400 /mm": 400 / 1e-3 m = 4e5 /m
  const auto p = parse_ok("400 per mm");
  CHECK(has_dim<PerLength>(p));
  CHECK(p.si == Approx(4e5));
}

TEST_CASE("parse_quantity: decimal and binary prefixes", "[config][quantity]") {
  CHECK(parse_ok("1 kB").si == Approx(1e3));
  CHECK(parse_ok("1 KiB").si == Approx(1024.0));            // 2^10
  CHECK(parse_ok("1 MB").si == Approx(1e6));
  CHECK(parse_ok("1 MiB").si == Approx(1048576.0));         // 2^20
  CHECK(parse_ok("1 GB").si == Approx(1e9));
  CHECK(parse_ok("1 GiB").si == Approx(1073741824.0));      // 2^30
  CHECK(parse_ok("1 TB").si == Approx(1e12));
  CHECK(parse_ok("1 TiB").si == Approx(1099511627776.0));   // 2^40
  CHECK(parse_ok("2 Gb/s").si == Approx(2.5e8));            // 2e9 bit/s / 8
  CHECK(parse_ok("40 MiB").si == Approx(41943040.0));       // 40 × 2^20
  CHECK(parse_ok("1.5 ms").si == Approx(1.5e-3));
  CHECK(parse_ok("2 us").si == Approx(2e-6));
  CHECK(parse_ok("2 \xC2\xB5s").si == Approx(2e-6));  // micro sign
  CHECK(parse_ok("3 nJ").si == Approx(3e-9));
  CHECK(parse_ok("5 fJ").si == Approx(5e-15));
  CHECK(parse_ok("2 kW").si == Approx(2e3));
  CHECK(parse_ok("1 PB").si == Approx(1e15));
}

TEST_CASE("parse_quantity: spacing and compound units", "[config][quantity]") {
  CHECK(parse_ok("  900   GB / s ").si == Approx(9e11));
  CHECK(parse_ok("900GB/s").si == Approx(9e11));
  const auto js = parse_ok("2 W*s");  // W × s = J
  CHECK(has_dim<Energy>(js));
  CHECK(js.si == Approx(2.0));
  const auto ws = parse_ok("2 W s");  // a space multiplies as well
  CHECK(has_dim<Energy>(ws));
  const auto acc = parse_ok("4 B/s/s");  // '/' divides by the next term only
  CHECK(acc.dim == DimVec{{-2, 1, 0, 0, 0, 0}});
  CHECK(acc.si == Approx(4.0));
  const auto ratio = parse_ok("3 s/s");
  CHECK(ratio.dim == DimVec{});
  CHECK(ratio.si == Approx(3.0));
  CHECK(parse_ok(".5 V").si == Approx(0.5));
  CHECK(parse_ok("-3 W").si == Approx(-3.0));  // sign is left to require_positive
}

TEST_CASE("parse_quantity: errors", "[config][quantity]") {
  CHECK(parse_err("900") == "no unit");
  CHECK(parse_err("  900  ") == "no unit");
  CHECK(parse_err("900 furlongs") == "unknown unit \"furlongs\"");
  CHECK(parse_err("GB/s") == "no number");
  CHECK(parse_err("") == "no number");
  CHECK(parse_err("5 GB/") == "unit ends with an operator");
  CHECK(parse_err("5 GB*") == "unit ends with an operator");
  CHECK(parse_err("5 /") == "unit ends with an operator");
  CHECK(parse_err("inf W") == "not a finite number");
  CHECK(parse_err("nan W") == "not a finite number");
  CHECK(parse_err("5 mm^x") == "bad exponent in \"mm^x\"");
  CHECK(parse_err("5 mm^") == "bad exponent in \"mm^\"");
  CHECK(parse_err("1 kiB") == "unknown unit \"kiB\"");  // binary prefixes are Ki, not ki
  CHECK(parse_err("3 GB/furlong") == "unknown unit \"furlong\"");
}

TEST_CASE("parse_typed_quantity checks the dimension", "[config][quantity]") {
  std::string why;
  const auto bw = parse_typed_quantity<Bandwidth::dim_type>("900 GB/s", &why);
  REQUIRE(bw.has_value());
  CHECK(bw->in(units::terabytes_per_second) == Approx(0.9));
  CHECK(why.empty());

  const auto wrong = parse_typed_quantity<Bandwidth::dim_type>("80 GiB", &why);
  CHECK_FALSE(wrong.has_value());
  CHECK_THAT(why, Catch::Contains("expected a bandwidth such as \"900 GB/s\", got \"80 GiB\""));

  const auto bare = parse_typed_quantity<Power::dim_type>("300", &why);
  CHECK_FALSE(bare.has_value());
  CHECK(why == "expected a power such as \"300 W\", got \"300\" (no unit)");

  const auto unknown = parse_typed_quantity<Time::dim_type>("3 fortnights", &why);
  CHECK_FALSE(unknown.has_value());
  CHECK(why == "expected a time such as \"1.5 us\", got \"3 fortnights\" "
               "(unknown unit \"fortnights\")");
}

TEST_CASE("parse_typed_quantity names the dimension it got",
          "[config][quantity]") {
  // The parenthesis should read "(a size)", as ConfigNode prints it, not "(a a size such as …)".
  std::string why;
  CHECK_FALSE(parse_typed_quantity<Bandwidth::dim_type>("80 GiB", &why).has_value());
  CHECK(why == "expected a bandwidth such as \"900 GB/s\", got \"80 GiB\" (a size)");
}

TEST_CASE("describe_dimension names common dimensions", "[config][quantity]") {
  CHECK(describe_dimension(dim_of<Bandwidth::dim_type>()) == "a bandwidth such as \"900 GB/s\"");
  CHECK(describe_dimension(dim_of<Bytes::dim_type>()) == "a size such as \"80 GiB\"");
  CHECK(describe_dimension(dim_of<Area::dim_type>()) == "an area such as \"826 mm^2\"");
  CHECK(describe_dimension(dim_of<EnergyPerByte::dim_type>()) ==
        "an energy per bit such as \"13 pJ/bit\"");
  CHECK(describe_dimension(dim_of<PerLength::dim_type>()) ==
        "a density per length such as \"400 /mm\"");
  CHECK(describe_dimension(DimVec{}) == "a plain number such as \"0.5\"");
  // Unnamed dimensions fall back to their SI spelling.
  CHECK(describe_dimension(DimVec{{-2, 1, 0, 0, 0, 0}}) == "a quantity in B/s^2");
  CHECK(describe_dimension(DimVec{{-2, 0, 0, 0, 0, 0}}) == "a quantity in 1/s^2");
}

TEST_CASE("si_unit_string spells dimensions in SI", "[config][quantity]") {
  CHECK(si_unit_string(dim_of<Bandwidth::dim_type>()) == "B/s");
  CHECK(si_unit_string(dim_of<Area::dim_type>()) == "m^2");
  CHECK(si_unit_string(dim_of<AreaPerByte::dim_type>()) == "m^2/B");
  CHECK(si_unit_string(dim_of<Frequency::dim_type>()) == "1/s");
  CHECK(si_unit_string(DimVec{{1, 0, 1, 0, 0, 0}}) == "s*FLOP");
  CHECK(si_unit_string(DimVec{}) == "1");
}

TEST_CASE("si_unit_string round-trips through parse_quantity",
          "[config][quantity]") {
  // "1 J/s*B" reads as J·B/s under the parser's rule that '/' divides by the next term only,
  // so a multi-term denominator must be spelled so that it parses back to the same dimension.
  const DimVec d = dim_of<PowerPerByte::dim_type>();
  const std::string unit = si_unit_string(d);
  INFO("si_unit_string gives \"" << unit << "\"");
  CHECK(parse_ok("1 " + unit).dim == d);
}

TEST_CASE("quantities of no physical size are refused before they overflow", "[config]") {
  // Issue 14 item 6: a 1e308 KiB bank or a 1e308 V maximum voltage passed validation and
  // printed inf/nan. Values outside 1e-24..1e24 in SI units are refused; zero stays allowed.
  std::string why;
  CHECK_FALSE(parse_typed_quantity<Bytes::dim_type>("1e308 KiB", &why));
  CHECK(why == "expected a size such as \"80 GiB\" of a physical size (between 1e-24 and 1e24 B), "
               "got \"1e308 KiB\"");
  CHECK_FALSE(parse_typed_quantity<Voltage::dim_type>("1e308 V", &why));
  CHECK_FALSE(parse_typed_quantity<Power::dim_type>("1e307 W", &why));
  CHECK_FALSE(parse_typed_quantity<Time::dim_type>("1e-30 s", &why));
  // The extremes of real inputs pass: 0.6 pW per bit of static power, 3.3 PB/s, 0 s.
  CHECK(parse_typed_quantity<Time::dim_type>("0 s", &why));
  CHECK(parse_typed_quantity<Bandwidth::dim_type>("3300 TB/s", &why));
  CHECK(parse_typed_quantity<Energy::dim_type>("0.05 pJ", &why));
}
