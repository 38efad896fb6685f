// Tests for the pathfinder executable (engine/cli): exit codes (0 ok, 2 bad input), output
// formats and compiler-style diagnostics. Runs PATHFINDER_EXE with the repository as working
// directory, capturing stdout and stderr to temporary files.
#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "engine/core/format.hpp"
#include "tests/test_paths.hpp"
#include "tests/test_support.hpp"

using pathfinder::test::data_path;
using pathfinder::test::source_path;
using pathfinder::test::kKnownMemory;
using pathfinder::test::kKnownNetwork;

namespace {

namespace fs = std::filesystem;

struct Run {
  int code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh directory for this process's captures, removed at exit.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("pathfinder-test-cli-" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};
const fs::path& scratch() {
  static const Scratch s;
  return s.dir;
}

// Runs `pathfinder <args>` in the repository root without $PATHFINDER_TECHLIB, or with `env`
// (VAR=value ...) set. args is passed to the shell as written.
Run run(const std::string& args, const std::string& env = "") {
  const fs::path out = scratch() / "stdout.txt";
  const fs::path err = scratch() / "stderr.txt";
  const std::string cmd = "cd '" + source_path("") + "' && env -u PATHFINDER_TECHLIB " + env +
                          " '" + std::string(PATHFINDER_EXE) + "' " + args + " >'" + out.string() +
                          "' 2>'" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  Run r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE("arch --format json reports the A100 peak", "[cli]") {
  const Run r = run("arch templates/a100.yaml --format json");
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  REQUIRE(r.out.find("\"peak_tflops\"") != std::string::npos);
  nlohmann::json j;
  REQUIRE_NOTHROW(j = nlohmann::json::parse(r.out));
  CHECK(j.at("name") == "A100-SXM4-80GB");
  CHECK(j.at("logic") == "N7");
  CHECK(j.at("feasible") == true);
  // Self-describing, as every command's JSON: what was generated and by which version.
  CHECK(j.at("inputs").at("template_file") == "templates/a100.yaml");
  CHECK(j.at("inputs").at("pathfinder").get<std::string>().rfind("0.12.0", 0) == 0);
  CHECK(j.at("inputs").at("pathfinder") == first_line(run("--version").out).substr(11));
  // 108 SMs x 4 tensor cores x 512 FLOP/cycle x 1.41 GHz = 311.87 TFLOP/s
  CHECK(j.at("core").at("peak_tflops").get<double>() == Approx(311.9).margin(0.5));
  CHECK(j.at("core").at("bundles").get<int>() == 108);
  CHECK(j.at("core").at("mcus").get<int>() == 432);  // 108 x 4
}

TEST_CASE("arch --format yaml and the default table", "[cli]") {
  const Run y = run("arch templates/a100.yaml --format yaml");
  REQUIRE(y.code == 0);
  CHECK(y.err.empty());
  CHECK(first_line(y.out) == "name: \"A100-SXM4-80GB\"");
  const auto at = y.out.find("\n  peak_tflops: ");
  REQUIRE(at != std::string::npos);
  // Same figure as the JSON: 108 x 4 x 512 x 1.41e9 = 311.87e12 FLOP/s
  CHECK(std::strtod(y.out.c_str() + at + 15, nullptr) == Approx(311.9).margin(0.5));
  // Valid YAML (yaml-cpp's emitter): it reads back to the JSON's values.
  const YAML::Node doc = YAML::Load(y.out);
  const nlohmann::json js = nlohmann::json::parse(run("arch templates/a100.yaml --format json").out);
  CHECK(doc["core"]["mcus"].as<int>() == js["core"]["mcus"].get<int>());
  CHECK(doc["networks"][0]["technology"].as<std::string>() == "NVLink3");
  CHECK(doc["core"]["peak_tflops"].as<double>() == js["core"]["peak_tflops"].get<double>());

  const Run t = run("arch templates/a100.yaml");
  REQUIRE(t.code == 0);
  CHECK(t.err.empty());
  CHECK(first_line(t.out) == "A100-SXM4-80GB on N7");
  CHECK(t.out.find("311.9 TFLOP/s") != std::string::npos);
  CHECK(run("arch templates/a100.yaml --format table").out == t.out);
  // The template positional or as --template, on arch and eval alike.
  CHECK(run("arch --template templates/a100.yaml").out == t.out);
  const Run e1 = run("eval --template templates/a100.yaml --workload studies/workloads/gemm.yaml");
  REQUIRE(e1.code == 0);
  CHECK(run("eval templates/a100.yaml --workload studies/workloads/gemm.yaml").out == e1.out);
}

TEST_CASE("arch --tech, --memory and --network rebind the template", "[cli]") {
  const Run r = run("arch templates/a100.yaml --tech N5");
  REQUIRE(r.code == 0);
  CHECK(first_line(r.out) == "A100-SXM4-80GB on N5");
  const Run j = run("arch templates/a100.yaml --tech N5 --memory HBM3 --network NDR-x8 "
                    "--format json");
  REQUIRE(j.code == 0);
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  CHECK(doc.at("logic") == "N5");
  CHECK(j.out.find("HBM3") != std::string::npos);
  CHECK(j.out.find("NDR-x8") != std::string::npos);
  CHECK(j.out.find("NVLink3") == std::string::npos);
  CHECK(j.out.find("HBM2e") == std::string::npos);
}

TEST_CASE("arch with an unknown --tech exits 2 naming the option", "[cli][config-error]") {
  const Run r = run("arch templates/a100.yaml --tech N55");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "command line: error: --tech: unknown logic technology \"N55\" (known: DF-N14, DF-N10, "
        "DF-N7, DF-N5, DF-N3, DF-N2, DF-N1, N12, N10, N7, N5, N4, N3, N2 or N1); did you mean "
        "\"N5\"?\n");
}

TEST_CASE("eval --nic swaps the scale-out NIC, an unknown one exits 2 naming the option",
          "[cli][config-error]") {
  // Llama 3 70B on 1,024 H100s, its data-parallel reductions over the scale-out tier: the
  // iteration shortens with each NIC generation (techlib/network.yaml: HDR200 25 GB/s, NDR400
  // 50 GB/s, XDR800 100 GB/s per GPU).
  const std::string args =
      "eval templates/h100.yaml --workload studies/workloads/llama3_70b.yaml --software "
      "megatron-core --strategy tp8-pp4-dp32-mb1-zero1-sp-recompute=selective --format json --nic ";
  double last = 1e9;
  for (const char* nic : {"HDR200", "NDR400", "XDR800"}) {
    const Run r = run(args + nic);
    REQUIRE(r.code == 0);
    const double t = nlohmann::json::parse(r.out).at("iteration_s").get<double>();
    CHECK(t < last);
    last = t;
  }
  const Run bad = run(args + "NDR4");
  CHECK(bad.code == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err == "command line: error: --nic: unknown scale-out NIC \"NDR4\" (known: HDR200, "
                   "NDR400, XDR800 or RoCE400); did you mean \"NDR400\"?\n");
  const Run none = run("eval templates/case_study_node.yaml --workload "
                       "studies/workloads/llama3_8b.yaml --strategy tp8 --nic NDR400");
  CHECK(none.code == 2);
  CHECK(none.err == "command line: error: --nic: template \"case-study-node\" defines no "
                    "network.scale_out to replace\n");
}

TEST_CASE("validate accepts every shipped input file of every kind", "[cli]") {
  // Every *.yaml under templates/, templates/software/, techlib/, studies/ and
  // studies/workloads/ (templates, profiles, technology files, studies, searches, workloads),
  // as repository-relative paths, in name order.
  std::vector<std::string> files;
  for (const char* dir : {"templates", "templates/software", "techlib", "studies",
                          "studies/workloads"}) {
    std::vector<std::string> in_dir;
    for (const auto& e : fs::directory_iterator(source_path(dir))) {
      if (e.path().extension() == ".yaml") {
        in_dir.push_back(std::string(dir) + "/" + e.path().filename().string());
      }
    }
    std::sort(in_dir.begin(), in_dir.end());
    files.insert(files.end(), in_dir.begin(), in_dir.end());
  }
  for (const char* f : {"templates/a100.yaml", "templates/v100.yaml", "templates/h100.yaml",
                        "templates/deepflow_v100.yaml", "techlib/logic.yaml",
                        "templates/software/megatron-lm.yaml", "studies/workloads/gpt3_175b.yaml",
                        "studies/fig9_technology_scaling.yaml",
                        "studies/search_gpt3_13b_a100.yaml"}) {
    CHECK(std::find(files.begin(), files.end(), f) != files.end());
  }
  std::string args = "validate";
  std::vector<std::string> expected;
  for (const auto& f : files) {
    args += " " + f;
    expected.push_back(f + ": ok");
  }
  args += " tests/data/strategies/tp8_pp8.yaml";
  expected.push_back("tests/data/strategies/tp8_pp8.yaml: ok");
  const Run r = run(args);
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(lines(r.out) == expected);
  // A workload's problem is found and located like a template's.
  const Run bad = run("validate tests/data/fuzz/lstm_layers_2p32.yaml");
  CHECK(bad.code == 2);
  CHECK(first_line(bad.err).find("error: layers: expected a whole number in [1, 100000]") !=
        std::string::npos);
}

TEST_CASE("validate prints every problem of a bad template and exits 2", "[cli][config-error]") {
  const std::string f = "tests/data/templates/several_problems.yaml";
  const Run r = run("validate --techlib techlib " + f);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(lines(r.err) == std::vector<std::string>{
      f + ":14:17: error: memory.main.technology: unknown memory technology \"HBM9\" " +
          kKnownMemory + "; did you mean \"HBM2\"?",
      f + ":16:31: error: network.inter_package.technology: unknown network technology "
          "\"NVLink-3\" " + kKnownNetwork + "; did you mean \"NVLink3\"?",
      f + ":25:3: error: split: expected power fractions summing to at most 1, got 1.100000"});

  // Two semantic problems print two lines; a good file next to them is still reported ok.
  const std::string two = "tests/data/templates/two_problems.yaml";
  const std::string ok = "tests/data/templates/minimal.yaml";
  const Run r2 = run("validate --techlib techlib " + ok + " " + two);
  CHECK(r2.code == 2);
  CHECK(r2.out == ok + ": ok\n");
  const auto errs = lines(r2.err);
  REQUIRE(errs.size() == 2);
  CHECK(errs[0].rfind(two + ":14:17: error: memory.main.technology: unknown memory", 0) == 0);
  CHECK(errs[1].rfind(two + ":16:31: error: network.inter_package.technology: unknown", 0) == 0);
}

TEST_CASE("validate lists every problem of a workload, study, search, strategy, profile, techlib",
          "[cli][config-error]") {
  // One collecting pass per file (ConfigNode::collecting): every missing, unknown or ill-typed
  // key, in file order, each once; the files' comments say which problems they hold.
  const auto problems = [](const std::string& f) {
    const Run r = run("validate " + f);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    return lines(r.err);
  };
  const std::string w = "tests/data/validate/workload_five_problems.yaml";
  CHECK(problems(w) == std::vector<std::string>{
      w + ":6:9: error: layers: expected a positive number, got \"-3\"",
      w + ":8:8: error: heads: expected a whole number, got \"abc\"",
      w + ":9:1: error: fnn: unknown key; did you mean \"ffn\"?",
      w + ":13:15: error: global_batch: expected a whole number, got a list",
      w + ":14:12: error: precision: expected one of fp32, fp16, bf16, fp8 or fp4, got \"fp17\"; "
          "did you mean \"fp16\"?"});
  const std::string st = "tests/data/validate/study_three_problems.yaml";
  CHECK(problems(st) == std::vector<std::string>{
      st + ":7:1: error: devcies: unknown key; did you mean \"devices\"?",
      st + ":12:15: error: check_memory: expected true or false, got \"maybe\"",
      st + ":14:12: error: outputs[0].plot: unknown plot \"pie\" (expected line or bars); did "
           "you mean \"line\"?"});
  const std::string se = "tests/data/validate/search_two_problems.yaml";
  CHECK(problems(se) == std::vector<std::string>{
      se + ":5:10: error: devices: expected a positive number, got \"-8\"",
      se + ":7:39: error: search.stesp: unknown key; did you mean \"steps\"?"});
  const std::string sg = "tests/data/validate/strategy_three_problems.yaml";
  CHECK(problems(sg) == std::vector<std::string>{
      sg + ":2:5: error: tp: expected a whole number, got \"two\"",
      sg + ":5:11: error: schedule: expected one of gpipe, 1f1b, interleaved or dualpipe, got \"1fb1\"; "
           "did you mean \"1f1b\"?",
      sg + ":6:1: error: recompte: unknown key; did you mean \"recompute\"?"});
  const std::string sw = "tests/data/validate/software_three_problems.yaml";
  CHECK(problems(sw) == std::vector<std::string>{
      sw + ":3:1: error: name: missing required key (expected a string)",
      sw + ":3:18: error: host.dispatch: expected a time such as \"1.5 us\", got \"12\" (a bare "
           "number needs a unit)",
      sw + ":4:49: error: overlap.tensor_parallel: expected a fraction in [0, 1] or chunked, got "
           "\"1.5\""});
  const std::string t = "tests/data/validate/techlib_three_problems.yaml";
  CHECK(problems(t) == std::vector<std::string>{
      t + ":6:13: error: memory.TestMem.layers: expected a whole number, got \"eight\"",
      t + ":14:23: error: memory.TestMem.nominal_pin_rate: expected a bandwidth such as "
          "\"900 GB/s\", got \"3.2 GHz\" (a frequency)",
      t + ":16:5: error: memory.TestMem.latncy: unknown key; did you mean \"latency\"?"});
}

TEST_CASE("validate reports parse errors of templates and techlib files", "[cli][config-error]") {
  const Run t = run("validate --techlib techlib tests/data/templates/wrong_unit.yaml");
  CHECK(t.code == 2);
  CHECK(t.err == "tests/data/templates/wrong_unit.yaml:23:10: error: budget.power: expected a "
                 "power such as \"300 W\", got \"400 GB/s\" (a bandwidth)\n");
  const Run l = run("validate tests/data/techlib/bad_voltage.yaml tests/data/techlib/bad_unit.yaml");
  CHECK(l.code == 2);
  CHECK(l.out.empty());
  CHECK(lines(l.err) == std::vector<std::string>{
      "tests/data/techlib/bad_voltage.yaml:5:54: error: logic.TestNode.vf.threshold_voltage: "
      "expected a threshold voltage below minimum_voltage, got \"0.6 V\"",
      "tests/data/techlib/bad_unit.yaml:13:23: error: memory.TestMem.nominal_pin_rate: expected "
      "a bandwidth such as \"900 GB/s\", got \"3.2 GHz\" (a frequency)"});
}

TEST_CASE("arch on a bad template prints every problem and exits 2", "[cli][config-error]") {
  const std::string f = data_path("templates/two_problems.yaml");
  const Run r = run("arch --techlib techlib '" + f + "'");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  const auto errs = lines(r.err);
  REQUIRE(errs.size() == 2);
  CHECK(errs[0] == f + ":14:17: error: memory.main.technology: unknown memory technology "
                       "\"HBM2-e\" " + kKnownMemory + "; did you mean \"HBM2e\"?");
  CHECK(errs[1].rfind(f + ":16:31: error: network.inter_package.technology: ", 0) == 0);
}

TEST_CASE("arch on a missing template exits 2 with cannot read file", "[cli][config-error]") {
  const Run r = run("arch templates/missing.yaml");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "templates/missing.yaml: error: cannot read file: No such file or directory\n");
}

TEST_CASE("arch on a missing template outside a repository names the template",
          "[cli][config-error]") {
  // <scratch>/sub/missing.yaml: the default techlib <scratch>/techlib does not exist either, and
  // the techlib error is reported instead of the missing template the user named.
  const std::string f = (scratch() / "sub" / "missing.yaml").string();
  const Run r = run("arch '" + f + "'");
  CHECK(r.code == 2);
  CHECK(r.err == f + ": error: cannot read file: No such file or directory\n");
}

TEST_CASE("bad command lines exit 2, --help exits 0", "[cli]") {
  const Run sub = run("frobnicate templates/a100.yaml");
  CHECK(sub.code == 2);
  CHECK(sub.out.empty());
  CHECK_FALSE(sub.err.empty());

  const Run fmt = run("arch templates/a100.yaml --format xml");
  CHECK(fmt.code == 2);
  CHECK(fmt.out.empty());
  CHECK(first_line(fmt.err) ==
        "command line: error: --format: xml not in {table,yaml,json} (pathfinder arch --help)");

  const Run none = run("");
  CHECK(none.code == 2);
  CHECK(first_line(none.err) == "command line: error: A subcommand is required (pathfinder --help)");
  CHECK(run("validate").code == 2);

  const Run help = run("--help");
  CHECK(help.code == 0);
  CHECK(help.out.find("Usage:") != std::string::npos);
  CHECK(help.out.find("arch") != std::string::npos);
  CHECK(help.out.find("validate") != std::string::npos);
  CHECK(help.out.find("eval") != std::string::npos);
  CHECK(run("arch --help").code == 0);
  CHECK(run("eval --help").code == 0);
}

TEST_CASE("an unknown subcommand is named in the message", "[cli]") {
  // Actual: "A subcommand is required", as if none had been given.
  const Run r = run("frobnicate templates/a100.yaml");
  CHECK(r.code == 2);
  CHECK(r.err.find("frobnicate") != std::string::npos);
}

TEST_CASE("eval times the GEMM workload on the A100 template", "[cli][eval]") {
  const Run r = run("eval --template templates/a100.yaml --workload studies/workloads/gemm.yaml");
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  const auto ls = lines(r.out);
  REQUIRE_FALSE(ls.empty());
  CHECK(ls[0] == "gemm-8192 (gemm) on A100-SXM4-80GB (N7)");
  // The kernel row: name, count, phase, shape, time, %busy (the only kernel: 100%), binding.
  // 8192^3 in fp16 has at least 2·8192³ / (3·8192²·2 B) = 2731 FLOP per compulsory byte, far
  // above the A100's ridge point of ~296 TFLOP/s / 1.84 TB/s = 161 FLOP/B: compute-bound.
  const auto row = std::find_if(ls.begin(), ls.end(),
                                [](const std::string& l) { return l.rfind("gemm ", 0) == 0; });
  REQUIRE(row != ls.end());
  std::istringstream fields(*row);
  std::string name, count, phase, shape, time, unit, busy, binding;
  fields >> name >> count >> phase >> shape >> time >> unit >> busy >> binding;
  CHECK(count == "1");
  CHECK(phase == "forward");
  CHECK(shape == "8192x8192x8192");
  CHECK(unit == "ms");
  // 1.0995 TFLOP at no more than the timer's 296.3 TFLOP/s (peak x 0.95) takes >= 3.711 ms.
  CHECK(std::strtod(time.c_str(), nullptr) >= 3.711);
  CHECK(busy == "100.0");
  CHECK(binding == "compute");
  CHECK(r.out.find("\niteration time ") != std::string::npos);
  CHECK(r.out.find("\nachieved ") != std::string::npos);
}

TEST_CASE("eval --format json and csv", "[cli][eval]") {
  const std::string args =
      "eval --template templates/a100.yaml --workload studies/workloads/gemm.yaml --format ";
  const Run r = run(args + "json");
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  nlohmann::json j;
  REQUIRE_NOTHROW(j = nlohmann::json::parse(r.out));
  CHECK(j.at("workload") == "gemm-8192");
  CHECK(j.at("feasible") == true);
  REQUIRE(j.at("kernels").size() == 1);
  const auto& k = j.at("kernels")[0];
  CHECK(k.at("name") == "gemm");
  CHECK(k.at("gemm").at("m") == 8192);
  CHECK(k.at("gemm").at("n") == 8192);
  CHECK(k.at("gemm").at("k") == 8192);
  CHECK(k.at("flops").get<double>() == 1099511627776.0);  // 2·8192³
  CHECK(k.at("binding") == "compute");
  // No faster than the MCU arrays: device >= FLOPs / matrix FLOP/s.
  const double device = k.at("device_s").get<double>();
  CHECK(device >= k.at("flops").get<double>() / j.at("matrix_flops_per_s").get<double>());
  const auto& tot = j.at("totals");
  CHECK(tot.at("micro_batches") == 1);
  CHECK(tot.at("iteration_time_s").get<double>() > device);
  CHECK(tot.at("device_busy_s").get<double>() == device);

  const Run c = run(args + "csv");
  REQUIRE(c.code == 0);
  const auto ls = lines(c.out);
  REQUIRE(ls.size() == 2);  // header and the one kernel
  CHECK(ls[0].rfind("id,name,kind,phase,", 0) == 0);
  CHECK(ls[1].rfind("0,gemm,gemm,forward,fp16,,,1,8192,8192,8192,1099511627776.0,", 0) == 0);
}

TEST_CASE("eval --all-kernels lists each layer's kernels", "[cli][eval]") {
  const std::string args =
      "eval --template templates/a100.yaml --workload tests/data/workloads/gpt_defaults.yaml";
  const Run agg = run(args);
  REQUIRE(agg.code == 0);
  CHECK(agg.out.find("\nl*.qkv.fwd ") != std::string::npos);
  CHECK(agg.out.find("\nl0.qkv.fwd ") == std::string::npos);
  const Run all = run(args + " --all-kernels");
  REQUIRE(all.code == 0);
  CHECK(all.out.find("\nl0.qkv.fwd ") != std::string::npos);
  CHECK(all.out.find("\nl1.qkv.fwd ") != std::string::npos);
  CHECK(all.out.find("\nl*.") == std::string::npos);
}

TEST_CASE("eval --all-kernels with a strategy: one layer's kernels as timed", "[cli][eval]") {
  // GPT-3 13B as tp8-pp2-dp8 on 128 A100s: after the report, the first stage's layer (one
  // micro-batch) kernel by kernel; JSON carries them as layer_kernels. Forward, backward and
  // update in graph order: the QKV GEMM before its tensor-parallel reduction's consumers, the
  // row-parallel all-reduces as collectives on the compute stream.
  const std::string args = "eval templates/a100.yaml --workload studies/workloads/gpt3_13b.yaml "
                           "--strategy tp8-pp2-dp8-mb1 --devices 128 --all-kernels";
  const Run t = run(args);
  REQUIRE(t.code == 0);
  CHECK(t.out.find("one layer's kernels on the first stage") != std::string::npos);
  CHECK(t.out.find("\nforward   l0.qkv.fwd ") != std::string::npos);
  CHECK(t.out.find("\nbackward  l0.qkv.wgrad ") != std::string::npos);
  const Run j = run(args + " --format json");
  REQUIRE(j.code == 0);
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  const nlohmann::json& k = doc.at("layer_kernels");
  REQUIRE(k.size() > 20);
  double last_end = 0.0;
  for (const nlohmann::json& e : k) {
    if (e.at("pass") != "forward") break;
    if (e.at("stream") == "communication") continue;
    CHECK(e.at("start_s").get<double>() >= last_end - 1e-15);  // one stream, in order
    last_end = e.at("start_s").get<double>() + e.at("time_s").get<double>();
  }
  CHECK(last_end > 0.0);
  bool reduce = false;
  for (const nlohmann::json& e : k) {
    if (e.at("kernel") == "l0.proj.reduce.fwd") reduce = e.at("kind") == "collective";
  }
  CHECK(reduce);
  // Without --all-kernels the report carries no layer.
  const Run plain = run("eval templates/a100.yaml --workload studies/workloads/gpt3_13b.yaml "
                        "--strategy tp8-pp2-dp8-mb1 --devices 128 --format json");
  REQUIRE(plain.code == 0);
  CHECK_FALSE(nlohmann::json::parse(plain.out).contains("layer_kernels"));
}

TEST_CASE("eval takes the technology overrides of arch", "[cli][eval]") {
  const Run r = run("eval --template templates/a100.yaml --workload studies/workloads/gemm.yaml "
                    "--tech N5 --memory HBM3 --format json");
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j.at("logic") == "N5");
  const Run bad = run("eval --template templates/a100.yaml --workload "
                      "studies/workloads/gemm.yaml --tech N55");
  CHECK(bad.code == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.rfind("command line: error: --tech: unknown logic technology \"N55\"", 0) == 0);
}

TEST_CASE("eval reports an infeasible design and exits 0", "[cli][eval]") {
  const std::string args = "eval --techlib techlib --template "
                           "tests/data/templates/infeasible_core.yaml --workload "
                           "studies/workloads/gemm.yaml";
  const std::string reason = "core: no bundle of MCUs fits the core area budget";
  const Run t = run(args);
  CHECK(t.code == 0);
  CHECK(t.err.empty());
  CHECK(t.out == "gemm-8192 (gemm) on infeasible-core (N7)\n\ninfeasible: " + reason + "\n");
  const Run j = run(args + " --format json");
  CHECK(j.code == 0);
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  CHECK(doc.at("feasible") == false);
  CHECK(doc.at("reason") == reason);
  // No times: null, never 0.
  CHECK(doc.at("totals").at("iteration_time_s").is_null());
  CHECK(doc.at("totals").at("achieved_flops_per_s").is_null());
  CHECK(doc.at("totals").at("fraction_of_peak").is_null());
}

TEST_CASE("eval input errors exit 2", "[cli][eval][config-error]") {
  const Run missing = run("eval --template templates/a100.yaml --workload "
                          "studies/workloads/missing.yaml");
  CHECK(missing.code == 2);
  CHECK(missing.out.empty());
  CHECK(missing.err ==
        "studies/workloads/missing.yaml: error: cannot read file: No such file or directory\n");

  const Run bad = run("eval --template templates/a100.yaml --workload "
                      "tests/data/workloads/unknown_key.yaml");
  CHECK(bad.code == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.rfind("tests/data/workloads/unknown_key.yaml:", 0) == 0);
  CHECK(bad.err.find(": error: ") != std::string::npos);

  const Run fmt = run("eval --template templates/a100.yaml --workload "
                      "studies/workloads/gemm.yaml --format xml");
  CHECK(fmt.code == 2);
  CHECK(fmt.out.empty());
  CHECK(first_line(fmt.err) ==
        "command line: error: --format: xml not in {table,csv,json} (pathfinder eval --help)");

  const Run no_workload = run("eval --template templates/a100.yaml");
  CHECK(no_workload.code == 2);
  CHECK(no_workload.out.empty());
  CHECK(first_line(no_workload.err) ==
        "command line: error: --workload is required (pathfinder eval --help)");

  const Run no_template = run("eval --template templates/missing.yaml --workload "
                              "studies/workloads/gemm.yaml");
  CHECK(no_template.code == 2);
  CHECK(no_template.err ==
        "templates/missing.yaml: error: cannot read file: No such file or directory\n");
}

namespace pathfinder {

TEST_CASE("eval on one device prints the trivial strategy's iteration", "[cli][eval]") {
  // Without --strategy the iteration is the training entry point's for tp1-pp1-dp1 with the
  // workload's micro_batch (gpt3_1.3b.yaml: 1): one answer, to the last digit of the JSON.
  const std::string args =
      "eval --template templates/a100.yaml --workload studies/workloads/gpt3_1.3b.yaml "
      "--format json";
  const Run single = run(args);
  const Run trivial = run(args + " --strategy tp1-pp1-dp1-mb1");
  REQUIRE(single.code == 0);
  REQUIRE(trivial.code == 0);
  const auto s = nlohmann::json::parse(single.out);
  auto t = nlohmann::json::parse(trivial.out);
  CHECK(s.at("totals").at("iteration_time_s") == t.at("iteration_s"));
  CHECK(s.at("inputs") == t.at("inputs"));  // the same template, workload, software, version
  t.erase("inputs");
  CHECK(s.at("training") == t);  // the whole result, breakdown and stages included
  CHECK(s.at("kernels").size() > 0);
  // The table prints the kernels, then the same iteration's breakdown.
  const Run table = run("eval --template templates/a100.yaml --workload "
                        "studies/workloads/gpt3_1.3b.yaml");
  REQUIRE(table.code == 0);
  CHECK(table.out.find("\nl*.qkv.fwd ") != std::string::npos);
  CHECK(table.out.find("on 1 devices, tp1-pp1-dp1-mb1-1f1b") != std::string::npos);
  CHECK(table.out.find("critical stage 0") != std::string::npos);
}

TEST_CASE("eval prints one row per pipeline stage, at most 8", "[cli][eval]") {
  const std::string args =
      "eval --template templates/a100.yaml --workload studies/workloads/gpt3_1.3b.yaml "
      "--strategy ";
  const Run pp4 = run(args + "tp2-pp4-dp1-mb1");
  REQUIRE(pp4.code == 0);
  CHECK(pp4.out.find("\nstage  comput ") != std::string::npos);
  CHECK(pp4.out.find("\n3 ") != std::string::npos);
  CHECK(pp4.out.find("more stages") == std::string::npos);
  const auto j = nlohmann::json::parse(run(args + "tp2-pp4-dp1-mb1 --format json").out);
  REQUIRE(j.at("stages").size() == 4);
  CHECK(j.at("stages")[3].at("stage") == 3);
  // GPT-3 13B's 40 layers over 20 stages (dp2: 40 devices, five A100 domains of 8): 8 rows,
  // then how many were left out.
  const Run pp20 = run("eval --template templates/a100.yaml --workload "
                       "studies/workloads/gpt3_13b.yaml --strategy tp1-pp20-dp2-mb1");
  REQUIRE(pp20.code == 0);
  CHECK(pp20.out.find("\n7  ") != std::string::npos);
  CHECK(pp20.out.find("\n8  ") == std::string::npos);
  CHECK(pp20.out.find("\n... 12 more stages\n") != std::string::npos);
  // One stage: no stage rows.
  CHECK(run(args + "tp8-pp1-dp1-mb1").out.find("\nstage  comput ") == std::string::npos);
}

TEST_CASE("eval --strategy times a distributed GPT iteration", "[cli]") {
  // GPT-3 1.3B (24 layers) on 8 A100s: tensor 2 x pipeline 2 x data 2.
  const Run r = run("eval --template templates/a100.yaml --workload "
                    "studies/workloads/gpt3_1.3b.yaml --strategy tp2-pp2-dp2-mb1 --format json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["devices"] == 8);
  CHECK(j["strategy"] == "tp2-pp2-dp2-mb1-1f1b");
  CHECK(j["feasible"] == true);
  CHECK(j["iteration_s"].get<double>() > 0.0);
  double parts = 0.0;
  for (const auto& [k, v] : j["breakdown"].items()) parts += v.get<double>();
  CHECK(parts == Approx(j["iteration_s"].get<double>()));
  const Run t = run("eval --template templates/a100.yaml --workload "
                    "studies/workloads/gpt3_1.3b.yaml --strategy tp2-pp2-dp2-mb1");
  CHECK(t.code == 0);
  CHECK(t.out.find("pipeline_bubble") != std::string::npos);
}

TEST_CASE("eval with a bad strategy exits 2 with the reason", "[cli][config-error]") {
  const Run r = run("eval --template templates/a100.yaml --workload "
                    "studies/workloads/gpt3_1.3b.yaml --strategy tp2-pp2-dp2 --devices 16");
  CHECK(r.code == 2);
  CHECK(r.err.find("16") != std::string::npos);
  // A GEMM distributed by CR over 4 devices: each multiplies 8192 x 8192 x 2048 locally.
  const Run g = run("eval --template templates/a100.yaml --workload "
                    "studies/workloads/gemm.yaml --strategy CR-4-d1-p1 --format json");
  REQUIRE(g.code == 0);
  const auto gj = nlohmann::json::parse(g.out);
  CHECK(gj["local_gemm"]["k"] == 2048);
  // The reduce-scatter after the product (training_model.hpp: a GEMM's collective is its
  // tensor_comm).
  CHECK(gj["breakdown"]["tensor_comm_s"].get<double>() > 0.0);
}

TEST_CASE("eval reads a strategy from YAML and reports its errors with the location",
          "[cli][config-error]") {
  const Run r = run("eval --template templates/a100.yaml --workload "
                    "studies/workloads/gpt3_1.3b.yaml --strategy "
                    "tests/data/strategies/tp2_pp2_dp2.yaml --format json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["strategy"] == "tp2-pp2-dp2-mb1-1f1b-recompute=selective");
  const Run bad = run("eval --template templates/a100.yaml --workload "
                      "studies/workloads/gpt3_1.3b.yaml --strategy "
                      "tests/data/strategies/bad_schedule.yaml");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("bad_schedule.yaml:4:11: error: schedule") != std::string::npos);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("search runs a study and writes its split and CSV", "[cli]") {
  const fs::path out = scratch() / "small";
  const Run r = run("search tests/data/studies/small_search.yaml --threads 1 --out '" +
                    out.string() + "'");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("iteration: template split") != std::string::npos);
  CHECK(slurp(out.string() + ".yaml").find("split:") != std::string::npos);
  CHECK(slurp(out.string() + ".csv").find("strategy,feasible,iteration_s") == 0);
  const Run bad = run("search tests/data/studies/bad_strategy.yaml");
  CHECK(bad.code == 2);
  const Run opt = run("search tests/data/studies/small_search.yaml --optimizer cobila");
  CHECK(opt.code == 2);
  CHECK(opt.err.find("did you mean \"cobyla\"") != std::string::npos);
  // JSON: the answer with its split, convergence and inputs; its time is the table's.
  const Run j = run("search tests/data/studies/small_search.yaml --threads 1 --format json");
  REQUIRE(j.code == 0);
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  CHECK(doc["feasible"].get<bool>());
  CHECK(doc["iteration_s"].get<double>() <= doc["template_split_iteration_s"].get<double>());
  CHECK(doc["split"].size() == 7);  // templates/a100.yaml's components
  CHECK(doc["split"][0]["component"] == "core");
  // area_mm2 = area fraction x 826 mm^2 (the A100 template's chip budget)
  CHECK(doc["split"][0]["area_mm2"].get<double>() ==
        Approx(doc["split"][0]["area"].get<double>() * 826.0));
  CHECK(doc["converged"].is_boolean());
  CHECK(doc["inputs"]["devices"] == 8);
  CHECK(r.out.find(format_seconds(doc["iteration_s"].get<double>())) != std::string::npos);
  // --set reaches the workload and the template: a larger micro-batch, a 300 W cap.
  const Run set = run("search tests/data/studies/small_search.yaml --threads 1 --format json "
                      "--set budget.power=300W --set micro_batch=2");
  REQUIRE(set.code == 0);
  CHECK(nlohmann::json::parse(set.out)["iteration_s"].get<double>() != doc["iteration_s"].get<double>());
  // --start continues from a previous result: its split is where the template split was.
  const Run cont = run("search tests/data/studies/small_search.yaml --threads 1 --format json "
                       "--restarts 1 --steps 1 --start '" + out.string() + ".yaml'");
  REQUIRE(cont.code == 0);
  const nlohmann::json cj = nlohmann::json::parse(cont.out);
  CHECK(cj["template_split_iteration_s"].get<double>() ==
        Approx(doc["iteration_s"].get<double>()).epsilon(0.01));  // split rounded to 5 digits
  CHECK(cj["iteration_s"].get<double>() <= cj["template_split_iteration_s"].get<double>());
  const Run no_split = run("search tests/data/studies/small_search.yaml --start templates/a100.yaml");
  CHECK(no_split.code == 0);  // a template's own split: block is a start too
  const Run bad_start = run("search tests/data/studies/small_search.yaml --start "
                            "tests/data/studies/small_search.yaml");
  CHECK(bad_start.code == 2);
  CHECK(first_line(bad_start.err).rfind("tests/data/studies/small_search.yaml", 0) == 0);
  const Run bad_set = run("search tests/data/studies/small_search.yaml --set budget.powr=1W");
  CHECK(bad_set.code == 2);
  CHECK(first_line(bad_set.err) ==
        "command line: error: --set budget.powr: unknown key; did you mean \"power\"?");
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("study runs a sweep, writes its files, and resumes", "[cli]") {
  const fs::path out = scratch() / "study_small";
  fs::remove_all(out);
  const Run r = run("study tests/data/studies/study_small.yaml --threads 1 --out '" +
                    out.string() + "'");
  REQUIRE(r.code == 0);
  CHECK(fs::exists(out / "results.csv"));
  CHECK(slurp(out / "summary.md").find("does N5 or HBM3 buy more") != std::string::npos);
  // A rerun finds every point done and evaluates none.
  const Run again = run("study tests/data/studies/study_small.yaml --out '" + out.string() + "'");
  REQUIRE(again.code == 0);
  CHECK(again.out.find("0 evaluated now") != std::string::npos);
  const Run bad = run("study tests/data/studies/bad_strategy.yaml");
  CHECK(bad.code == 2);
  // JSON: counts, checks and the best row with typed values (the summary's best point).
  const Run j = run("study tests/data/studies/study_small.yaml --format json --out '" +
                    out.string() + "'");
  REQUIRE(j.code == 0);
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  CHECK(doc["points"] == 4);
  CHECK(doc["reused"] == 4);
  CHECK(doc["complete"].get<bool>());
  CHECK(doc["best"]["logic"] == "N5");
  CHECK(doc["best"]["feasible"].get<bool>());
  CHECK(doc["best"]["converged"].is_null());  // no split search in this study
  CHECK(doc["best"]["gemm_intensity"].is_null());
  CHECK(doc["best"]["iteration_s"].get<double>() > 0.0);
  // --set reaches every point's template and is part of the settings: the rows are recomputed
  // (a 300 W cap is slower than the A100's 400 W), and a rerun with the same value reuses them.
  const Run capped = run("study tests/data/studies/study_small.yaml --format json --set "
                         "budget.power=300W --out '" + out.string() + "'");
  REQUIRE(capped.code == 0);
  const nlohmann::json cd = nlohmann::json::parse(capped.out);
  CHECK(cd["evaluated"] == 4);
  CHECK(cd["best"]["iteration_s"].get<double>() > doc["best"]["iteration_s"].get<double>());
  const Run again_capped = run("study tests/data/studies/study_small.yaml --format json --set "
                               "budget.power=300W --out '" + out.string() + "'");
  CHECK(nlohmann::json::parse(again_capped.out)["reused"] == 4);
  const Run bad_set = run("study tests/data/studies/study_small.yaml --set budget.powr=1W --out '" +
                          out.string() + "'");
  CHECK(bad_set.code == 2);
  CHECK(bad_set.err.find("--set budget.powr: unknown key") != std::string::npos);
  // validate --format json: one object per file with its located problems.
  const Run v = run("validate templates/a100.yaml tests/data/fuzz/lstm_layers_2p32.yaml --format json");
  CHECK(v.code == 2);
  const nlohmann::json vd = nlohmann::json::parse(v.out);
  REQUIRE(vd.size() == 2);
  CHECK(vd[0]["ok"].get<bool>());
  CHECK_FALSE(vd[1]["ok"].get<bool>());
  CHECK(vd[1]["problems"][0]["line"].get<int>() > 0);
  CHECK_FALSE(vd[1]["problems"][0]["message"].get<std::string>().empty());
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("eval: a strategy without mbN takes the workload's micro_batch", "[cli][eval]") {
  // gpt_micro_batch2.yaml sets micro_batch 2; before, a strategy without mbN silently ran mb1.
  const std::string args = "eval --template templates/a100.yaml --workload "
                           "tests/data/workloads/gpt_micro_batch2.yaml --strategy ";
  const Run bare = run(args + "tp8-pp8");
  const Run explicit_mb = run(args + "tp8-pp8-mb2");
  REQUIRE(bare.code == 0);
  CHECK(bare.err.empty());
  CHECK(bare.out == explicit_mb.out);
  CHECK(first_line(bare.out) == "gpt-mb2 on A100-SXM4-80GB on 64 devices, tp8-pp8-dp1-mb2-1f1b");
  const Run json = run(args + "tp8-pp8 --format json");
  REQUIRE(json.code == 0);
  CHECK(json.out == run(args + "tp8-pp8-mb2 --format json").out);
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j.at("strategy") == "tp8-pp8-dp1-mb2-1f1b");
  CHECK(j.at("micro_batches_per_pipeline") == 8);  // global_batch 16 / (dp1 x mb2)
  // A written mbN wins: 16 / (1 x 1) = 16 micro-batches.
  CHECK(nlohmann::json::parse(run(args + "tp8-pp8-mb1 --format json").out)
            .at("micro_batches_per_pipeline") == 16);
  // The same for a strategy YAML without micro_batch (and without dp: from --devices).
  const Run yaml = run(args + "tests/data/strategies/tp8_pp8.yaml --devices 64 --format json");
  REQUIRE(yaml.code == 0);
  CHECK(yaml.out == json.out);
}

TEST_CASE("eval --devices derives dp from a strategy that leaves it out", "[cli][eval]") {
  const std::string args = "eval --template templates/a100.yaml --workload "
                           "studies/workloads/gpt3_175b.yaml --format json --strategy ";
  // 1024 devices / (tp8 x pp8) = dp16, as Narayanan et al. 2021 train GPT-3 175B.
  const Run r = run(args + "tp8-pp8 --devices 1024");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("devices") == 1024);
  CHECK(j.at("strategy") == "tp8-pp8-dp16-mb1-1f1b");
  CHECK(r.out == run(args + "tp8-pp8-dp16 --devices 1024").out);
  CHECK(r.out == run(args + "tp8-pp8-dp16").out);

  const Run odd = run(args + "tp8-pp8 --devices 1000");
  CHECK(odd.code == 2);
  CHECK(odd.out.empty());
  CHECK(odd.err == "command line: error: --devices: 1000 is not a multiple of tp8 x pp8 = 64: "
                   "no whole data-parallel degree dp fills 1000 devices\n");
  const Run disagree = run(args + "tp8-pp8-dp8 --devices 1024");
  CHECK(disagree.code == 2);
  CHECK(disagree.out.empty());
  CHECK(disagree.err == "command line: error: --devices: --devices is 1024, but the strategy's "
                        "tp8 x pp8 x dp8 = 512 devices (leave dp out to derive it)\n");
}

TEST_CASE("eval --set overrides workload keys with the loader's checks", "[cli][eval]") {
  const std::string args = "eval --template templates/a100.yaml --workload "
                           "studies/workloads/gpt3_1.3b.yaml --strategy tp2-pp2 --devices 8 "
                           "--format json";
  // gpt3_1.3b.yaml: micro_batch 1, global_batch 512.
  const Run r = run(args + " --set micro_batch=4 --set global_batch=256 --set sequence=1024");
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("strategy") == "tp2-pp2-dp2-mb4-1f1b");      // the overridden micro_batch
  CHECK(j.at("micro_batches_per_pipeline") == 32);        // 256 / (dp2 x mb4)
  // 1.3B parameters x 6 FLOP x 256 x 1024 tokens ≈ 2.1 PFLOP (Megatron's count adds attention).
  CHECK(j.at("model_flops").get<double>() > 6.0 * 1.3e9 * 256 * 1024);
  CHECK(j.at("model_flops").get<double>() < 6.0 * 1.5e9 * 256 * 1024);
  // The shorthands are the same overrides.
  CHECK(run(args + " --micro-batch 4 --global-batch 256 --sequence 1024").out == r.out);

  const auto error = [&](const std::string& extra) {
    const Run bad = run(args + " " + extra);
    CHECK(bad.code == 2);
    CHECK(bad.out.empty());
    return bad.err;
  };
  CHECK(error("--set micro_batch=0") ==
        "command line: error: --set micro_batch: expected a positive number, got \"0\"\n");
  CHECK(error("--micro-batch two") ==
        "command line: error: --micro-batch: expected a whole number, got \"two\"\n");
  CHECK(error("--set micro_bach=2") ==
        "command line: error: --set micro_bach: unknown key; did you mean \"micro_batch\"?\n");
  CHECK(error("--set micro_batch") ==
        "command line: error: --set: expected key=value, got \"micro_batch\" (no '=')\n");
  CHECK(error("--set global_batch=510 --set micro_batch=4") ==
        "command line: error: --set global_batch: expected a multiple of micro_batch (4), got "
        "\"510\"\n");
}

TEST_CASE("eval: an infeasible strategy is unmistakable in JSON", "[cli][eval]") {
  // GPT-3 175B on one A100 without any model parallelism: 175e9 parameters x 16 bytes of Adam
  // mixed-precision state = 2.8 TB against 80 GiB. Reported, exit 0 (eval --help).
  const Run r = run("eval --template templates/a100.yaml --workload "
                    "studies/workloads/gpt3_175b.yaml --devices 8 --format json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("feasible") == false);
  CHECK_FALSE(j.at("reason").get<std::string>().empty());
  for (const char* key : {"iteration_s", "mfu", "tokens_per_s", "stage_forward_s"}) {
    INFO(key);
    CHECK(j.at(key).is_null());
  }
  CHECK(j.at("breakdown").at("compute_s").is_null());
  CHECK(j.at("memory").at("total_bytes").get<double>() > 175e9 * 16 / 8);
  const Run t = run("eval --template templates/a100.yaml --workload "
                    "studies/workloads/gpt3_175b.yaml --devices 8");
  CHECK(t.code == 0);
  CHECK(t.out.find("\ninfeasible: ") != std::string::npos);
}

TEST_CASE("eval --help documents the strategy grammar and the exit status", "[cli][eval]") {
  const Run h = run("eval --help");
  REQUIRE(h.code == 0);
  for (const char* text :
       {"tpN", "ppN", "dpN", "mbN", "gpipe | 1f1b | interleaved", "vN", "sp", "zero0..zero3",
        "recompute=none|selective|full", "RC-{kp1}-{kp2}-d{dp}-p{lp}", "CR-{kp1}-d{dp}-p{lp}",
        "--strategy tp8-pp8 --devices 1024", "default the workload's micro_batch",
        "Exit status: 0", "--set", "--isolated", "$PATHFINDER_TECHLIB"}) {
    INFO(text);
    CHECK(h.out.find(text) != std::string::npos);
  }
}

TEST_CASE("a template copied elsewhere finds a technology library", "[cli][techlib]") {
  const fs::path dir = scratch() / "copied";
  fs::create_directories(dir);
  fs::copy_file(source_path("templates/a100.yaml"), dir / "a100.yaml",
                fs::copy_options::overwrite_existing);
  // No techlib/ beside its folder, no option, no $PATHFINDER_TECHLIB: the shipped library.
  const Run r = run("arch '" + (dir / "a100.yaml").string() + "'");
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  CHECK(first_line(r.out) == "A100-SXM4-80GB on N7");
  CHECK(r.out == run("arch templates/a100.yaml").out);

  // The template's own techlib: key, relative to the template file.
  const auto write = [&](const std::string& name, const std::string& key) {
    std::ofstream(dir / name) << "techlib: " << key << "\n"
                              << slurp(source_path("templates/a100.yaml"));
    return "'" + (dir / name).string() + "'";
  };
  const std::string missing = write("missing_lib.yaml", "no_such_dir");
  const Run bad = run("arch " + missing);
  CHECK(bad.code == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err == (dir / "missing_lib.yaml").string() +
                       ":1:10: error: techlib: no technology library directory at \"" +
                       (dir / "no_such_dir").string() + "\"\n");
  // --techlib wins over the key.
  CHECK(run("arch --techlib techlib " + missing).code == 0);
  // The key wins over $PATHFINDER_TECHLIB.
  fs::remove(dir / "lib");
  fs::create_directory_symlink(source_path("techlib"), dir / "lib");
  const std::string keyed = write("keyed.yaml", "lib");
  const Run k = run("arch " + keyed, "PATHFINDER_TECHLIB=/nonexistent");
  CHECK(k.code == 0);
  CHECK(k.out == r.out);
  // $PATHFINDER_TECHLIB wins over the shipped library.
  const Run env =
      run("arch '" + (dir / "a100.yaml").string() + "'", "PATHFINDER_TECHLIB=/nonexistent");
  CHECK(env.code == 2);
  CHECK(env.err.rfind("/nonexistent: error: cannot read technology library directory", 0) == 0);
}

TEST_CASE("eval --isolated times one GEMM call: host floor plus device", "[cli][eval]") {
  const std::string args =
      "eval --template templates/a100.yaml --workload studies/workloads/gemm.yaml --format json";
  const Run r = run(args + " --isolated");
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("mode") == "isolated_call");
  const double device = j.at("device_s").get<double>();
  // a100.yaml host: dispatch 12 us + launch_latency 5 us + synchronize 11 us = 28 us.
  CHECK(j.at("call_s").get<double>() == Approx(device + 28e-6).epsilon(1e-12));
  // Compute-bound 2·8192³ = 1.0995 TFLOP at no more than 311.87 x 0.95 = 296.3 TFLOP/s:
  // >= 3.711 ms; a single call runs at the rated clock, a training iteration at 0.821 of its
  // rate (core.sustained_fraction, fitted on 8-GPU jobs), where the product draws 399.8 W: the
  // board's power limiter (engine/perf/power_limiter.hpp) leaves the rated clock. One device is
  // the median device, 1 + 0.015 x e(8) = 1.0215 times faster than an 8-GPU job's slowest
  // (core.device_variation, engine/perf/device_variation.hpp); the report holds its peak at
  // the board's 400 W.
  CHECK(device >= 3.711e-3);
  const auto training = nlohmann::json::parse(run(args).out);
  const double median = 1.0 + 0.015 * 1.4342;  // e(8) = Phi^-1(7.625 / 8.25), Blom
  CHECK(device ==
        Approx(0.821 * median * training.at("kernels")[0].at("device_s").get<double>()));
  // The clock the limiter settled at, against the rated one.
  CHECK(training.at("kernels")[0].at("clock").get<double>() == 1.0);
  CHECK(training.at("training").at("energy").at("peak_device_power_w").get<double>() ==
        Approx(400.0).epsilon(1e-4));
  // The iteration (training_model.hpp: one call of a GEMM workload) is the launch latency
  // (a100.yaml: 5 us) and the product at sustained clocks; the call adds the host's dispatch
  // and synchronize instead.
  const double sustained = training.at("kernels")[0].at("device_s").get<double>();
  CHECK(training.at("totals").at("iteration_time_s").get<double>() ==
        Approx(sustained + 5e-6).epsilon(1e-12));
  CHECK(training.at("training").at("iteration_s") ==
        training.at("totals").at("iteration_time_s"));

  const Run t = run("eval --template templates/a100.yaml --workload studies/workloads/gemm.yaml "
                    "--isolated");
  REQUIRE(t.code == 0);
  CHECK(first_line(t.out) == "gemm-8192 (gemm) on A100-SXM4-80GB (N7), one isolated call");

  const Run gpt = run("eval --template templates/a100.yaml --workload "
                      "studies/workloads/gpt3_1.3b.yaml --isolated");
  CHECK(gpt.code == 2);
  CHECK(gpt.out.empty());
  CHECK(gpt.err == "command line: error: --isolated: times one GEMM call; \"gpt3-1.3b\" is a gpt "
                   "workload (a training iteration)\n");
  const Run dist = run("eval --template templates/a100.yaml --workload "
                       "studies/workloads/gemm.yaml --isolated --strategy CR-4-d1-p1");
  CHECK(dist.code == 2);
  CHECK(dist.err == "command line: error: --isolated: times one call on one device; leave out "
                    "--strategy and --devices\n");
}

}  // namespace pathfinder

namespace pathfinder {
namespace {

double iteration_of(const Run& r) {
  const nlohmann::json j = nlohmann::json::parse(r.out);
  return j.at("iteration_s").get<double>();
}

}  // namespace

TEST_CASE("eval --software picks the framework's overlaps and host costs", "[cli]") {
  const std::string base = "eval --template templates/a100.yaml --workload "
                           "studies/workloads/gpt3_13b.yaml --strategy tp8-pp2-dp4 --format json";
  const Run lm = run(base);
  const Run named = run(base + " --software megatron-lm");
  const Run core = run(base + " --software megatron-core");
  const Run file = run(base + " --software templates/software/megatron-core.yaml");
  const Run flag = run(base + " --dp-overlap");
  REQUIRE(lm.code == 0);
  REQUIRE(core.code == 0);
  CHECK(lm.out == named.out);  // megatron-lm is the default
  CHECK(core.out == file.out);  // a name or its file
  // Reducing gradients during the backward pass (Megatron-Core's, or --dp-overlap on the
  // default profile) is never slower (time-window sharing): the reduction (~0.1 s) partly
  // hidden. megatron-core differs in more (its linear biases in the GEMMs' epilogues, its
  // per-kernel host cost not refitted), so the flag is compared with the default.
  CHECK(iteration_of(flag) < iteration_of(lm) - 1e-3);
  CHECK(iteration_of(core) != iteration_of(lm));
  // deepflow-reference has no framework host costs: the 10 ms per iteration go.
  const Run ref = run(base + " --software deepflow-reference");
  CHECK(iteration_of(lm) - iteration_of(ref) >= 10e-3);
}

TEST_CASE("a software profile that does not exist is a located error", "[cli][config-error]") {
  const Run r = run("eval --template templates/a100.yaml --workload studies/workloads/gpt3_13b.yaml "
                    "--strategy tp8-pp2-dp4 --software megatron-xl");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(first_line(r.err).rfind("command line: error: --software: expected a software profile "
                                "file or the name of one in ", 0) == 0);
  CHECK(r.err.find("got \"megatron-xl\"") != std::string::npos);
}

}  // namespace pathfinder

// Issue 14: inputs found by fuzzing that crashed, hung, ran a command or gave a wrong number.
TEST_CASE("issue 14: a plot title with a newline is refused and runs nothing", "[cli][issue14]") {
  std::remove("/tmp/pathfinder-issue14-title");
  const Run r = run("study tests/data/fuzz/study_title_injection.yaml --out '" +
                    (scratch() / "title").string() + "'");
  CHECK(r.code == 2);
  CHECK(r.err ==
        "tests/data/fuzz/study_title_injection.yaml:13:51: error: outputs[0].title: expected text "
        "without control characters (newline, tab, ...), got \"t\\nsystem 'touch "
        "/tmp/pathfinder-issue14-title'\\n\"\n");
  CHECK_FALSE(fs::exists("/tmp/pathfinder-issue14-title"));
  CHECK_FALSE(fs::exists(scratch() / "title"));  // nothing half-written
}

TEST_CASE("issue 14: backticks in a label and a title reach gnuplot as literal text",
          "[cli][issue14]") {
  std::remove("/tmp/pathfinder-issue14-label");
  std::remove("/tmp/pathfinder-issue14-title2");
  const fs::path out = scratch() / "backticks";
  const Run r = run("study tests/data/fuzz/study_label_backticks.yaml --out '" + out.string() + "'");
  CHECK(r.code == 0);
  CHECK_FALSE(fs::exists("/tmp/pathfinder-issue14-label"));
  CHECK_FALSE(fs::exists("/tmp/pathfinder-issue14-title2"));
  const std::string gp = slurp(out / "iteration_s_vs_label.gp");
  CHECK(gp.find("set title '`touch /tmp/pathfinder-issue14-title2` @x ''q''' noenhanced\n") !=
        std::string::npos);
  CHECK(gp.find("0 \"a `touch /tmp/pathfinder-issue14-label` it's 'b' | c\" ") != std::string::npos);
  const std::string md = slurp(out / "summary.md");
  CHECK(md.find("| a \\`touch /tmp/pathfinder-issue14-label\\` it's \"b\" \\| c |") !=
        std::string::npos);
  // gnuplot ran in a private folder that is gone.
  for (const auto& e : fs::directory_iterator(out)) {
    CHECK(e.path().filename().string().rfind(".gnuplot-", 0) != 0);
  }
}

TEST_CASE("issue 14: recursive and exploding YAML aliases are refused", "[cli][issue14]") {
  const Run self = run("validate tests/data/fuzz/alias_self.yaml");
  CHECK(self.code == 2);
  CHECK(self.err ==
        "tests/data/fuzz/alias_self.yaml:1:4: error: a.b: recursive alias: the node contains itself\n");
  const Run bomb = run("validate tests/data/fuzz/alias_bomb.yaml");
  CHECK(bomb.code == 2);
  CHECK(bomb.err == "tests/data/fuzz/alias_bomb.yaml:1:25: error: l5[7][8][8][8][8][3]: the document "
                    "expands to more than 1000000 nodes, aliases counted at each use (the limit "
                    "for a YAML input)\n");
}

TEST_CASE("issue 14: mb0 on a GPT is a strategy error, and one point of a study",
          "[cli][issue14]") {
  const std::string message =
      "mb0 (the whole batch at once) is for LSTM and GEMM workloads; a GPT needs a micro-batch "
      "of at least 1 sequence (mbN)";
  const Run r = run("eval --template templates/a100.yaml --workload "
                    "studies/workloads/gpt3_1.3b.yaml --strategy tp1-mb0");
  CHECK(r.code == 2);
  CHECK(r.err == "command line: error: --strategy: " + message + "\n");
  const Run file = run("eval --template templates/a100.yaml --workload "
                       "studies/workloads/gpt3_1.3b.yaml --strategy tests/data/fuzz/gpt_micro_batch0.yaml");
  CHECK(file.code == 2);
  CHECK(file.err == "tests/data/fuzz/gpt_micro_batch0.yaml: error: " + message + "\n");
  const Run study = run("study tests/data/fuzz/study_micro_batch0.yaml --threads 1 --out '" +
                        (scratch() / "mb0").string() + "'");
  CHECK(study.code == 0);
  CHECK(slurp(scratch() / "mb0" / "results.csv").find(message) != std::string::npos);
}

TEST_CASE("issue 14: counts above the workload bounds are refused at the key", "[cli][issue14]") {
  const auto eval = [](const std::string& workload) {
    return run("eval --template templates/a100.yaml --devices 1 --workload tests/data/fuzz/" +
               workload);
  };
  const Run lstm = eval("lstm_layers_2p32.yaml");
  CHECK(lstm.code == 2);
  CHECK(lstm.err == "tests/data/fuzz/lstm_layers_2p32.yaml:8:9: error: layers: expected a whole "
                    "number in [1, 100000], got \"4294967296\"\n");
  const Run batch = eval("gpt_global_batch_2p31.yaml");
  CHECK(batch.code == 2);
  CHECK(batch.err == "tests/data/fuzz/gpt_global_batch_2p31.yaml:10:15: error: global_batch: "
                     "expected a whole number in [1, 16777216], got \"2147483648\"\n");
  const Run sequence = eval("gpt_sequence_2p31.yaml");
  CHECK(sequence.code == 2);
  CHECK(sequence.err == "tests/data/fuzz/gpt_sequence_2p31.yaml:7:11: error: sequence: expected a "
                        "whole number in [1, 16777216], got \"2147483648\"\n");
}

// Issue 14 item 8: an unwritable --out was "pathfinder: internal error: ...", exit 1.
TEST_CASE("issue 14: an unwritable --out is a located error, exit 2", "[cli][issue14]") {
  const std::string study = "study tests/data/studies/study_small.yaml --threads 1 --out ";
  const fs::path file = scratch() / "out-is-a-file";
  { std::ofstream(file) << "x"; }
  const Run on_file = run(study + "'" + file.string() + "'");
  CHECK(on_file.code == 2);
  CHECK(on_file.err == file.string() + ": error: cannot create folder: Not a directory\n");
  CHECK(on_file.out.empty());
  const Run under_file = run(study + "'" + (file / "out").string() + "'");
  CHECK(under_file.code == 2);
  CHECK(under_file.err == (file / "out").string() + ": error: cannot create folder: Not a directory\n");
  // sysfs: no new folders or files, even for root.
  const Run sys = run(study + "/sys/pathfinder-study");
  CHECK(sys.code == 2);
  CHECK(sys.err == "/sys/pathfinder-study: error: cannot create folder: Operation not permitted\n");
  const Run sys_file = run(study + "/sys");
  CHECK(sys_file.code == 2);
  CHECK(sys_file.err == "/sys/.pathfinder.lock: error: cannot write lock file: Permission denied\n");
  // A write that fails once points are under way (in a worker thread): the same, at the file.
  const fs::path blocked = scratch() / "csv-is-a-folder";
  fs::create_directories(blocked / "results.csv");
  const Run late = run(study + "'" + blocked.string() + "'");
  CHECK(late.code == 2);
  CHECK(late.err == (blocked / "results.csv").string() + ": error: cannot write file: Is a directory\n");
  CHECK(late.out.empty());
}

TEST_CASE("issue 14: a second study on one --out is refused while the first runs", "[cli][issue14]") {
  const fs::path out = scratch() / "locked";
  fs::create_directories(out);
  const std::string lock = (out / ".pathfinder.lock").string();
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);  // as a running study holds it
  std::ofstream(out / "results.csv.tmp.4242.0") << "torn";
  const Run second = run("study tests/data/studies/study_small.yaml --out '" + out.string() + "'");
  CHECK(second.code == 2);
  CHECK(second.err == out.string() + ": error: another pathfinder run is writing to this folder (it "
                                     "holds .pathfinder.lock); wait for it to finish or choose another --out\n");
  CHECK(fs::exists(out / "results.csv.tmp.4242.0"));  // the holder's, untouched
  // search --out PREFIX takes the same lock on PREFIX's folder.
  const Run search = run("search tests/data/studies/small_search.yaml --out '" +
                         (out / "split").string() + "'");
  CHECK(search.code == 2);
  CHECK(search.err == out.string() + ": error: another pathfinder run is writing to this folder (it "
                                     "holds .pathfinder.lock); wait for it to finish or choose another --out\n");
  CHECK_FALSE(fs::exists(out / "split.yaml"));
  ::close(fd);
  const Run after = run("study tests/data/studies/study_small.yaml --threads 1 --out '" + out.string() + "'");
  CHECK(after.code == 0);
  CHECK_FALSE(fs::exists(out / "results.csv.tmp.4242.0"));  // a killed run's, cleared
  // A damaged row is evaluated again, and said so.
  std::string csv = slurp(out / "results.csv");
  const std::size_t row = csv.find('\n') + 1;
  const std::size_t cell = csv.find(",1,", row);
  REQUIRE(cell != std::string::npos);
  csv.replace(cell, 3, ",7,");
  std::ofstream(out / "results.csv", std::ios::binary | std::ios::trunc) << csv;
  const Run damaged = run("study tests/data/studies/study_small.yaml --threads 1 --out '" + out.string() + "'");
  CHECK(damaged.code == 0);
  CHECK(damaged.out.find("4 of 4 points done (1 evaluated now, 3 from " + (out / "results.csv").string() +
                         "; 1 invalid rows not reused)") != std::string::npos);
}

TEST_CASE("issue 14: devices, FIFOs and out-of-range options are refused", "[cli][issue14]") {
  const Run zero = run("validate /dev/zero");
  CHECK(zero.code == 2);
  CHECK(zero.err == "/dev/zero: error: cannot read file: not a regular file (a device, FIFO or socket)\n");
  const std::string fifo = (scratch() / "fifo.yaml").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const Run f = run("validate '" + fifo + "'");
  CHECK(f.code == 2);
  CHECK(f.err == fifo + ": error: cannot read file: not a regular file (a device, FIFO or socket)\n");
  const Run threads = run("study tests/data/studies/study_small.yaml --threads 99999999");
  CHECK(threads.code == 2);
  CHECK(threads.err == "command line: error: --threads: expected a whole number in [1, 1024], got 99999999\n");
  const Run starts = run("search tests/data/studies/small_search.yaml --restarts 2147483647");
  CHECK(starts.code == 2);
  CHECK(starts.err == "command line: error: --restarts: expected a whole number in [1, 10000], got 2147483647\n");
  const Run steps = run("search tests/data/studies/small_search.yaml --steps 0");
  CHECK(steps.code == 2);
  CHECK(steps.err == "command line: error: --steps: expected a whole number in [1, 1000000], got 0\n");
  const Run restarts = run("search tests/data/fuzz/search_starts.yaml");
  CHECK(restarts.code == 2);
  CHECK(restarts.err == "tests/data/fuzz/search_starts.yaml:7:20: error: search.restarts: expected a "
                        "whole number in [1, 10000], got \"2147483647\"\n");
}

namespace pathfinder {

TEST_CASE("eval --strategy search ranks strategies, the winner's time is eval's", "[cli]") {
  const std::string base = "eval --template templates/a100.yaml --workload "
                           "studies/workloads/gpt3_1.3b.yaml --devices 8 ";
  const Run r = run(base + "--strategy search --top 3 --format json");
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  REQUIRE(j["top"].size() == 3);
  CHECK(j["top"][0]["gap_to_best_s"].get<double>() == 0.0);
  CHECK(j["top"][1]["iteration_s"].get<double>() >= j["top"][0]["iteration_s"].get<double>());
  CHECK(j["top"][2]["iteration_s"].get<double>() >= j["top"][1]["iteration_s"].get<double>());
  // The winner evaluated on its own gives the same iteration time.
  const std::string best = j["top"][0]["strategy"].get<std::string>();
  const Run one = run(base + "--strategy " + best + " --format json");
  REQUIRE(one.code == 0);
  CHECK(nlohmann::json::parse(one.out)["iteration_s"].get<double>() ==
        j["top"][0]["iteration_s"].get<double>());
  const Run table = run(base + "--strategy search --top 2");
  CHECK(table.out.find("strategies ranked") != std::string::npos);
  const Run no_devices = run("eval --template templates/a100.yaml --workload "
                             "studies/workloads/gpt3_1.3b.yaml --strategy search");
  CHECK(no_devices.code == 2);
  CHECK(first_line(no_devices.err) ==
        "command line: error: --strategy: search ranks every strategy for --devices N devices; "
        "give --devices");
  // `rank` is the same ranking: its output is eval --strategy search's, byte for byte.
  const Run rank = run("rank --template templates/a100.yaml --workload "
                       "studies/workloads/gpt3_1.3b.yaml --devices 8 --top 2");
  CHECK(rank.code == 0);
  CHECK(rank.out == table.out);
  const Run rank_no_devices = run("rank --template templates/a100.yaml --workload "
                                  "studies/workloads/gpt3_1.3b.yaml");
  CHECK(rank_no_devices.code == 2);
  CHECK(rank_no_devices.err ==
        "command line: error: --devices is required (pathfinder rank --help)\n");
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("rank by energy or cost, under budgets, with a Pareto front, search by energy",
          "[cli][energy]") {
  const std::string base = "rank --template templates/a100.yaml --workload "
                           "studies/workloads/gpt3_1.3b.yaml --devices 8 ";
  const Run r = run(base + "--objective energy --pareto time,energy --top 3 --format json");
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["ranked_by"] == "energy");
  REQUIRE(j["top"].size() == 3);
  CHECK(j["top"][1]["joules"].get<double>() >= j["top"][0]["joules"].get<double>());
  CHECK(j["top"][2]["joules"].get<double>() >= j["top"][1]["joules"].get<double>());
  // The front's last point has the least energy: the energy ranking's winner's.
  const nlohmann::json& front = j["pareto"]["front"];
  REQUIRE_FALSE(front.empty());
  CHECK(front.back()["energy"].get<double>() == j["top"][0]["joules"].get<double>());
  // A budget below every strategy's energy per token leaves none.
  const Run none = run(base + "--max-j-per-token 1e-9");
  CHECK(none.code == 0);
  CHECK(none.out.find("over budget") != std::string::npos);
  CHECK(none.out.find("no feasible strategy") != std::string::npos);
  // Errors: a misspelt objective, a cost on a template without prices, a ranking option on a
  // plain eval.
  const Run typo = run(base + "--objective energie");
  CHECK(typo.code == 2);
  CHECK(first_line(typo.err) == "command line: error: --objective: expected one of time, energy, "
                                "edp or cost, got \"energie\"; did you mean \"energy\"?");
  const Run tpu = run("rank --template templates/tpu_systolic.yaml --workload "
                      "studies/workloads/gpt3_1.3b.yaml --devices 8 --objective cost");
  CHECK(tpu.code == 2);
  CHECK(first_line(tpu.err) == "command line: error: --objective: a cost needs a cost model: the "
                               "template TPU-class-systolic has no cost section");
  const Run plain = run("eval --template templates/a100.yaml --workload "
                        "studies/workloads/gpt3_1.3b.yaml --objective energy");
  CHECK(plain.code == 2);
  CHECK(first_line(plain.err) == "command line: error: --objective: applies to a strategy search: "
                                 "add --strategy search (or use rank)");
  // search: an energy objective, and a time-energy front.
  const Run se = run("search tests/data/studies/small_search.yaml --threads 1 --objective energy");
  CHECK(se.code == 0);
  CHECK(se.out.find("objective energy: template split") != std::string::npos);
  CHECK(se.out.find("J per mm2") != std::string::npos);
  const Run sp = run("search tests/data/studies/small_search.yaml --threads 1 --pareto time,energy "
                     "--pareto-points 3 --format json");
  REQUIRE(sp.code == 0);
  const nlohmann::json pj = nlohmann::json::parse(sp.out);
  CHECK(pj["searched"] == 3);
  CHECK_FALSE(pj["front"].empty());
}

TEST_CASE("numeric options say what they accept, --version", "[cli][config-error]") {
  const Run zero = run("eval --template templates/a100.yaml --workload "
                       "studies/workloads/gpt3_13b.yaml --devices 0");
  CHECK(zero.code == 2);
  CHECK(zero.err == "command line: error: --devices: expected a whole number in [1, 16777216], "
                    "got 0\n");
  const Run top = run("eval --template templates/a100.yaml --workload "
                      "studies/workloads/gpt3_13b.yaml --devices 8 --strategy search --top 0");
  CHECK(top.code == 2);
  CHECK(top.err == "command line: error: --top: expected a whole number in [1, 1000], got 0\n");
  const Run v = run("--version");
  CHECK(v.code == 0);
  CHECK(v.out.rfind("pathfinder 0.12.0", 0) == 0);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("set reaches template keys: a what-if without a copied file", "[cli]") {
  // A100 at 300 W instead of 400 W: the generator scales the core's voltage and clock down to
  // its 0.4990 share of the budget (149.7 W), so peak falls below 311.9 TFLOP/s.
  const Run a = run("arch templates/a100.yaml --set budget.power=300W --format json");
  REQUIRE(a.code == 0);
  const nlohmann::json j = nlohmann::json::parse(a.out);
  const Run base = run("arch templates/a100.yaml --format json");
  const nlohmann::json b = nlohmann::json::parse(base.out);
  CHECK(j.dump().find("\"feasible\":true") != std::string::npos);
  CHECK(j != b);
  // eval routes budget.* to the template and micro_batch to the workload: slower at 300 W.
  const std::string e = "eval --template templates/a100.yaml --workload "
                        "studies/workloads/gpt3_13b.yaml --strategy tp8-pp2-dp4 --format json "
                        "--set micro_batch=2";
  const Run w400 = run(e);
  const Run w300 = run(e + " --set budget.power=300W");
  REQUIRE(w300.code == 0);
  CHECK(nlohmann::json::parse(w300.out)["iteration_s"].get<double>() >
        nlohmann::json::parse(w400.out)["iteration_s"].get<double>());
  const Run bad = run("arch templates/a100.yaml --set budget.powr=300W");
  CHECK(bad.code == 2);
  CHECK(bad.err == "command line: error: --set budget.powr: unknown key; did you mean "
                   "\"power\"?\n");
  // "What would 2x NVLink bandwidth buy?": NVLink3 lanes at 100 Gb/s instead of 50 Gb/s
  // (techlib/network.yaml). GPT-3 175B on 1,024 A100s with tp8-pp8 and sequence parallelism
  // spends ~2.2 s in tensor collectives over NVLink; faster lanes shorten them and the iteration,
  // though not what the backward's hidden ones cost the GEMMs beside them: the main-memory
  // traffic of the same bytes (a100.yaml memory_contention), whatever the link rate.
  const std::string g = "eval --template templates/a100.yaml --workload "
                        "studies/workloads/gpt3_175b.yaml --strategy tp8-pp8-sp-recompute=selective "
                        "--devices 1024 --format json";
  const Run nv1 = run(g);
  const Run nv2 = run(g + " --set techlib.network.NVLink3.nominal_lane_rate=100Gb/s"
                          " --set techlib.network.NVLink3.max_lane_rate=100Gb/s");
  REQUIRE(nv2.code == 0);
  const nlohmann::json j1 = nlohmann::json::parse(nv1.out), j2 = nlohmann::json::parse(nv2.out);
  CHECK(j2["breakdown"]["tensor_comm_s"].get<double>() <
        0.85 * j1["breakdown"]["tensor_comm_s"].get<double>());
  CHECK(j2["iteration_s"].get<double>() < j1["iteration_s"].get<double>());
  const Run arch2 = run("arch templates/a100.yaml --set techlib.network.NVLink9.latency=1us");
  CHECK(arch2.code == 2);
  CHECK(first_line(arch2.err).rfind("command line: error: --set techlib.network.NVLink9.latency: "
                                    "expected a technology of the library's network section (",
                                    0) == 0);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("issue 14 item 9: search and strategy messages are located and say what is wrong",
          "[cli][issue14]") {
  // A search file's missing template: at the file's key, not at a path with no position.
  const Run missing = run("search tests/data/studies/missing_template.yaml");
  CHECK(missing.code == 2);
  CHECK(missing.err == "tests/data/studies/missing_template.yaml:3:11: error: template: cannot read "
                       "template \"tests/data/studies/nope.yaml\": No such file or directory\n");
  // A bad --optimizer: the command line's option, as every other option.
  const Run opt = run("search tests/data/studies/small_search.yaml --optimizer foo");
  CHECK(opt.code == 2);
  CHECK(opt.err == "command line: error: --optimizer: unknown optimizer \"foo\" (expected pgd, "
                   "cobyla, slsqp, direct or isres)\n");
  // mb-1: the '-' splits it into "mb" and "1"; the number is what is missing, not "sp".
  const Run mb = run("eval --template templates/a100.yaml --workload studies/workloads/gpt3_1.3b.yaml "
                     "--strategy tp2-mb-1");
  CHECK(mb.code == 2);
  CHECK(first_line(mb.err) == "command line: error: --strategy: \"mb\": expected a whole number "
                              "after \"mb\" (mbN, e.g. mb4; '-' separates tokens)");
}

}  // namespace pathfinder

TEST_CASE("workload import writes a workload eval runs, a refused config exits 2", "[cli]") {
  const std::string out = (scratch() / "mixtral.yaml").string();
  const Run w = run("workload import tests/data/hf_configs/mixtral_8x7b.json --sequence 4096 --out '" +
                    out + "'");
  CHECK(w.code == 0);
  CHECK(w.out.empty());
  // Mixtral 8x7B: 46.7B parameters (Jiang et al. 2024), as studies/workloads/mixtral_8x7b.yaml.
  CHECK(first_line(slurp(out)) == "# Parameters (pathfinder's count): 46702792704");
  const Run e = run("eval templates/h100.yaml --workload '" + out + "' --strategy tp2-sp-dp4-ep4 --format json");
  REQUIRE(e.code == 0);
  CHECK(nlohmann::json::parse(e.out).at("devices") == 8);
  const std::string gpt2 = (scratch() / "gpt2.json").string();
  std::ofstream(gpt2) << "{\n  \"model_type\": \"gpt2\"\n}\n";
  const Run d = run("workload import '" + gpt2 + "'");
  CHECK(d.code == 2);
  CHECK(d.out.empty());
  CHECK(d.err == gpt2 + ":2:3: error: model_type: expected one of llama, mistral, qwen2, qwen3, "
                        "mixtral, qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3, got \"gpt2\"\n");
  CHECK(run("workload import tests/data/hf_configs/llama3_8b.json --sequence 0").err ==
        "command line: error: --sequence: expected a whole number in [1, 16777216], got 0\n");
}

namespace pathfinder {

TEST_CASE("eval --trace writes the iteration as trace-event JSON", "[cli][trace]") {
  const fs::path f = scratch() / "trace.json";
  const std::string base =
      "eval templates/a100.yaml --workload studies/workloads/gpt3_1.3b.yaml --devices 8 ";
  const Run r = run(base + "--strategy tp2-pp2-dp2-mb4 --format json --trace '" + f.string() + "'");
  REQUIRE(r.code == 0);
  const nlohmann::json eval = nlohmann::json::parse(r.out);
  const nlohmann::json t = nlohmann::json::parse(slurp(f));
  // What was traced, and the same iteration the evaluation printed.
  CHECK(t.at("otherData").at("strategy") == "tp2-pp2-dp2-mb4-1f1b");
  CHECK(t.at("otherData").at("iteration_s").get<double>() ==
        Approx(eval.at("iteration_s").get<double>()).epsilon(1e-12));
  // Two stages of 2 x 64 passes (512 sequences over dp2 x mb4), each stage's spans ending at
  // the iteration time (in microseconds).
  int passes = 0;
  double end = 0.0;
  for (const auto& e : t.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    if (e.at("tid") == 0 && e.contains("args")) ++passes;
    end = std::max(end, e.at("ts").get<double>() + e.at("dur").get<double>());
  }
  CHECK(passes == 2 * 2 * 64);
  CHECK(end == Approx(eval.at("iteration_s").get<double>() * 1e6).epsilon(1e-9));

  // Refused where there is no iteration to trace, and an unwritable path, each exit 2.
  const Run gemm = run("eval templates/a100.yaml --workload studies/workloads/gemm.yaml --trace '" +
                       f.string() + "'");
  CHECK(gemm.code == 2);
  CHECK(gemm.err == "command line: error: --trace: a GEMM workload is timed without a pipeline "
                    "timeline; traces are for GPT-family workloads\n");
  const Run search = run(base + "--strategy search --trace '" + f.string() + "'");
  CHECK(search.code == 2);
  CHECK(search.err == "command line: error: --trace: traces one evaluated iteration; leave out "
                      "--strategy search\n");
  // DualPipe is timed by its bubble formula, not pass by pass: no timeline, nothing written.
  const Run dual = run(base + "--software deepseek-v3 --strategy tp2-pp2-dp2-mb4-dualpipe "
                              "--trace '" + f.string() + ".dual'");
  CHECK(dual.code == 2);
  CHECK(dual.err == "command line: error: --trace: the dualpipe schedule is timed by the "
                    "DeepSeek-V3 report's bubble formula, not pass by pass: there is no timeline "
                    "to trace (trace a 1f1b or interleaved strategy)\n");
  CHECK_FALSE(fs::exists(f.string() + ".dual"));
  const Run bad = run(base + "--strategy tp2-pp2-dp2-mb4 --trace /proc/no/trace.json");
  CHECK(bad.code == 2);
  CHECK(bad.err == "/proc/no: error: cannot create folder: No such file or directory\n");
  CHECK(bad.out.empty());  // nothing printed when the trace cannot be written
  // An infeasible design (GPT-3 175B without recomputation: 125 GB a device) is a result, not
  // an error: exit 0, and stderr says no trace was written.
  fs::remove(f);
  const Run oom = run("eval templates/a100.yaml --workload studies/workloads/gpt3_175b.yaml "
                      "--strategy tp8-pp8-dp16-mb1 --trace '" + f.string() + "'");
  CHECK(oom.code == 0);
  CHECK(oom.err == "--trace: no trace written: the design is infeasible\n");
  CHECK_FALSE(fs::exists(f));
  // Likewise a micro-architecture that cannot be built (no bundle of MCUs fits the core).
  const Run arch = run("eval --techlib techlib --template tests/data/templates/infeasible_core.yaml "
                       "--workload studies/workloads/gpt3_1.3b.yaml --trace '" + f.string() + "'");
  CHECK(arch.code == 0);
  CHECK(arch.err == "--trace: no trace written: the design is infeasible\n");
  CHECK_FALSE(fs::exists(f));
  // 65,536 micro-batches through 8 stages: 1,048,576 passes, past the 500,000 a trace holds.
  const Run big = run(base + "--strategy tp1-pp8-dp1-mb1 --global-batch 65536 --trace '" +
                      f.string() + "'");
  CHECK(big.code == 2);
  CHECK(big.err == "command line: error: --trace: 1048576 passes (2 x 65536 micro-batches x "
                   "stages x chunks): more than 500000, beyond what trace viewers open; trace a "
                   "smaller global batch (--global-batch)\n");
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("study --shard K/N and --merge: one sweep over machines, the same results.csv",
          "[cli][study]") {
  const std::string study = "tests/data/studies/study_small.yaml";  // 4 points
  const fs::path dir = scratch() / "shards";
  fs::remove_all(dir);
  REQUIRE(run("study " + study + " --out '" + (dir / "all").string() + "'").code == 0);
  for (int k = 1; k <= 2; ++k) {
    const Run r = run("study " + study + " --shard " + std::to_string(k) + "/2 --out '" +
                      (dir / ("s" + std::to_string(k))).string() + "'");
    CHECK(r.code == 0);
    CHECK(first_line(r.out) == "small-study, shard " + std::to_string(k) +
                                   "/2: 2 of its 2 points done (2 evaluated now)");
    CHECK_FALSE(fs::exists(dir / ("s" + std::to_string(k)) / "summary.md"));  // after --merge
  }
  const Run m = run("study " + study + " --merge '" + (dir / "s2").string() + "' '" +
                    (dir / "s1").string() + "' --out '" + (dir / "merged").string() + "'");
  CHECK(m.code == 0);
  CHECK(slurp(dir / "merged" / "results.csv") == slurp(dir / "all" / "results.csv"));
  CHECK(fs::exists(dir / "merged" / "summary.md"));

  for (const char* bad : {"0/2", "3/2", "2", "a/b", "1/", "-1/2"}) {
    const Run r = run("study " + study + " --shard '" + bad + "' --out '" + (dir / "x").string() + "'");
    CHECK(r.code == 2);
    CHECK(r.err == "command line: error: --shard: expected K/N with 1 <= K <= N (the K-th of N "
                   "shares), got \"" + std::string(bad) + "\"\n");
  }
  const Run both = run("study " + study + " --shard 1/2 --merge '" + (dir / "s1").string() + "'");
  CHECK(both.code == 2);
  CHECK(both.err == "command line: error: --merge: joins finished shards; run it without --shard\n");
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("report DIR rewrites a study folder's outputs from its results.csv", "[cli][study]") {
  const fs::path dir = scratch() / "report-dir";
  fs::remove_all(dir);
  const std::string study = "tests/data/studies/study_small.yaml";
  REQUIRE(run("study " + study + " --out '" + dir.string() + "'").code == 0);
  // The run records which study wrote the folder.
  CHECK(slurp(dir / ".study") == source_path(study) + "\n");
  const std::string before = slurp(dir / "report.html");
  fs::remove(dir / "report.html");
  fs::remove(dir / "summary.md");
  const Run r = run("report '" + dir.string() + "'");
  REQUIRE(r.code == 0);
  CHECK(first_line(r.out) == "small-study: 4 rows of " + (dir / "results.csv").string());
  const std::string after = slurp(dir / "report.html");
  // The same page, but for the command that made it.
  CHECK(after.substr(0, after.find("Made by")) == before.substr(0, before.find("Made by")));
  CHECK(after.find("Made by <code>pathfinder report " + dir.string()) != std::string::npos);
  CHECK(fs::exists(dir / "summary.md"));

  // A folder without results, one without a recorded study (then --study), another study's.
  const fs::path empty = scratch() / "report-empty";
  fs::create_directories(empty);
  const Run none = run("report '" + empty.string() + "'");
  CHECK(none.code == 2);
  CHECK(none.err == (empty / "results.csv").string() +
                        ": error: cannot read file: expected a study's output folder\n");
  fs::copy_file(dir / "results.csv", empty / "results.csv");
  const Run unrecorded = run("report '" + empty.string() + "'");
  CHECK(unrecorded.code == 2);
  CHECK(unrecorded.err == (empty / ".study").string() +
                              ": error: no study recorded in this folder: give --study FILE\n");
  CHECK(run("report '" + empty.string() + "' --study " + study).code == 0);
  CHECK(fs::exists(empty / "report.html"));
  const Run other = run("report '" + empty.string() + "' --study tests/data/studies/study_axes.yaml");
  CHECK(other.code == 2);
  CHECK(other.err.rfind((empty / "results.csv").string() + ":1:1: error: no \"", 0) == 0);
}

}  // namespace pathfinder
