#include "engine/perf/kernel_timer.hpp"

#include <algorithm>

namespace pathfinder {

std::size_t KernelTimer::KeyHash::operator()(const Key& k) const noexcept {
  // FNV-1a over the fields: shapes repeat across layers, so collisions only cost a compare.
  std::uint64_t h = 1469598103934665603ULL;
  for (const std::uint64_t v : {static_cast<std::uint64_t>(k.batch), static_cast<std::uint64_t>(k.m),
                                static_cast<std::uint64_t>(k.n), static_cast<std::uint64_t>(k.k),
                                static_cast<std::uint64_t>(k.dtype)}) {
    h = (h ^ v) * 1099511628211ULL;
  }
  return static_cast<std::size_t>(h);
}

KernelTimer::KernelTimer(PerfMachine machine) : m_(std::move(machine)) {}

const std::string& KernelTimer::binding_name(int binding) const {
  if (binding < 0) return compute_name_;
  if (binding < levels()) return m_.levels[static_cast<std::size_t>(binding)].name;
  return m_.main_memory.name;
}

const GemmPlan& KernelTimer::gemm_plan(const GemmShape& shape, DataType dtype) {
  const Key key{shape.batch, shape.m, shape.n, shape.k, dtype};
  auto it = cache_.find(key);
  if (it == cache_.end()) it = cache_.emplace(key, plan_gemm(m_, shape, dtype)).first;
  return it->second;
}

KernelTime KernelTimer::stream_time(const Kernel& k) const {
  // Element-wise work streams its operands from main memory once (true byte counts) on the
  // vector units; the first bytes arrive one memory latency after the start.
  KernelTime t;
  t.flops = k.flops.si();
  t.main_memory_bytes = k.bytes().si();
  t.compute = m_.vector_flops > 0.0 ? t.flops / m_.vector_flops : 0.0;
  const double memory =
      m_.stream_bandwidth > 0.0 ? t.main_memory_bytes / m_.stream_bandwidth : 0.0;
  t.binding = memory >= t.compute ? levels() : -1;
  t.device = std::max(memory, t.compute) + m_.main_memory.latency;
  return t;
}

KernelTime KernelTimer::time(const Kernel& k) {
  if (k.comm) return {};  // communication is timed by the system model (engine/system)
  if (!k.gemm) return stream_time(k);
  const GemmPlan& p = gemm_plan(*k.gemm, k.dtype);
  KernelTime t;
  t.device = p.device_time;
  t.compute = p.compute_time;
  t.binding = p.binding;
  t.flops = k.flops.si();  // with any fused epilogue (bias add, bias gradient)
  t.main_memory_bytes = p.main_memory_bytes();
  t.wave_efficiency = p.wave_efficiency;
  return t;
}

}  // namespace pathfinder
