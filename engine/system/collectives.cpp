#include "engine/system/collectives.hpp"

#include <algorithm>
#include <limits>

#include "engine/core/enum_table.hpp"

namespace pathfinder {
namespace {

constexpr enum_table::Table<Collective, 6> kCollectives{{
    {Collective::kAllReduce, "all-reduce"},
    {Collective::kReduceScatter, "reduce-scatter"},
    {Collective::kAllGather, "all-gather"},
    {Collective::kAllToAll, "all-to-all"},
    {Collective::kBroadcast, "broadcast"},
    {Collective::kSendRecv, "send-recv"},
}};
constexpr enum_table::Table<CollectiveAlgorithm, 6> kAlgorithms{{
    {CollectiveAlgorithm::kAuto, "auto"},
    {CollectiveAlgorithm::kRing, "ring"},
    {CollectiveAlgorithm::kTree, "tree"},
    {CollectiveAlgorithm::kRecursiveDoubling, "recursive-doubling"},
    {CollectiveAlgorithm::kTorus2D, "torus-2d"},
    {CollectiveAlgorithm::kHierarchical, "hierarchical"},
}};

constexpr double kInf = std::numeric_limits<double>::infinity();

double log2_ceil(int m) {
  int s = 0;
  while ((1 << s) < m) ++s;
  return s;
}

// One message of c bytes: alpha + (c + h)/B. A step that also reduces c bytes takes at least
// c / R (R = 0: unbounded).
double message(double alpha, double bw, double h, double c) { return alpha + (c + h) / bw; }
double reducing(double t, double c, double r) { return r > 0.0 ? std::max(t, c / r) : t; }

// A ring of m members along one line (a tier, or one axis of a 2-D tier) on x bytes:
// reduce-scatter or all-gather, (m-1) steps of x/m.
double line_ring(int m, double alpha, double bw, double h, double x, bool reduce, double r) {
  if (m <= 1) return 0.0;
  const double c = x / m;
  const double step = message(alpha, bw, h, c);
  return (m - 1) * (reduce ? reducing(step, c, r) : step);
}
double span_ring(const TierSpan& s, double x, bool reduce, double r) {
  return line_ring(s.members, s.latency, s.bandwidth, s.half_bandwidth_message, x, reduce, r);
}

// Flat ring over the whole group. The ring is pipelined, so its latency is the sum over its
// hops: of the P_0 = Π m_l hops, P_l - P_{l+1} cross tier l as their outermost tier (the last
// tier: all P_{L-1} of its hops, the ring closing), P_l = Π_{u>=l} m_u. Its bandwidth is the
// slowest tier's: tier l is crossed by k_l = `below` rings at once, each through another
// member's port, so a step's c bytes cost (c/k_l + h_l)/B_l there.
double mean_hop_latency(const GroupPlacement& g) {
  double hops_above = 0.0, weighted = 0.0, total = 0.0;
  for (int l = g.levels - 1; l >= 0; --l) {
    const TierSpan& s = g.span[static_cast<std::size_t>(l)];
    const double hops = (l == g.levels - 1 ? 1.0 : hops_above) * s.members;
    weighted += (hops - (l == g.levels - 1 ? 0.0 : hops_above)) * s.latency;
    hops_above = hops;
    total = hops;
  }
  return weighted / total;
}
double flat_ring_transfer(const GroupPlacement& g, double c) {
  double worst = 0.0;
  for (int l = 0; l < g.levels; ++l) {
    const TierSpan& s = g.span[static_cast<std::size_t>(l)];
    worst = std::max(worst, (c / s.below + s.half_bandwidth_message) / s.bandwidth);
  }
  return worst;
}
double flat_ring_step(const GroupPlacement& g, double c, bool reduce) {
  const double step = mean_hop_latency(g) + flat_ring_transfer(g, c);
  return reduce ? reducing(step, c, g.reduction_bandwidth) : step;
}

double ring(const GroupPlacement& g, Collective c, double n) {
  const int p = g.size;
  const double chunk = n / p;
  switch (c) {
    case Collective::kAllReduce:
      return (p - 1) * (flat_ring_step(g, chunk, true) + flat_ring_step(g, chunk, false));
    case Collective::kReduceScatter: return (p - 1) * flat_ring_step(g, chunk, true);
    case Collective::kAllGather: return (p - 1) * flat_ring_step(g, chunk, false);
    // Pipelined chain: the fill latency plus one pass of n through the slowest tier.
    case Collective::kBroadcast: return (p - 1) * mean_hop_latency(g) + flat_ring_transfer(g, n);
    default: return kInf;
  }
}

// Recursive doubling (all-reduce), halving (reduce-scatter) and doubling (all-gather), inner
// tiers first; broadcast as scatter + all-gather (van de Geijn).
double recursive_doubling(const GroupPlacement& g, Collective c, double n) {
  const double r = g.reduction_bandwidth;
  double t = 0.0;
  double x = n;
  for (int l = 0; l < g.levels; ++l) {
    const TierSpan& s = g.span[static_cast<std::size_t>(l)];
    const double steps = log2_ceil(s.members);
    const double h = s.half_bandwidth_message;
    if (c == Collective::kAllReduce) {
      t += steps * reducing(message(s.latency, s.bandwidth, h, n), n, r);
      continue;
    }
    const double moved = x * (s.members - 1) / s.members;
    double tier = steps * s.latency + (moved + steps * h) / s.bandwidth;
    if (c == Collective::kReduceScatter) tier = std::max(tier, r > 0.0 ? moved / r : 0.0);
    t += (c == Collective::kBroadcast ? 2.0 : 1.0) * tier;
    x /= s.members;
  }
  switch (c) {
    case Collective::kAllReduce:
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kBroadcast: return t;
    default: return kInf;
  }
}

// Binomial trees: reduce then broadcast (all-reduce), or broadcast alone.
double tree(const GroupPlacement& g, Collective c, double n) {
  if (c != Collective::kAllReduce && c != Collective::kBroadcast) return kInf;
  double down = 0.0, up = 0.0;
  for (int l = 0; l < g.levels; ++l) {
    const TierSpan& s = g.span[static_cast<std::size_t>(l)];
    const double steps = log2_ceil(s.members);
    const double m = message(s.latency, s.bandwidth, s.half_bandwidth_message, n);
    down += steps * m;
    up += steps * reducing(m, n, g.reduction_bandwidth);
  }
  return c == Collective::kAllReduce ? up + down : down;
}

// Rings along x then y of one 2-D span (a x b).
double torus_2d(const GroupPlacement& g, Collective c, double n) {
  if (g.levels != 1) return kInf;
  const TierSpan& s = g.span[0];
  if ((s.topology != Topology::kMesh2D && s.topology != Topology::kTorus2D) || s.grid_x <= 1 ||
      s.grid_y <= 1) {
    return kInf;
  }
  const double r = g.reduction_bandwidth, h = s.half_bandwidth_message;
  const int a = s.grid_x, b = s.grid_y;
  auto x_ring = [&](double bytes, bool reduce) {
    return line_ring(a, s.latency_x, s.bandwidth_x, h, bytes, reduce, r);
  };
  auto y_ring = [&](double bytes, bool reduce) {
    return line_ring(b, s.latency_y, s.bandwidth_y, h, bytes, reduce, r);
  };
  switch (c) {
    case Collective::kAllReduce:
      return x_ring(n, true) + y_ring(n / a, true) + y_ring(n / a, false) + x_ring(n, false);
    case Collective::kReduceScatter: return x_ring(n, true) + y_ring(n / a, true);
    case Collective::kAllGather: return y_ring(n / a, false) + x_ring(n, false);
    default: return kInf;
  }
}

// Reduce-scatter inside the inner tiers, all-reduce across the outermost, all-gather back.
double hierarchical(const GroupPlacement& g, Collective c, double n) {
  const double r = g.reduction_bandwidth;
  const int outer = g.levels - 1;
  double t = 0.0;
  double x = n;
  switch (c) {
    case Collective::kAllReduce:
      for (int l = 0; l < outer; ++l) {
        const TierSpan& s = g.span[static_cast<std::size_t>(l)];
        t += span_ring(s, x, true, r) + span_ring(s, x, false, r);
        x /= s.members;
      }
      return t + span_ring(g.span[static_cast<std::size_t>(outer)], x, true, r) +
             span_ring(g.span[static_cast<std::size_t>(outer)], x, false, r);
    case Collective::kReduceScatter:
    case Collective::kAllGather:
      for (int l = 0; l <= outer; ++l) {
        const TierSpan& s = g.span[static_cast<std::size_t>(l)];
        t += span_ring(s, x, c == Collective::kReduceScatter, r);
        x /= s.members;
      }
      return t;
    default: return kInf;
  }
}

// Pairwise exchange: p-1 messages of n/p, each through the port of the innermost tier that
// separates the two members.
double all_to_all(const GroupPlacement& g, double n) {
  const double c = n / g.size;
  double alpha = 0.0, transfer = 0.0;
  for (int l = 0; l < g.levels; ++l) {
    const TierSpan& s = g.span[static_cast<std::size_t>(l)];
    const int next = l + 1 < g.levels ? g.span[static_cast<std::size_t>(l + 1)].below : g.size;
    const double count = std::max(0, next - s.below);
    alpha += count * s.latency;
    transfer = std::max(transfer, count * (c + s.half_bandwidth_message) / s.bandwidth);
  }
  return alpha + transfer;
}

double send_recv(const GroupPlacement& g, double n) {
  const TierSpan& s = g.outermost();
  return message(s.latency, s.bandwidth, s.half_bandwidth_message, n);
}

double by_algorithm(const GroupPlacement& g, Collective c, double n, CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::kRing: return ring(g, c, n);
    case CollectiveAlgorithm::kTree: return tree(g, c, n);
    case CollectiveAlgorithm::kRecursiveDoubling: return recursive_doubling(g, c, n);
    case CollectiveAlgorithm::kTorus2D: return torus_2d(g, c, n);
    case CollectiveAlgorithm::kHierarchical: return hierarchical(g, c, n);
    case CollectiveAlgorithm::kAuto: break;
  }
  return kInf;
}

constexpr CollectiveAlgorithm kCandidates[] = {
    CollectiveAlgorithm::kRing, CollectiveAlgorithm::kTree,
    CollectiveAlgorithm::kRecursiveDoubling, CollectiveAlgorithm::kTorus2D,
    CollectiveAlgorithm::kHierarchical};

// Candidates kAuto can skip without changing its answer: the binomial-tree all-reduce never
// beats recursive doubling (twice its latency and bandwidth terms), the hierarchy on one tier
// is the ring, and torus-2d needs exactly one span.
bool worth_trying(const GroupPlacement& g, Collective c, CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::kTree: return c != Collective::kAllReduce;
    case CollectiveAlgorithm::kHierarchical: return g.levels > 1;
    case CollectiveAlgorithm::kTorus2D: return g.levels == 1;
    default: return true;
  }
}

}  // namespace

std::string_view to_string(Collective c) { return enum_table::name(kCollectives, c); }
std::string_view to_string(CollectiveAlgorithm a) { return enum_table::name(kAlgorithms, a); }
std::optional<Collective> parse_collective(std::string_view s) {
  return enum_table::parse(kCollectives, s);
}
std::optional<CollectiveAlgorithm> parse_collective_algorithm(std::string_view s) {
  return enum_table::parse(kAlgorithms, s);
}
std::vector<std::string> valid_collectives() { return enum_table::names(kCollectives); }
std::vector<std::string> valid_collective_algorithms() { return enum_table::names(kAlgorithms); }

double collective_time(const GroupPlacement& g, Collective c, double bytes, CollectiveAlgorithm a) {
  if (g.size <= 1 || g.levels == 0 || !(bytes > 0.0)) return 0.0;
  if (c == Collective::kSendRecv) return send_recv(g, bytes);
  if (c == Collective::kAllToAll) {
    return (a == CollectiveAlgorithm::kAuto || a == CollectiveAlgorithm::kRing)
               ? all_to_all(g, bytes)
               : kInf;
  }
  if (a != CollectiveAlgorithm::kAuto) return by_algorithm(g, c, bytes, a);
  double best = kInf;
  for (const CollectiveAlgorithm candidate : kCandidates) {
    if (worth_trying(g, c, candidate)) best = std::min(best, by_algorithm(g, c, bytes, candidate));
  }
  return best;
}

CollectiveAlgorithm auto_algorithm(const GroupPlacement& g, Collective c, double bytes) {
  if (g.size <= 1 || g.levels == 0 || !(bytes > 0.0) || c == Collective::kSendRecv ||
      c == Collective::kAllToAll) {
    return CollectiveAlgorithm::kRing;
  }
  CollectiveAlgorithm pick = CollectiveAlgorithm::kRing;
  double best = kInf;
  for (const CollectiveAlgorithm candidate : kCandidates) {
    if (!worth_trying(g, c, candidate)) continue;
    const double t = by_algorithm(g, c, bytes, candidate);
    if (t < best) {
      best = t;
      pick = candidate;
    }
  }
  return pick;
}

double bus_bandwidth(Collective c, int members, double bytes, double seconds) {
  const double algbw = bytes / seconds;
  const double p = members;
  switch (c) {
    case Collective::kAllReduce: return algbw * 2.0 * (p - 1.0) / p;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll: return algbw * (p - 1.0) / p;
    default: return algbw;
  }
}

std::array<double, kMaxTiers> link_bytes(const GroupPlacement& g, Collective c, double bytes) {
  std::array<double, kMaxTiers> out{};
  if (g.size <= 1 || !(bytes > 0.0) || g.levels <= 0) return out;
  const double p = static_cast<double>(g.size);
  const auto tier = [&](int l) { return static_cast<std::size_t>(g.span[static_cast<std::size_t>(l)].tier); };
  const auto members = [&](int l) {
    return static_cast<double>(g.span[static_cast<std::size_t>(l)].members);
  };
  if (c == Collective::kSendRecv) {
    out[tier(g.levels - 1)] = bytes;
    return out;
  }
  if (c == Collective::kAllToAll) {
    double below = 1.0;
    for (int l = 0; l < g.levels; ++l) {
      out[tier(l)] += below * (members(l) - 1.0) * bytes / p;
      below *= members(l);
    }
    return out;
  }
  const double volume = (c == Collective::kAllReduce ? 2.0 : 1.0) * (p - 1.0) / p * bytes;
  // Hops crossing span l and no outer one, of the ring's p hops: P_l − P_{l+1} with
  // P_l = Π_{j>=l} m_j, P_levels = 0 (the outermost span also carries the ring's wrap-around).
  double prev = 0.0;
  for (int l = g.levels - 1; l >= 0; --l) {
    const double here = std::max(prev, 1.0) * members(l);
    out[tier(l)] += volume * (here - prev) / p;
    prev = here;
  }
  return out;
}

}  // namespace pathfinder
