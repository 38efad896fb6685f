// GEMM timing by hierarchical roofline (paper §6.1-6.3, issue 3).
//
// A GEMM C[m×n] += A[m×k]·B[k×n] (batch of them) is tiled once per on-chip level. The tile at
// level i is what that level holds for one of its instances; the traffic it causes is served by
// the level outside it (level i+1, or main memory for the outermost). The innermost level also
// serves the MCU arrays' operands, counted by the register-traffic formula (paper eq. 5).
//
// Traffic of a tile (tm, tn, tk) inside its parent tile (pm, pn, pk) with loop order O, for the
// whole problem (M, N, K) and element sizes e (inputs) and c (outputs):
//   A = e·M·K·⌈N/tn⌉ — or e·M·K·⌈N/pn⌉ when n is the innermost loop (A stays resident)
//   B = e·K·N·⌈M/tm⌉ — or e·K·N·⌈M/pm⌉ when m is innermost
//   C = c·M·N·(2·⌈K/tk⌉ − 1) partial sums written and read back — or c·M·N·(2·⌈K/pk⌉ − 1)
//       when k is innermost (the tile accumulates in place); the final write is always counted
// A tile fits when its resident operand plus double-buffered streamed slices fit the level, and
// its output (accumulators) fits the level together with the levels inside it.
//
// Parallelism: output tiles of the outermost non-global level (the bundle, a GPU's SM) are
// spread over its instances in waves; a last partial wave leaves instances idle (wave
// quantization), and tiles are padded to the MCU array's granularity. Compute time is
// waves × one tile's time on one instance; per-instance levels lose bandwidth with idle
// instances, shared levels do not.
//
// Search: deterministic. Tile sides are powers of two from the array granularity up to the
// problem (plus the problem extent itself), each level's loop order is searched, and the plan
// with the least time wins, ties broken by less total traffic, then by the fixed candidate
// order. No random sampling (the reference draws N^L = 8000 random tilings).
#pragma once

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/graph/compute_graph.hpp"
#include "engine/perf/perf_machine.hpp"

namespace pathfinder {

// Which loop runs innermost at a level, and so which operand stays resident there.
enum class LoopOrder {
  kOutputStationary,      // k innermost: C accumulates in place
  kWeightStationary,      // m innermost: the B tile (weights) stays
  kActivationStationary,  // n innermost: the A tile (activations) stays
};
[[nodiscard]] std::string_view to_string(LoopOrder o);

inline constexpr int kMaxPerfLevels = kMaxOnChipLevels;  // on-chip levels a plan can hold

struct GemmTile {
  std::int64_t m = 0, n = 0, k = 0;
  friend bool operator==(const GemmTile&, const GemmTile&) = default;
};

// The tiling search's result (its inner arithmetic runs on SI doubles; the figures are typed).
struct GemmPlan {
  int levels = 0;  // on-chip levels; index `levels` is main memory in the arrays below
  std::array<GemmTile, kMaxPerfLevels> tiles{};
  std::array<LoopOrder, kMaxPerfLevels> orders{};
  Dataflow dataflow = Dataflow::kOutputStationary;  // MCU dataflow used (never kBest)
  int parallel_level = -1;       // the level whose tiles are spread over instances
  std::int64_t parallel_tiles = 0;
  std::int64_t waves = 0;
  double wave_efficiency = 1.0;  // useful work / (waves × instances × padded tile work)
  Flops flops;                   // 2·batch·m·n·k
  std::array<Bytes, kMaxPerfLevels + 1> bytes{};  // served by each level, then main memory
  std::array<Time, kMaxPerfLevels + 1> time{};    // bytes / bandwidth
  Time compute_time;
  Time device_time;              // max of compute and every level, plus the memory latency
  int binding = -1;              // -1 compute, else the level index (levels = main memory)
  [[nodiscard]] Bytes main_memory_bytes() const { return bytes[levels]; }
};

// Searches the tilings, loop orders and (for Dataflow::kBest) the MCU dataflow:
// GemmSearch(m, shape, dtype).time(m).
[[nodiscard]] GemmPlan plan_gemm(const PerfMachine& m, const GemmShape& shape, DataType dtype);

namespace gemm_detail {
struct Ctx;
}

// plan_gemm's search, kept for the machines that share its capacities, instance counts and
// MCU arrays. Those alone fix the outer levels' tiles (least traffic) and, for each candidate
// tile of the parallel level, its inner tiles, dataflow and traffic; the rates and bandwidths
// only decide which candidate wins and which the bounds prune. So time() runs the search's
// loops again on each machine but builds a candidate's plan once, the first time a search
// reaches it: budget splits that move power or area without changing a bank count share it
// (gemm_search_store.hpp). Thread-safe.
class GemmSearch {
 public:
  GemmSearch(const PerfMachine& m, const GemmShape& shape, DataType dtype);
  GemmSearch(const GemmSearch&) = delete;
  GemmSearch& operator=(const GemmSearch&) = delete;
  // plan_gemm(m, shape, dtype); `m` must have the capacities, counts and arrays of the machine
  // the search was made on.
  [[nodiscard]] GemmPlan time(const PerfMachine& m) const;
  // The same into `out` (no plan copied on the way: a timer keeps it where it lands).
  void time(const PerfMachine& m, GemmPlan& out) const;

 private:
  // A candidate's plan (traffic counted, times not) and its compute in rate-free units
  // (compute time = work / one MCU's FLOP rate).
  struct Built {
    GemmPlan plan;
    double work = 0.0;
  };
  // One choice of the level outside the parallel one: its tiles, the parallel tile's sides
  // and the bounds' rate-free parts, and the candidates built in it so far, one slot per
  // (m side, n side).
  struct Trial {
    GemmPlan plan;
    GemmTile parent;  // the parallel tiles' bound
    std::size_t m_count = 0, n_count = 0;
    std::vector<std::int64_t> sides;  // the m sides, then the n sides
    // Per side, tiles along the dimension and array blocks along the tile: m tiles, m blocks,
    // n tiles, n blocks, each section a side count long.
    std::vector<double> per_side;
    double mk = 0.0, kn = 0.0, fixed = 0.0;  // the level above's traffic: A's, B's, C's share
    // Per m side: the widest n side that fits the parallel level with it.
    std::vector<double> n_limit;
    // Per slot: the compute bound in block times (waves x blocks per MCU), exact integers.
    std::vector<double> blocks;
    // Per m side: the least of its slots' compute bounds (a row that cannot beat the best), and
    // the widest n side the search takes with it (the first it tries; -1: none).
    std::vector<double> row_blocks;
    std::vector<int> row_first;
    double least_blocks = INFINITY;  // the least row_blocks: a trial that cannot beat the best
    // Per slot: the candidate once built (kNoTile when no k side fits), else null.
    std::unique_ptr<std::atomic<const Built*>[]> built;
    [[nodiscard]] std::int64_t m_side(std::size_t i) const { return sides[i]; }
    [[nodiscard]] std::int64_t n_side(std::size_t j) const { return sides[m_count + j]; }
    [[nodiscard]] double m_tiles(std::size_t i) const { return per_side[i]; }
    [[nodiscard]] double m_blocks(std::size_t i) const { return per_side[m_count + i]; }
    [[nodiscard]] double n_tiles(std::size_t j) const { return per_side[2 * m_count + j]; }
    [[nodiscard]] double n_blocks(std::size_t j) const {
      return per_side[2 * m_count + n_count + j];
    }
  };
  // The best candidate so far over the trials searched, and its device time.
  struct Best {
    const Built* built = nullptr;
    double time = 0.0;
  };
  void search_parallel(const gemm_detail::Ctx& c, const Trial& t, Best& best) const;
  // The candidates searched on c's rates and bandwidths: the best one's plan, timed.
  void search(const gemm_detail::Ctx& c, GemmPlan& out) const;
  [[nodiscard]] const Built* candidate(const gemm_detail::Ctx& c, const Trial& t,
                                       std::size_t ia, std::size_t ib) const;
  static const Built kNoTile;

  GemmShape shape_;
  DataType dtype_;
  GemmPlan outer_;  // the outer levels' tiles (the fallback's starting point)
  std::vector<Trial> trials_;
  // The built candidates, in chunks of kChunk (addresses stay put as chunks are added).
  static constexpr std::size_t kChunk = 16;
  mutable std::vector<std::unique_ptr<Built[]>> chunks_;
  mutable std::size_t built_ = 0;
  mutable std::mutex mutex_;
  // The last few machines' plans by the figures time() reads: the arrays' rate for the
  // problem's type, every level's and main memory's bandwidth, main memory's latency. A
  // finite-difference step that moves another component's budget (the network's, a level's
  // power that leaves its bandwidth) times the GEMM again for nothing otherwise.
  using Rates = std::array<double, kMaxPerfLevels + 3>;
  [[nodiscard]] static Rates rates_of(const gemm_detail::Ctx& c);
  struct Timed {
    Rates rates{};
    GemmPlan plan;
  };
  static constexpr std::size_t kTimed = 4;
  mutable std::array<Timed, kTimed> timed_{};
  mutable std::size_t timed_count_ = 0, timed_next_ = 0;
};

// Times one given tiling (every level's tile and order) without search: the property tests
// and the CLI's what-if use it. Tiles must nest and fit; fits_gemm_plan says whether they do.
[[nodiscard]] GemmPlan evaluate_gemm(const PerfMachine& m, const GemmShape& shape, DataType dtype,
                                     const std::array<GemmTile, kMaxPerfLevels>& tiles,
                                     const std::array<LoopOrder, kMaxPerfLevels>& orders,
                                     Dataflow dataflow);
// Traffic served to a tile held at `level` directly inside the whole problem under `order`
// (what the outermost level's search minimizes), or +inf when the tile does not fit there.
[[nodiscard]] double outer_level_traffic(const PerfMachine& m, const GemmShape& shape,
                                         DataType dtype, int level, const GemmTile& tile,
                                         LoopOrder order);
[[nodiscard]] bool fits_gemm_plan(const PerfMachine& m, const GemmShape& shape, DataType dtype,
                                  const GemmPlan& plan);

}  // namespace pathfinder
