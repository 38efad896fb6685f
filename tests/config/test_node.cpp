// Tests for engine/config/node.hpp: strict YAML access and compiler-style error messages.
#include "engine/config/node.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "tests/test_paths.hpp"
#include "tests/test_support.hpp"

using namespace pathfinder;
using pathfinder::test::error_of;
using pathfinder::test::kKnownMemory;
using pathfinder::test::kKnownNetwork;
using pathfinder::test::data_path;

namespace {

const std::string kValid = data_path("config/valid.yaml");
const std::string kErrors = data_path("config/errors.yaml");

}  // namespace

TEST_CASE("ConfigNode reads values of every kind", "[config][node]") {
  const ConfigNode cfg = ConfigNode::load_file(kValid);
  CHECK(cfg.file() == kValid);
  CHECK(cfg.path().empty());
  CHECK(cfg.is_map());
  CHECK(cfg.require<std::string>("name") == "test-chip");
  CHECK(cfg.require<Frequency>("frequency").in(units::gigahertz) == Approx(1.41));
  CHECK(cfg.require<int>("bundles") == 4);
  CHECK(cfg.require<bool>("enabled"));
  CHECK(cfg.require<double>("derate") == Approx(0.85));
  CHECK(cfg.require_positive<int>("bundles") == 4);

  const ConfigNode budget = cfg.child("budget");
  CHECK(budget.path() == "budget");
  CHECK(budget.require<Power>("power").in(units::watts) == Approx(300.0));
  // 826 mm^2 = 826e-6 m^2
  CHECK(budget.require_positive<Area>("area").si() == Approx(826e-6));

  const ConfigNode memory = cfg.child("memory");
  CHECK(memory.require<Bandwidth>("bandwidth").in(units::terabytes_per_second) == Approx(0.9));
  // 80 GiB = 80 × 2^30 B
  CHECK(memory.require<Bytes>("capacity").si() == Approx(80.0 * 1073741824.0));
}

TEST_CASE("ConfigNode optional values", "[config][node]") {
  const ConfigNode cfg = ConfigNode::load_file(kValid);
  std::optional<Power> missing;
  CHECK_NOTHROW(missing = cfg.optional<Power>("static_power"));
  CHECK_FALSE(missing.has_value());
  CHECK_FALSE(cfg.optional_positive<Power>("static_power").has_value());
  CHECK_FALSE(cfg.optional_child("cooling").has_value());
  CHECK(cfg.optional_items("extras").empty());
  CHECK(cfg.optional<int>("bundles") == 4);
  CHECK(cfg.get_or<int>("bundles", 7) == 4);
  CHECK(cfg.get_or<int>("spares", 7) == 7);
  CHECK(cfg.get_or<std::string>("vendor", "none") == "none");
  CHECK(cfg.get_or<Voltage>("voltage", volts(0.8)).in(units::volts) == Approx(0.8));
  CHECK(cfg.optional_child("budget")->require<Power>("power").in(units::watts) == Approx(300.0));
  CHECK(cfg.has("name"));
  CHECK_FALSE(cfg.has("vendor"));
}

TEST_CASE("ConfigNode lists and entries keep file order and key paths", "[config][node]") {
  const ConfigNode cfg = ConfigNode::load_file(kValid);
  const auto levels = cfg.items("levels");
  REQUIRE(levels.size() == 2);
  CHECK(levels[0].path() == "levels[0]");
  CHECK(levels[1].path() == "levels[1]");
  CHECK(levels[1].is_map());
  CHECK(levels[1].require<std::string>("name") == "l2");
  // 40 MiB = 40 × 2^20 B
  CHECK(levels[1].require<Bytes>("capacity").si() == Approx(41943040.0));
  const SourceLoc l = levels[1].loc_of("name");  // the value "l2" on line 16, column 11
  CHECK(Diagnostic{l, "m"}.str() == kValid + ":16:11: error: levels[1].name: m");

  const auto links = cfg.child("links").entries();
  REQUIRE(links.size() == 2);
  CHECK(links[0].first == "nvlink");
  CHECK(links[0].second.path() == "links.nvlink");
  CHECK(links[0].second.is_scalar());
  CHECK(links[0].second.as<int>() == 18);
  CHECK(links[1].first == "pcie");
  CHECK(links[1].second.as<int>() == 1);
}

TEST_CASE("ConfigNode locations and messages name nested key paths", "[config][node]") {
  const ConfigNode cfg = ConfigNode::load_file(kValid);
  const ConfigNode budget = cfg.child("budget");
  const SourceLoc l = budget.loc_of("power");  // "300 W" on line 8, column 10
  CHECK(Diagnostic{l, "m"}.str() == kValid + ":8:10: error: budget.power: m");
  CHECK(std::string(budget.error_at("power", "exceeds the limit").what()) ==
        kValid + ":8:10: error: budget.power: exceeds the limit");
  CHECK(std::string(cfg.child("memory").error("too small").what()) ==
        kValid + ":11:3: error: memory: too small");  // a block map starts at its first key
  CHECK((cfg.quoted("name") + cfg.quoted("budget") + cfg.quoted("levels") +
         cfg.quoted("vendor")) == "\"test-chip\"a mapa listnothing");
}

TEST_CASE("finish() passes once every key was read", "[config][node]") {
  const ConfigNode cfg = ConfigNode::load_file(kValid);
  (void)cfg.require<std::string>("name");
  (void)cfg.require<Frequency>("frequency");
  (void)cfg.require<int>("bundles");
  (void)cfg.require<bool>("enabled");
  (void)cfg.get_or<double>("derate", 1.0);
  const ConfigNode budget = cfg.child("budget");
  (void)budget.require<Power>("power");
  CHECK_THROWS_WITH(budget.finish(), kValid + ":9:3: error: budget.area: unknown key");
  (void)budget.optional<Area>("area");
  CHECK_NOTHROW(budget.finish());
  const ConfigNode memory = cfg.child("memory");
  (void)memory.entries();  // entries() marks every key as read
  CHECK_NOTHROW(memory.finish());
  for (const ConfigNode& level : cfg.items("levels")) {
    (void)level.require<std::string>("name");
    (void)level.require<Bytes>("capacity");
    CHECK_NOTHROW(level.finish());
  }
  (void)cfg.child("links").entries();
  CHECK_NOTHROW(cfg.finish());
}

TEST_CASE("unknown keys are rejected with a did-you-mean", "[config][config-error]") {
  const ConfigNode cfg = ConfigNode::load_file(kErrors);
  const ConfigNode level = cfg.items("levels")[0];
  (void)level.require<std::string>("name");
  (void)level.optional<int>("mcus_per_bundle");
  CHECK(error_of([&] { level.finish(); }) ==
        kErrors + ":12:5: error: levels[0].mcus_per_bundel: unknown key; "
                  "did you mean \"mcus_per_bundle\"?");

  const ConfigNode s = ConfigNode::load_string("name: x\nvoltage: 0.8 V\n", "s.yaml");
  (void)s.require<std::string>("name");
  CHECK(error_of([&] { s.finish(); }) == "s.yaml:2:1: error: voltage: unknown key");
}

TEST_CASE("a misspelt key is reported at its own line, not as the key it was meant to be",
          "[config][config-error]") {
  const ConfigNode core =
      ConfigNode::load_string("name: x\ncore:\n  array: [16, 16]\n  mcus_per_bundel: 4\n",
                              "t.yaml").child("core");
  CHECK(error_of([&] { (void)core.require<int>("mcus_per_bundle"); }) ==
        "t.yaml:4:3: error: core.mcus_per_bundel: unknown key; did you mean "
        "\"mcus_per_bundle\"?");
  // Nothing close: the missing key itself.
  CHECK(error_of([&] { (void)core.require<int>("dataflow"); }) ==
        "t.yaml:3:3: error: core.dataflow: missing required key (expected a whole number)");
}

TEST_CASE("a collecting read records every problem once, goes on with stand-ins",
          "[config][config-error]") {
  const std::string text =
      "name: x\n"                       // 1
      "layers: -3\n"                    // 2: wrong sign
      "heads: abc\n"                    // 3: not a whole number
      "power: 12 m\n"                   // 4: a length, not a power
      "fnn: 4\n"                        // 5: misspelt ffn
      "core: [1, 2]\n"                  // 6: a list, not a map
      "extra: 1\n";                     // 7: unknown
  const ConfigNode root = ConfigNode::load_string(text, "w.yaml").collecting();
  CHECK(root.require<std::string>("name") == "x");
  // Each bad value reads as the stand-in 1 (so positive checks pass downstream).
  CHECK(root.require_positive<int>("layers") == 1);
  CHECK(root.require<int>("heads") == 1);
  CHECK(root.require<Power>("power").si() == 1.0);
  CHECK(root.require<int>("ffn") == 1);  // missing: its misspelling is the problem
  const ConfigNode core = root.child("core");
  CHECK(core.require<double>("share") == 1.0);  // inside a stand-in map: no second problem
  CHECK_FALSE(core.has("share"));
  CHECK(core.items("levels").empty());
  core.finish();
  root.report(root.error_at("heads", "a second problem at heads is not listed"));
  root.finish();
  std::vector<std::string> got;
  for (const Diagnostic& d : root.problems()) got.push_back(d.str());
  CHECK(got == std::vector<std::string>{
      "w.yaml:2:9: error: layers: expected a positive number, got \"-3\"",
      "w.yaml:3:8: error: heads: expected a whole number, got \"abc\"",
      "w.yaml:4:8: error: power: expected a power such as \"300 W\", got \"12 m\" (a length)",
      "w.yaml:5:1: error: fnn: unknown key; did you mean \"ffn\"?",
      "w.yaml:6:7: error: core: expected a map, got a list",
      "w.yaml:7:1: error: extra: unknown key"});
  // The same reads on the tree as loaded throw at the first problem, as every loader expects.
  const ConfigNode plain = ConfigNode::load_string(text, "w.yaml");
  CHECK(error_of([&] { (void)plain.require_positive<int>("layers"); }) == got[0]);
  CHECK(plain.problems().empty());
}

TEST_CASE("missing required keys point at the parent map", "[config][config-error]") {
  const ConfigNode cfg = ConfigNode::load_file(kErrors);
  CHECK(error_of([&] { (void)cfg.require<std::string>("name"); }) ==
        kErrors + ":2:1: error: name: missing required key (expected a string)");
  const ConfigNode budget = cfg.child("budget");
  CHECK(error_of([&] { (void)budget.require<Power>("static_power"); }) ==
        kErrors + ":7:3: error: budget.static_power: missing required key "
                  "(expected a power such as \"300 W\")");
  CHECK(error_of([&] { (void)cfg.child("cooling"); }) ==
        kErrors + ":2:1: error: cooling: missing required key (expected a map)");
  CHECK(error_of([&] { (void)cfg.items("stages"); }) ==
        kErrors + ":2:1: error: stages: missing required key (expected a list)");
}

TEST_CASE("values with the wrong unit or no unit", "[config][config-error]") {
  const ConfigNode memory = ConfigNode::load_file(kErrors).child("memory");
  CHECK(error_of([&] { (void)memory.require<Bandwidth>("bandwidth"); }) ==
        kErrors + ":3:14: error: memory.bandwidth: expected a bandwidth such as \"900 GB/s\", "
                  "got \"80 GiB\" (a size)");
  CHECK(error_of([&] { (void)memory.require<Bytes>("capacity"); }) ==
        kErrors + ":4:13: error: memory.capacity: expected a size such as \"80 GiB\", "
                  "got \"80\" (a bare number needs a unit)");
  CHECK(error_of([&] { (void)memory.require<Time>("latency"); }) ==
        kErrors + ":5:12: error: memory.latency: expected a time such as \"1.5 us\", "
                  "got \"fast\" (no number)");
}

TEST_CASE("non-numeric values for number fields", "[config][config-error]") {
  const ConfigNode cfg = ConfigNode::load_file(kErrors);
  const ConfigNode memory = cfg.child("memory");
  CHECK(error_of([&] { (void)memory.require<double>("latency"); }) ==
        kErrors + ":5:12: error: memory.latency: expected a number, got \"fast\"");
  CHECK(error_of([&] { (void)memory.require<int>("latency"); }) ==
        kErrors + ":5:12: error: memory.latency: expected a whole number, got \"fast\"");
  CHECK(error_of([&] { (void)cfg.require<bool>("flag"); }) ==
        kErrors + ":14:7: error: flag: expected true or false, got \"yes\"");
  CHECK(error_of([&] { (void)cfg.require<double>("budget"); }) ==
        kErrors + ":7:3: error: budget: expected a number, got a map");
}

TEST_CASE("whole numbers out of range for the requested type",
          "[config][config-error]") {
  // as<T>() reads a long long and static_casts it: -3 becomes 4294967293 as unsigned and
  // 99999999999 becomes 1215752191 as int. Both should be rejected.
  const ConfigNode cfg = ConfigNode::load_string("n: -3\nbig: 99999999999\n", "r.yaml");
  CHECK_THROWS_AS((void)cfg.require<unsigned>("n"), ConfigError);
  CHECK_THROWS_AS((void)cfg.require<int>("big"), ConfigError);
  CHECK(cfg.require<long long>("big") == 99999999999LL);  // fits, so accepted
}

TEST_CASE("require_positive rejects zero and negative values", "[config][config-error]") {
  const ConfigNode cfg = ConfigNode::load_file(kErrors);
  const ConfigNode budget = cfg.child("budget");
  CHECK(error_of([&] { (void)budget.require_positive<Power>("power"); }) ==
        kErrors + ":7:10: error: budget.power: expected a positive power, got \"0 W\"");
  CHECK(error_of([&] { (void)budget.optional_positive<Area>("area"); }) ==
        kErrors + ":8:9: error: budget.area: expected a positive area, got \"-826 mm^2\"");
  CHECK(error_of([&] { (void)cfg.require_positive<int>("count"); }) ==
        kErrors + ":9:8: error: count: expected a positive number, got \"-3\"");
}

TEST_CASE("get_non_negative_or accepts zero, rejects negatives and falls back", "[config]") {
  const ConfigNode c = ConfigNode::load_string("zero: 0 us\nneg: -1 us\n", "n.yaml");
  CHECK(c.get_non_negative_or<Time>("zero", microseconds(7)).si() == 0.0);
  CHECK(c.get_non_negative_or<Time>("absent", microseconds(7)).in(units::microseconds) ==
        Approx(7.0));
  CHECK(error_of([&] { (void)c.get_non_negative_or<Time>("neg", Time{}); }) ==
        "n.yaml:2:6: error: neg: expected a non-negative time, got \"-1 us\"");
}

TEST_CASE("a list where a map is expected, and the reverse", "[config][config-error]") {
  const ConfigNode cfg = ConfigNode::load_file(kErrors);
  CHECK(error_of([&] { (void)cfg.child("tiers"); }) ==
        kErrors + ":13:8: error: tiers: expected a map, got a list");
  CHECK(error_of([&] { (void)cfg.items("memory"); }) ==
        kErrors + ":3:3: error: memory: expected a list, got a map");
  CHECK(error_of([&] { (void)cfg.require<Power>("tiers"); }) ==
        kErrors + ":13:8: error: tiers: expected a power such as \"300 W\", got a list");
}

TEST_CASE("malformed YAML", "[config][config-error]") {
  const std::string path = data_path("config/malformed.yaml");
  CHECK_THAT(error_of([&] { (void)ConfigNode::load_file(path); }),
             Catch::StartsWith(path + ":3:1: error: malformed YAML"));
  // yaml-cpp reports an unclosed flow at column 1 of the line where the input ends.
  CHECK(error_of([] { (void)ConfigNode::load_string("a: [1, 2", "m.yaml"); }) ==
        "m.yaml:1:1: error: malformed YAML: end of sequence flow not found");
  CHECK_THAT(error_of([] { (void)ConfigNode::load_string("a: b: c\n", "m.yaml"); }),
             Catch::StartsWith("m.yaml:1:5: error: malformed YAML"));
}

TEST_CASE("a directory is not a readable file", "[config][config-error]") {
  // Today reported as an empty document: "…:1:1: error: expected a YAML map …, got nothing".
  const std::string path = data_path("config");
  CHECK_THAT(error_of([&] { (void)ConfigNode::load_file(path); }),
             Catch::StartsWith(path + ": error: cannot read file"));
}

TEST_CASE("missing file", "[config][config-error]") {
  const std::string path = data_path("config/does_not_exist.yaml");
  CHECK(error_of([&] { (void)ConfigNode::load_file(path); }) ==
        path + ": error: cannot read file: No such file or directory");
}

TEST_CASE("the top level must be a map", "[config][config-error]") {
  CHECK(error_of([] { (void)ConfigNode::load_string("just a string", "s.yaml"); }) ==
        "s.yaml:1:1: error: expected a YAML map at the top level, got \"just a string\"");
  CHECK(error_of([] { (void)ConfigNode::load_string("- a\n- b\n", "l.yaml"); }) ==
        "l.yaml:1:1: error: expected a YAML map at the top level, got a list");
  CHECK(error_of([] { (void)ConfigNode::load_string("", "e.yaml"); }) ==
        "e.yaml:1:1: error: expected a YAML map at the top level, got nothing");
}

TEST_CASE("a top-level scalar is reported at its own line",
          "[config][config-error]") {
  // scalar.yaml has a comment on line 1; the scalar itself starts at line 2, column 1.
  const std::string path = data_path("config/scalar.yaml");
  CHECK(error_of([&] { (void)ConfigNode::load_file(path); }) ==
        path + ":2:1: error: expected a YAML map at the top level, got \"just a string\"");
}

TEST_CASE("command-line overrides: key=value parsing", "[config][override]") {
  const ConfigOverride o = parse_config_override("micro_batch=4");
  CHECK(o.key == "micro_batch");
  CHECK(o.value == "4");
  CHECK(o.origin == "--set micro_batch");
  // Only the first '=' separates: the value may hold one.
  CHECK(parse_config_override("host.dispatch=a=b").value == "a=b");
  CHECK(error_of([] { (void)parse_config_override("micro_batch"); }) ==
        "command line: error: --set: expected key=value, got \"micro_batch\" (no '=')");
  CHECK(error_of([] { (void)parse_config_override("=4"); }) ==
        "command line: error: --set: expected key=value, got \"=4\" (no key before '=')");
  CHECK(error_of([] { (void)parse_config_override("micro_batch="); }) ==
        "command line: error: --set: expected key=value, got \"micro_batch=\" (no value after "
        "'=')");
  CHECK(error_of([] { (void)parse_config_override("host..dispatch=1"); }) ==
        "command line: error: --set: expected key=value, got \"host..dispatch=1\" (an empty "
        "part in the dotted key)");
}

TEST_CASE("command-line overrides replace and add values, checked as the file's",
          "[config][override]") {
  const ConfigNode file = ConfigNode::load_string("name: x\nsize: 8\nhost:\n  rate: 1 GB/s\n",
                                                  "w.yaml");
  const ConfigNode cfg = file.with_overrides({parse_config_override("size=16"),
                                              parse_config_override("host.rate=2 GB/s"),
                                              parse_config_override("extra.deep=3")});
  CHECK(cfg.require<int>("size") == 16);
  CHECK(cfg.child("host").require<Bandwidth>("rate").si() == 2e9);
  CHECK(cfg.child("extra").require<int>("deep") == 3);
  CHECK(file.require<int>("size") == 8);  // the original is unchanged
  // A key not overridden keeps its place in the file (host's value, the map on line 4).
  CHECK(cfg.loc_of("host").line == 4);
  CHECK(cfg.loc_of("host").file == "w.yaml");
  CHECK(error_of([&] { (void)cfg.require<int>("name"); }) ==
        "w.yaml:1:7: error: name: expected a whole number, got \"x\"");
  // Overrides accumulate: a second call keeps the first's.
  const ConfigNode twice = cfg.with_overrides({parse_config_override("size=32")});
  CHECK(twice.require<int>("size") == 32);
  CHECK(twice.child("extra").require<int>("deep") == 3);

  // A bad overridden value is reported at the option, with the reader's own message.
  const ConfigNode bad = file.with_overrides({parse_config_override("size=0")});
  CHECK(error_of([&] { (void)bad.require_positive<int>("size"); }) ==
        "command line: error: --set size: expected a positive number, got \"0\"");
  const ConfigNode unit = file.with_overrides({parse_config_override("host.rate=2 GHz")});
  CHECK(error_of([&] { (void)unit.child("host").require<Bandwidth>("rate"); }) ==
        "command line: error: --set host.rate: expected a bandwidth such as \"900 GB/s\", got "
        "\"2 GHz\" (a frequency)");
  // An unknown key is reported by finish() with its did-you-mean, at the option.
  const ConfigNode typo = file.with_overrides({parse_config_override("sise=4")});
  (void)typo.require<std::string>("name");
  (void)typo.require<int>("size");
  (void)typo.child("host");
  CHECK(error_of([&] { typo.finish(); }) ==
        "command line: error: --set sise: unknown key; did you mean \"size\"?");
  // A dotted path through a value that is not a map.
  CHECK(error_of([&] { (void)file.with_overrides({parse_config_override("size.x=1")}); }) ==
        "command line: error: --set size.x: size is \"8\", not a map");
}

// Issue 14 item 2: a recursive alias recursed without end (SIGSEGV); an alias bomb expanded
// for minutes; nesting is bounded too.
TEST_CASE("recursive aliases, alias bombs and deep nesting are refused at load",
          "[config][config-error][issue14]") {
  CHECK(error_of([] { (void)ConfigNode::load_string("a: &x\n  b: *x\n", "f.yaml"); }) ==
        "f.yaml:1:4: error: a.b: recursive alias: the node contains itself");
  CHECK(error_of([] { (void)ConfigNode::load_string("a: &x [1, *x]\n", "f.yaml"); }) ==
        "f.yaml:1:4: error: a[1]: recursive alias: the node contains itself");
  const std::string bomb = data_path("fuzz/alias_bomb.yaml");
  CHECK(error_of([&] { (void)ConfigNode::load_file(bomb); }) ==
        bomb + ":1:25: error: l5[7][8][8][8][8][3]: the document expands to more than 1000000 "
               "nodes, aliases counted at each use (the limit for a YAML input)");
  const std::string deep = data_path("fuzz/deep.yaml");
  CHECK(error_of([&] { (void)ConfigNode::load_file(deep); }) ==
        deep + ":1:67: error: a" + [] {
          std::string p;
          for (int i = 0; i < 63; ++i) p += "[0]";
          return p;
        }() + ": nested deeper than 64 maps and lists (the limit for a YAML input)");
  // Aliases that do not recurse are still fine.
  const ConfigNode ok = ConfigNode::load_string("a: &x {b: 1}\nc: *x\n", "f.yaml");
  CHECK(ok.child("c").require<int>("b") == 1);
}

// Issue 14 item 5: /dev/zero was read forever.
TEST_CASE("a device is refused without reading it", "[config][config-error][issue14]") {
  CHECK(error_of([] { (void)ConfigNode::load_file("/dev/zero"); }) ==
        "/dev/zero: error: cannot read file: not a regular file (a device, FIFO or socket)");
}

// Issue 14 item 1: names, titles and labels with control characters.
TEST_CASE("check_single_line names the key and shows the text escaped", "[config][issue14]") {
  const ConfigNode n = ConfigNode::load_string("title: \"t\\nx\\t\\u0001\\\"\"\n", "f.yaml");
  const std::string title = n.require<std::string>("title");
  CHECK(error_of([&] { check_single_line(n, "title", title); }) ==
        "f.yaml:1:8: error: title: expected text without control characters (newline, tab, ...), "
        "got \"t\\nx\\t\\x01\\\"\"");
  CHECK_NOTHROW(check_single_line(n, "title", "plain 'text' with `ticks`"));
  CHECK(escape_for_message("a\\b\r\x7f") == "a\\\\b\\r\\x7f");
}

TEST_CASE("a key that is a list or a map is a located error, not a crash", "[config][node]") {
  // Found by the fuzz harness (tests/fuzz/corpus/study/sequence_as_key.yaml): `[]` or `{}`
  // alone after a map is a complex key, which yaml-cpp cannot convert to a name (it threw
  // YAML::BadConversion, an internal error).
  CHECK(error_of([] { (void)ConfigNode::load_string("name: x\n[]", "k.yaml"); }) ==
        "k.yaml:2:1: error: expected a key (a name), got a list");
  CHECK(error_of([] { (void)ConfigNode::load_string("a:\n  b: 1\n  ? {c: 1}\n  : 2\n", "k.yaml"); })
            .rfind("k.yaml:3:", 0) == 0);
}

TEST_CASE("a file's quantity of no physical size is a located error", "[config][node]") {
  // Issue 14 item 6: `bank_capacity: 1e308 KiB` reached the generator and arch printed nan.
  const ConfigNode n = ConfigNode::load_string("bank_capacity: 1e308 KiB\nzero: 0 B\n", "q.yaml");
  CHECK(error_of([&] { (void)n.require<Bytes>("bank_capacity"); }) ==
        "q.yaml:1:16: error: bank_capacity: expected a size such as \"80 GiB\" of a physical size "
        "(between 1e-24 and 1e24 B), got \"1e308 KiB\"");
  CHECK(n.require<Bytes>("zero").si() == 0.0);
}
