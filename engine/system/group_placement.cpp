#include "engine/system/group_placement.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

namespace pathfinder {
namespace {

struct Occupancy {
  int members = 1;
  int spacing = 1;
};

// Positions floor(k·S / I) mod G for k < size: which positions of a tier (I devices each, G of
// them) the group occupies. Exact in closed form when S <= I (consecutive members land on the
// same or the next position) or I divides S; otherwise counted over one period.
Occupancy occupancy(long long below, long long positions, long long size, long long stride) {
  if (size <= 1 || positions <= 1) return {};
  if (stride <= below) {
    const long long m = std::min(positions, (size - 1) * stride / below + 1);
    return {static_cast<int>(m), 1};
  }
  if (stride % below == 0) {
    const long long s = stride / below;
    const long long r = s % positions;
    if (r == 0) return {};
    const long long m = std::min(size, positions / std::gcd(s, positions));
    return {static_cast<int>(m), static_cast<int>(r)};
  }
  // Rare (a stride that is not a multiple of the inner tier's size): count one period.
  const long long period = std::min(size, below * positions);
  std::vector<char> seen(static_cast<std::size_t>(positions), 0);
  int m = 0;
  for (long long k = 0; k < period; ++k) {
    const auto p = static_cast<std::size_t>((k * stride / below) % positions);
    if (seen[p] == 0) {
      seen[p] = 1;
      ++m;
    }
  }
  return {m, 1};
}

// A ring along one line of `length` positions through `count` of them `spacing` apart: a
// torus line covered whole wraps around and runs both directions; otherwise the ring is
// embedded with dilation 2 (each link used once per direction, latency doubled).
struct LineRing {
  Bandwidth bandwidth;
  Time latency;
};
LineRing line_ring(Bandwidth port_bw, Time latency, int length, int count, int spacing,
                   bool wraps) {
  const bool whole = wraps && count * spacing == length;
  LineRing r;
  r.bandwidth = (whole ? 2.0 : 1.0) * port_bw / spacing;
  r.latency = latency * spacing * ((whole || count <= 2) ? 1.0 : 2.0);
  return r;
}

// The block a group's m positions `d` apart occupy on an X x Y (x Z) grid laid out x-fastest:
// positions per axis and their spacing. One row when they fit in one; a column (or a plane of
// the y-z grid) when d is a multiple of X; whole rows of X/d positions when d divides X; an
// irregular set (or one left on a grid of one position) is costed as one row (approximation).
struct Block {
  std::array<int, 3> n{1, 1, 1}, d{1, 1, 1};
};
Block grid_block(int m, int d, int X, int Y, int Z) {
  Block k;
  k.n[0] = m;
  k.d[0] = d;
  if (static_cast<long long>(d) * (m - 1) < X || (X <= 1 && Y <= 1 && Z <= 1)) return k;
  if (d % X == 0) {  // along y (and z): the same problem on the Y x Z grid
    const Block yz = grid_block(m, d / X, Y, Z, 1);
    return Block{{1, yz.n[0], yz.n[1]}, {1, yz.d[0], yz.d[1]}};
  }
  if (X % d == 0 && (static_cast<long long>(m) * d) % X == 0) {  // whole rows, consecutive
    const Block yz = grid_block(static_cast<int>(static_cast<long long>(m) * d / X), 1, Y, Z, 1);
    return Block{{X / d, yz.n[0], yz.n[1]}, {d, yz.d[0], yz.d[1]}};
  }
  return k;
}

void set_bandwidths(TierSpan& s, const TierLink& link, long long block, int sharers) {
  const Bandwidth base = link.usable_bandwidth();
  const Time lat = link.usable_latency();
  s.latency_congestion = link.latency_congestion;
  const Bandwidth port_bw = base / link.ports();
  switch (link.topology) {
    case Topology::kSwitch:
      s.bandwidth = base;
      s.latency = lat;
      break;
    case Topology::kFatTree: {
      const long long leaf = link.leaf_size;
      const bool spans_leaves = block > leaf || leaf % block != 0;
      s.bandwidth = base / (spans_leaves ? link.oversubscription : 1.0);
      s.latency = lat;
      break;
    }
    case Topology::kFullMesh:
      // The group's members reach each other over their own direct links, members - 1 of them
      // each, one hop: a collective's rings are laid over edge-disjoint cycles of the clique
      // (RCCL's channels), and the links of concurrent groups are disjoint (a link joins one
      // pair of positions, which share at most one group), so no sharer divides them.
      s.bandwidth = port_bw * (s.members - 1);
      s.latency = lat;
      return;
    case Topology::kRing: {
      const LineRing r = line_ring(port_bw, lat, link.group_size, s.members, s.spacing, true);
      s.bandwidth = r.bandwidth;
      s.latency = r.latency;
      break;
    }
    case Topology::kMesh2D:
    case Topology::kTorus2D:
    case Topology::kMesh3D:
    case Topology::kTorus3D: {
      const bool torus = wraps(link.topology);
      const Block k = grid_block(s.members, s.spacing, link.grid_x, link.grid_y, link.grid_z);
      s.grid_x = k.n[0];
      s.grid_y = k.n[1];
      s.grid_z = k.n[2];
      const std::array<int, 3> length{link.grid_x, link.grid_y, link.grid_z};
      std::array<Bandwidth*, 3> bw{&s.bandwidth_x, &s.bandwidth_y, &s.bandwidth_z};
      std::array<Time*, 3> latency{&s.latency_x, &s.latency_y, &s.latency_z};
      int axes = 0, far = 1;
      bool whole = torus;
      for (std::size_t a = 0; a < 3; ++a) {
        if (k.n[a] <= 1) continue;
        const LineRing r = line_ring(port_bw, lat, length[a], k.n[a], k.d[a], torus);
        *bw[a] = r.bandwidth;
        *latency[a] = r.latency;
        s.bandwidth = r.bandwidth;  // the one axis's ring, when only one is used
        s.latency = r.latency;
        ++axes;
        far = std::max(far, k.d[a]);
        whole = whole && k.n[a] * k.d[a] == length[a];
      }
      if (axes > 1) {
        // A Hamiltonian cycle through the block: one port per direction, two when the torus
        // wraps every axis it uses whole.
        s.bandwidth = (whole ? 2.0 : 1.0) * port_bw / far;
        s.latency = lat * far;
      }
      break;
    }
  }
  const double share = std::max(1, sharers);
  s.bandwidth /= share;
  s.bandwidth_x /= share;
  s.bandwidth_y /= share;
  s.bandwidth_z /= share;
}

}  // namespace

int tier_members(const SystemGraph& g, int tier_index, int size, int stride) {
  const TierLink& l = g.tiers[static_cast<std::size_t>(tier_index)];
  return occupancy(l.devices_below, l.group_size, size, stride).members;
}

GroupPlacement place_group(const SystemGraph& g, int size, int stride, const PortSharing& sharing) {
  PF_ASSERT(size >= 1 && stride >= 1);
  PF_ASSERT(static_cast<long long>(size - 1) * stride < g.devices);
  GroupPlacement p;
  p.size = size;
  p.stride = stride;
  p.reduction_bandwidth = g.memory_bandwidth / 3.0;
  p.library = g.collectives;
  if (size == 1) return p;
  const long long block = static_cast<long long>(size) * stride;
  int below = 1;
  for (std::size_t t = 0; t < g.tiers.size(); ++t) {
    const TierLink& link = g.tiers[t];
    const Occupancy o = occupancy(link.devices_below, link.group_size, size, stride);
    if (o.members <= 1) continue;
    PF_ASSERT(p.levels < kMaxTiers);
    TierSpan& s = p.span[static_cast<std::size_t>(p.levels++)];
    s.tier = link.tier;
    s.topology = link.topology;
    s.members = o.members;
    s.spacing = o.spacing;
    s.below = std::min(below, size);
    s.half_bandwidth_message = link.half_bandwidth_message;
    set_bandwidths(s, link, block, sharing.sharers[t]);
    below *= o.members;
  }
  if (p.levels > 0) p.outermost_tier = p.outermost().tier;
  return p;
}

}  // namespace pathfinder
