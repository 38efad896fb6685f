// Tests for engine/core/text.hpp: edit distance, did-you-mean, alternatives.
#include "engine/core/text.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace pathfinder;

TEST_CASE("edit_distance is the optimal string alignment distance", "[core][text]") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("abc", "") == 3);       // three deletions
  CHECK(edit_distance("", "abcd") == 4);      // four insertions
  CHECK(edit_distance("same", "same") == 0);
  CHECK(edit_distance("kitten", "sitting") == 3);  // k->s, e->i, +g
  CHECK(edit_distance("flaw", "lawn") == 2);       // -f, +n
  CHECK(edit_distance("bundle", "bundel") == 1);   // a swap of neighbours is one edit
  CHECK(edit_distance("1fb1", "1f1b") == 1);
  CHECK(edit_distance("1fb1", "mb1") == 2);        // so 1f1b is the suggestion
  CHECK(edit_distance("ca", "abc") == 3);          // OSA: no edit of a swapped pair
  CHECK(edit_distance("power", "powr") == 1);      // one deletion
  CHECK(edit_distance("levels", "levles") == 1);
}

TEST_CASE("edit_distance is symmetric and ignores ASCII case", "[core][text]") {
  CHECK(edit_distance("sitting", "kitten") == edit_distance("kitten", "sitting"));
  CHECK(edit_distance("GB", "gb") == 0);
  CHECK(edit_distance("Bandwidth", "bandwith") == 1);  // case ignored, one 'd' missing
}

TEST_CASE("closest_match and did_you_mean suggest near misses", "[core][text]") {
  const std::vector<std::string> keys = {"name", "mcus_per_bundle", "bundles", "frequency",
                                         "budget"};
  // distance("mcus_per_bundel", "mcus_per_bundle") = 2 <= max(2, 15/3 = 5)
  CHECK(closest_match("mcus_per_bundel", keys) == "mcus_per_bundle");
  CHECK(did_you_mean("mcus_per_bundel", keys) == "; did you mean \"mcus_per_bundle\"?");
  CHECK(closest_match("frequncy", keys) == "frequency");  // distance 1
  CHECK(closest_match("Name", keys) == "name");           // case-insensitive, distance 0
  CHECK(closest_match("budgte", keys) == "budget");       // distance 2 allowed for short words
}

TEST_CASE("closest_match picks the nearest of several candidates", "[core][text]") {
  const std::vector<std::string> keys = {"bundle", "bundles"};
  CHECK(closest_match("bundles", keys) == "bundles");  // 0 beats 1
  CHECK(closest_match("bundle", keys) == "bundle");
  // On a tie the first candidate wins: "bundlex" is 1 from "bundle" and 1 from "bundles".
  CHECK(closest_match("bundlex", keys) == "bundle");
}

TEST_CASE("closest_match returns nothing for far-away words", "[core][text]") {
  const std::vector<std::string> keys = {"name", "mcus_per_bundle", "frequency", "budget"};
  CHECK(closest_match("voltage", keys).empty());
  CHECK(did_you_mean("voltage", keys).empty());
  CHECK(did_you_mean("xyz", keys).empty());
  // "nmae" is 2 from "name" (allowed), "xxme" is 2 as well, "xxxe" is 3 (too far for 4 letters)
  CHECK(closest_match("nmae", keys) == "name");
  CHECK(closest_match("xxme", keys) == "name");
  CHECK(closest_match("xxxe", keys).empty());
  // Long words allow more edits: threshold is max(2, len/3); 15 letters -> up to 5.
  CHECK(closest_match("mcus_pxx_bxxdle", keys) == "mcus_per_bundle");  // 4 edits
  CHECK(closest_match("xxxx_per_xxxxle", keys).empty());              // 8 edits
  CHECK(closest_match("anything", {}).empty());
  CHECK(did_you_mean("anything", {}).empty());
}

TEST_CASE("join_alternatives reads as a list", "[core][text]") {
  CHECK(join_alternatives({}) == "");
  CHECK(join_alternatives({"a"}) == "a");
  CHECK(join_alternatives({"a", "b"}) == "a or b");
  CHECK(join_alternatives({"a", "b", "c"}) == "a, b or c");
  CHECK(join_alternatives({"hbm", "ddr", "sram", "lpddr"}) == "hbm, ddr, sram or lpddr");
}
