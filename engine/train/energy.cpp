#include "engine/train/energy.hpp"

#include <algorithm>

namespace pathfinder {

EnergyReport iteration_energy(const DevicePower& p, const TrainingResult& r, int devices,
                              double tokens) {
  EnergyReport e;
  const Time T = r.iteration_time;
  if (r.stages.empty() || devices <= 0 || !(T > Time{})) return e;
  const double per_stage = static_cast<double>(devices) / static_cast<double>(r.stages.size());
  Power levels_static;
  for (int i = 0; i < p.levels; ++i) {
    levels_static += watts(p.level_static[static_cast<std::size_t>(i)]);
  }
  const Power on = watts(p.always_on());
  Energy chip;  // the devices' chips
  Power peak;
  for (const TrainingBreakdown& b : r.stages) {
    const Activity& w = b.work;
    const Activity& st = b.step;
    Energy links;
    Power links_busy;
    for (std::size_t t = 0; t < w.link_bytes.size(); ++t) {
      const Bytes bytes = w.link_bytes[t] + st.link_bytes[t];
      links += bytes * EnergyPerByte::from_si(p.link_joule_per_byte[t]);
      if (bytes > Bytes{}) links_busy += watts(p.link_dynamic[t]);
    }
    EnergyByComponent c;
    c.core = watts(p.core_static + p.core_clock) * T + w.core + st.core;
    c.on_chip = levels_static * T + w.on_chip + st.on_chip;
    c.main_memory = watts(p.main_static) * T + w.main_memory + st.main_memory;
    const Power scale_up_static = watts(p.link_static[0] + p.link_static[1]);
    c.network = (scale_up_static + watts(p.link_static[2])) * T + links;
    c.node = watts(p.overhead) * T;
    EnergyByPhase ph;
    ph.compute = on * (b.compute + b.embedding_head) + w.kernel_energy();
    ph.communication =
        on * (b.tensor_comm + b.pipeline_comm + b.data_comm + b.gradient_sync) + links;
    ph.optimizer = on * b.optimizer + st.kernel_energy();
    ph.idle = on * (b.pipeline_bubble + b.host);
    chip += per_stage * (c.total() - c.node - watts(p.link_static[2]) * T);
    e.by_component.core += per_stage * c.core;
    e.by_component.on_chip += per_stage * c.on_chip;
    e.by_component.main_memory += per_stage * c.main_memory;
    e.by_component.network += per_stage * c.network;
    e.by_component.node += per_stage * c.node;
    e.by_phase.compute += per_stage * ph.compute;
    e.by_phase.communication += per_stage * ph.communication;
    e.by_phase.optimizer += per_stage * ph.optimizer;
    e.by_phase.idle += per_stage * ph.idle;
    peak = std::max(peak, std::max(w.peak_power, st.peak_power) + links_busy);
  }
  e.joules = e.by_component.total();
  e.chip_joules = chip;
  e.joules_per_token = tokens > 0.0 ? e.joules / tokens : Energy{};
  e.device_power = chip / (static_cast<double>(devices) * T);
  // The power limiter holds each kernel within the board's limit (engine/perf/
  // power_limiter.hpp); the links its collectives keep busy beside it are not in the limiter's
  // sum, so a kernel at the limit with its links busy is reported at the limit.
  e.peak_device_power = std::min(watts(p.chip_idle()) + peak, watts(p.limit));
  e.system_power = e.joules / (static_cast<double>(devices) * T);
  e.flop_per_joule = e.joules > Energy{} ? r.model_flops.si() / e.joules.si() : 0.0;
  return e;
}

}  // namespace pathfinder
