// The fuzzing harness in CI (issue 14): every seed (the shipped inputs, tests/data/fuzz/'s
// reproducers of past defects, tests/fuzz/corpus/<target>/'s saved cases) and a fixed number of
// deterministic mutations of each run through the same targets libFuzzer drives
// (fuzz_target.hpp), on any compiler. Failures are written to fuzz-failures/ in the build
// folder with their target, for replay with `fuzz_<target> FILE` or this test.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "tests/fuzz/fuzz_target.hpp"

namespace pathfinder::fuzz {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<std::string> seeds(const TargetInfo& t) {
  std::vector<std::string> out;
  std::vector<fs::path> dirs;
  std::string list = t.seed_dirs;
  for (std::size_t start = 0; start < list.size();) {
    const std::size_t end = std::min(list.find(';', start), list.size());
    dirs.push_back(fs::path(PATHFINDER_SOURCE_DIR) / list.substr(start, end - start));
    start = end + 1;
  }
  dirs.push_back(fs::path(PATHFINDER_SOURCE_DIR) / "tests/data/fuzz");
  dirs.push_back(fs::path(PATHFINDER_SOURCE_DIR) / "tests/fuzz/corpus" / t.name);
  for (const fs::path& d : dirs) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file()) files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) out.push_back(slurp(f));
  }
  if (t.target == Target::kStrategy) {
    for (const char* s : {"tp8-pp8-dp16-mb1-1f1b-recompute=selective", "RC-8-8-d8-p1",
                          "tp2-pp4-interleaved-v2-sp-zero1", "tp4-pp2-dp1-mb2-gpipe-zero3",
                          "CR-8-d8-p1", "tp1", "tp2-pp2-dp2-sp-recompute=layernorm+mlp",
                          "tp2-dp4-ep4-sp-etp1-recompute=moe_act+core_attn"}) {
      out.emplace_back(s);
    }
  }
  if (t.target == Target::kOverride) {
    for (const char* s : {"micro_batch=4\nglobal_batch=512", "budget.power=300W",
                          "techlib.network.NVLink3.nominal_lane_rate=100Gb/s",
                          "sequence=4096\nsplit.core.area=0.5", "core.max_utilization=0.9"}) {
      out.emplace_back(s);
    }
  }
  if (t.target == Target::kCsv) {
    out.emplace_back("logic,feasible,reason,iteration_s,settings\nN7,1,,1.5,abc\n\"N\"\"5\",0,\"a,b\",,x\n");
  }
  return out;
}

// Mutations a hostile or careless edit makes: a byte changed, inserted or deleted, a line
// duplicated or dropped, a number replaced by an extreme or malformed one, a YAML alias.
std::string mutate(const std::string& s, std::mt19937_64& rng) {
  static const char* const kTokens[] = {"0", "-1", "1e308", "1e-308", "nan", "inf", "2147483648",
                                        "4294967296", "-0", "\"\"", "*x", "&x ", "~", "[]", "{}",
                                        "0.0 W", "1e9 mm^2", "\n", ": ", "- ", "\t", "\xff",
                                        "tp0", "mb0", "-", "="};
  std::string out = s;
  const auto pick = [&](std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); };
  const int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits; ++e) {
    const std::size_t at = pick(out.size() + 1);
    switch (rng() % 6) {
      case 0:
        if (!out.empty()) out[pick(out.size())] = static_cast<char>(rng() & 0xff);
        break;
      case 1: out.insert(at, 1, static_cast<char>(32 + rng() % 95)); break;
      case 2:
        if (!out.empty()) out.erase(pick(out.size()), 1 + pick(8));
        break;
      case 3: {  // a line duplicated or dropped
        const std::size_t a = out.rfind('\n', at == 0 ? 0 : at - 1), b = out.find('\n', at);
        const std::size_t from = a == std::string::npos ? 0 : a + 1;
        const std::size_t to = b == std::string::npos ? out.size() : b + 1;
        const std::string line = out.substr(from, to - from);
        if (rng() % 2) out.insert(from, line);
        else out.erase(from, to - from);
        break;
      }
      default: {  // a number or token replaced
        std::size_t p = at;
        while (p < out.size() && !(std::isdigit(static_cast<unsigned char>(out[p])) != 0)) ++p;
        std::size_t q = p;
        while (q < out.size() && (std::isdigit(static_cast<unsigned char>(out[q])) != 0 || out[q] == '.')) ++q;
        out.replace(std::min(p, out.size()), q - std::min(p, out.size()),
                    kTokens[pick(sizeof kTokens / sizeof kTokens[0])]);
      }
    }
  }
  return out;
}

// Every seed of one target and 40 deterministic mutations of each: no invariant broken.
void replay(Target which) {
  constexpr int kMutationsPerSeed = 40;
  const fs::path failures = fs::current_path() / "fuzz-failures";
  const auto it = std::find_if(targets().begin(), targets().end(),
                               [&](const TargetInfo& t) { return t.target == which; });
  REQUIRE(it != targets().end());
  const TargetInfo& t = *it;
  const auto start = std::chrono::steady_clock::now();
  std::mt19937_64 rng(0x5eedULL + static_cast<unsigned>(t.target));
  std::size_t runs = 0, failed = 0;
  const auto one = [&](const std::string& input) {
    ++runs;
    try {
      run_one(t.target, input);
    } catch (const FuzzFailure& e) {
      fs::create_directories(failures);
      const fs::path f = failures / (std::string(t.name) + "-" + std::to_string(failed++));
      std::ofstream(f, std::ios::binary) << input;
      FAIL_CHECK(t.name << ": " << e.what() << " (input saved to " << f.string() << ")");
    }
  };
  const std::vector<std::string> s = seeds(t);
  for (const std::string& seed : s) {
    one(seed);
    for (int m = 0; m < kMutationsPerSeed; ++m) one(mutate(seed, rng));
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("fuzz replay %-9s %3zu seeds, %6zu inputs, %zu failures, %.1f s\n", t.name, s.size(),
              runs, failed, secs);
  CHECK(failed == 0);
  CHECK(s.size() >= 10);  // every target has its shipped files or reproducers
  CHECK(runs == s.size() * (kMutationsPerSeed + 1));
}

}  // namespace

// One test case per target, so that CTest spreads them over the cores (the study target's
// inputs each load a template and technology library and time a point: a minute under ASan).
TEST_CASE("fuzz replay: templates", "[fuzz]") { replay(Target::kTemplate); }
TEST_CASE("fuzz replay: technology libraries", "[fuzz]") { replay(Target::kTechlib); }
TEST_CASE("fuzz replay: workloads", "[fuzz]") { replay(Target::kWorkload); }
TEST_CASE("fuzz replay: strategies", "[fuzz]") { replay(Target::kStrategy); }
TEST_CASE("fuzz replay: command-line overrides", "[fuzz]") { replay(Target::kOverride); }
TEST_CASE("fuzz replay: software profiles", "[fuzz]") { replay(Target::kSoftware); }
TEST_CASE("fuzz replay: studies", "[fuzz]") { replay(Target::kStudy); }
TEST_CASE("fuzz replay: search studies", "[fuzz]") { replay(Target::kSearch); }
TEST_CASE("fuzz replay: CSV tables", "[fuzz]") { replay(Target::kCsv); }
TEST_CASE("fuzz replay: Hugging Face configs", "[fuzz]") { replay(Target::kHfConfig); }

// Every target has its test case above.
TEST_CASE("fuzz replay: a test case for each target", "[fuzz]") { CHECK(targets().size() == 10); }

}  // namespace pathfinder::fuzz
