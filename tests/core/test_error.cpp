// Tests for engine/core/error.hpp: compiler-style diagnostics and ConfigError.
#include "engine/core/error.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

using namespace pathfinder;

static_assert(std::is_base_of_v<std::runtime_error, ConfigError>);

TEST_CASE("Diagnostic::str formats file:line:col: error: key: message", "[core][error]") {
  const Diagnostic d{SourceLoc{"templates/h100.yaml", 14, 17, "memory.hbm.bandwidth"},
                     "expected a bandwidth such as \"900 GB/s\", got \"80 GiB\""};
  CHECK(d.str() ==
        "templates/h100.yaml:14:17: error: memory.hbm.bandwidth: "
        "expected a bandwidth such as \"900 GB/s\", got \"80 GiB\"");
}

TEST_CASE("Diagnostic::str omits :line:col when line is 0", "[core][error]") {
  const Diagnostic d{SourceLoc{"missing.yaml", 0, 0, ""},
                     "cannot read file: No such file or directory"};
  CHECK(d.str() == "missing.yaml: error: cannot read file: No such file or directory");

  // A column without a line is still omitted; the key path is kept.
  const Diagnostic d2{SourceLoc{"a.yaml", 0, 7, "budget.power"}, "oops"};
  CHECK(d2.str() == "a.yaml: error: budget.power: oops");
}

TEST_CASE("Diagnostic::str omits the key path when it is empty", "[core][error]") {
  const Diagnostic d{SourceLoc{"a.yaml", 3, 1, ""}, "malformed YAML: end of map not found"};
  CHECK(d.str() == "a.yaml:3:1: error: malformed YAML: end of map not found");
}

TEST_CASE("Diagnostic::str with a default SourceLoc", "[core][error]") {
  const Diagnostic d{SourceLoc{}, "something"};
  CHECK(d.str() == ": error: something");
}

TEST_CASE("ConfigError from one diagnostic", "[core][error]") {
  const ConfigError e(Diagnostic{SourceLoc{"x.yaml", 2, 5, "name"}, "expected a string"});
  CHECK(std::string(e.what()) == "x.yaml:2:5: error: name: expected a string");
  REQUIRE(e.diagnostics().size() == 1);
  CHECK(e.diagnostics()[0].loc.file == "x.yaml");
  CHECK(e.diagnostics()[0].loc.line == 2);
  CHECK(e.diagnostics()[0].loc.col == 5);
  CHECK(e.diagnostics()[0].loc.key_path == "name");
  CHECK(e.diagnostics()[0].message == "expected a string");
}

TEST_CASE("ConfigError joins several diagnostics with newlines", "[core][error]") {
  const std::vector<Diagnostic> ds = {
      {SourceLoc{"a.yaml", 1, 1, "budget.power"}, "expected a positive power, got \"0 W\""},
      {SourceLoc{"a.yaml", 0, 0, ""}, "second problem"},
      {SourceLoc{"b.yaml", 12, 3, "levels[1].name"}, "unknown key"},
  };
  const ConfigError e(ds);
  CHECK(std::string(e.what()) ==
        "a.yaml:1:1: error: budget.power: expected a positive power, got \"0 W\"\n"
        "a.yaml: error: second problem\n"
        "b.yaml:12:3: error: levels[1].name: unknown key");
  REQUIRE(e.diagnostics().size() == 3);
  CHECK(e.diagnostics()[2].loc.key_path == "levels[1].name");
}

TEST_CASE("ConfigError is catchable as std::runtime_error", "[core][error]") {
  const auto thrower = [] {
    throw ConfigError(Diagnostic{SourceLoc{"c.yaml", 4, 9, "k"}, "bad"});
  };
  CHECK_THROWS_AS(thrower(), std::runtime_error);
  CHECK_THROWS_WITH(thrower(), "c.yaml:4:9: error: k: bad");
}

TEST_CASE("ConfigError with no diagnostics has an empty message", "[core][error]") {
  const ConfigError e(std::vector<Diagnostic>{});
  CHECK(std::string(e.what()).empty());
  CHECK(e.diagnostics().empty());
}

TEST_CASE("PF_ASSERT is a no-op when the condition holds", "[core][error]") {
  int evaluated = 0;
  PF_ASSERT(++evaluated == 1);  // evaluated exactly once, in every build type
  CHECK(evaluated == 1);
}

TEST_CASE("Diagnostic::str is one line: control characters in quoted values are escaped",
          "[core][error]") {
  // Issue 14 item 9; found by the fuzz harness: a strategy token with a newline
  // (tests/fuzz/corpus/strategy/newline_in_token) printed a two-line error.
  const Diagnostic d{SourceLoc{"command line", 0, 0, "--strategy"},
                     "\"=\ntp4\": unknown token\t\x01\x7f"};
  CHECK(d.str() == "command line: error: --strategy: \"=\\ntp4\": unknown token\\t\\x01\\x7f");
  // Text without control characters, UTF-8 included, is unchanged.
  const Diagnostic u{SourceLoc{"a.yaml", 1, 2, "k"}, "expected 800 mm² \"x\""};
  CHECK(u.str() == "a.yaml:1:2: error: k: expected 800 mm² \"x\"");
}
