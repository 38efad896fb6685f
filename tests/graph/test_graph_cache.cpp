// GraphCache (engine/graph/graph_cache.hpp): graphs built once per key and shared, from any
// number of threads.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <memory>
#include <vector>

#include "engine/graph/graph_cache.hpp"
#include "engine/graph/workload.hpp"

namespace pathfinder {
namespace {

// A one-kernel graph whose GEMM has `m` rows (2·m·64·64 FLOPs), counting its builds.
ComputeGraph one_gemm(std::int64_t m, std::atomic<int>& builds) {
  ++builds;
  ComputeGraphBuilder b;
  b.add(gemm_kernel("g", KernelKind::kGemm, Phase::kForward, DataType::kFp16,
                    GemmShape{1, m, 64, 64}, {}));
  return std::move(b).build();
}

}  // namespace

TEST_CASE("GraphCache: one graph per key, shared", "[graph]") {
  GraphCache cache;
  std::atomic<int> builds{0};
  const GraphKey a{1, 0, 0, 0, 0, 0, 0, 0}, b{2, 0, 0, 0, 0, 0, 0, 0};
  const auto ga = cache.get(a, [&] { return one_gemm(128, builds); });
  const auto again = cache.get(a, [&] { return one_gemm(999, builds); });
  const auto gb = cache.get(b, [&] { return one_gemm(256, builds); });
  CHECK(builds == 2);
  CHECK(ga == again);  // the same graph, not a copy
  CHECK(ga->total_flops().si() == 2.0 * 128 * 64 * 64);
  CHECK(gb->total_flops().si() == 2.0 * 256 * 64 * 64);
  CHECK(cache.size() == 2);
}

TEST_CASE("GraphCache: threads asking for the same keys all get the first graph stored",
          "[graph]") {
  // 1,000 requests over 10 keys from 4 threads: a key may be built by two threads at once,
  // but one graph per key is kept, and every later request returns it.
  GraphCache cache;
  std::atomic<int> builds{0};
  std::vector<std::shared_ptr<const ComputeGraph>> got(1000);  // Catch checks on one thread
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < 1000; i += 4) {
        const std::int64_t k = i % 10;
        got[static_cast<std::size_t>(i)] = cache.get(
            GraphKey{k, 0, 0, 0, 0, 0, 0, 0}, [&] { return one_gemm(64 * (k + 1), builds); });
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double rows = 64.0 * static_cast<double>(i % 10 + 1);
    CHECK(got[i]->total_flops().si() == 2.0 * rows * 64 * 64);
    CHECK(got[i] == got[i % 10]);  // one graph per key, whoever built it
  }
  CHECK(cache.size() == 10);
  CHECK(builds >= 10);
  const int before = builds;
  for (std::int64_t k = 0; k < 10; ++k) {
    (void)cache.get(GraphKey{k, 0, 0, 0, 0, 0, 0, 0}, [&] { return one_gemm(1, builds); });
  }
  CHECK(builds == before);
}

}  // namespace pathfinder
