#include "engine/system/mapping.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

namespace pathfinder {
namespace {

constexpr Time kNever = Time::from_si(std::numeric_limits<double>::infinity());

ConfigError strategy_error(const std::string& message) {
  return ConfigError(Diagnostic{SourceLoc{"strategy", 0, 0, ""}, message});
}

void validate(const SystemGraph& g, std::span<const ParallelDim> dims) {
  long long product = 1;
  for (const auto& d : dims) {
    if (d.degree < 1) {
      throw strategy_error("dimension \"" + d.name + "\": expected a degree >= 1, got " +
                           std::to_string(d.degree));
    }
    product *= d.degree;
    if (product > g.devices) break;
  }
  if (product != g.devices) {
    std::string what;
    for (const auto& d : dims) {
      what += (what.empty() ? "" : " x ") + d.name + " " + std::to_string(d.degree);
    }
    throw strategy_error("the degrees (" + what + ") do not multiply to the " +
                         std::to_string(g.devices) + " devices");
  }
}

// Strides of each dimension for an order (a permutation of the dimension indices).
void strides_of(std::span<const ParallelDim> dims, std::span<const int> order, std::span<int> stride) {
  int s = 1;
  for (const int i : order) {
    stride[static_cast<std::size_t>(i)] = s;
    s *= dims[static_cast<std::size_t>(i)].degree;
  }
}

// Placements of every dimension for one order into `groups`, and their score, adding the
// dimensions' costs in `scoring` order; stops (returns +infinity, groups incomplete) once the
// score passes `bound`. No allocation.
Time place(const SystemGraph& g, std::span<const ParallelDim> dims, std::span<const int> order,
           std::span<const int> scoring, std::span<int> stride, std::span<std::uint8_t> crosses,
           std::span<GroupPlacement> groups, Time bound) {
  const std::size_t n = dims.size();
  const std::size_t tiers = g.tiers.size();
  strides_of(dims, order, stride);
  // Which tiers each dimension's groups cross (bit t); then how many concurrent ones share.
  for (std::size_t i = 0; i < n; ++i) {
    crosses[i] = 0;
    if (dims[i].degree <= 1) continue;
    for (std::size_t t = 0; t < tiers; ++t) {
      if (tier_members(g, static_cast<int>(t), dims[i].degree, stride[i]) > 1) {
        crosses[i] = static_cast<std::uint8_t>(crosses[i] | (1u << t));
      }
    }
  }
  Time score;
  for (const int k : scoring) {
    const auto i = static_cast<std::size_t>(k);
    PortSharing sharing;
    for (std::size_t t = 0; t < tiers; ++t) {
      if ((crosses[i] & (1u << t)) == 0) continue;
      int sharers = 1;
      for (std::size_t j = 0; j < n; ++j) {
        if (j != i && (crosses[j] & (1u << t)) != 0 && dims[i].concurrent && dims[j].concurrent &&
            (dims[i].apart_from & (1u << j)) == 0 && (dims[j].apart_from & (1u << i)) == 0) {
          ++sharers;
        }
      }
      sharing.sharers[t] = sharers;
    }
    groups[i] = place_group(g, dims[i].degree, stride[i], sharing);
    if (dims[i].weight > Bytes{}) {
      score += collective_time(groups[i], dims[i].collective, dims[i].weight);
      if (score > bound) return kNever;
    }
  }
  return score;
}

}  // namespace

Mapping map_dims(const SystemGraph& g, std::span<const ParallelDim> dims, std::span<const int> order) {
  validate(g, dims);
  std::vector<bool> seen(dims.size(), false);
  bool permutation = order.size() == dims.size();
  for (const int i : order) {
    if (!permutation) break;
    permutation = i >= 0 && static_cast<std::size_t>(i) < dims.size() &&
                  !seen[static_cast<std::size_t>(i)];
    if (permutation) seen[static_cast<std::size_t>(i)] = true;
  }
  PF_ASSERT(permutation);
  Mapping m;
  m.order.assign(order.begin(), order.end());
  m.groups.resize(dims.size());
  std::vector<int> stride(dims.size());
  std::vector<std::uint8_t> crosses(dims.size());
  m.score = place(g, dims, order, order, stride, crosses, m.groups, kNever);
  return m;
}

Mapping best_mapping(const SystemGraph& g, std::span<const ParallelDim> dims) {
  Mapping best;
  best_mapping(g, dims, best);
  return best;
}

void best_mapping(const SystemGraph& g, std::span<const ParallelDim> dims, Mapping& best) {
  validate(g, dims);
  const std::size_t n = dims.size();
  // A strategy has a handful of dimensions (tensor, context, pipeline, data, ...): the
  // scratch lives on the stack.
  PF_ASSERT(n <= kMaxMappedDims);
  std::array<int, kMaxMappedDims> order_buf{}, heavy_buf{}, stride_buf{};
  std::array<std::uint8_t, kMaxMappedDims> crosses_buf{};
  // Placements are a few hundred bytes each: kept per thread rather than built on every call
  // (place() writes every entry it reads).
  thread_local std::array<GroupPlacement, kMaxMappedDims> candidate_buf, guessed_buf;
  const std::span<int> order(order_buf.data(), n), heavy(heavy_buf.data(), n),
      stride(stride_buf.data(), n);
  const std::span<std::uint8_t> crosses(crosses_buf.data(), n);
  const std::span<GroupPlacement> candidate(candidate_buf.data(), n);
  std::size_t filled = 0;
  for (int i = 0; i < static_cast<int>(n); ++i) {
    if (dims[static_cast<std::size_t>(i)].degree > 1) order[filled++] = i;
  }
  const auto active = static_cast<std::ptrdiff_t>(filled);
  for (int i = 0; i < static_cast<int>(n); ++i) {
    if (dims[static_cast<std::size_t>(i)].degree <= 1) order[filled++] = i;
  }
  // Heaviest dimensions first, both as the order scored first (heaviest innermost: usually
  // near the best, so its score bounds the search) and as the order costs are added in (an
  // order that loses is dropped after its first dimensions). A stable insertion sort: equal
  // weights keep their order.
  std::copy(order.begin(), order.end(), heavy.begin());
  const auto weight = [&](int d) { return dims[static_cast<std::size_t>(d)].weight; };
  for (std::size_t i = 1; i < static_cast<std::size_t>(active); ++i) {
    const int d = heavy[i];
    std::size_t j = i;
    for (; j > 0 && weight(d) > weight(heavy[j - 1]); --j) heavy[j] = heavy[j - 1];
    heavy[j] = d;
  }
  const std::span<GroupPlacement> guessed(guessed_buf.data(), n);
  const Time guess = place(g, dims, heavy, heavy, stride, crosses, guessed, kNever);
  const Time prune = std::isfinite(guess.si()) ? guess * (1.0 + 1e-9) : kNever;
  best.order.clear();
  best.groups.clear();
  best.score = kNever;
  bool have = false;
  do {
    // Strictly better by more than rounding: equal scores keep the earlier order.
    const Time bound =
        have && std::isfinite(best.score.si()) ? best.score - 1e-12 * best.score : kNever;
    // The guessed order is not placed again: its placements and whole score are known, and
    // within the bound (prune >= guess) place() would return that score or, past the bound,
    // a score that loses as well.
    const bool guessed_order = std::equal(order.begin(), order.end(), heavy.begin());
    const Time score =
        guessed_order ? guess
                      : place(g, dims, order, heavy, stride, crosses, candidate,
                              std::min(bound, prune));
    if (!have || score < bound) {
      best.score = score;
      best.order.assign(order.begin(), order.end());
      const std::span<const GroupPlacement> placed = guessed_order ? guessed : candidate;
      best.groups.assign(placed.begin(), placed.end());
      have = true;
    }
  } while (std::next_permutation(order.begin(), order.begin() + active));
}

}  // namespace pathfinder
