#include "engine/train/training_report.hpp"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "engine/core/format.hpp"

namespace pathfinder {
namespace {

// With pipeline stages, one row per stage: each part's share of the iteration. At most
// kStageRows rows, then the critical stage if it was left out; JSON's "stages" has them all.
constexpr std::size_t kStageRows = 8;

std::string stage_row(const TrainingResult& r, std::size_t i) {
  const std::string label =
      std::to_string(i) + (static_cast<int>(i) == r.critical_stage ? "*" : "");
  std::string row = printf_string("%-6s", label.c_str());
  for (const auto& [name, v] : r.stages[i].parts()) {
    row += printf_string(" %6.1f",
                         r.iteration_time > Time{} ? 100.0 * v / r.iteration_time : 0.0);
  }
  return row + "\n";
}

std::string stage_rows(const TrainingResult& r) {
  if (r.stages.size() <= 1) return {};
  // Column heads: the parts' names shortened to the 6-character columns.
  std::string out = "stage  comput emb+hd tensor pp_com bubble dp_com g_sync optimz   host"
                    "  (% of iteration; * critical)\n";
  const std::size_t shown = std::min(r.stages.size(), kStageRows);
  for (std::size_t i = 0; i < shown; ++i) out += stage_row(r, i);
  if (shown < r.stages.size()) {
    out += printf_string("... %zu more stages\n", r.stages.size() - shown);
    const auto c = static_cast<std::size_t>(r.critical_stage);
    if (c >= shown) out += stage_row(r, c);
  }
  return out + "\n";
}

nlohmann::json energy_json(const EnergyReport& e) {
  nlohmann::json j;
  j["joules"] = e.joules.si();
  j["chip_joules"] = e.chip_joules.si();
  j["joules_per_token"] = e.joules_per_token > Energy{} ? nlohmann::json(e.joules_per_token.si())
                                                        : nlohmann::json();
  j["device_power_w"] = e.device_power.si();
  j["peak_device_power_w"] = e.peak_device_power.si();
  j["system_power_w"] = e.system_power.si();
  j["flop_per_joule"] = e.flop_per_joule;
  nlohmann::json c, p;
  for (const auto& [name, v] : e.by_component.parts()) c[std::string(name) + "_j"] = v.si();
  for (const auto& [name, v] : e.by_phase.parts()) p[std::string(name) + "_j"] = v.si();
  j["by_component"] = c;
  j["by_phase"] = p;
  return j;
}

std::string energy_rows(const EnergyReport& e) {
  const auto pct = [&e](Energy v) { return e.joules > Energy{} ? 100.0 * v / e.joules : 0.0; };
  std::string out = printf_string(
      "energy %.4g J per iteration", e.joules.si());
  if (e.joules_per_token > Energy{}) {
    out += printf_string(", %.4g J per token", e.joules_per_token.si());
  }
  out += printf_string(", %.3g GFLOP/J; per device %.0f W average, %.0f W peak (chip), "
                       "%.0f W with its network and node share\n",
                       e.flop_per_joule / 1e9, e.device_power.si(), e.peak_device_power.si(),
                       e.system_power.si());
  out += "  by component:";
  for (const auto& [name, v] : e.by_component.parts()) out += printf_string(" %s %.1f%%", name, pct(v));
  out += "\n  by phase:    ";
  for (const auto& [name, v] : e.by_phase.parts()) out += printf_string(" %s %.1f%%", name, pct(v));
  return out + "\n";
}

}  // namespace

nlohmann::json to_json(const TrainingResult& r, int devices) {
  // An infeasible strategy has no times: null, never a 0 that reads as infinitely fast.
  const auto if_feasible = [&r](auto v) {
    return r.feasible ? nlohmann::json(v) : nlohmann::json();
  };
  nlohmann::json j;
  j["strategy"] = to_string(r.strategy);
  j["devices"] = devices;
  j["feasible"] = r.feasible;
  if (!r.feasible) j["reason"] = r.reason;
  j["iteration_s"] = if_feasible(r.iteration_time.si());
  j["micro_batches_per_pipeline"] = r.micro_batches;
  j["stage_forward_s"] = if_feasible(r.stage_forward.si());
  j["stage_backward_s"] = if_feasible(r.stage_backward.si());
  j["critical_stage"] = if_feasible(r.critical_stage);
  nlohmann::json b;
  for (const auto& [name, v] : r.breakdown.parts()) {
    b[std::string(name) + "_s"] = if_feasible(v.si());
  }
  j["breakdown"] = b;
  // Every stage's breakdown (each sums to the iteration; the critical one is "breakdown").
  nlohmann::json stages = nlohmann::json::array();
  for (std::size_t i = 0; i < r.stages.size(); ++i) {
    nlohmann::json st;
    st["stage"] = i;
    for (const auto& [name, v] : r.stages[i].parts()) st[std::string(name) + "_s"] = v.si();
    stages.push_back(std::move(st));
  }
  j["stages"] = if_feasible(stages);
  std::vector<double> busy_s, utilization;
  for (const Time busy : r.device_busy) {
    busy_s.push_back(busy.si());
    utilization.push_back(r.iteration_time > Time{} ? busy / r.iteration_time : 0.0);
  }
  j["device_busy_s"] = if_feasible(busy_s);
  j["stage_utilization"] = if_feasible(utilization);
  if (r.local_gemm) {
    const LocalGemm& g = *r.local_gemm;
    j["local_gemm"] = {{"m", g.shape.m},
                       {"n", g.shape.n},
                       {"k", g.shape.k},
                       {"device_s", g.device.si()},
                       {"intensity_flop_per_byte", g.intensity}};
  }
  j["model_flops"] = r.model_flops.si();
  j["mfu"] = if_feasible(r.mfu);
  j["job_pace"] = if_feasible(r.job_pace);
  j["tokens_per_s"] = if_feasible(r.tokens_per_second);
  j["energy"] = if_feasible(energy_json(r.energy));
  if (r.cost.modelled) {
    j["cost"] = if_feasible(nlohmann::json{
        {"usd", r.cost.usd},
        {"usd_per_token",
         r.cost.usd_per_token > 0.0 ? nlohmann::json(r.cost.usd_per_token) : nlohmann::json()},
        {"capital_usd", r.cost.capital_usd},
        {"energy_usd", r.cost.energy_usd},
        {"device_usd", r.cost.device_usd}});
  } else {
    j["cost"] = nullptr;
  }
  j["memory"] = {{"weights_bytes", r.memory.weights.si()},
                 {"gradients_bytes", r.memory.gradients.si()},
                 {"optimizer_bytes", r.memory.optimizer.si()},
                 {"activations_bytes", r.memory.activations.si()},
                 {"workspace_bytes", r.memory.workspace.si()},
                 {"total_bytes", r.memory.total().si()},
                 {"capacity_bytes", r.memory_capacity.si()},
                 {"stage", r.memory.stage},
                 {"in_flight_micro_batches", r.memory.in_flight_micro_batches}};
  return j;
}

std::string to_csv(const TrainingResult& r, int devices) {
  // An infeasible strategy leaves its time columns empty (as a spreadsheet's missing value).
  const auto if_feasible = [&r](const char* format, double v) {
    return r.feasible ? printf_string(format, v) : std::string();
  };
  std::string head = "strategy,devices,feasible,iteration_s,mfu,tokens_per_s";
  std::string row =
      printf_string("%s,%d,%d,", to_string(r.strategy).c_str(), devices, r.feasible ? 1 : 0) +
      if_feasible("%.9g", r.iteration_time.si()) + "," + if_feasible("%.6g", r.mfu) + "," +
      if_feasible("%.9g", r.tokens_per_second);
  for (const auto& [name, v] : r.breakdown.parts()) {
    head += std::string(",") + name + "_s";
    row += "," + if_feasible("%.9g", v.si());
  }
  head += ",memory_bytes,capacity_bytes,energy_j,j_per_token,device_power_w,usd,usd_per_token\n";
  row += printf_string(",%.9g,%.9g,", r.memory.total().si(), r.memory_capacity.si()) +
         if_feasible("%.9g", r.energy.joules.si()) + "," +
         (r.energy.joules_per_token > Energy{} ? if_feasible("%.9g", r.energy.joules_per_token.si())
                                               : "") +
         "," + if_feasible("%.6g", r.energy.device_power.si()) + "," +
         (r.cost.modelled ? if_feasible("%.9g", r.cost.usd) : "") + "," +
         (r.cost.usd_per_token > 0.0 ? if_feasible("%.9g", r.cost.usd_per_token) : "") + "\n";
  return head + row;
}

std::string format_table(const TrainingResult& r, int devices, const std::string& title) {
  std::string out = printf_string("%s on %d devices, %s\n\n", title.c_str(), devices,
                                  to_string(r.strategy).c_str());
  const auto gb = [](Bytes b) { return b.si() / 1e9; };
  out += printf_string("memory per device (stage %d): weights %.2f GB, gradients %.2f GB, ",
                       r.memory.stage, gb(r.memory.weights), gb(r.memory.gradients));
  out += printf_string("optimizer %.2f GB, activations %.2f GB, workspace %.2f GB",
                       gb(r.memory.optimizer), gb(r.memory.activations), gb(r.memory.workspace));
  out += printf_string(" = %.2f GB of %.2f GB\n", gb(r.memory.total()), gb(r.memory_capacity));
  if (!r.feasible) return out + "infeasible: " + r.reason + "\n";
  out += printf_string("micro-batches per pipeline %lld; first stage per micro-batch: "
                       "forward %s, backward %s\n\n",
                       static_cast<long long>(r.micro_batches),
                       format_seconds(r.stage_forward.si()).c_str(),
                       format_seconds(r.stage_backward.si()).c_str());
  out += printf_string("%-18s %12s %7s\n",
                       printf_string("critical stage %d", r.critical_stage).c_str(), "time",
                       "share");
  for (const auto& [name, v] : r.breakdown.parts()) {
    out += printf_string("%-18s %12s %6.1f%%\n", name, format_seconds(v.si()).c_str(),
                         r.iteration_time > Time{} ? 100.0 * v / r.iteration_time : 0.0);
  }
  out += printf_string("%-18s %12s\n\n", "iteration",
                       format_seconds(r.iteration_time.si()).c_str());
  out += stage_rows(r);
  if (r.local_gemm) {
    const LocalGemm& g = *r.local_gemm;
    out += printf_string("local GEMM %lldx%lldx%lld: %s on the device, %.1f FLOP/B\n",
                         static_cast<long long>(g.shape.m), static_cast<long long>(g.shape.n),
                         static_cast<long long>(g.shape.k), format_seconds(g.device.si()).c_str(),
                         g.intensity);
  }
  out += "stage utilization:";
  for (const Time b : r.device_busy) {
    out += printf_string(" %.0f%%",
                         r.iteration_time > Time{} ? 100.0 * b / r.iteration_time : 0.0);
  }
  out += "\n";
  out += printf_string("MFU %.1f%%, %.4g tokens/s, %.4g model PFLOP per iteration\n",
                       100.0 * r.mfu, r.tokens_per_second, r.model_flops.si() / 1e15);
  if (r.job_pace != 1.0) {
    out += printf_string("device variation: the job's slowest of %d devices computes at %.3f "
                         "of the template's rate (core.device_variation)\n",
                         r.strategy.devices(), r.job_pace);
  }
  out += energy_rows(r.energy);
  if (r.cost.modelled) {
    out += printf_string("cost %.4g USD per iteration", r.cost.usd);
    if (r.cost.usd_per_token > 0.0) {
      out += printf_string(", %.4g USD per million tokens", 1e6 * r.cost.usd_per_token);
    }
    out += printf_string(" (capital %.0f%%, electricity %.0f%%); one device costs %.0f USD to make\n",
                         r.cost.usd > 0.0 ? 100.0 * r.cost.capital_usd / r.cost.usd : 0.0,
                         r.cost.usd > 0.0 ? 100.0 * r.cost.energy_usd / r.cost.usd : 0.0,
                         r.cost.device_usd);
  }
  return out;
}

namespace {

const char* pass_name(int pass) {
  return pass == 0 ? "forward" : pass == 1 ? "backward" : "update";
}

}  // namespace

std::string layer_kernels_table(const GptTraining::LayerKernels& k) {
  std::string out = "\none layer's kernels on the first stage, one micro-batch (ms from the pass's "
                    "first issue; a ring is timed with its consumer)\n";
  out += printf_string("%-9s %-40s %-11s %-14s %10s %10s\n", "pass", "kernel", "kind", "stream",
                       "start", "time");
  for (const KernelSpan& s : k.spans) {
    const Kernel& kernel = k.graph->kernel(s.id);
    out += printf_string("%-9s %-40s %-11s %-14s %10.4f %10.4f\n", pass_name(s.pass),
                         kernel.name.c_str(), kernel.comm ? "collective" : "kernel",
                         s.comm_stream ? "communication" : "compute",
                         s.start.in(units::milliseconds), (s.end - s.start).in(units::milliseconds));
  }
  return out;
}

nlohmann::json layer_kernels_json(const GptTraining::LayerKernels& k) {
  nlohmann::json a = nlohmann::json::array();
  for (const KernelSpan& s : k.spans) {
    const Kernel& kernel = k.graph->kernel(s.id);
    a.push_back({{"pass", pass_name(s.pass)},
                 {"kernel", kernel.name},
                 {"kind", kernel.comm ? "collective" : "kernel"},
                 {"stream", s.comm_stream ? "communication" : "compute"},
                 {"start_s", s.start.si()},
                 {"time_s", (s.end - s.start).si()}});
  }
  return a;
}

}  // namespace pathfinder
