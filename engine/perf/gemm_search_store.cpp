#include "engine/perf/gemm_search_store.hpp"

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace pathfinder {
namespace {

// Every machine figure a GemmSearch reads; rates, bandwidths, latencies and energies excluded.
struct Key {
  std::int64_t batch = 0, m = 0, n = 0, k = 0;
  DataType dtype = DataType::kFp16;
  std::int32_t accumulate = 0;
  int levels = 0, bundles = 0, mcus_per_bundle = 0, array_rows = 0, array_cols = 0;
  Dataflow dataflow = Dataflow::kBest;
  std::array<double, kMaxPerfLevels> capacity{};
  std::array<int, kMaxPerfLevels> instances{};
  std::array<Scope, kMaxPerfLevels> scope{};
  friend bool operator==(const Key&, const Key&) = default;
};

struct KeyHash {
  std::size_t operator()(const Key& k) const noexcept {
    std::uint64_t h = 1469598103934665603ULL;
    const auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 1099511628211ULL; };
    for (const std::int64_t v : {k.batch, k.m, k.n, k.k}) mix(static_cast<std::uint64_t>(v));
    for (const int v : {static_cast<int>(k.dtype), k.accumulate, k.levels, k.bundles, k.mcus_per_bundle,
                        k.array_rows, k.array_cols, static_cast<int>(k.dataflow)}) {
      mix(static_cast<std::uint64_t>(v));
    }
    for (std::size_t i = 0; i < kMaxPerfLevels; ++i) {
      mix(std::bit_cast<std::uint64_t>(k.capacity[i]));
      mix(static_cast<std::uint64_t>(k.instances[i]));
      mix(static_cast<std::uint64_t>(k.scope[i]));
    }
    return static_cast<std::size_t>(h);
  }
};

struct Store {
  std::mutex mutex;
  std::unordered_map<Key, std::shared_ptr<const GemmSearch>, KeyHash> searches;
  std::size_t made = 0;
};

Store& store() {
  static Store s;
  return s;
}

// Each thread's last few searches found, ahead of the store's lock and hash (a cold evaluation
// asks for the same dozen shapes on a new design). Emptied when the store is cleared.
std::atomic<std::uint64_t> g_epoch{0};
struct Recent {
  static constexpr std::size_t kSize = 32;
  std::array<Key, kSize> keys{};
  std::array<std::shared_ptr<const GemmSearch>, kSize> searches{};
  std::size_t next = 0;
  std::uint64_t epoch = 0;
};

Key key_of(const PerfMachine& m, const GemmShape& shape, DataType dtype) {
  Key k;
  k.batch = shape.batch;
  k.m = shape.m;
  k.n = shape.n;
  k.k = shape.k;
  k.dtype = dtype;
  k.accumulate = shape.accumulate;
  k.levels = static_cast<int>(m.levels.size());
  k.bundles = m.bundles;
  k.mcus_per_bundle = m.mcus_per_bundle;
  k.array_rows = m.array_rows;
  k.array_cols = m.array_cols;
  k.dataflow = m.dataflow;
  for (std::size_t i = 0; i < m.levels.size() && i < kMaxPerfLevels; ++i) {
    k.capacity[i] = m.levels[i].capacity.si();  // hashed by its bits
    k.instances[i] = m.levels[i].instances;
    k.scope[i] = m.levels[i].scope;
  }
  return k;
}

}  // namespace

std::shared_ptr<const GemmSearch> shared_gemm_search(const PerfMachine& m, const GemmShape& shape,
                                                     DataType dtype) {
  const Key key = key_of(m, shape, dtype);
  thread_local Recent recent;
  const std::uint64_t epoch = g_epoch.load(std::memory_order_acquire);
  if (recent.epoch != epoch) {
    recent = Recent{};
    recent.epoch = epoch;
  }
  for (std::size_t i = 0; i < Recent::kSize; ++i) {
    if (recent.searches[i] && recent.keys[i] == key) return recent.searches[i];
  }
  const auto remember = [&](const std::shared_ptr<const GemmSearch>& found) {
    recent.keys[recent.next] = key;
    recent.searches[recent.next] = found;
    recent.next = (recent.next + 1) % Recent::kSize;
    return found;
  };
  Store& s = store();
  {
    const std::lock_guard<std::mutex> lock(s.mutex);
    const auto it = s.searches.find(key);
    if (it != s.searches.end()) return remember(it->second);
  }
  auto made = std::make_shared<const GemmSearch>(m, shape, dtype);
  const std::lock_guard<std::mutex> lock(s.mutex);
  ++s.made;
  if (s.searches.size() >= kMaxGemmSearches) s.searches.clear();
  // Another thread may have made the same search meanwhile: both are equal; keep the first.
  return remember(s.searches.try_emplace(key, std::move(made)).first->second);
}

void clear_gemm_searches() {
  Store& s = store();
  const std::lock_guard<std::mutex> lock(s.mutex);
  s.searches.clear();
  g_epoch.fetch_add(1, std::memory_order_release);
}

std::size_t gemm_searches_made() {
  Store& s = store();
  const std::lock_guard<std::mutex> lock(s.mutex);
  return s.made;
}

}  // namespace pathfinder
