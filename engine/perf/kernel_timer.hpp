// Times kernels on one micro-architecture (issue 3): GEMM-shaped kernels by the hierarchical
// roofline of gemm_model.hpp, memoized by (shape, data type), their tiling searches shared
// with every timer of the same capacities (gemm_search_store.hpp); everything else as a memory
// stream of its true byte count against the vector units' throughput.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>

#include "engine/graph/compute_graph.hpp"
#include "engine/perf/gemm_model.hpp"
#include "engine/perf/perf_machine.hpp"
#include "engine/perf/power_limiter.hpp"

namespace pathfinder {

struct KernelTime {
  Time device;                // on the device, launch latency excluded
  Time compute;               // the arithmetic alone
  int binding = -1;           // -1 compute, else a level index (levels() = main memory)
  // The device time's parts, device = max(clocked, memory) + fixed: what runs on the core's
  // clock (arithmetic and on-chip traffic, bound by `clocked_binding`: -1 compute, else an
  // on-chip level), what main memory takes, and what no clock moves (latencies).
  Time clocked;
  Time memory;
  Time fixed;
  int clocked_binding = -1;
  // The clock it ran at against the rated one: below 1 where the board's power limiter slowed
  // it (power_limiter.hpp).
  double clock = 1.0;
  Flops flops;
  Bytes main_memory_bytes;
  double wave_efficiency = 1.0;
  // Dynamic energy by where it is spent (device_power.hpp): the core's arithmetic, the
  // on-chip levels' traffic, main-memory traffic.
  Energy core_energy;
  Energy on_chip_energy;
  Energy main_memory_energy;
  [[nodiscard]] Energy energy() const { return core_energy + on_chip_energy + main_memory_energy; }
  // FLOP per byte of main-memory traffic (operational intensity at the roofline's floor).
  [[nodiscard]] double intensity() const {
    return main_memory_bytes > Bytes{} ? flops.si() / main_memory_bytes.si() : 0.0;
  }
  // FLOP/s achieved over the device time.
  [[nodiscard]] Throughput achieved() const {
    return device > Time{} ? flops / device : Throughput{};
  }
};

class KernelTimer {
 public:
  explicit KernelTimer(PerfMachine machine);
  [[nodiscard]] const PerfMachine& machine() const { return m_; }
  [[nodiscard]] int levels() const { return static_cast<int>(m_.levels.size()); }
  // Name of a binding index: "compute", a level name, or the main memory's.
  [[nodiscard]] const std::string& binding_name(int binding) const;

  // At the clock the board's power limiter settles at over the kernel's run (none in
  // PerfMode::kBurst).
  [[nodiscard]] KernelTime time(const Kernel& k);
  // `t` on a device that runs at `rate` of the timed one (a job waiting for its slowest device,
  // device_variation.hpp): its clocked part takes 1/rate as long; main memory and latencies are
  // not on that clock. After the power limiter (the spread is how the devices' limiters and
  // silicon settle, Sinha et al. SC'22): the limiter's clock and the energy stay as timed.
  static void pace(KernelTime& t, double rate);
  // The full plan of a GEMM (memoized; the reference stays valid until the timer dies).
  [[nodiscard]] const GemmPlan& gemm_plan(const GemmShape& shape, DataType dtype);
  [[nodiscard]] std::size_t memoized() const { return first_count_ + cache_.size(); }

 private:
  struct Key {
    std::int64_t batch, m, n, k;
    DataType dtype;
    std::int32_t accumulate;
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept;
  };
  // A GEMM's plan, and the clock its last timing settled at with the FLOPs (epilogue included)
  // and accumulation it had: a warm evaluation asks again.
  struct GemmEntry {
    GemmPlan plan;
    double settled_flops = -1.0;
    bool settled_promoted = false;
    Throttle throttle;
  };
  [[nodiscard]] GemmEntry& gemm_entry(const GemmShape& shape, DataType dtype);
  [[nodiscard]] KernelTime stream_time(const Kernel& k) const;
  [[nodiscard]] KernelTime flash_attention_time(const Kernel& k) const;
  // The power limiter's clock for one kernel's run (the last few remembered, bitwise).
  [[nodiscard]] Throttle settle(const PowerWindow& w);
  [[nodiscard]] KernelTime limited(const KernelTime& t);

  PerfMachine m_;
  struct Settled {
    PowerWindow window;
    Throttle throttle;
  };
  std::array<Settled, 8> settled_{};
  std::size_t settled_count_ = 0, settled_next_ = 0;
  // The first few plans inline (a design's handful of GEMM shapes: no allocation), the rest
  // hashed; neither moves a plan once made.
  static constexpr std::size_t kFirst = 8;
  std::array<Key, kFirst> first_keys_{};
  std::array<GemmEntry, kFirst> first_entries_{};
  std::size_t first_count_ = 0;
  std::unordered_map<Key, GemmEntry, KeyHash> cache_;
  std::string compute_name_ = "compute";
};

}  // namespace pathfinder
