#include "engine/perf/kernel_timer.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "engine/perf/gemm_search_store.hpp"

namespace pathfinder {

std::size_t KernelTimer::KeyHash::operator()(const Key& k) const noexcept {
  // FNV-1a over the fields: shapes repeat across layers, so collisions only cost a compare.
  std::uint64_t h = 1469598103934665603ULL;
  for (const std::uint64_t v : {static_cast<std::uint64_t>(k.batch), static_cast<std::uint64_t>(k.m),
                                static_cast<std::uint64_t>(k.n), static_cast<std::uint64_t>(k.k),
                                static_cast<std::uint64_t>(k.dtype),
                                static_cast<std::uint64_t>(k.accumulate)}) {
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

KernelTimer::GemmEntry& KernelTimer::gemm_entry(const GemmShape& shape, DataType dtype) {
  const Key key{shape.batch, shape.m, shape.n, shape.k, dtype, shape.accumulate};
  for (std::size_t i = 0; i < first_count_; ++i) {
    if (first_keys_[i] == key) return first_entries_[i];
  }
  if (first_count_ < kFirst) {
    first_keys_[first_count_] = key;
    GemmEntry& e = first_entries_[first_count_++];
    e.settled_flops = -1.0;
    shared_gemm_search(m_, shape, dtype)->time(m_, e.plan);
    return e;
  }
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    GemmEntry e{shared_gemm_search(m_, shape, dtype)->time(m_), -1.0, false, Throttle{}};
    it = cache_.emplace(key, std::move(e)).first;
  }
  return it->second;
}

const GemmPlan& KernelTimer::gemm_plan(const GemmShape& shape, DataType dtype) {
  return gemm_entry(shape, dtype).plan;
}

KernelTime KernelTimer::stream_time(const Kernel& k) const {
  // Element-wise work streams its operands from main memory once (true byte counts) on the
  // vector units; the first bytes arrive one memory latency after the start. Plain SI doubles
  // inside (every kernel of every design is timed here), typed in the result.
  const double flops = k.flops.si();
  const double bytes = k.bytes().si();
  const double vector_flops = m_.vector_flops.si();
  const double stream_bandwidth = m_.stream_bandwidth.si();
  KernelTime t;
  t.flops = Flops::from_si(flops);
  t.main_memory_bytes = Bytes::from_si(bytes);
  const double compute = vector_flops > 0.0 ? flops / vector_flops : 0.0;
  const double memory = stream_bandwidth > 0.0 ? bytes / stream_bandwidth : 0.0;
  t.compute = Time::from_si(compute);
  t.binding = memory >= compute ? levels() : -1;
  t.device = Time::from_si(std::max(memory, compute) + m_.main_memory.latency.si());
  t.clocked = t.compute;
  t.memory = Time::from_si(memory);
  t.fixed = m_.main_memory.latency;
  // Energy: the FLOPs on the vector units; the bytes from main memory through the last level.
  t.core_energy = Energy::from_si(flops * m_.energy_per_vector_flop.si());
  t.on_chip_energy = Energy::from_si(
      m_.levels.empty() ? 0.0 : bytes * m_.levels.back().energy_per_byte.si());
  t.main_memory_energy = Energy::from_si(bytes * m_.main_memory.energy_per_byte.si());
  return t;
}

// FlashAttention-2 (Dao 2023, Algorithm 1 and §3.3) as a tiled roofline. Each thread block
// owns a tile of kBlockRows = 128 queries of one (sequence, head) problem (the paper's
// B_r ∈ {64, 128}; 128 for head dimensions up to 128) and streams every key/value block past
// it (with a causal mask only the blocks at or below the diagonal, half on average), so:
//   compute      the kernel's matrix FLOPs on the MCU arrays (a native kernel's at the
//                template's attention_fraction of the rate, a backward at its
//                attention_backward_fraction of that; a warp-MMA kernel's at
//                warp_mma_fraction, its backward at warp_mma_backward_fraction of that), then
//                its softmax work on the vector
//                units, in turn (FlashAttention-2 runs them one after the other within a warp;
//                Shah et al. 2024, FlashAttention-3 §1, §3.1), or beside it for a native kernel
//                on asynchronous matrix instructions (attention_overlap: the longer binds):
//                per unmasked score one
//                exponential (forward; the backward recomputes P = exp(S − L)) at the special-
//                function rate, 16 per SM per clock against 256 FP32 FLOPs, so vector_flops/16
//                (H100: 4.2 T/s, FA-3's "3.9 TFLOPS of special functions"), plus 3 FP32 FLOPs
//                (forward: row max, scale-subtract, row sum; backward: scale-subtract,
//                dS = P∘(dP − D)); all over ceil(tiles / bundles) waves of one tile per bundle
//                (the last wave partly idle: wave quantization)
//   main memory  the kernel's byte count: Q, K, V and O (and in backward dO, dQ, dK, dV and the
//                per-row logsumexp), each once; the s×s scores never leave the chip
//   last level   K and V (p bytes per element) streamed once per query tile in forward; the
//                backward streams Q and dO per key/value tile and read-modify-writes dQ, twice
//                the forward's on-chip traffic
// The slowest of the three plus one memory latency, as for a GEMM plan.
// The backward is three kernels in turn (flash-attention's flash_bwd_launch_template.h, both
// the FlashAttention-2 and the Hopper FlashAttention-3 code): a preprocess that reads O and dO
// for D = rowsum(dO∘O) and clears an FP32 dQ accumulator, the main kernel (above) adding each
// key/value block's dQ share into that accumulator, and a postprocess converting it to dQ in
// the kernel's type. The two around the main kernel are element-wise passes over main memory
// at the stream bandwidth, each with its own memory latency; their traffic beyond the graph's
// count is the accumulator's, 4 bytes per dQ element written and read back.
KernelTime KernelTimer::flash_attention_time(const Kernel& k) const {
  constexpr double kBlockRows = 128.0;
  const AttentionShape& a = *k.attention;
  const double s = static_cast<double>(a.sequence), dh = static_cast<double>(a.head_dim);
  const double q = static_cast<double>(a.query_count());
  const double tiles = static_cast<double>(a.batch) * std::ceil(q / kBlockRows);
  const double bundles = static_cast<double>(std::max(m_.bundles, 1));
  const double waves = std::ceil(tiles / bundles);
  // The machine's figures as SI doubles, read once; typed again in the result.
  const double vector_flops = m_.vector_flops.si();
  const double matrix_flops = m_.matrix_flops.si();
  const double main_bandwidth = m_.main_memory.bandwidth.si();
  const double main_latency = m_.main_memory.latency.si();
  const double stream_bandwidth = m_.stream_bandwidth.si();
  KernelTime t;
  const double flops = k.flops.si();
  double main_memory_bytes = k.bytes().si();
  t.wave_efficiency = tiles / (waves * bundles);
  const bool native = a.kernel == FlashKernel::kNative || a.kernel == FlashKernel::kCudnn;
  if (a.causal && !a.backward && !native && a.queries == 0) {
    // FlashAttention-2's (and -1's) causal forward launches its tiles in query order, the
    // lightest first (flash_fwd_kernel.h: m_block = blockIdx.x on the (m blocks, batch, heads)
    // grid), tile m doing m + 1 of the n key-block steps: greedy dispatch of these ramps leaves
    // the busiest SM about 0.62 of the heaviest tile after the mean (simulated for 1-1,024
    // problems of 4-128 tiles on 108-148 SMs: 0.55-0.70), or the heaviest tile alone when
    // everything fits one wave. FA-2's backward launches the heaviest key blocks first and
    // native kernels schedule persistently: neither has this tail.
    constexpr double kRampTail = 0.62;
    const double n = std::ceil(q / kBlockRows);
    const double even = static_cast<double>(a.batch) * n * (n + 1.0) / 2.0 / bundles;
    t.wave_efficiency = even / std::max(n, even + kRampTail * n);
  }
  constexpr double kSpecialFunctionShare = 1.0 / 16.0;  // exp lanes per FP32 FLOP per clock
  constexpr double kSoftmaxFlops = 3.0;                  // FP32 FLOPs per score beside the exp
  const double scores = static_cast<double>(a.batch) * q * s * (a.causal ? 0.5 : 1.0);
  const double softmax =
      vector_flops > 0.0
          ? scores * (1.0 / kSpecialFunctionShare + kSoftmaxFlops) / vector_flops
          : 0.0;
  // FlashAttention-1 at half the warp-level MMA instructions' ceiling (FlashKernel,
  // compute_graph.hpp): FlashAttention-2's rate where FlashAttention-2 reaches that ceiling
  // (Ampere), not FlashAttention-2's own further Hopper shortfall (warp_mma_fraction).
  const double kernel = native                               ? m_.attention_fraction
                        : a.kernel == FlashKernel::kFlash2 ? m_.warp_mma_fraction
                                                           : 0.5 * m_.warp_mma_peak_fraction;
  const double backward =
      native ? m_.attention_backward_fraction : m_.warp_mma_backward_fraction;
  const double rate = matrix_flops * kernel * (a.backward ? backward : 1.0);
  // cuDNN's causal kernels at their measured share of its full-mask rate. Under context
  // parallelism only the diagonal step of each rank's ring is masked (Transformer Engine's
  // AttnFuncWithCP runs the other cp - 1 steps' halves without a mask): 1/cp of its work.
  double masked = 0.0;
  if (a.kernel == FlashKernel::kCudnn && a.causal) masked = a.queries == 0 ? 1.0 : q / s;
  const double causal_share =
      a.backward ? m_.cudnn_causal_backward_fraction : m_.cudnn_causal_fraction;
  const double matrix = rate > 0.0 ? flops / rate * (1.0 - masked + masked / causal_share) : 0.0;
  const bool overlapped = native && m_.attention_overlap;
  const double compute =
      (overlapped ? std::max(matrix, softmax) : matrix + softmax) / t.wave_efficiency;
  const double memory = main_bandwidth > 0.0 ? main_memory_bytes / main_bandwidth : 0.0;
  const double dv = static_cast<double>(a.value_width());
  const double streamed = tiles * s * (dh + dv) * bytes_per_element(k.dtype).si() *
                          (a.causal ? 0.5 : 1.0) * (a.backward ? 2.0 : 1.0);
  const PerfLevel* last = m_.levels.empty() ? nullptr : &m_.levels.back();
  const double last_bandwidth = last ? last->bandwidth.si() : 0.0;
  const double on_chip = last && last_bandwidth > 0.0 ? streamed / last_bandwidth : 0.0;
  t.binding = -1;
  double slowest = compute;
  if (on_chip > slowest) {
    slowest = on_chip;
    t.binding = levels() - 1;
  }
  t.clocked = Time::from_si(slowest);
  t.clocked_binding = t.binding;
  t.memory = Time::from_si(memory);
  if (memory > slowest) {
    slowest = memory;
    t.binding = levels();
  }
  double device = slowest + main_latency;
  double fixed = main_latency;
  if (a.backward) {
    const double p = bytes_per_element(k.dtype).si();
    const double rows = static_cast<double>(a.batch) * q;
    const double accumulator = rows * dh * 4.0;
    const double passes = rows * dv * p * 2.0 + accumulator  // preprocess: O, dO; clear
                          + accumulator + rows * dh * p;     // postprocess: read, write dQ
    main_memory_bytes += 2.0 * accumulator;
    if (stream_bandwidth > 0.0) {
      device += passes / stream_bandwidth;
      fixed += passes / stream_bandwidth;
    }
    device += 2.0 * main_latency;
    fixed += 2.0 * main_latency;
  }
  t.device = Time::from_si(device);
  t.fixed = Time::from_si(fixed);
  t.compute = Time::from_si(compute);
  t.flops = Flops::from_si(flops);
  t.main_memory_bytes = Bytes::from_si(main_memory_bytes);
  t.core_energy = Energy::from_si(
      flops * (k.dtype == DataType::kFp8 ? m_.energy_per_fp8_flop : m_.energy_per_flop).si() +
      scores * (1.0 / kSpecialFunctionShare + kSoftmaxFlops) * m_.energy_per_vector_flop.si());
  t.on_chip_energy = Energy::from_si(
      last ? (streamed + main_memory_bytes) * last->energy_per_byte.si() : 0.0);
  t.main_memory_energy = Energy::from_si(main_memory_bytes * m_.main_memory.energy_per_byte.si());
  return t;
}

namespace {

// The kernel at a clock the power limiter chose (power_limiter.hpp): its clocked part and
// arithmetic take 1/rate as long, its energy on the core's supply scales with V².
KernelTime at_clock(KernelTime t, const Throttle& th, int memory_binding) {
  if (!th.throttled()) return t;
  t.clock = th.rate;
  t.compute = t.compute / th.rate;
  t.clocked = t.clocked / th.rate;
  t.device = std::max(t.clocked, t.memory) + t.fixed;
  t.binding = t.clocked >= t.memory ? t.clocked_binding : memory_binding;
  t.core_energy = t.core_energy * th.energy;
  t.on_chip_energy = t.on_chip_energy * th.energy;
  return t;
}

PowerWindow power_window(const KernelTime& t) {
  PowerWindow w;
  w.core_energy = (t.core_energy + t.on_chip_energy).si();
  w.memory_energy = t.main_memory_energy.si();
  if (t.clocked >= t.memory) {
    w.clocked = t.clocked.si();
    w.unclocked = t.fixed.si();
  } else {
    w.unclocked = (t.memory + t.fixed).si();
  }
  return w;
}

bool same(const PowerWindow& a, const PowerWindow& b) {
  return a.core_energy == b.core_energy && a.memory_energy == b.memory_energy &&
         a.clocked == b.clocked && a.unclocked == b.unclocked;
}

}  // namespace

KernelTime KernelTimer::time(const Kernel& k) {
  if (k.comm) return {};  // communication is timed by the system model (engine/system)
  if (k.attention) return limited(flash_attention_time(k));
  if (!k.gemm) return limited(stream_time(k));
  GemmEntry& e = gemm_entry(*k.gemm, k.dtype);
  const GemmPlan& p = e.plan;
  const double flops = k.flops.si();  // with any fused epilogue (bias add, bias gradient)
  const double main_memory_bytes = p.main_memory_bytes().si();
  KernelTime t;
  t.device = p.device_time;
  t.compute = p.compute_time;
  t.binding = p.binding;
  t.fixed = m_.main_memory.latency;
  t.memory = p.time[static_cast<std::size_t>(p.levels)];
  t.flops = Flops::from_si(flops);
  t.main_memory_bytes = p.main_memory_bytes();
  t.wave_efficiency = p.wave_efficiency;
  if (k.promoted_accumulation && k.dtype == DataType::kFp8 &&
      m_.fp8_promoted_accumulation_fraction < 1.0) {
    // The plan's compute at the promoted-accumulation share of the FP8 rate; its traffic and
    // tiling as planned for fast accumulation.
    const double compute = p.compute_time.si() / m_.fp8_promoted_accumulation_fraction;
    double worst = compute;
    t.binding = -1;
    for (int l = 0; l <= p.levels; ++l) {
      if (p.time[static_cast<std::size_t>(l)].si() > worst) {
        worst = p.time[static_cast<std::size_t>(l)].si();
        t.binding = l;
      }
    }
    t.compute = Time::from_si(compute);
    t.device = Time::from_si(worst + m_.main_memory.latency.si());
  }
  t.clocked = t.compute;
  t.clocked_binding = -1;
  for (int l = 0; l < p.levels; ++l) {
    if (p.time[static_cast<std::size_t>(l)] > t.clocked) {
      t.clocked = p.time[static_cast<std::size_t>(l)];
      t.clocked_binding = l;
    }
  }
  // Energy: the product's FLOPs on the matrix units, a fused epilogue's on the vector units;
  // each level's bytes as the plan serves them (GemmPlan::bytes).
  const double epilogue = std::max(0.0, flops - p.flops.si());
  const EnergyPerFlop per_flop = k.dtype == DataType::kFp8   ? m_.energy_per_fp8_flop
                                 : k.dtype == DataType::kFp4 ? m_.energy_per_fp4_flop
                                                             : m_.energy_per_flop;
  t.core_energy = Energy::from_si(p.flops.si() * per_flop.si() +
                                  epilogue * m_.energy_per_vector_flop.si());
  double on_chip_energy = 0.0;
  for (int l = 0; l < p.levels; ++l) {
    on_chip_energy += p.bytes[static_cast<std::size_t>(l)].si() *
                      m_.levels[static_cast<std::size_t>(l)].energy_per_byte.si();
  }
  t.on_chip_energy = Energy::from_si(on_chip_energy);
  t.main_memory_energy = Energy::from_si(main_memory_bytes * m_.main_memory.energy_per_byte.si());
  if (!m_.power_limit.active()) return t;
  if (e.settled_flops != flops || e.settled_promoted != k.promoted_accumulation) {
    e.throttle = settle(power_window(t));
    e.settled_flops = flops;
    e.settled_promoted = k.promoted_accumulation;
  }
  return at_clock(t, e.throttle, levels());
}

void KernelTimer::pace(KernelTime& t, double rate) {
  if (rate == 1.0 || !(rate > 0.0)) return;
  t.compute = t.compute / rate;
  t.clocked = t.clocked / rate;
  t.device = std::max(t.clocked, t.memory) + t.fixed;
  if (t.clocked >= t.memory) t.binding = t.clocked_binding;
}

Throttle KernelTimer::settle(const PowerWindow& w) {
  if (!exceeds(m_.power_limit, w)) return {};
  for (std::size_t i = 0; i < settled_count_; ++i) {
    if (same(settled_[i].window, w)) return settled_[i].throttle;
  }
  const Throttle th = pathfinder::settle(m_.power_limit, w);
  settled_[settled_next_] = {w, th};
  settled_next_ = (settled_next_ + 1) % settled_.size();
  settled_count_ = std::min(settled_count_ + 1, settled_.size());
  return th;
}

KernelTime KernelTimer::limited(const KernelTime& t) {
  if (!m_.power_limit.active()) return t;
  return at_clock(t, settle(power_window(t)), levels());
}

}  // namespace pathfinder
