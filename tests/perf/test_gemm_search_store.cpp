// The process-wide memo of GEMM searches (engine/perf/gemm_search_store.hpp): machines that
// differ in rates and bandwidths share a search, machines with other capacities do not, and a
// timer's plans are those of a fresh search either way.
#include <catch2/catch.hpp>

#include "engine/perf/gemm_search_store.hpp"
#include "engine/perf/kernel_timer.hpp"
#include "tests/perf/perf_fixtures.hpp"

namespace pathfinder {

TEST_CASE("GEMM searches are shared by capacities, not by rates or bandwidths", "[perf]") {
  const PerfMachine a100 = test::shipped_machine("a100");
  const GemmShape s{1, 6144, 3072, 12288};
  const auto first = shared_gemm_search(a100, s, DataType::kFp16);
  // The same capacities with other rates, bandwidths and latencies: the same search.
  PerfMachine faster = a100;
  faster.matrix_flops *= 1.5;
  faster.levels.back().bandwidth *= 0.7;
  faster.main_memory.bandwidth *= 2.0;
  faster.main_memory.latency *= 0.5;
  const std::size_t made = gemm_searches_made();
  CHECK(shared_gemm_search(faster, s, DataType::kFp16) == first);
  CHECK(gemm_searches_made() == made);
  // Another L2 size, another shape or another element type: a search of its own.
  PerfMachine smaller = a100;
  smaller.levels.back().capacity /= 2.0;
  CHECK(shared_gemm_search(smaller, s, DataType::kFp16) != first);
  CHECK(shared_gemm_search(a100, GemmShape{1, 6144, 3072, 4096}, DataType::kFp16) != first);
  CHECK(shared_gemm_search(a100, s, DataType::kFp8) != first);
  CHECK(gemm_searches_made() == made + 3);
  // A timer on the faster machine plans as a fresh search on it does.
  KernelTimer timer(faster);
  const GemmPlan& shared = timer.gemm_plan(s, DataType::kFp16);
  const GemmPlan fresh = plan_gemm(faster, s, DataType::kFp16);
  CHECK(shared.tiles == fresh.tiles);
  CHECK(shared.device_time == fresh.device_time);
  CHECK(shared.bytes == fresh.bytes);
  // Emptied, the memo searches again.
  clear_gemm_searches();
  CHECK(shared_gemm_search(a100, s, DataType::kFp16) != first);
  CHECK(gemm_searches_made() == made + 4);
}

}  // namespace pathfinder
