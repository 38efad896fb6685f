// Tests for engine/perf/perf_report.hpp: the table's grouping of kernels across layers and LSTM
// steps, the CSV's shape, and the JSON totals against GraphTiming's definitions.
#include "engine/perf/perf_report.hpp"
#include "engine/perf/device_variation.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/perf/graph_timing.hpp"
#include "engine/perf/kernel_timer.hpp"
#include "engine/perf/perf_machine.hpp"
#include "tests/arch/arch_fixtures.hpp"

using namespace pathfinder;

namespace {

// The A100 template's design and the timer built on it.
struct Device {
  ArchSpec spec = bind_template(test::shipped_techlib(), test::shipped_template("a100"));
  MicroArch arch = generate_micro_arch(spec, ResourceSplit::from_template(spec.tmpl));
  KernelTimer timer{make_perf_machine(spec, arch)};
};

GptSpec tiny_gpt(std::int64_t layers) {
  GptSpec s;
  s.layers = layers;
  s.hidden = 256;
  s.heads = 4;
  s.ffn = 1024;
  s.sequence = 128;
  s.vocabulary = 1024;
  s.micro_batch = 2;
  s.global_batch = 6;  // three micro-batches per iteration
  return s;
}

LstmSpec tiny_lstm() {
  LstmSpec s;
  s.batch = 8;
  s.sequence = 3;
  s.hidden = 64;
  s.vocabulary = 100;
  s.layers = 2;
  return s;
}

const KernelGroup* find_group(const std::vector<KernelGroup>& gs, const std::string& name) {
  const auto it =
      std::find_if(gs.begin(), gs.end(), [&](const auto& g) { return g.name == name; });
  return it == gs.end() ? nullptr : &*it;
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE("kernel_group_name replaces leading layer and step prefixes", "[perf][report]") {
  CHECK(kernel_group_name("l0.qkv.fwd") == "l*.qkv.fwd");
  CHECK(kernel_group_name("l95.attn.context.dgrad_probs") == "l*.attn.context.dgrad_probs");
  CHECK(kernel_group_name("t12.l1.cell.wgrad.accumulate") == "t*.l*.cell.wgrad.accumulate");
  CHECK(kernel_group_name("t0.softmax.gemm.fwd") == "t*.softmax.gemm.fwd");
  // Not prefixes: no digits, no dot after the digits, or not at the start.
  CHECK(kernel_group_name("logits.fwd") == "logits.fwd");
  CHECK(kernel_group_name("l2norm.fwd") == "l2norm.fwd");
  CHECK(kernel_group_name("final_ln.l3.fwd") == "final_ln.l3.fwd");
  CHECK(kernel_group_name("t1") == "t1");
  CHECK(kernel_group_name("gemm") == "gemm");
}

TEST_CASE("a two-layer GPT groups each layer kernel into one row", "[perf][report]") {
  Device d;
  const Workload w = make_workload("gpt-2l", tiny_gpt(2));
  const GraphTiming g = time_workload(w, d.timer);
  const std::vector<KernelGroup> groups = group_kernels(w, g);

  const auto& ks = w.graph.kernels();
  std::map<std::string, std::size_t> id;
  for (std::size_t i = 0; i < ks.size(); ++i) id[ks[i].name] = i;
  REQUIRE(id.count("l0.qkv.fwd") == 1);
  REQUIRE(id.count("l1.qkv.fwd") == 1);

  const KernelGroup* qkv = find_group(groups, "l*.qkv.fwd");
  REQUIRE(qkv != nullptr);
  CHECK(qkv->count == 2);
  CHECK(qkv->first == id["l0.qkv.fwd"]);
  CHECK(qkv->phase == Phase::kForward);
  const KernelTime& t0 = g.kernels[id["l0.qkv.fwd"]].time;
  const KernelTime& t1 = g.kernels[id["l1.qkv.fwd"]].time;
  CHECK(qkv->device.si() == Approx((t0.device + t1.device).si()).epsilon(1e-12));
  CHECK(qkv->flops.si() == Approx((t0.flops + t1.flops).si()).epsilon(1e-12));
  // QKV projection: T = b·s = 2·128 = 256 tokens, h = 256 in, 3h = 768 out: 256×768×256.
  REQUIRE(qkv->shape.has_value());
  CHECK(*qkv->shape == GemmShape{1, 256, 768, 256});
  // Two layers of 2·m·n·k (within 1%: a bias epilogue of m·n adds 1/(2k) = 0.2% if counted).
  CHECK(qkv->flops.si() == Approx(2 * 2.0 * 256 * 768 * 256).epsilon(1e-2));
  // Both layers' GEMMs have one shape, so one plan and one binding.
  CHECK(qkv->binding.has_value());
  // Forward and backward members count once per micro-batch (3), the updates once.
  CHECK(qkv->iteration_device.si() == Approx(3.0 * qkv->device.si()).epsilon(1e-12));
  const KernelGroup* upd = find_group(groups, "l*.update");
  REQUIRE(upd != nullptr);
  CHECK(upd->count == 2);
  CHECK(upd->iteration_device.si() == Approx(upd->device.si()).epsilon(1e-12));

  // Unprefixed kernels keep their names; groups come in the order of their first member.
  CHECK(groups.front().name == "embedding.fwd");
  CHECK(find_group(groups, "logits.fwd") != nullptr);
  CHECK(find_group(groups, "l0.qkv.fwd") == nullptr);
  CHECK(std::is_sorted(groups.begin(), groups.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; }));

  // Every kernel is in exactly one group and the times add up.
  int members = 0;
  double device = 0.0, busy = 0.0;
  for (const auto& grp : groups) {
    members += grp.count;
    device += grp.device.si();
    busy += grp.iteration_device.si();
  }
  double kernel_device = 0.0;
  for (const auto& r : g.kernels) kernel_device += r.time.device.si();
  CHECK(members == static_cast<int>(ks.size()));
  CHECK(device == Approx(kernel_device).epsilon(1e-12));
  CHECK(busy == Approx(g.device_busy.si()).epsilon(1e-12));

  // The number of rows does not grow with depth: a third layer adds members, not rows.
  Device d3;
  const Workload w3 = make_workload("gpt-3l", tiny_gpt(3));
  const std::vector<KernelGroup> groups3 = group_kernels(w3, time_workload(w3, d3.timer));
  CHECK(w3.graph.size() > w.graph.size());
  CHECK(groups3.size() == groups.size());
  CHECK(find_group(groups3, "l*.qkv.fwd")->count == 3);

  // --all-kernels: one row per kernel under its own name.
  const std::vector<KernelGroup> all = group_kernels(w, g, true);
  REQUIRE(all.size() == ks.size());
  for (std::size_t i = 0; i < ks.size(); ++i) {
    CHECK(all[i].name == ks[i].name);
    CHECK(all[i].count == 1);
    CHECK(all[i].device.si() == g.kernels[i].time.device.si());
  }
}

TEST_CASE("an LSTM groups kernels over steps and layers", "[perf][report]") {
  Device d;
  const Workload w = make_workload("lstm", tiny_lstm());
  const GraphTiming g = time_workload(w, d.timer);
  const std::vector<KernelGroup> groups = group_kernels(w, g);
  const KernelGroup* cell = find_group(groups, "t*.l*.cell.fwd");
  REQUIRE(cell != nullptr);
  CHECK(cell->count == 6);  // 2 layers x 3 steps
  const KernelGroup* sm = find_group(groups, "t*.softmax.fwd");
  REQUIRE(sm != nullptr);
  CHECK(sm->count == 3);  // one per step
  double device = 0.0;
  for (std::size_t i = 0; i < w.graph.size(); ++i) {
    if (kernel_group_name(w.graph.kernels()[i].name) == "t*.l*.cell.fwd") {
      device += g.kernels[i].time.device.si();
    }
  }
  CHECK(cell->device.si() == Approx(device).epsilon(1e-12));
}

TEST_CASE("the table aggregates by default and lists every kernel on request",
          "[perf][report]") {
  Device d;
  const Workload w = make_workload("gpt-2l", tiny_gpt(2));
  const GraphTiming g = time_workload(w, d.timer);
  const std::string t = format_table(d.arch, w, g, d.timer);
  CHECK(lines(t).front() == "gpt-2l (gpt) on A100-SXM4-80GB (N7)");
  const std::vector<std::string> ls = lines(t);
  const auto qkv = std::find_if(ls.begin(), ls.end(), [](const std::string& l) {
    return l.rfind("l*.qkv.fwd ", 0) == 0;
  });
  REQUIRE(qkv != ls.end());
  std::istringstream fields(*qkv);
  std::string name, count, phase, shape;
  fields >> name >> count >> phase >> shape;
  CHECK(count == "2");
  CHECK(phase == "forward");
  CHECK(shape == "256x768x256");
  CHECK(t.find("l0.qkv.fwd") == std::string::npos);
  CHECK(t.find("micro-batches") != std::string::npos);
  CHECK(t.find("iteration time") != std::string::npos);

  const std::string all = format_table(d.arch, w, g, d.timer, true);
  CHECK(all.find("\nl0.qkv.fwd ") != std::string::npos);
  CHECK(all.find("\nl1.qkv.fwd ") != std::string::npos);
  CHECK(all.find("l*.") == std::string::npos);
  // One line per kernel more than the aggregated table, and no other difference in length.
  const std::size_t rows = group_kernels(w, g).size();
  CHECK(lines(all).size() - lines(t).size() == w.graph.size() - rows);
}

TEST_CASE("the CSV has a header and one row per kernel", "[perf][report]") {
  Device d;
  const Workload w = make_workload("gpt-2l", tiny_gpt(2));
  const GraphTiming g = time_workload(w, d.timer);
  const std::vector<std::string> ls = lines(to_csv(w, g, d.timer));
  REQUIRE(ls.size() == w.graph.size() + 1);
  CHECK(ls[0].rfind("id,name,kind,phase,dtype,layer,step,batch,m,n,k,flops,", 0) == 0);
  const auto columns = std::count(ls[0].begin(), ls[0].end(), ',');
  for (const auto& l : ls) CHECK(std::count(l.begin(), l.end(), ',') == columns);
  CHECK(ls[1].rfind("0,embedding.fwd,embedding,forward,fp16,,,,,,,", 0) == 0);
  // The first layer's QKV GEMM: layer 0, no step, shape 1 x 256 x 768 x 256.
  std::size_t qkv = 0;
  while (w.graph.kernels()[qkv].name != "l0.qkv.fwd") ++qkv;
  CHECK(ls[qkv + 1].rfind(
            std::to_string(qkv) + ",l0.qkv.fwd,gemm,forward,fp16,0,,1,256,768,256,", 0) == 0);
}

TEST_CASE("the JSON totals agree with the kernels", "[perf][report]") {
  Device d;
  const Workload w = make_workload("gpt-2l", tiny_gpt(2));
  const GraphTiming g = time_workload(w, d.timer);
  const nlohmann::json j = nlohmann::json::parse(to_json(d.arch, w, g, d.timer).dump());
  CHECK(j.at("feasible") == true);
  CHECK(j.at("workload") == "gpt-2l");
  CHECK(j.at("device") == "A100-SXM4-80GB");
  const auto& ks = j.at("kernels");
  REQUIRE(ks.size() == w.graph.size());
  const auto& tot = j.at("totals");
  const double mb = tot.at("micro_batches").get<double>();
  CHECK(mb == 3.0);  // global_batch 6 / micro_batch 2

  std::map<std::string, double> phase_device;
  std::map<std::string, int> phase_kernels;
  double stream = 0.0, update = 0.0;
  for (const auto& k : ks) {
    const double dev = k.at("device_s").get<double>();
    CHECK(dev > 0.0);
    CHECK(k.at("end_s").get<double>() - k.at("start_s").get<double>() == Approx(dev));
    CHECK(k.at("start_s").get<double>() >= 0.0);
    if (k.at("flops").get<double>() > 0.0) {
      CHECK(k.at("flops_per_s").get<double>() == Approx(k.at("flops").get<double>() / dev));
    }
    const auto phase = k.at("phase").get<std::string>();
    phase_device[phase] += dev;
    ++phase_kernels[phase];
    (phase == "update" ? update : stream) += dev;
  }
  for (const auto& [name, p] : tot.at("phases").items()) {
    CHECK(p.at("device_s").get<double>() == Approx(phase_device[name]).epsilon(1e-12));
    CHECK(p.at("kernels").get<int>() == phase_kernels[name]);
  }
  // graph_timing.hpp: device_busy sums device times over the iteration, i.e. every micro-batch's
  // forward and backward kernels plus one optimizer step; spans and the iteration cannot be
  // shorter than the device work they contain.
  const double busy = tot.at("device_busy_s").get<double>();
  const double iteration = tot.at("iteration_time_s").get<double>();
  CHECK(busy == Approx(mb * stream + update).epsilon(1e-12));
  CHECK(tot.at("micro_batch_span_s").get<double>() >= stream);
  CHECK(tot.at("update_span_s").get<double>() >= update);
  CHECK(iteration >= busy);
  CHECK(iteration >=
        tot.at("micro_batch_span_s").get<double>() + tot.at("update_span_s").get<double>());
  CHECK(tot.at("device_utilization").get<double>() == Approx(busy / iteration));
  const double achieved = tot.at("achieved_flops_per_s").get<double>();
  CHECK(achieved == Approx(tot.at("flops_per_iteration").get<double>() / iteration));
  CHECK(tot.at("flops_per_iteration").get<double>() == Approx(w.stats.flops_per_iteration.si()));
  CHECK(tot.at("fraction_of_peak").get<double>() ==
        Approx(achieved / j.at("peak_flops_per_s").get<double>()));
  CHECK(tot.at("fraction_of_peak").get<double>() < 1.0);
  // A training iteration runs the MCU arrays at peak x core.max_utilization x
  // core.sustained_fraction (0.95 x 0.821 in a100.yaml) at the rated clock, fitted on 8-GPU
  // jobs: one device, the median one, is 1 + 0.015 x e(8) faster (core.device_variation 0.015,
  // sustained_devices 8; e(8) = 1.434, device_variation.hpp), before the power limiter slows a
  // kernel that draws more than the board allows.
  CHECK(j.at("matrix_flops_per_s").get<double>() ==
        Approx(0.95 * 0.821 * (1.0 + 0.015 * expected_max_standard_normal(8)) *
               j.at("peak_flops_per_s").get<double>()));
}

TEST_CASE("totals from the training model replace the stream's", "[perf][report]") {
  // eval on one device: the kernels are the graph's, the iteration the training model's
  // (train/training_model.hpp), here 2 s with the device busy 1.5 s.
  Device d;
  const Workload w = make_workload("gpt-2l", tiny_gpt(2));
  const GraphTiming g = time_workload(w, d.timer);
  const IterationFigures it{true, seconds(2.0), seconds(1.5)};
  const nlohmann::json j = nlohmann::json::parse(to_json(d.arch, w, g, d.timer, it).dump());
  const auto& tot = j.at("totals");
  CHECK(tot.at("iteration_time_s").get<double>() == 2.0);
  CHECK(tot.at("device_busy_s").get<double>() == 1.5);
  CHECK(tot.at("device_utilization").get<double>() == 0.75);
  CHECK(tot.at("achieved_flops_per_s").get<double>() == Approx(g.flops.si() / 2.0));
  // The stream's spans are not this iteration's: left out.
  CHECK_FALSE(tot.contains("micro_batch_span_s"));
  CHECK(j.at("kernels").size() == w.graph.size());
  const std::string t = format_table(d.arch, w, g, d.timer, it, false);
  // "%-16s %14s": the label padded to 16, a space, "2 s" right-aligned in 14.
  CHECK(t.find("\niteration time" + std::string(14, ' ') + "2 s\n") != std::string::npos);
  CHECK(t.find("micro-batch span") == std::string::npos);
  // A strategy that does not fit: null, never 0.
  const nlohmann::json none =
      nlohmann::json::parse(to_json(d.arch, w, g, d.timer, {false, Time{}, Time{}}).dump());
  CHECK(none.at("totals").at("iteration_time_s").is_null());
  CHECK(none.at("totals").at("fraction_of_peak").is_null());
}

TEST_CASE("an infeasible design is reported, not thrown", "[perf][report]") {
  const ArchSpec spec = bind_template(test::shipped_techlib(), test::shipped_template("a100"));
  ResourceSplit s = ResourceSplit::from_template(spec.tmpl);
  s.set(0, 0.0, s.power(0), 0.0);  // no core area: no bundle fits
  const MicroArch a = generate_micro_arch(spec, s);
  REQUIRE_FALSE(a.feasible);
  const Workload w = make_workload("gemm", GemmSpec{64, 64, 64, DataType::kFp16});
  const std::string reason = "core: no bundle of MCUs fits the core area budget";
  CHECK(a.infeasible_reason == reason);

  const nlohmann::ordered_json j = infeasible_json(a, w);
  CHECK(j.at("feasible") == false);
  CHECK(j.at("reason") == reason);
  CHECK_FALSE(j.contains("kernels"));
  // No device, no times: every time and rate is null, never a 0 that reads as instantaneous.
  const auto& tot = j.at("totals");
  for (const char* key : {"micro_batch_span_s", "update_span_s", "input_transfer_s",
                          "iteration_time_s", "device_busy_s", "device_utilization",
                          "achieved_flops_per_s", "fraction_of_peak"}) {
    INFO(key);
    CHECK(tot.at(key).is_null());
  }
  CHECK(tot.at("flops_per_iteration").get<double>() == 2.0 * 64 * 64 * 64);
  CHECK(format_infeasible_table(a, w) ==
        "gemm (gemm) on A100-SXM4-80GB (N7)\n\ninfeasible: " + reason + "\n");
  const std::vector<std::string> csv = lines(infeasible_csv(a));
  REQUIRE(csv.size() == 2);
  CHECK(csv[0].rfind("id,name,", 0) == 0);
  CHECK(csv[1] == "# infeasible: " + reason);
}

TEST_CASE("one isolated GEMM call: host floor plus device time", "[perf][report]") {
  // As the GEMM calibration measures it (tests/perf/test_gemm_model.cpp): burst throughput and
  // a100.yaml's host floor, dispatch 12 us + launch_latency 5 us + synchronize 11 us = 28 us.
  Device d;
  KernelTimer burst(make_perf_machine(d.spec, d.arch, PerfMode::kBurst));
  const Workload w = make_workload("gemm-8192", GemmSpec{8192, 8192, 8192, DataType::kFp16});
  const nlohmann::json j =
      nlohmann::json::parse(isolated_call_json(d.arch, w, burst).dump());
  CHECK(j.at("mode") == "isolated_call");
  CHECK(j.at("flops").get<double>() == 2.0 * 8192.0 * 8192.0 * 8192.0);
  const double device = j.at("device_s").get<double>();
  CHECK(j.at("host_dispatch_s").get<double>() == Approx(12e-6));
  CHECK(j.at("launch_latency_s").get<double>() == Approx(5e-6));
  CHECK(j.at("synchronize_s").get<double>() == Approx(11e-6));
  CHECK(j.at("call_s").get<double>() == Approx(device + 28e-6).epsilon(1e-12));
  // Compute-bound (2731 FLOP per compulsory byte against a ridge of ~161): no faster than
  // 2·8192³ / (311.87 TFLOP/s peak × 0.95 max_utilization) = 3.711 ms at the rated clock. A
  // training run sustains 0.821 of that rate (core.sustained_fraction), and at it the product
  // draws 399.8 W (core.flop_energy_factor), just under the board's 400 W: the power limiter
  // leaves it at the rated clock (a loop at the full rate is held at 400 W: test_energy.cpp).
  CHECK(j.at("binding") == "compute");
  CHECK(device >= 2.0 * 8192.0 * 8192.0 * 8192.0 / (0.95 * d.arch.core.peak.si()));
  const Kernel& k = w.graph.kernels().front();
  const KernelTime sustained = d.timer.time(k);
  CHECK(sustained.device.si() == Approx(device / 0.821).epsilon(1e-4));
  // Its arithmetic at 0.821 of the rate and the limiter's clock (the rated one).
  CHECK(sustained.clock == 1.0);
  CHECK(sustained.compute.si() ==
        Approx(burst.time(k).compute.si() / (0.821 * sustained.clock)).epsilon(1e-12));
  const PowerLimit& limit = d.timer.machine().power_limit;
  CHECK(limit.idle + (sustained.energy() / sustained.device).si() == Approx(399.8).epsilon(1e-4));
  CHECK(j.at("call_flops_per_s").get<double>() ==
        Approx(j.at("flops").get<double>() / j.at("call_s").get<double>()));

  const std::vector<std::string> csv = lines(isolated_call_csv(w, burst));
  REQUIRE(csv.size() == 2);
  CHECK(csv[0] ==
        "workload,m,n,k,flops,device_s,binding,host_dispatch_s,launch_latency_s,synchronize_s,"
        "call_s,call_flops_per_s");
  CHECK(csv[1].rfind("gemm-8192,8192,8192,8192,1099511627776.0,", 0) == 0);
  const std::string table = format_isolated_call(d.arch, w, burst);
  CHECK(table.rfind("gemm-8192 (gemm) on A100-SXM4-80GB (N7), one isolated call\n", 0) == 0);
  CHECK(table.find("\nhost dispatch ") != std::string::npos);
}
