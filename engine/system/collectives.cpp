#include "engine/system/collectives.hpp"

#include <algorithm>
#include <array>
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
constexpr enum_table::Table<CollectiveAlgorithm, 7> kAlgorithms{{
    {CollectiveAlgorithm::kAuto, "auto"},
    {CollectiveAlgorithm::kRing, "ring"},
    {CollectiveAlgorithm::kTree, "tree"},
    {CollectiveAlgorithm::kRecursiveDoubling, "recursive-doubling"},
    {CollectiveAlgorithm::kTorus, "torus"},
    {CollectiveAlgorithm::kHierarchical, "hierarchical"},
    {CollectiveAlgorithm::kNcclTree, "nccl-tree"},
}};

constexpr Time kInf = Time::from_si(std::numeric_limits<double>::infinity());

double log2_ceil(int m) {
  int s = 0;
  while ((1 << s) < m) ++s;
  return s;
}

// One message of c bytes: alpha + (c + h)/B. A step that also reduces c bytes takes at least
// c / R (R = 0: unbounded).
Time message(Time alpha, Bandwidth bw, Bytes h, Bytes c) { return alpha + (c + h) / bw; }
Time reducing(Time t, Bytes c, Bandwidth r) { return r > Bandwidth{} ? std::max(t, c / r) : t; }

// A ring of m members along one line (a tier, or one axis of a 2-D tier) on x bytes:
// reduce-scatter or all-gather, (m-1) steps of x/m.
Time line_ring(int m, Time alpha, Bandwidth bw, Bytes h, Bytes x, bool reduce, Bandwidth r) {
  if (m <= 1) return Time{};
  const Bytes c = x / m;
  const Time step = message(alpha, bw, h, c);
  return (m - 1) * (reduce ? reducing(step, c, r) : step);
}
Time span_ring(const TierSpan& s, Bytes x, bool reduce, Bandwidth r) {
  return line_ring(s.members, s.latency, s.bandwidth, s.half_bandwidth_message, x, reduce, r);
}

// Flat ring over the whole group. The ring is pipelined, so its latency is the sum over its
// hops: of the P_0 = Π m_l hops, P_l - P_{l+1} cross tier l as their outermost tier (the last
// tier: all P_{L-1} of its hops, the ring closing), P_l = Π_{u>=l} m_u. Its bandwidth is the
// slowest tier's: tier l is crossed by k_l = `below` rings at once, each through another
// member's port, so a step's c bytes cost (c/k_l + h_l)/B_l there.
// The mean over the ring's hops of latency(span), each hop counted at its outermost span.
template <class Latency>
Time mean_over_hops(const GroupPlacement& g, Latency latency) {
  double hops_above = 0.0, total = 0.0;
  Time weighted;
  for (int l = g.levels - 1; l >= 0; --l) {
    const TierSpan& s = g.span[static_cast<std::size_t>(l)];
    const double hops = (l == g.levels - 1 ? 1.0 : hops_above) * s.members;
    weighted += (hops - (l == g.levels - 1 ? 0.0 : hops_above)) * latency(s);
    hops_above = hops;
    total = hops;
  }
  return weighted / total;
}
Time mean_hop_latency(const GroupPlacement& g) {
  return mean_over_hops(g, [](const TierSpan& s) { return s.latency; });
}
Time flat_ring_transfer(const GroupPlacement& g, Bytes c) {
  Time worst;
  for (int l = 0; l < g.levels; ++l) {
    const TierSpan& s = g.span[static_cast<std::size_t>(l)];
    worst = std::max(worst, (c / s.below + s.half_bandwidth_message) / s.bandwidth);
  }
  return worst;
}
Time flat_ring_step(const GroupPlacement& g, Bytes c, bool reduce) {
  const Time step = mean_hop_latency(g) + flat_ring_transfer(g, c);
  return reduce ? reducing(step, c, g.reduction_bandwidth) : step;
}

// NCCL's own cost model of its ring (src/graph/tuning.cc, ncclTopoTuneModel, NCCL 2.19-2.2x;
// the Simple protocol's figures are those of NCCL 2.8 too): per protocol a base latency per
// call, a latency per ring step by the link the step crosses (NVLink, PCI or the network;
// "Latencies in us"), and a share of the ring's bus bandwidth. NCCL runs each call with the
// protocol its model finds fastest ("ncclTopoGetAlgoTime ... time = lat + nBytes / bw").
//   protocol  base   NVLink step  network step  bandwidth
//   LL        6.6    0.6          2.7           1/4 (8-byte stores of 4 data bytes and a
//                                               flag; all-reduce's figure)
//   LL128     14.0   1.9          4.0           0.92 (120 of 128 bytes are data)
//   Simple    8.4    3.4          14.0          1
// (NCCL's PCI steps, 1.0, 2.5 and 5.7 us, are not used: every scale-up tier is taken as
// NVLink-class.)
// These replace the links' own latencies and half-bandwidth messages in NCCL's rings (what
// the library `any` keeps): its steps' costs are the protocol's, measured by NCCL on its
// hardware. A ring across nodes also pays, per step inside a node, at least the network's
// post overhead (getNetOverhead: 1 us on Intel hosts, 3x for Simple; AMD hosts' 2 us are not
// modelled: the host's vendor is not an input), and an all-reduce under Simple 1.4x its
// latency on Ampere and later ("plateau effect of ring", ncclTopoGetAlgoTime); LL's bus
// bandwidth is capped as NCCL caps it (nccl_ll_max). Omitted: NCCL's per-channel caps on LL128
// and tree bandwidth (with 16 or more channels they lie above the links) and the network's
// extra per-hop latency of the topology search (graphs[a]->latencyInter, 0 on a
// rail-optimized fat-tree). Each hop's figure is scaled by its tier's latency congestion
// factor (GPCNeT CI_l): NCCL measured them unloaded.
//
// NCCL's tree (all-reduce across nodes only), from the same model: a chain through each
// node's ppn ranks and a double binary tree over the nodes, latency base + 2((ppn - 1) x
// intra + floor(log2 nodes) x network) with the tree's own figures below, and algorithm
// bandwidth half the bus bandwidth, itself 0.92 of the network's (times LL's 1/3.8 or
// LL128's 120/128), further scaled by NCCL's measured correction for medium sizes
// (treeCorrectionFactor). The bus bandwidth is the node's NICs together, as each member's
// share n/ppn crosses its own NIC.
//   protocol  base   NVLink hop  network hop  bandwidth
//   LL        6.8    0.6         5.0          1/3.8
//   LL128     14.0   1.25        8.5          120/128
//   Simple    0      28          28           1  ("the latency of a 256kB chunk")
struct NcclFigures {
  double base_us, nvlink_us, network_us, bandwidth_share;
};
struct NcclProtocol : NcclFigures {
  double net_overhead_us;  // a multi-node ring's least step inside a node
  NcclFigures tree;
};
constexpr NcclProtocol kLl{{6.6, 0.6, 2.7, 0.25}, 1.0, {6.8, 0.6, 5.0, 1.0 / 3.8}};
constexpr NcclProtocol kLl128{{14.0, 1.9, 4.0, 0.92}, 1.0, {14.0, 1.25, 8.5, 120.0 / 128.0}};
constexpr NcclProtocol kSimple{{8.4, 3.4, 14.0, 1.0}, 3.0, {0.0, 28.0, 28.0, 1.0}};
constexpr std::array<const NcclProtocol*, 3> kNcclProtocols{&kLl, &kLl128, &kSimple};
// treeCorrectionFactor[protocol][floor(log2(n / 64 B))], 64 B to 256 MB; 1 beyond.
constexpr double kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
constexpr double kNcclTreeBandwidth = 0.92;
constexpr double kNcclRingPlateau = 1.4;

bool multi_node(const GroupPlacement& g) {
  return g.levels > 0 && g.outermost_tier == Tier::kScaleOut;
}

// NCCL's cap on LL's bus bandwidth (llMaxBws, GB/s): 87.7 inside one node of Ampere or Hopper
// GPUs, 39.0 across two nodes and 20.4 across more (Intel hosts).
Bandwidth nccl_ll_max(const GroupPlacement& g) {
  const int nodes = multi_node(g) ? g.span[static_cast<std::size_t>(g.levels - 1)].members : 1;
  return gigabytes_per_second(nodes == 1 ? 87.7 : nodes == 2 ? 39.0 : 20.4);
}

// The mean step latency of a flat ring over g under protocol p.
Time nccl_step_latency(const GroupPlacement& g, const NcclProtocol& p) {
  const double inside = multi_node(g) ? std::max(p.nvlink_us, p.net_overhead_us) : p.nvlink_us;
  return mean_over_hops(g, [&](const TierSpan& s) {
    return microseconds(s.tier == Tier::kScaleOut ? p.network_us : inside) * s.latency_congestion;
  });
}

// One ring collective of `steps` steps of c bytes (reduce: the first `reduce_steps` reduce).
Time nccl_ring(const GroupPlacement& g, int steps, int reduce_steps, Bytes c) {
  const bool all_reduce = reduce_steps > 0 && steps > reduce_steps;
  Time best = kInf;
  for (const NcclProtocol* p : kNcclProtocols) {
    Time transfer;
    for (int l = 0; l < g.levels; ++l) {
      const TierSpan& s = g.span[static_cast<std::size_t>(l)];
      transfer = std::max(transfer, c / s.below / (s.bandwidth * p->bandwidth_share));
    }
    if (p == &kLl) transfer = std::max(transfer, c / nccl_ll_max(g));
    const Time latency = nccl_step_latency(g, *p);
    const double plateau = p == &kSimple && all_reduce && multi_node(g) ? kNcclRingPlateau : 1.0;
    const Time step = latency + transfer;
    const Time t = microseconds(p->base_us * plateau) + (plateau - 1.0) * steps * latency +
                   reduce_steps * reducing(step, c, g.reduction_bandwidth) +
                   (steps - reduce_steps) * step;
    best = std::min(best, t);
  }
  return best;
}

Time ring(const GroupPlacement& g, Collective c, Bytes n) {
  const int p = g.size;
  const Bytes chunk = n / p;
  if (g.library == CollectiveLibrary::kNccl) {
    switch (c) {
      case Collective::kAllReduce: return nccl_ring(g, 2 * (p - 1), p - 1, chunk);
      case Collective::kReduceScatter: return nccl_ring(g, p - 1, p - 1, chunk);
      case Collective::kAllGather: return nccl_ring(g, p - 1, 0, chunk);
      default: break;
    }
  }
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
Time recursive_doubling(const GroupPlacement& g, Collective c, Bytes n) {
  const Bandwidth r = g.reduction_bandwidth;
  Time t;
  Bytes x = n;
  for (int l = 0; l < g.levels; ++l) {
    const TierSpan& s = g.span[static_cast<std::size_t>(l)];
    const double steps = log2_ceil(s.members);
    const Bytes h = s.half_bandwidth_message;
    if (c == Collective::kAllReduce) {
      t += steps * reducing(message(s.latency, s.bandwidth, h, n), n, r);
      continue;
    }
    const Bytes moved = x * (s.members - 1) / s.members;
    Time tier = steps * s.latency + (moved + steps * h) / s.bandwidth;
    if (c == Collective::kReduceScatter) {
      tier = std::max(tier, r > Bandwidth{} ? moved / r : Time{});
    }
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
Time tree(const GroupPlacement& g, Collective c, Bytes n) {
  if (c != Collective::kAllReduce && c != Collective::kBroadcast) return kInf;
  Time down, up;
  for (int l = 0; l < g.levels; ++l) {
    const TierSpan& s = g.span[static_cast<std::size_t>(l)];
    const double steps = log2_ceil(s.members);
    const Time m = message(s.latency, s.bandwidth, s.half_bandwidth_message, n);
    down += steps * m;
    up += steps * reducing(m, n, g.reduction_bandwidth);
  }
  return c == Collective::kAllReduce ? up + down : down;
}

// Rings along each axis of one grid span (a x b, or a x b x c): reduce-scatter along x, then
// y on n/a (then z on n/(a·b)), and all-gather back in reverse; an all-reduce does both.
Time torus(const GroupPlacement& g, Collective c, Bytes n) {
  if (g.levels != 1) return kInf;
  const TierSpan& s = g.span[0];
  const std::array<int, 3> count{s.grid_x, s.grid_y, s.grid_z};
  const std::array<Bandwidth, 3> bw{s.bandwidth_x, s.bandwidth_y, s.bandwidth_z};
  const std::array<Time, 3> lat{s.latency_x, s.latency_y, s.latency_z};
  int axes = 0;
  for (const int m : count) axes += m > 1 ? 1 : 0;
  if (!is_grid(s.topology) || axes < 2) return kInf;
  const bool scatter = c == Collective::kAllReduce || c == Collective::kReduceScatter;
  const bool gather = c == Collective::kAllReduce || c == Collective::kAllGather;
  if (!scatter && !gather) return kInf;
  const Bandwidth r = g.reduction_bandwidth;
  const Bytes h = s.half_bandwidth_message;
  Time t;
  Bytes x = n;
  for (std::size_t a = 0; a < 3; ++a) {
    if (count[a] <= 1) continue;
    if (scatter) t += line_ring(count[a], lat[a], bw[a], h, x, true, r);
    if (gather) t += line_ring(count[a], lat[a], bw[a], h, x, false, r);
    x /= count[a];
  }
  return t;
}

// Reduce-scatter inside the inner tiers, all-reduce across the outermost, all-gather back.
Time hierarchical(const GroupPlacement& g, Collective c, Bytes n) {
  const Bandwidth r = g.reduction_bandwidth;
  const int outer = g.levels - 1;
  Time t;
  Bytes x = n;
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

// NCCL's tree all-reduce by NCCL's own model (see kNcclProtocols): the fastest protocol.
Time nccl_tree(const GroupPlacement& g, Collective c, Bytes n) {
  if (c != Collective::kAllReduce || !multi_node(g)) return kInf;
  const TierSpan& outer = g.span[static_cast<std::size_t>(g.levels - 1)];
  const int nodes = outer.members, ppn = g.size / std::max(1, nodes);
  const Bytes share = n / ppn;  // what each member's NIC carries up and down
  int floor_log2 = 0;
  for (int m = nodes; m > 1; m >>= 1) ++floor_log2;
  const double chunks = n.si() / 64.0;
  int size_class = -1;
  for (double x = chunks; x >= 1.0 && size_class < 23; x /= 2.0) ++size_class;
  const double inner = g.levels > 1 ? g.span[0].latency_congestion : 1.0;
  Time best = kInf;
  for (std::size_t i = 0; i < kNcclProtocols.size(); ++i) {
    const NcclFigures& t = kNcclProtocols[i]->tree;
    const double correction =
        size_class >= 0 && size_class < 23 ? kTreeCorrection[i][static_cast<std::size_t>(size_class)]
                                           : 1.0;
    const Time latency =
        microseconds(t.base_us + 2.0 * ((ppn - 1) * t.nvlink_us * inner +
                                        floor_log2 * t.network_us * outer.latency_congestion));
    Bandwidth bus = ppn * outer.bandwidth * kNcclTreeBandwidth * t.bandwidth_share;
    if (kNcclProtocols[i] == &kLl) bus = std::min(bus, nccl_ll_max(g));
    const Time transfer = 2.0 * n / (bus * correction);
    best = std::min(best, latency + reducing(transfer, share, g.reduction_bandwidth));
  }
  return best;
}

// Pairwise exchange: p-1 messages of n/p, each through the port of the innermost tier that
// separates the two members.
Time all_to_all(const GroupPlacement& g, Bytes n) {
  const Bytes c = n / g.size;
  Time alpha, transfer;
  for (int l = 0; l < g.levels; ++l) {
    const TierSpan& s = g.span[static_cast<std::size_t>(l)];
    const int next = l + 1 < g.levels ? g.span[static_cast<std::size_t>(l + 1)].below : g.size;
    const double count = std::max(0, next - s.below);
    alpha += count * s.latency;
    transfer = std::max(transfer, count * (c + s.half_bandwidth_message) / s.bandwidth);
  }
  return alpha + transfer;
}

// Chunks of n/size each tier carries per member in a forwarded all-to-all (collectives.hpp):
// the scale-out span's flat count times cross_share; every span inside a domain its flat count
// times the domains the group spans (copies from every source land there). Empty when flat.
struct ForwardedCounts {
  bool forwarded = false;
  std::array<double, kMaxTiers> count{};
};
ForwardedCounts forwarded_counts(const GroupPlacement& g, double cross_share) {
  ForwardedCounts f;
  if (g.levels < 2 || !(cross_share < 1.0) || g.outermost().tier != Tier::kScaleOut) return f;
  f.forwarded = true;
  const double domains = static_cast<double>(g.size) / static_cast<double>(g.outermost().below);
  for (int l = 0; l < g.levels; ++l) {
    const TierSpan& s = g.span[static_cast<std::size_t>(l)];
    const int next = l + 1 < g.levels ? g.span[static_cast<std::size_t>(l + 1)].below : g.size;
    const double flat = std::max(0, next - s.below);
    f.count[static_cast<std::size_t>(l)] =
        l == g.levels - 1 ? flat * std::max(cross_share, 0.0) : flat * domains;
  }
  return f;
}

}  // namespace

Time forwarded_all_to_all(const GroupPlacement& g, Bytes n, double cross_share) {
  if (g.size <= 1 || g.levels == 0 || !(n > Bytes{})) return Time{};
  const ForwardedCounts f = forwarded_counts(g, cross_share);
  if (!f.forwarded) return all_to_all(g, n);
  const Bytes c = n / g.size;
  Time alpha, transfer;
  for (int l = 0; l < g.levels; ++l) {
    const TierSpan& s = g.span[static_cast<std::size_t>(l)];
    const double count = f.count[static_cast<std::size_t>(l)];
    if (!(count > 0.0)) continue;
    // Messages to each peer position reached over this span (as the flat all-to-all's).
    const int next = l + 1 < g.levels ? g.span[static_cast<std::size_t>(l + 1)].below : g.size;
    alpha += static_cast<double>(std::max(0, next - s.below)) * s.latency;
    transfer = std::max(transfer, count * c / s.bandwidth + s.half_bandwidth_message / s.bandwidth);
  }
  return alpha + transfer;
}

std::array<Bytes, kMaxTiers> forwarded_all_to_all_link_bytes(const GroupPlacement& g, Bytes n,
                                                             double cross_share) {
  const ForwardedCounts f = forwarded_counts(g, cross_share);
  if (!f.forwarded) return link_bytes(g, Collective::kAllToAll, n);
  std::array<Bytes, kMaxTiers> out{};
  for (int l = 0; l < g.levels; ++l) {
    const auto tier = static_cast<std::size_t>(g.span[static_cast<std::size_t>(l)].tier);
    out[tier] += f.count[static_cast<std::size_t>(l)] * n / static_cast<double>(g.size);
  }
  return out;
}

namespace {

Time send_recv(const GroupPlacement& g, Bytes n) {
  const TierSpan& s = g.outermost();
  return message(s.latency, s.bandwidth, s.half_bandwidth_message, n);
}

Time by_algorithm(const GroupPlacement& g, Collective c, Bytes n, CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::kRing: return ring(g, c, n);
    case CollectiveAlgorithm::kTree: return tree(g, c, n);
    case CollectiveAlgorithm::kRecursiveDoubling: return recursive_doubling(g, c, n);
    case CollectiveAlgorithm::kTorus: return torus(g, c, n);
    case CollectiveAlgorithm::kHierarchical: return hierarchical(g, c, n);
    case CollectiveAlgorithm::kNcclTree: return nccl_tree(g, c, n);
    case CollectiveAlgorithm::kAuto: break;
  }
  return kInf;
}

constexpr CollectiveAlgorithm kCandidates[] = {
    CollectiveAlgorithm::kRing,         CollectiveAlgorithm::kTree,
    CollectiveAlgorithm::kRecursiveDoubling, CollectiveAlgorithm::kTorus,
    CollectiveAlgorithm::kHierarchical, CollectiveAlgorithm::kNcclTree};

// Candidates kAuto takes (library nccl: ring, and NCCL's tree for an all-reduce across the
// scale-out network; any: the rest) or can skip without changing its answer (any: the
// binomial-tree all-reduce never beats recursive doubling, twice its latency and bandwidth
// terms; the hierarchy on one tier is the ring; torus needs exactly one span).
bool worth_trying(const GroupPlacement& g, Collective c, CollectiveAlgorithm a) {
  if (g.library == CollectiveLibrary::kNccl) {
    return a == CollectiveAlgorithm::kRing ||
           (a == CollectiveAlgorithm::kNcclTree && c == Collective::kAllReduce &&
            g.outermost_tier == Tier::kScaleOut);
  }
  switch (a) {
    case CollectiveAlgorithm::kTree: return c != Collective::kAllReduce;
    case CollectiveAlgorithm::kHierarchical: return g.levels > 1;
    case CollectiveAlgorithm::kTorus: return g.levels == 1;
    case CollectiveAlgorithm::kNcclTree: return false;
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

Bandwidth ring_byte_rate(const GroupPlacement& g) {
  if (g.size <= 1 || g.levels == 0) return Bandwidth{};
  Bandwidth rate = g.span[0].bandwidth * g.span[0].below;
  for (int l = 1; l < g.levels; ++l) {
    const TierSpan& s = g.span[static_cast<std::size_t>(l)];
    rate = std::min(rate, s.bandwidth * s.below);
  }
  return rate;
}

Time collective_time(const GroupPlacement& g, Collective c, Bytes bytes, CollectiveAlgorithm a) {
  if (g.size <= 1 || g.levels == 0 || !(bytes > Bytes{})) return Time{};
  if (c == Collective::kSendRecv) return send_recv(g, bytes);
  if (c == Collective::kAllToAll) {
    return (a == CollectiveAlgorithm::kAuto || a == CollectiveAlgorithm::kRing)
               ? all_to_all(g, bytes)
               : kInf;
  }
  if (a != CollectiveAlgorithm::kAuto) return by_algorithm(g, c, bytes, a);
  Time best = kInf;
  for (const CollectiveAlgorithm candidate : kCandidates) {
    if (worth_trying(g, c, candidate)) best = std::min(best, by_algorithm(g, c, bytes, candidate));
  }
  return best;
}

CollectiveAlgorithm auto_algorithm(const GroupPlacement& g, Collective c, Bytes bytes) {
  if (g.size <= 1 || g.levels == 0 || !(bytes > Bytes{}) || c == Collective::kSendRecv ||
      c == Collective::kAllToAll) {
    return CollectiveAlgorithm::kRing;
  }
  CollectiveAlgorithm pick = CollectiveAlgorithm::kRing;
  Time best = kInf;
  for (const CollectiveAlgorithm candidate : kCandidates) {
    if (!worth_trying(g, c, candidate)) continue;
    const Time t = by_algorithm(g, c, bytes, candidate);
    if (t < best) {
      best = t;
      pick = candidate;
    }
  }
  return pick;
}

Bandwidth bus_bandwidth(Collective c, int members, Bytes bytes, Time time) {
  const Bandwidth algbw = bytes / time;
  const double p = members;
  switch (c) {
    case Collective::kAllReduce: return algbw * 2.0 * (p - 1.0) / p;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll: return algbw * (p - 1.0) / p;
    default: return algbw;
  }
}

std::array<Bytes, kMaxTiers> link_bytes(const GroupPlacement& g, Collective c, Bytes bytes) {
  std::array<Bytes, kMaxTiers> out{};
  if (g.size <= 1 || !(bytes > Bytes{}) || g.levels <= 0) return out;
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
  const Bytes volume = (c == Collective::kAllReduce ? 2.0 : 1.0) * (p - 1.0) / p * bytes;
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
