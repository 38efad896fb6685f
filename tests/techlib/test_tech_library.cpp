// Looking technologies up by name: exact first, then ignoring case as people type them.
#include <catch2/catch.hpp>

#include "tests/arch/arch_fixtures.hpp"

namespace pathfinder {

TEST_CASE("technology names match exactly, else ignoring case", "[techlib]") {
  const TechLibrary& lib = test::shipped_techlib();
  REQUIRE(lib.find_logic("N7") != nullptr);
  CHECK(lib.find_logic("n7") == lib.find_logic("N7"));
  CHECK(lib.find_logic("df-n7") == lib.find_logic("DF-N7"));
  CHECK(lib.find_memory("hbm3") == lib.find_memory("HBM3"));
  CHECK(lib.find_network("nvlink3") == lib.find_network("NVLink3"));
  CHECK(lib.find_logic("n6") == nullptr);  // no such node in any case
}

}  // namespace pathfinder
