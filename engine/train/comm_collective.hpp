// The system model's collective for a graph's communication kind.
#pragma once

#include "engine/graph/compute_graph.hpp"
#include "engine/system/collectives.hpp"

namespace pathfinder {

[[nodiscard]] inline Collective collective_of(CommKind k) {
  switch (k) {
    case CommKind::kAllReduce: return Collective::kAllReduce;
    case CommKind::kReduceScatter: return Collective::kReduceScatter;
    case CommKind::kAllGather: return Collective::kAllGather;
    case CommKind::kSendRecv: return Collective::kSendRecv;
  }
  return Collective::kAllReduce;
}

}  // namespace pathfinder
