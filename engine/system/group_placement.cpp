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

void set_bandwidths(TierSpan& s, const TierLink& link, long long block, int sharers) {
  const Bandwidth base = link.usable_bandwidth();
  const Time lat = link.usable_latency();
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
    case Topology::kRing: {
      const LineRing r = line_ring(port_bw, lat, link.group_size, s.members, s.spacing, true);
      s.bandwidth = r.bandwidth;
      s.latency = r.latency;
      break;
    }
    case Topology::kMesh2D:
    case Topology::kTorus2D: {
      const bool torus = link.topology == Topology::kTorus2D;
      const int x = link.grid_x, d = s.spacing, m = s.members;
      int a = m, dx = d, b = 1, dy = 1;  // a x b block, dx and dy apart
      if (static_cast<long long>(d) * (m - 1) < x) {
        // one row
      } else if (d % x == 0) {
        a = 1;
        b = m;
        dy = d / x;
      } else if (x % d == 0 && (static_cast<long long>(m) * d) % x == 0) {
        a = x / d;
        b = static_cast<int>(static_cast<long long>(m) * d / x);
      }  // else: an irregular set, costed as one row (approximation)
      s.grid_x = a;
      s.grid_y = b;
      if (a > 1) {
        const LineRing r = line_ring(port_bw, lat, link.grid_x, a, dx, torus);
        s.bandwidth_x = r.bandwidth;
        s.latency_x = r.latency;
      }
      if (b > 1) {
        const LineRing r = line_ring(port_bw, lat, link.grid_y, b, dy, torus);
        s.bandwidth_y = r.bandwidth;
        s.latency_y = r.latency;
      }
      if (b == 1) {
        s.bandwidth = s.bandwidth_x;
        s.latency = s.latency_x;
      } else if (a == 1) {
        s.bandwidth = s.bandwidth_y;
        s.latency = s.latency_y;
      } else {
        // A Hamiltonian cycle through the block: one port per direction, two when the torus
        // wraps both axes.
        const bool whole = torus && a * dx == link.grid_x && b * dy == link.grid_y;
        const int far = std::max(dx, dy);
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
