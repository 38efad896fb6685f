#include "engine/perf/perf_report.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <sstream>
#include <unordered_map>
#include <variant>

#include "engine/core/error.hpp"
#include "engine/core/format.hpp"
#include "engine/core/text.hpp"

namespace pathfinder {
namespace {

constexpr std::array<Phase, 4> kAllPhases{Phase::kForward, Phase::kBackwardData,
                                          Phase::kBackwardWeight, Phase::kUpdate};

std::string heading(const MicroArch& a, const Workload& w) {
  return w.name + " (" + std::string(to_string(kind_of(w.spec))) + ") on " + a.name + " (" +
         a.logic + ")";
}

nlohmann::ordered_json head_json(const MicroArch& a, const Workload& w) {
  nlohmann::ordered_json j;
  j["workload"] = w.name;
  j["workload_kind"] = to_string(kind_of(w.spec));
  j["device"] = a.name;
  j["logic"] = a.logic;
  j["feasible"] = a.feasible;
  if (!a.feasible) j["reason"] = a.infeasible_reason;
  return j;
}

nlohmann::ordered_json shape_json(const GemmShape& s) {
  return {{"batch", s.batch}, {"m", s.m}, {"n", s.n}, {"k", s.k}};
}

std::string shape_text(const GemmShape& s) {
  std::string out = s.batch > 1 ? std::to_string(s.batch) + " x " : std::string();
  return out + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

IterationFigures stream_figures(const GraphTiming& g) {
  return {true, g.iteration_time, g.device_busy};
}

Throughput achieved_per_iteration(Flops flops, const IterationFigures& f) {
  return f.iteration_time > Time{} ? flops / f.iteration_time : Throughput{};
}

double utilization(const IterationFigures& f) {
  return f.iteration_time > Time{} ? f.device_busy / f.iteration_time : 0.0;
}

nlohmann::ordered_json report_json(const MicroArch& a, const Workload& w, const GraphTiming& g,
                                   const KernelTimer& t, const IterationFigures* it);
std::string report_table(const MicroArch& a, const Workload& w, const GraphTiming& g,
                         const KernelTimer& t, const IterationFigures* it, bool all_kernels);

constexpr const char* kCsvHeader =
    "id,name,kind,phase,dtype,layer,step,batch,m,n,k,flops,bytes,main_memory_bytes,compute_s,"
    "device_s,binding,flops_per_s,intensity_flop_per_byte,wave_efficiency,clock,start_s,end_s\n";

// The shortest text that reads back as the same double (as the JSON writer prints it).
std::string num(double x) { return nlohmann::json(x).dump(); }

}  // namespace

std::string kernel_group_name(std::string_view name) {
  std::string out;
  std::size_t i = 0;
  while (i + 2 < name.size() && (name[i] == 't' || name[i] == 'l') &&
         std::isdigit(static_cast<unsigned char>(name[i + 1])) != 0) {
    std::size_t j = i + 1;
    while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j])) != 0) ++j;
    if (j >= name.size() || name[j] != '.') break;  // "l2norm" or a name ending in digits
    out += name[i];
    out += "*.";
    i = j + 1;
  }
  out += name.substr(i);
  return out;
}

std::vector<KernelGroup> group_kernels(const Workload& w, const GraphTiming& g,
                                       bool all_kernels) {
  const auto& ks = w.graph.kernels();
  PF_ASSERT(g.kernels.size() == ks.size());
  std::vector<KernelGroup> groups;
  std::unordered_map<std::string, std::size_t> index;
  const double micro_batches =
      static_cast<double>(std::max<std::int64_t>(w.stats.micro_batches, 1));
  for (std::size_t id = 0; id < ks.size(); ++id) {
    const Kernel& k = ks[id];
    const KernelTime& t = g.kernels[id].time;
    std::string name = all_kernels ? k.name : kernel_group_name(k.name);
    auto [it, added] = index.try_emplace(name, groups.size());
    if (added) {
      KernelGroup n;
      n.name = std::move(name);
      n.first = static_cast<KernelId>(id);
      n.phase = k.phase;
      n.kind = k.kind;
      n.shape = k.gemm;
      n.binding = t.binding;
      groups.push_back(std::move(n));
    }
    KernelGroup& grp = groups[it->second];
    if (!added) {
      if (grp.shape && grp.shape != k.gemm) grp.shape.reset();
      if (grp.binding && *grp.binding != t.binding) grp.binding.reset();
    }
    ++grp.count;
    grp.device += t.device;
    grp.iteration_device += k.phase == Phase::kUpdate ? t.device : t.device * micro_batches;
    grp.flops += t.flops;
    grp.main_memory_bytes += t.main_memory_bytes;
  }
  return groups;
}

nlohmann::ordered_json to_json(const MicroArch& a, const Workload& w, const GraphTiming& g,
                               const KernelTimer& t) {
  return report_json(a, w, g, t, nullptr);
}

nlohmann::ordered_json to_json(const MicroArch& a, const Workload& w, const GraphTiming& g,
                               const KernelTimer& t, const IterationFigures& iteration) {
  return report_json(a, w, g, t, &iteration);
}

namespace {

nlohmann::ordered_json report_json(const MicroArch& a, const Workload& w, const GraphTiming& g,
                                   const KernelTimer& t, const IterationFigures* it) {
  const auto& ks = w.graph.kernels();
  PF_ASSERT(g.kernels.size() == ks.size());
  nlohmann::ordered_json j = head_json(a, w);
  j["peak_flops_per_s"] = a.core.peak.si();
  // One device's rates: the median device's pace (device_variation.hpp), as its kernels ran.
  const double pace = t.machine().job_pace(1);
  j["matrix_flops_per_s"] = t.machine().matrix_flops.si() * pace;
  j["vector_flops_per_s"] = t.machine().vector_flops.si() * pace;
  j["main_memory_bandwidth_bytes_per_s"] = t.machine().main_memory.bandwidth.si();
  auto kernels = nlohmann::ordered_json::array();
  for (std::size_t id = 0; id < ks.size(); ++id) {
    const Kernel& k = ks[id];
    const KernelRun& r = g.kernels[id];
    nlohmann::ordered_json kj;
    kj["id"] = id;
    kj["name"] = k.name;
    kj["kind"] = to_string(k.kind);
    kj["phase"] = to_string(k.phase);
    kj["dtype"] = to_string(k.dtype);
    kj["layer"] = k.layer >= 0 ? nlohmann::ordered_json(k.layer) : nlohmann::ordered_json();
    kj["step"] = k.step >= 0 ? nlohmann::ordered_json(k.step) : nlohmann::ordered_json();
    kj["gemm"] = k.gemm ? shape_json(*k.gemm) : nlohmann::ordered_json();
    kj["flops"] = r.time.flops.si();
    kj["bytes"] = k.bytes().si();
    kj["main_memory_bytes"] = r.time.main_memory_bytes.si();
    kj["compute_s"] = r.time.compute.si();
    kj["device_s"] = r.time.device.si();
    kj["binding"] = t.binding_name(r.time.binding);
    kj["flops_per_s"] = r.time.achieved().si();
    kj["intensity_flop_per_byte"] = r.time.intensity();
    kj["wave_efficiency"] = r.time.wave_efficiency;
    kj["clock"] = r.time.clock;
    kj["start_s"] = r.start.si();
    kj["end_s"] = r.end.si();
    kernels.push_back(std::move(kj));
  }
  j["kernels"] = std::move(kernels);

  nlohmann::ordered_json tot;
  nlohmann::ordered_json phases;
  for (Phase p : kAllPhases) {
    const PhaseTotals& pt = g.phases[static_cast<std::size_t>(p)];
    phases[std::string(to_string(p))] = {
        {"kernels", pt.kernels}, {"device_s", pt.device.si()}, {"flops", pt.flops.si()}};
  }
  tot["phases"] = std::move(phases);
  tot["micro_batches"] = w.stats.micro_batches;
  if (it == nullptr) {
    tot["micro_batch_span_s"] = g.micro_batch_span.si();
    tot["update_span_s"] = g.update_span.si();
    tot["input_transfer_s"] = g.input_transfer.si();
  }
  const IterationFigures f = it != nullptr ? *it : stream_figures(g);
  const auto if_feasible = [&f](double v) {
    return f.feasible ? nlohmann::ordered_json(v) : nlohmann::ordered_json();
  };
  const double achieved = achieved_per_iteration(g.flops, f).si();
  tot["iteration_time_s"] = if_feasible(f.iteration_time.si());
  tot["device_busy_s"] = if_feasible(f.device_busy.si());
  tot["device_utilization"] = if_feasible(utilization(f));
  tot["flops_per_iteration"] = g.flops.si();
  tot["achieved_flops_per_s"] = if_feasible(achieved);
  tot["fraction_of_peak"] = if_feasible(a.core.peak.si() > 0.0 ? achieved / a.core.peak.si() : 0.0);
  j["totals"] = std::move(tot);
  return j;
}

}  // namespace

std::string to_csv(const Workload& w, const GraphTiming& g, const KernelTimer& t) {
  const auto& ks = w.graph.kernels();
  PF_ASSERT(g.kernels.size() == ks.size());
  std::string out = kCsvHeader;
  for (std::size_t id = 0; id < ks.size(); ++id) {
    const Kernel& k = ks[id];
    const KernelTime& kt = g.kernels[id].time;
    auto opt_int = [](std::int64_t v, bool present) {
      return present ? std::to_string(v) : std::string();
    };
    out += std::to_string(id) + "," + csv_field(k.name) + "," + std::string(to_string(k.kind)) +
           "," + std::string(to_string(k.phase)) + "," + std::string(to_string(k.dtype)) + "," +
           opt_int(k.layer, k.layer >= 0) + "," + opt_int(k.step, k.step >= 0) + ",";
    if (k.gemm) {
      out += std::to_string(k.gemm->batch) + "," + std::to_string(k.gemm->m) + "," +
             std::to_string(k.gemm->n) + "," + std::to_string(k.gemm->k) + ",";
    } else {
      out += ",,,,";
    }
    out += num(kt.flops.si()) + "," + num(k.bytes().si()) + "," +
           num(kt.main_memory_bytes.si()) + "," + num(kt.compute.si()) + "," +
           num(kt.device.si()) + "," + csv_field(t.binding_name(kt.binding)) + "," +
           num(kt.achieved().si()) + "," + num(kt.intensity()) + "," + num(kt.wave_efficiency) +
           "," + num(kt.clock) + "," + num(g.kernels[id].start.si()) + "," + num(g.kernels[id].end.si()) + "\n";
  }
  return out;
}

std::string format_table(const MicroArch& a, const Workload& w, const GraphTiming& g,
                         const KernelTimer& t, bool all_kernels) {
  return report_table(a, w, g, t, nullptr, all_kernels);
}

std::string format_table(const MicroArch& a, const Workload& w, const GraphTiming& g,
                         const KernelTimer& t, const IterationFigures& iteration,
                         bool all_kernels) {
  return report_table(a, w, g, t, &iteration, all_kernels);
}

namespace {

std::string report_table(const MicroArch& a, const Workload& w, const GraphTiming& g,
                         const KernelTimer& t, const IterationFigures* it, bool all_kernels) {
  const std::vector<KernelGroup> groups = group_kernels(w, g, all_kernels);
  std::size_t name_w = 6;
  std::size_t shape_w = 5;
  for (const KernelGroup& k : groups) {
    name_w = std::max(name_w, k.name.size());
    if (k.shape) shape_w = std::max(shape_w, shape_text(*k.shape).size());
  }
  const int nw = static_cast<int>(name_w), sw = static_cast<int>(shape_w);
  const PerfMachine& m = t.machine();

  std::ostringstream o;
  o << heading(a, w) << "\n"
    << printf_string("peak %.4g TFLOP/s; timed at %.4g (matrix) and %.4g (vector) TFLOP/s, "
                     "main memory %.4g TB/s",
                     a.core.peak.in(units::teraflops_per_second), m.matrix_flops.si() * 1e-12,
                     m.vector_flops.si() * 1e-12, m.main_memory.bandwidth.si() * 1e-12)
    << "\n\n";

  o << printf_string("%-*s %6s  %-15s  %-*s %10s %6s  %-12s %8s %8s\n", nw, "kernel", "count",
                     "phase", sw, "shape", "time", "%busy", "bound by", "TFLOP/s", "FLOP/B");
  for (const KernelGroup& k : groups) {
    const std::string shape = k.shape         ? shape_text(*k.shape)
                              : is_gemm(k.kind) ? std::string("mixed")
                                                : std::string("-");
    const std::string binding = k.binding ? t.binding_name(*k.binding) : std::string("mixed");
    const double busy =
        g.device_busy > Time{} ? 100.0 * k.iteration_device / g.device_busy : 0.0;
    o << printf_string("%-*s %6d  %-15s  %-*s %10s %6.1f  %-12s %8.1f %8.4g\n", nw,
                       k.name.c_str(), k.count, std::string(to_string(k.phase)).c_str(), sw,
                       shape.c_str(), format_seconds(k.device.si()).c_str(), busy, binding.c_str(),
                       k.achieved().si() * 1e-12, k.intensity());
  }

  o << "\n" << printf_string("%-16s %7s %10s %8s\n", "phase", "kernels", "device", "TFLOP/s");
  for (Phase p : kAllPhases) {
    const PhaseTotals& pt = g.phases[static_cast<std::size_t>(p)];
    if (pt.kernels == 0) continue;
    o << printf_string("%-16s %7d %10s %8.1f\n", std::string(to_string(p)).c_str(), pt.kernels,
                       format_seconds(pt.device.si()).c_str(),
                       pt.device > Time{} ? (pt.flops / pt.device).si() * 1e-12 : 0.0);
  }
  o << "(time, device: summed over one micro-batch, update over one step; %busy: share of the\n"
       " iteration's device time; FLOP/B: FLOP per main-memory byte)\n";

  const IterationFigures f = it != nullptr ? *it : stream_figures(g);
  const double achieved = achieved_per_iteration(g.flops, f).si();
  const double peak = a.core.peak.si();
  auto line = [&o](const char* what, const std::string& value, const std::string& note) {
    o << printf_string("%-16s %14s", what, value.c_str()) << (note.empty() ? "" : "  ") << note
      << "\n";
  };
  o << "\n";
  if (it == nullptr) {
    line("micro-batch span", format_seconds(g.micro_batch_span.si()),
         "forward and backward stream");
    line("update span", format_seconds(g.update_span.si()), "optimizer step, once per iteration");
    line("input transfer", format_seconds(g.input_transfer.si()),
         "host to device, per micro-batch");
  }
  line("micro-batches", std::to_string(w.stats.micro_batches), "per iteration");
  if (!f.feasible) {
    line("iteration time", "-", "infeasible");
    return o.str();
  }
  line("iteration time", format_seconds(f.iteration_time.si()), "");
  line("device busy", format_seconds(f.device_busy.si()),
       printf_string("%.1f%% utilization", 100.0 * utilization(f)));
  line("achieved", printf_string("%.1f TFLOP/s", achieved * 1e-12),
       printf_string("%.1f%% of peak", peak > 0.0 ? 100.0 * achieved / peak : 0.0));
  return o.str();
}

}  // namespace

nlohmann::ordered_json infeasible_json(const MicroArch& a, const Workload& w) {
  PF_ASSERT(!a.feasible);
  nlohmann::ordered_json j = head_json(a, w);
  // The totals of a feasible design, each time and rate null: there is no device to run on.
  const nlohmann::ordered_json none;
  nlohmann::ordered_json tot;
  tot["micro_batches"] = w.stats.micro_batches;
  for (const char* key : {"micro_batch_span_s", "update_span_s", "input_transfer_s",
                          "iteration_time_s", "device_busy_s", "device_utilization"}) {
    tot[key] = none;
  }
  tot["flops_per_iteration"] = w.stats.flops_per_iteration.si();
  tot["achieved_flops_per_s"] = none;
  tot["fraction_of_peak"] = none;
  j["totals"] = std::move(tot);
  return j;
}

std::string infeasible_csv(const MicroArch& a) {
  PF_ASSERT(!a.feasible);
  return std::string(kCsvHeader) + "# infeasible: " + a.infeasible_reason + "\n";
}

namespace {

struct IsolatedCall {
  const Kernel* kernel = nullptr;
  KernelTime time;
  Time call;  // host issue to host observing completion
};

IsolatedCall isolated_call(const Workload& w, KernelTimer& t) {
  PF_ASSERT(std::holds_alternative<GemmSpec>(w.spec));
  const auto& ks = w.graph.kernels();
  const auto gemm =
      std::find_if(ks.begin(), ks.end(), [](const Kernel& k) { return k.gemm.has_value(); });
  PF_ASSERT(gemm != ks.end());
  IsolatedCall c;
  c.kernel = &*gemm;
  c.time = t.time(*gemm);
  c.call = isolated_time(t.machine().host, c.time);
  return c;
}

}  // namespace

nlohmann::ordered_json isolated_call_json(const MicroArch& a, const Workload& w, KernelTimer& t) {
  const IsolatedCall c = isolated_call(w, t);
  const HostSpec& h = t.machine().host;
  nlohmann::ordered_json j = head_json(a, w);
  j["mode"] = "isolated_call";
  j["gemm"] = shape_json(*c.kernel->gemm);
  j["flops"] = c.time.flops.si();
  j["device_s"] = c.time.device.si();
  j["binding"] = t.binding_name(c.time.binding);
  j["host_dispatch_s"] = h.dispatch.si();
  j["launch_latency_s"] = h.launch_latency.si();
  j["synchronize_s"] = h.synchronize.si();
  j["call_s"] = c.call.si();
  j["device_flops_per_s"] = c.time.achieved().si();
  j["call_flops_per_s"] = (c.time.flops / c.call).si();
  return j;
}

std::string isolated_call_csv(const Workload& w, KernelTimer& t) {
  const IsolatedCall c = isolated_call(w, t);
  const HostSpec& h = t.machine().host;
  const GemmShape& s = *c.kernel->gemm;
  return "workload,m,n,k,flops,device_s,binding,host_dispatch_s,launch_latency_s,synchronize_s,"
         "call_s,call_flops_per_s\n" +
         csv_field(w.name) + "," + std::to_string(s.m) + "," + std::to_string(s.n) + "," +
         std::to_string(s.k) + "," + num(c.time.flops.si()) + "," + num(c.time.device.si()) + "," +
         csv_field(t.binding_name(c.time.binding)) + "," + num(h.dispatch.si()) + "," +
         num(h.launch_latency.si()) + "," + num(h.synchronize.si()) + "," + num(c.call.si()) + "," +
         num((c.time.flops / c.call).si()) + "\n";
}

std::string format_isolated_call(const MicroArch& a, const Workload& w, KernelTimer& t) {
  const IsolatedCall c = isolated_call(w, t);
  const HostSpec& h = t.machine().host;
  std::string out = heading(a, w) + ", one isolated call\n\n";
  out += printf_string("%-16s %12s  %s, %.1f TFLOP/s\n", "device",
                       format_seconds(c.time.device.si()).c_str(),
                       t.binding_name(c.time.binding).c_str(), c.time.achieved().si() / 1e12);
  out += printf_string("%-16s %12s\n", "host dispatch", format_seconds(h.dispatch.si()).c_str());
  out += printf_string("%-16s %12s\n", "launch latency",
                       format_seconds(h.launch_latency.si()).c_str());
  out += printf_string("%-16s %12s\n", "synchronize", format_seconds(h.synchronize.si()).c_str());
  out += printf_string("%-16s %12s  %.1f TFLOP/s\n", "call", format_seconds(c.call.si()).c_str(),
                       (c.time.flops / c.call).si() / 1e12);
  return out;
}

std::string format_infeasible_table(const MicroArch& a, const Workload& w) {
  PF_ASSERT(!a.feasible);
  return heading(a, w) + "\n\ninfeasible: " + a.infeasible_reason + "\n";
}

}  // namespace pathfinder
