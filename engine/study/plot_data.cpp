#include "engine/study/plot_data.hpp"

#include <algorithm>
#include <filesystem>
#include <utility>

namespace pathfinder {

PlotData plot_data(const StudySpec& s, const PlotSpec& p, const StudyTable& t) {
  PlotData d;
  const StudyAxis& xa = *s.find_axis(p.x);
  for (const AxisValue& v : xa.values) {
    d.x_labels.push_back(v.text);
    d.x_numbers.push_back(v.number);
  }
  if (const StudyAxis* sa = p.series.empty() ? nullptr : s.find_axis(p.series)) {
    for (const AxisValue& v : sa->values) d.series.push_back(v.text);
  } else {
    d.series.emplace_back();
  }
  d.y.assign(d.x_labels.size(), std::vector<std::optional<double>>(d.series.size()));
  const std::size_t xc = *t.column(p.x);
  const auto sc = p.series.empty() ? std::nullopt : t.column(p.series);
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const bool selected = std::all_of(p.where.begin(), p.where.end(), [&](const auto& w) {
      return t.cell(r, *t.column(w.first)) == w.second;
    });
    if (!selected || t.cell(r, *t.column("feasible")) != "1") continue;
    const auto xi = std::find(d.x_labels.begin(), d.x_labels.end(), t.cell(r, xc)) - d.x_labels.begin();
    const auto si = sc ? std::find(d.series.begin(), d.series.end(), t.cell(r, *sc)) - d.series.begin() : 0;
    if (xi < static_cast<long>(d.x_labels.size()) && si < static_cast<long>(d.series.size())) {
      d.y[static_cast<std::size_t>(xi)][static_cast<std::size_t>(si)] = t.number(r, p.y);
    }
  }
  return d;
}

bool has_points(const PlotData& d, std::size_t series) {
  return std::any_of(d.y.begin(), d.y.end(), [&](const auto& row) { return row[series].has_value(); });
}

std::string axis_label(std::string_view name) {
  static const std::pair<std::string_view, std::string_view> kLabels[] = {
      {"iteration_s", "iteration time (s)"},
      {"mfu", "MFU (%)"},
      {"tokens_per_s", "throughput (tokens/s)"},
      {"compute_s", "compute time (s)"},
      {"embedding_head_s", "embedding and head time (s)"},
      {"tensor_comm_s", "tensor-parallel communication (s)"},
      {"pipeline_comm_s", "pipeline communication (s)"},
      {"pipeline_bubble_s", "pipeline bubble (s)"},
      {"data_comm_s", "data-parallel communication (s)"},
      {"gradient_sync_s", "gradient synchronisation (s)"},
      {"optimizer_s", "optimizer step (s)"},
      {"host_s", "host time (s)"},
      {"peak_tflops", "peak per device (TFLOP/s)"},
      {"memory_bandwidth_gbs", "main-memory bandwidth (GB/s)"},
      {"memory_gb_per_device", "main memory per device (GB)"},
      {"memory_used_gb", "memory used per device (GB)"},
      {"gemm_intensity", "FLOP per main-memory byte"},
      {"energy_j", "energy per iteration (J)"},
      {"j_per_token", "energy per token (J)"},
      {"chip_j_per_token", "devices' energy per token (J)"},
      {"device_power_w", "average power per device (W)"},
      {"peak_device_power_w", "peak power per device (W)"},
      {"gflop_per_j", "model GFLOP per joule"},
      {"usd", "cost per iteration (USD)"},
      {"usd_per_mtoken", "cost per million tokens (USD)"},
      {"logic", "logic node"},
      {"memory", "main-memory technology"},
      {"network", "network technology"},
      {"nic", "scale-out NIC"},
      {"devices", "devices"},
      {"nodes_per_package", "nodes per package"},
      {"budget.power", "power budget"},
      {"budget.power_limit", "board power limit"},
      {"budget.chip_area", "chip area budget"},
      {"budget.node_area", "node area budget"},
      {"budget.perimeter", "perimeter budget"},
  };
  for (const auto& [key, label] : kLabels) {
    if (key == name) return std::string(label);
  }
  return std::string(name);
}

std::string shown(std::string_view axis, const std::string& text) {
  if (axis != "template" && axis != "workload") return text;
  const std::string stem = std::filesystem::path(text).stem().string();
  return stem.empty() ? text : stem;
}

double plotted(std::string_view y, double v) { return y == "mfu" ? 100.0 * v : v; }

bool larger_is_better(std::string_view y) {
  return y == "mfu" || y == "tokens_per_s" || y == "peak_tflops" || y == "gflop_per_j" ||
         y == "memory_bandwidth_gbs" || y == "gemm_intensity" || y == "memory_gb_per_device";
}

}  // namespace pathfinder
