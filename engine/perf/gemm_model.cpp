#include "engine/perf/gemm_model.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "engine/core/error.hpp"

namespace pathfinder {

std::string_view to_string(LoopOrder o) {
  switch (o) {
    case LoopOrder::kOutputStationary: return "output-stationary";
    case LoopOrder::kWeightStationary: return "weight-stationary";
    case LoopOrder::kActivationStationary: return "activation-stationary";
  }
  return "?";
}

namespace {

// Output tiles of the parallel level are at most this elongated unless a side is the whole
// problem extent (skinny GEMMs): library kernels range from 256x64 to 64x256 and beyond that
// traffic only grows.
constexpr double kMaxAspect = 8.0;
constexpr std::array<LoopOrder, 3> kOrders = {LoopOrder::kOutputStationary,
                                              LoopOrder::kWeightStationary,
                                              LoopOrder::kActivationStationary};
constexpr std::array<Dataflow, 3> kDataflows = {
    Dataflow::kOutputStationary, Dataflow::kWeightStationary, Dataflow::kActivationStationary};

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
// ⌈extent / side⌉ in floating point (exact for the integer sizes GEMMs have, below 2^53).
double tiles_along(double extent, std::int64_t side) {
  return std::ceil(extent / static_cast<double>(side));
}
std::int64_t round_up(std::int64_t a, std::int64_t g) { return ceil_div(a, g) * g; }

}  // namespace

namespace gemm_detail {

// Element sizes: inputs and the final output in the kernel's type; partial sums and resident
// accumulators in fp32 below fp32 (tensor cores and MXUs accumulate in fp32). `c_in`: the
// output's bytes read before it is written, for C += A·B (GemmShape::accumulate), else 0.
struct Problem {
  std::int64_t batch, m, n, k;
  double e, c, acc;
  DataType type = DataType::kFp16;  // the operands': FP8 and FP4 at the arrays' own rates
  double c_in = 0.0;
};

// FP8 GEMMs (Transformer Engine, Micikevicius et al. 2022, "FP8 Formats for Deep Learning")
// read 1-byte operands and write their output in 16 bits (BF16), accumulating in FP32; FP4
// (NVFP4) ones half-byte operands, likewise (their block scales, 1/16 byte per element, not
// counted).
// Accumulating into a buffer (cuBLASLt with beta = 1, Megatron's wgrad_gemm_accum_fp32/_fp16,
// Transformer Engine's accumulate=True into main_grad): C read once and written once per output
// tile in the buffer's type.
Problem make_problem(const GemmShape& s, DataType dt) {
  const double e = bytes_per_element(dt).si();
  const bool quantized = dt == DataType::kFp8 || dt == DataType::kFp4;
  if (s.accumulate > 0) {
    const double a = static_cast<double>(s.accumulate);
    return {s.batch, s.m, s.n, s.k, e, a, std::max(e, 4.0), dt, a};
  }
  return {s.batch, s.m, s.n, s.k, e, quantized ? 2.0 : e, std::max(e, 4.0), dt};
}

// The machine facts the model reads, precomputed once per call.
struct Ctx {
  const PerfMachine& mach;
  Problem p;
  int levels = 0;
  int parallel = -1;       // outermost non-global level, -1 when all are global
  int instances = 1;       // of the parallel level (all MCUs when parallel == -1)
  int mcus_per_instance = 1;
  int total_mcus = 1;
  std::int64_t gm = 1, gn = 1;  // tile granularity: the MCU array
  std::array<double, kMaxPerfLevels> nested{};
  // Per level, main memory last (index levels): its bandwidth, and whether it serves every
  // instance at once (global, outside the parallel level, or main memory) or loses the share
  // a partial wave leaves idle. One MCU's FLOP rate. Read by every candidate's timing.
  std::array<double, kMaxPerfLevels + 1> bandwidth{};
  std::array<bool, kMaxPerfLevels + 1> shared{};
  double mcu_rate = 0.0;

  // The arrays' rate for this problem's operands.
  // Without FP4 units FP4 operands run at the FP8 rate (the training models refuse them
  // there: GptTraining::evaluate, GemmTraining::evaluate).
  [[nodiscard]] double flops() const {
    if (p.type == DataType::kFp4 && mach.fp4_matrix_flops.si() > 0.0) {
      return mach.fp4_matrix_flops.si();
    }
    const bool quantized = p.type == DataType::kFp8 || p.type == DataType::kFp4;
    return quantized && mach.fp8_matrix_flops.si() > 0.0 ? mach.fp8_matrix_flops.si()
                                                         : mach.matrix_flops.si();
  }

  Ctx(const PerfMachine& m, const Problem& prob) : mach(m), p(prob) {
    levels = static_cast<int>(m.levels.size());
    PF_ASSERT(levels <= kMaxPerfLevels);  // more on-chip levels than a plan holds
    total_mcus = std::max(1, m.bundles * m.mcus_per_bundle);
    for (int i = levels - 1; i >= 0; --i) {
      if (m.levels[static_cast<std::size_t>(i)].scope != Scope::kGlobal) {
        parallel = i;
        break;
      }
    }
    instances = parallel >= 0 ? std::max(1, level(parallel).instances) : total_mcus;
    mcus_per_instance = std::max(1, total_mcus / instances);
    gm = m.array_rows;
    gn = m.array_cols;
    for (int i = 0; i < levels; ++i) nested[static_cast<std::size_t>(i)] = m.nested_capacity(i).si();
    for (int i = 0; i <= levels; ++i) {
      const PerfLevel& lv = i < levels ? level(i) : m.main_memory;
      bandwidth[static_cast<std::size_t>(i)] = lv.bandwidth.si();
      shared[static_cast<std::size_t>(i)] =
          lv.scope == Scope::kGlobal || i > parallel || i == levels;
    }
    mcu_rate = flops() / total_mcus;
  }
  [[nodiscard]] const PerfLevel& level(int i) const {
    return mach.levels[static_cast<std::size_t>(i)];
  }
};

}  // namespace gemm_detail

namespace {

using gemm_detail::Ctx;
using gemm_detail::make_problem;
using gemm_detail::Problem;

// Bytes moved across the boundary above a tile held at one level (see the header's formulas),
// for the whole problem. `kspan` is the k extent over which the tile's outputs stay resident.
double boundary_bytes(const Problem& p, const GemmTile& t, const GemmTile& parent, LoopOrder o,
                      std::int64_t kspan) {
  const double m = static_cast<double>(p.m), n = static_cast<double>(p.n);
  const double k = static_cast<double>(p.k);
  const double a_reads =
      tiles_along(n, o == LoopOrder::kActivationStationary ? parent.n : t.n);
  const double b_reads = tiles_along(m, o == LoopOrder::kWeightStationary ? parent.m : t.m);
  const double passes = tiles_along(k, kspan);
  const double bytes = p.e * m * k * a_reads + p.e * k * n * b_reads + (p.c + p.c_in) * m * n +
                       2.0 * p.acc * m * n * (passes - 1.0);
  return bytes * static_cast<double>(p.batch);
}

// Largest n side a tile with m side `m` may take at a level under an order (with k = 1): the
// footprint rules of max_k solved for n.
double max_n(const Ctx& c, int lvl, std::int64_t m, LoopOrder o) {
  const double cap = c.level(lvl).capacity.si();
  const double e = c.p.e, acc = c.p.acc, md = static_cast<double>(m);
  switch (o) {
    case LoopOrder::kOutputStationary:
      return std::min(cap / (2.0 * e) - md,
                      (c.nested[static_cast<std::size_t>(lvl)] - 2.0 * e * md) / (acc * md + 2.0 * e));
    case LoopOrder::kWeightStationary: return (cap - 2.0 * e * md) / (e + 2.0 * acc * md);
    case LoopOrder::kActivationStationary: return (cap - e * md) / (2.0 * e + 2.0 * acc * md);
  }
  return 0.0;
}

// Largest k a tile (m, n) may take at a level under an order, or 0 when even k = 1 does not fit.
double max_k(const Ctx& c, int lvl, std::int64_t m, std::int64_t n, LoopOrder o) {
  const double cap = c.level(lvl).capacity.si();
  const double e = c.p.e, acc = c.p.acc;
  const double md = static_cast<double>(m), nd = static_cast<double>(n);
  switch (o) {
    case LoopOrder::kOutputStationary: {
      // Streamed A and B slices double-buffered in the level; accumulators in the level and
      // the levels inside it.
      const double room = std::min(cap, c.nested[static_cast<std::size_t>(lvl)] - acc * md * nd);
      return room / (2.0 * e * (md + nd));
    }
    case LoopOrder::kWeightStationary:  // B tile resident; A and partial-C slices streamed
      return (cap - 2.0 * acc * md * nd) / (e * nd + 2.0 * e * md);
    case LoopOrder::kActivationStationary:  // A tile resident; B and partial-C slices streamed
      return (cap - 2.0 * acc * md * nd) / (e * md + 2.0 * e * nd);
  }
  return 0.0;
}

// The k side of a tile: the whole parent k when it fits, else the largest power of two.
std::int64_t choose_k(double limit, std::int64_t parent_k) {
  if (limit >= static_cast<double>(parent_k)) return parent_k;
  if (limit < 1.0) return 0;
  return static_cast<std::int64_t>(std::bit_floor(static_cast<std::uint64_t>(limit)));
}

bool tile_fits(const Ctx& c, int lvl, const GemmTile& t, LoopOrder o) {
  return t.m > 0 && t.n > 0 && t.k > 0 && max_k(c, lvl, t.m, t.n, o) >= static_cast<double>(t.k);
}

// Candidate sides for a dimension: granule·2^j below the padded extent, and the extent itself.
struct Sides {
  std::array<std::int64_t, 48> v{};
  int count = 0;
};
Sides sides(std::int64_t extent, std::int64_t granule, std::int64_t bound) {
  Sides s;
  const std::int64_t top = std::min(round_up(extent, granule), bound);
  for (std::int64_t x = granule; x < top && s.count < 47; x *= 2) s.v[static_cast<std::size_t>(s.count++)] = x;
  s.v[static_cast<std::size_t>(s.count++)] = std::max<std::int64_t>(top, 1);
  return s;
}

// Register-file accesses of the MCU arrays (paper eq. 5):
//   #RegAccess = F·(Nx·Ny + K·Nx + K·Ny) / (2·K·Nx·Ny)
// with reuse K the number of times the stationary operand is used per load: the rows streamed
// past resident weights (weight-stationary: the tile's m), the columns past resident
// activations (n), or the products accumulated into a resident output (k). Counting loads
// directly gives the same expression: stationary operand F/(2K), the two streamed ones
// F/(2·Nx) and F/(2·Ny). The reference code computes F·(1/N + 1/(2KN)) instead (§3.6).
double register_accesses_per_flop(const Ctx& c, const GemmTile& t, Dataflow d) {
  const double nx = c.mach.array_rows, ny = c.mach.array_cols;
  double reuse = 1.0;
  switch (d) {
    case Dataflow::kWeightStationary: reuse = static_cast<double>(t.m); break;
    case Dataflow::kActivationStationary: reuse = static_cast<double>(t.n); break;
    default: reuse = static_cast<double>(t.k); break;
  }
  reuse = std::max(reuse, 1.0);
  return (nx * ny + reuse * nx + reuse * ny) / (2.0 * reuse * nx * ny);
}

double register_bytes(const Ctx& c, const GemmTile& t, Dataflow d, double flops) {
  const double eq5 = flops * register_accesses_per_flop(c, t, d) * c.p.e;
  // A problem narrower than the array still reads every operand once.
  const double m = static_cast<double>(c.p.m), n = static_cast<double>(c.p.n),
               k = static_cast<double>(c.p.k);
  const double compulsory =
      (c.p.e * (m * k + k * n) + c.p.c * m * n) * static_cast<double>(c.p.batch);
  return std::max(eq5, compulsory);
}

std::int64_t parallel_tiles(const Ctx& c, const GemmTile& t) {
  return c.p.batch * ceil_div(c.p.m, t.m) * ceil_div(c.p.n, t.n);
}

// Waves of output tiles over the parallel instances, each tile's array blocks spread over the
// instance's MCUs, every block taking k cycles: the tiles' padding and the idle instances of a
// last partial wave cost time (wave quantization).
// The compute time times one MCU's FLOP rate: the FLOPs one MCU performs, padding included.
double compute_work(const Ctx& c, const GemmTile& t) {
  const std::int64_t waves = ceil_div(parallel_tiles(c, t), c.instances);
  const std::int64_t blocks = ceil_div(t.m, c.gm) * ceil_div(t.n, c.gn);
  const double cycles = static_cast<double>(ceil_div(blocks, c.mcus_per_instance)) *
                        static_cast<double>(c.p.k);
  return static_cast<double>(waves) * cycles * 2.0 * static_cast<double>(c.gm * c.gn);
}

// The k extent over which the parallel level's outputs stay resident: the whole problem's k
// when every level outside keeps its outputs in place, else the nearest one's k side.
std::int64_t parent_kspan(const Ctx& c, const GemmPlan& plan) {
  std::int64_t kspan = c.p.k;
  for (int i = c.levels - 1; i > c.parallel; --i) {
    if (plan.orders[static_cast<std::size_t>(i)] != LoopOrder::kOutputStationary) {
      kspan = plan.tiles[static_cast<std::size_t>(i)].k;
    }
  }
  return kspan;
}

// Fills the figures of a plan whose tiles, orders and dataflow are set that depend on the
// machine's capacities and counts alone: the traffic each level serves, the parallel tiles
// and their waves.
void evaluate_bytes(const Ctx& c, GemmPlan& plan) {
  const Problem& p = c.p;
  const int L = c.levels;
  plan.levels = L;
  plan.parallel_level = c.parallel;
  plan.flops = Flops::from_si(2.0 * static_cast<double>(p.batch) * static_cast<double>(p.m) *
                              static_cast<double>(p.n) * static_cast<double>(p.k));
  plan.bytes.fill(Bytes{});

  // Traffic each level (and main memory) serves to the level inside it.
  const GemmTile whole{p.m, p.n, p.k};
  std::int64_t kspan = p.k;
  for (int i = L - 1; i >= 0; --i) {
    const auto u = static_cast<std::size_t>(i);
    const GemmTile& parent = i + 1 < L ? plan.tiles[u + 1] : whole;
    if (plan.orders[u] != LoopOrder::kOutputStationary) kspan = plan.tiles[u].k;
    plan.bytes[u + 1] =
        Bytes::from_si(boundary_bytes(p, plan.tiles[u], parent, plan.orders[u], kspan));
  }
  if (L > 0) {
    plan.bytes[0] =
        Bytes::from_si(register_bytes(c, plan.tiles[0], plan.dataflow, plan.flops.si()));
  } else {
    plan.bytes[0] = Bytes::from_si(register_bytes(c, whole, plan.dataflow, plan.flops.si()));
  }
  // Output tiles of the parallel level spread over its instances in waves.
  const GemmTile pt = c.parallel >= 0 ? plan.tiles[static_cast<std::size_t>(c.parallel)]
                                      : GemmTile{c.gm, c.gn, p.k};
  plan.parallel_tiles = parallel_tiles(c, pt);
  plan.waves = ceil_div(plan.parallel_tiles, c.instances);
}

// The parallel level's tile of a plan (the MCU array's when there is none).
GemmTile parallel_tile(const Ctx& c, const GemmPlan& plan) {
  return c.parallel >= 0 ? plan.tiles[static_cast<std::size_t>(c.parallel)]
                         : GemmTile{c.gm, c.gn, c.p.k};
}

// The rest, from the machine's rates and bandwidths: compute time (each tile's array blocks
// spread over the instance's MCUs; `work` is compute_work of the plan's parallel tile), every
// level's time and the slowest.
void evaluate_times(const Ctx& c, GemmPlan& plan, double work) {
  const PerfMachine& m = c.mach;
  const int L = c.levels;
  plan.time.fill(Time{});
  const double compute = work / c.mcu_rate;
  plan.compute_time = Time::from_si(compute);
  plan.wave_efficiency = compute > 0.0 ? plan.flops.si() / (compute * c.flops()) : 1.0;

  // Per-instance levels lose the bandwidth of instances a partial wave leaves idle.
  const double active = static_cast<double>(plan.parallel_tiles) /
                        (static_cast<double>(plan.waves) * c.instances);
  double worst = compute;
  plan.binding = -1;
  for (int i = 0; i <= L; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const double bw = c.bandwidth[u] * (c.shared[u] ? 1.0 : std::min(1.0, active));
    const double b = plan.bytes[u].si();
    const double t = bw > 0.0 ? b / bw : (b > 0.0 ? INFINITY : 0.0);
    plan.time[u] = Time::from_si(t);
    if (t > worst) {
      worst = t;
      plan.binding = i;
    }
  }
  // The first operands reach the MCUs one main-memory latency after the kernel starts.
  plan.device_time = Time::from_si(worst + m.main_memory.latency.si());
}

// evaluate_times' device time alone, with the same arithmetic, for a plan not yet chosen
// whose compute_work is `work`.
double device_time_of(const Ctx& c, const GemmPlan& plan, double work) {
  const int L = c.levels;
  const double active = static_cast<double>(plan.parallel_tiles) /
                        (static_cast<double>(plan.waves) * c.instances);
  double worst = work / c.mcu_rate;
  for (int i = 0; i <= L; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const double bw = c.bandwidth[u] * (c.shared[u] ? 1.0 : std::min(1.0, active));
    const double b = plan.bytes[u].si();
    const double t = bw > 0.0 ? b / bw : (b > 0.0 ? INFINITY : 0.0);
    if (t > worst) worst = t;
  }
  return worst + c.mach.main_memory.latency.si();
}

void evaluate(const Ctx& c, GemmPlan& plan) {
  evaluate_bytes(c, plan);
  evaluate_times(c, plan, compute_work(c, parallel_tile(c, plan)));
}

double total_bytes(const GemmPlan& plan) {
  double s = 0.0;
  for (int i = 0; i <= plan.levels; ++i) s += plan.bytes[static_cast<std::size_t>(i)].si();
  return s;
}

// Outer (global) levels: the tile and order with the least traffic across the boundary above,
// each level inside its parent, outermost first. For each order and m side, the largest
// fitting n side wins (traffic falls with n), so the search is linear in the m sides. The
// level just outside the parallel one also records its best tile per order in `choices`: its
// tile bounds the parallel tiles, so the caller tries each.
struct OuterChoice {
  bool valid = false;
  GemmTile tile;
  double bytes = INFINITY;
};
void search_outer(const Ctx& c, GemmPlan& plan, std::array<OuterChoice, 3>& choices) {
  const Problem& p = c.p;
  for (int i = c.levels - 1; i > c.parallel; --i) {
    const auto u = static_cast<std::size_t>(i);
    const GemmTile parent = i + 1 < c.levels ? plan.tiles[u + 1] : GemmTile{p.m, p.n, p.k};
    const Sides ms = sides(p.m, c.gm, parent.m);
    const Sides ns = sides(p.n, c.gn, parent.n);
    std::array<OuterChoice, 3> best{};
    for (std::size_t oi = 0; oi < kOrders.size(); ++oi) {
      const LoopOrder o = kOrders[oi];
      for (int a = 0; a < ms.count; ++a) {
        const std::int64_t tm = ms.v[static_cast<std::size_t>(a)];
        const double n_limit = max_n(c, i, tm, o);
        for (int b = ns.count - 1; b >= 0; --b) {
          const std::int64_t tn = ns.v[static_cast<std::size_t>(b)];
          if (static_cast<double>(tn) > n_limit) continue;
          const std::int64_t tk = choose_k(max_k(c, i, tm, tn, o), parent.k);
          if (tk == 0) continue;
          const GemmTile t{tm, tn, tk};
          const std::int64_t kspan = o == LoopOrder::kOutputStationary ? parent.k : tk;
          const double bytes = boundary_bytes(p, t, parent, o, kspan);
          if (bytes < best[oi].bytes) best[oi] = {true, t, bytes};
          break;  // smaller n only adds traffic for this m and order
        }
      }
    }
    std::size_t win = 0;
    for (std::size_t oi = 1; oi < best.size(); ++oi) {
      if (best[oi].bytes < best[win].bytes) win = oi;
    }
    if (best[win].valid) {
      plan.tiles[u] = best[win].tile;
      plan.orders[u] = kOrders[win];
    } else {  // nothing fits: the smallest tile, the plan reports the excess
      plan.tiles[u] = {std::min(c.gm, parent.m), std::min(c.gn, parent.n), 1};
      plan.orders[u] = LoopOrder::kOutputStationary;
    }
    if (i == c.parallel + 1) choices = best;
  }
}

// Inner levels (inside the parallel tile): output-stationary tiles split the parent's output
// among the MCUs of one instance when the level is per MCU, each the largest that fits.
void fill_inner(const Ctx& c, GemmPlan& plan) {
  for (int i = c.parallel - 1; i >= 0; --i) {
    const auto u = static_cast<std::size_t>(i);
    const GemmTile parent = plan.tiles[u + 1];
    const int share = c.level(i).scope == Scope::kMcu &&
                              c.level(i + 1).scope == Scope::kBundle
                          ? c.mcus_per_instance
                          : 1;
    GemmTile best{};
    double best_bytes = INFINITY;
    // Split the parent's output a x b ways with a·b = share (a a power of two dividing it).
    for (int a = 1; a <= share; a *= 2) {
      if (share % a != 0) continue;
      const int b = share / a;
      const std::int64_t bm = std::max<std::int64_t>(1, ceil_div(parent.m, a));
      const std::int64_t bn = std::max<std::int64_t>(1, ceil_div(parent.n, b));
      std::int64_t tm = bm, tn = bn;
      std::int64_t tk = choose_k(max_k(c, i, tm, tn, LoopOrder::kOutputStationary), parent.k);
      while (tk == 0 && (tm > 1 || tn > 1)) {  // halve the longer side until it fits
        if (tm >= tn) tm = std::max<std::int64_t>(1, tm / 2);
        else tn = std::max<std::int64_t>(1, tn / 2);
        tk = choose_k(max_k(c, i, tm, tn, LoopOrder::kOutputStationary), parent.k);
      }
      if (tk == 0) continue;
      const GemmTile t{tm, tn, tk};
      const double bytes = boundary_bytes(c.p, t, parent, LoopOrder::kOutputStationary, c.p.k);
      if (bytes < best_bytes) {
        best_bytes = bytes;
        best = t;
      }
    }
    if (!(best_bytes < INFINITY)) best = {1, 1, 1};
    plan.tiles[u] = best;
    plan.orders[u] = LoopOrder::kOutputStationary;
  }
}

void choose_dataflow(const Ctx& c, GemmPlan& plan) {
  if (c.mach.dataflow != Dataflow::kBest) {
    plan.dataflow = c.mach.dataflow;
    return;
  }
  const GemmTile t = c.levels > 0 ? plan.tiles[0] : GemmTile{c.p.m, c.p.n, c.p.k};
  double best = INFINITY;
  for (Dataflow d : kDataflows) {
    const double b = register_accesses_per_flop(c, t, d);
    if (b < best) {
      best = b;
      plan.dataflow = d;
    }
  }
}

}  // namespace

// The parallel level: every fitting output tile inside the tile of the level outside it, each
// with its inner levels filled; the least time wins. Seeded with the largest square-ish tile
// that fits, then every tile within the aspect limit (or with a side spanning the problem),
// pruned by two exact parts of the time: compute, and the traffic the level above serves,
// which only grows as the n side shrinks.
const GemmSearch::Built GemmSearch::kNoTile{};

void GemmSearch::search_parallel(const Ctx& c, const Trial& t, Best& best) const {
  const int m_count = static_cast<int>(t.m_count), n_count = static_cast<int>(t.n_count);
  const double block_time = static_cast<double>(c.p.k) * 2.0 * static_cast<double>(c.gm * c.gn) *
                            c.total_mcus / c.flops();
  const PerfLevel& above = c.parallel + 1 < c.levels ? c.level(c.parallel + 1) : c.mach.main_memory;
  const double inv_bw = 1.0 / above.bandwidth.si();
  const double latency = c.mach.main_memory.latency.si();
  // Every row would be skipped by its compute bound below: the trial is skipped whole.
  if (best.built != nullptr && t.least_blocks * block_time + latency >= best.time) return;
  const auto consider = [&](std::size_t ia, std::size_t ib) {
    const Built* p = t.built[ia * t.n_count + ib].load(std::memory_order_acquire);
    if (p == nullptr) p = candidate(c, t, ia, ib);
    if (p == &kNoTile) return;
    const double time = device_time_of(c, p->plan, p->work);
    // The least time wins, ties broken by the least traffic, then by the order tried.
    if (best.built == nullptr || time < best.time ||
        (time == best.time && total_bytes(p->plan) < total_bytes(best.built->plan))) {
      best.built = p;
      best.time = time;
    }
  };
  if (best.built == nullptr) {
    for (int a = m_count - 1; a >= 0 && best.built == nullptr; --a) {
      const auto ia = static_cast<std::size_t>(a);
      for (int b = n_count - 1; b >= 0; --b) {
        const auto ib = static_cast<std::size_t>(b);
        if (static_cast<double>(t.n_side(ib)) > t.n_limit[ia] || t.n_side(ib) > t.m_side(ia)) {
          continue;
        }
        consider(ia, ib);
        break;
      }
    }
  }
  for (int a = m_count - 1; a >= 0; --a) {
    const auto ia = static_cast<std::size_t>(a);
    // Every slot of the row would be skipped by its compute bound (or earlier): skip it whole.
    if (best.built != nullptr && t.row_blocks[ia] * block_time + latency >= best.time) continue;
    const double tm = static_cast<double>(t.m_side(ia));
    const bool m_whole = t.m_side(ia) >= c.p.m;
    const double n_limit = std::min(t.n_limit[ia], m_whole ? INFINITY : tm * kMaxAspect);
    for (int b = t.row_first[ia]; b >= 0; --b) {
      const auto ib = static_cast<std::size_t>(b);
      const double tn = static_cast<double>(t.n_side(ib));
      if (tn > n_limit) continue;
      if (tm > tn * kMaxAspect && !m_whole && t.n_side(ib) < c.p.n) break;
      if (best.built != nullptr) {
        const double traffic =
            (t.mk * t.n_tiles(ib) + t.kn * t.m_tiles(ia) + t.fixed) * inv_bw + latency;
        if (traffic >= best.time) break;
        const double compute = t.blocks[ia * t.n_count + ib] * block_time + latency;
        if (compute >= best.time) continue;
      }
      consider(ia, ib);
    }
  }
}

// A candidate's plan: its trial's outer tiles, its parallel tile, the inner levels filled, the
// dataflow chosen and the traffic counted; built by the first search that reaches it.
const GemmSearch::Built* GemmSearch::candidate(const Ctx& c, const Trial& t, std::size_t ia,
                                               std::size_t ib) const {
  const std::size_t slot = ia * t.n_count + ib;
  const std::lock_guard<std::mutex> lock(mutex_);
  if (const Built* p = t.built[slot].load(std::memory_order_relaxed)) return p;
  const std::int64_t tm = t.m_side(ia), tn = t.n_side(ib);
  const std::int64_t tk =
      choose_k(max_k(c, c.parallel, tm, tn, LoopOrder::kOutputStationary), t.parent.k);
  if (tk == 0) {
    t.built[slot].store(&kNoTile, std::memory_order_release);
    return &kNoTile;
  }
  if (built_ % kChunk == 0) chunks_.push_back(std::make_unique<Built[]>(kChunk));
  Built& b = chunks_.back()[built_++ % kChunk];
  b.plan = t.plan;
  const auto u = static_cast<std::size_t>(c.parallel);
  const GemmTile tile{tm, tn, tk};
  b.plan.tiles[u] = tile;
  b.plan.orders[u] = LoopOrder::kOutputStationary;
  fill_inner(c, b.plan);
  choose_dataflow(c, b.plan);
  evaluate_bytes(c, b.plan);
  b.work = compute_work(c, tile);
  t.built[slot].store(&b, std::memory_order_release);
  return &b;
}

GemmSearch::GemmSearch(const PerfMachine& m, const GemmShape& shape, DataType dtype)
    : shape_(shape), dtype_(dtype) {
  PF_ASSERT(shape.batch > 0 && shape.m > 0 && shape.n > 0 && shape.k > 0);
  const Ctx c(m, make_problem(shape, dtype));
  outer_.levels = c.levels;
  std::array<OuterChoice, 3> choices{};
  search_outer(c, outer_, choices);
  const auto add_trial = [&](const GemmPlan& plan) {
    const auto u = static_cast<std::size_t>(c.parallel);
    Trial t;
    t.plan = plan;
    t.parent = c.parallel + 1 < c.levels ? plan.tiles[u + 1] : GemmTile{c.p.m, c.p.n, c.p.k};
    const Sides ms = sides(c.p.m, c.gm, t.parent.m);
    const Sides ns = sides(c.p.n, c.gn, t.parent.n);
    t.m_count = static_cast<std::size_t>(ms.count);
    t.n_count = static_cast<std::size_t>(ns.count);
    t.sides.assign(ms.v.begin(), ms.v.begin() + ms.count);
    t.sides.insert(t.sides.end(), ns.v.begin(), ns.v.begin() + ns.count);
    t.per_side.resize(2 * (t.m_count + t.n_count));
    for (std::size_t i = 0; i < t.m_count; ++i) {
      t.per_side[i] = static_cast<double>(ceil_div(c.p.m, ms.v[i]));
      t.per_side[t.m_count + i] = static_cast<double>(ceil_div(ms.v[i], c.gm));
    }
    for (std::size_t j = 0; j < t.n_count; ++j) {
      t.per_side[2 * t.m_count + j] = static_cast<double>(ceil_div(c.p.n, ns.v[j]));
      t.per_side[2 * t.m_count + t.n_count + j] = static_cast<double>(ceil_div(ns.v[j], c.gn));
    }
    const double batch = static_cast<double>(c.p.batch);
    t.mk = static_cast<double>(c.p.m) * static_cast<double>(c.p.k) * c.p.e * batch;
    t.kn = static_cast<double>(c.p.k) * static_cast<double>(c.p.n) * c.p.e * batch;
    t.fixed = boundary_bytes(c.p, GemmTile{c.p.m, c.p.n, c.p.k}, t.parent,
                             LoopOrder::kOutputStationary, parent_kspan(c, t.plan)) -
              t.mk - t.kn;  // C's share, the same for every tile
    t.n_limit.resize(t.m_count);
    for (std::size_t i = 0; i < t.m_count; ++i) {
      t.n_limit[i] = max_n(c, c.parallel, ms.v[i], LoopOrder::kOutputStationary);
    }
    const std::size_t slots = t.m_count * t.n_count;
    t.blocks.resize(slots);
    const double inv_instances = 1.0 / c.instances;
    const double inv_mcus = 1.0 / c.mcus_per_instance;
    for (std::size_t i = 0; i < t.m_count; ++i) {
      for (std::size_t j = 0; j < t.n_count; ++j) {
        const double waves = std::ceil(batch * t.m_tiles(i) * t.n_tiles(j) * inv_instances);
        t.blocks[i * t.n_count + j] = waves * std::ceil(t.m_blocks(i) * t.n_blocks(j) * inv_mcus);
      }
    }
    t.row_blocks.assign(t.m_count, INFINITY);
    t.row_first.assign(t.m_count, -1);
    for (std::size_t i = 0; i < t.m_count; ++i) {
      const double tm = static_cast<double>(t.m_side(i));
      const double n_limit =
          std::min(t.n_limit[i], t.m_side(i) >= c.p.m ? INFINITY : tm * kMaxAspect);
      int b = static_cast<int>(t.n_count) - 1;
      while (b >= 0 && static_cast<double>(t.n_side(static_cast<std::size_t>(b))) > n_limit) --b;
      t.row_first[i] = b;
      for (std::size_t j = 0; j < t.n_count; ++j) {
        t.row_blocks[i] = std::min(t.row_blocks[i], t.blocks[i * t.n_count + j]);
      }
      t.least_blocks = std::min(t.least_blocks, t.row_blocks[i]);
    }
    t.built = std::make_unique<std::atomic<const Built*>[]>(slots);
    for (std::size_t i = 0; i < slots; ++i) t.built[i].store(nullptr, std::memory_order_relaxed);
    trials_.push_back(std::move(t));
  };
  if (c.parallel >= 0 && c.parallel + 1 < c.levels) {
    // Each order of the level outside bounds the parallel tiles differently; orders giving it
    // the same tile and output residency are searched once.
    const auto u = static_cast<std::size_t>(c.parallel + 1);
    for (std::size_t oi = 0; oi < choices.size(); ++oi) {
      if (!choices[oi].valid) continue;
      bool repeat = false;
      for (std::size_t j = 0; j < oi; ++j) {
        repeat = repeat || (choices[j].valid && choices[j].tile == choices[oi].tile &&
                            (kOrders[j] == LoopOrder::kOutputStationary) ==
                                (kOrders[oi] == LoopOrder::kOutputStationary));
      }
      if (repeat) continue;
      GemmPlan trial = outer_;
      trial.tiles[u] = choices[oi].tile;
      trial.orders[u] = kOrders[oi];
      add_trial(trial);
    }
  } else if (c.parallel >= 0) {
    add_trial(outer_);
  }
}

GemmSearch::Rates GemmSearch::rates_of(const Ctx& c) {
  Rates r{};
  r[0] = c.flops();
  r[1] = c.mach.main_memory.bandwidth.si();
  r[2] = c.mach.main_memory.latency.si();
  for (int i = 0; i < c.levels; ++i) r[static_cast<std::size_t>(3 + i)] = c.level(i).bandwidth.si();
  return r;
}

GemmPlan GemmSearch::time(const PerfMachine& m) const {
  GemmPlan plan;
  time(m, plan);
  return plan;
}

void GemmSearch::time(const PerfMachine& m, GemmPlan& out) const {
  const Ctx c(m, make_problem(shape_, dtype_));
  const Rates rates = rates_of(c);
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i = 0; i < timed_count_; ++i) {
      if (timed_[i].rates == rates) {
        out = timed_[i].plan;
        return;
      }
    }
  }
  search(c, out);
  const std::lock_guard<std::mutex> lock(mutex_);
  Timed& t = timed_[timed_next_];
  t.rates = rates;
  t.plan = out;
  timed_next_ = (timed_next_ + 1) % kTimed;
  timed_count_ = std::min(timed_count_ + 1, kTimed);
}

void GemmSearch::search(const Ctx& c, GemmPlan& out) const {
  Best best;
  for (const Trial& t : trials_) search_parallel(c, t, best);
  if (best.built != nullptr) {
    out = best.built->plan;
    evaluate_times(c, out, best.built->work);  // the candidate's work, counted when built
    return;
  }
  // No parallel level, or nothing fits it: the smallest tile; fits_gemm_plan reports excess.
  out = outer_;
  if (c.parallel >= 0) out.tiles[static_cast<std::size_t>(c.parallel)] = {c.gm, c.gn, 1};
  fill_inner(c, out);
  choose_dataflow(c, out);
  evaluate(c, out);
}

GemmPlan plan_gemm(const PerfMachine& m, const GemmShape& shape, DataType dtype) {
  return GemmSearch(m, shape, dtype).time(m);
}

GemmPlan evaluate_gemm(const PerfMachine& m, const GemmShape& shape, DataType dtype,
                       const std::array<GemmTile, kMaxPerfLevels>& tiles,
                       const std::array<LoopOrder, kMaxPerfLevels>& orders, Dataflow dataflow) {
  const Ctx c(m, make_problem(shape, dtype));
  GemmPlan plan;
  plan.tiles = tiles;
  plan.orders = orders;
  plan.dataflow = dataflow;
  if (dataflow == Dataflow::kBest) {
    Ctx best_ctx = c;
    choose_dataflow(best_ctx, plan);
  }
  evaluate(c, plan);
  return plan;
}

double outer_level_traffic(const PerfMachine& m, const GemmShape& shape, DataType dtype,
                           int level, const GemmTile& tile, LoopOrder order) {
  const Ctx c(m, make_problem(shape, dtype));
  if (!tile_fits(c, level, tile, order)) return INFINITY;
  const GemmTile whole{shape.m, shape.n, shape.k};
  const std::int64_t kspan = order == LoopOrder::kOutputStationary ? shape.k : tile.k;
  return boundary_bytes(c.p, tile, whole, order, kspan);
}

bool fits_gemm_plan(const PerfMachine& m, const GemmShape& shape, DataType dtype,
                    const GemmPlan& plan) {
  const Ctx c(m, make_problem(shape, dtype));
  GemmTile parent{shape.m, shape.n, shape.k};
  for (int i = c.levels - 1; i >= 0; --i) {
    const GemmTile& t = plan.tiles[static_cast<std::size_t>(i)];
    // Tiles nest within their parent (padded to the array granularity at most).
    if (t.m > round_up(parent.m, c.gm) || t.n > round_up(parent.n, c.gn) || t.k > parent.k) {
      return false;
    }
    if (!tile_fits(c, i, t, plan.orders[static_cast<std::size_t>(i)])) return false;
    parent = t;
  }
  return true;
}

}  // namespace pathfinder
