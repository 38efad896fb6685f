// Collective communication costs on a placed group (issue 4): alpha-beta models by algorithm.
//
// Sources: R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication
// operations in MPICH", IJHPCA 19(1), 2005 (ring, recursive doubling/halving, binomial tree,
// pairwise exchange); P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for
// clusters of workstations", JPDC 69(2), 2009 (the ring all-reduce is bandwidth optimal).
//
// Notation: p members, n = `bytes`, the full buffer of one member (the all-reduce input, the
// reduce-scatter input, the all-gather output, the all-to-all send buffer, the broadcast
// message). Per span l of the placement (innermost first): m_l members, alpha_l latency per
// step, B_l bandwidth per member, h_l half-bandwidth message. Every message of c bytes costs
// alpha + (c + h)/B: the achieved bandwidth B·c/(c + h) reaches half the peak at c = h.
//
//   ring all-reduce        2(p-1) steps of n/p; reduce-scatter and all-gather (p-1) steps:
//                          2(p-1)a + 2(p-1)/p·nβ on one tier. Across tiers a step costs the
//                          mean hop latency (the ring is pipelined: its latency is the sum over
//                          its hops) plus the slowest tier's transfer (n/p/k_l + h_l)/B_l, with
//                          k_l = members per position below tier l (NCCL runs k_l rings, each
//                          crossing tier l through another member's port).
//   recursive doubling     all-reduce: log2(m_l) exchanges of n per tier, inner first
//                          (log2 p (a + nβ) on one tier); reduce-scatter (recursive halving)
//                          and all-gather: log2(m_l) a_l + (m_l-1)/m_l·n_l·β_l per tier, with
//                          n_l the data left after the inner tiers (n / m_0 / … ).
//   tree                   all-reduce: binomial reduce + broadcast, 2·Σ log2(m_l)(a_l + nβ_l);
//                          broadcast: binomial, Σ log2(m_l)(a_l + nβ_l).
//   torus                  one grid span (mesh/torus, 2-D a x b or 3-D a x b x c): reduce-
//                          scatter along x, then along y on n/a (and z on n/(a·b)), all-gather
//                          back in reverse (rings along each dimension; an all-reduce both).
//   hierarchical           reduce-scatter (ring) inside each inner tier, all-reduce (ring)
//                          across the outermost on x = n/(m_0·…), all-gather back inside.
//   nccl-tree              NCCL's tree all-reduce: as hierarchical inside ("a reduce intra-node,
//                          allreduce internode and broadcast intra-node … with multiple NICs …
//                          a reduce-scatter+allreduce+allgather", S. Jeaugey, NVIDIA/nccl issue
//                          530), across the outermost span a pipelined double binary tree
//                          (Sanders, Speck, Träff 2009; NCCL 2.4): 2·ceil(log2 m)·a of depth up
//                          and down, and each member sending 2x ("for tree it would be 2*S",
//                          NVIDIA/nccl issue 457), at 0.92 of the bandwidth as NCCL's tuning
//                          model credits it: 2·ceil(log2 m)·a + 2(x + h)/(0.92 B).
//   all-to-all (pairwise)  p-1 messages of n/p; tier l's port carries those to members outside
//                          the member's tier-l position but inside its tier-(l+1) position:
//                          Σ c_l a_l + max_l c_l (n/p + h_l)/B_l, c_l that count.
//   broadcast (ring)       pipelined chain: (p-1) a + n/B_ring.
//   send/recv              a + (n + h)/B across the outermost tier (the slowest pair).
//
// Reduction compute: NCCL fuses the reduction into its copy kernels, so it overlaps the
// transfer; it only binds when the device memory cannot keep up (two reads and one write per
// byte reduced). Steps that reduce take max(transfer, c / reduction_bandwidth).
//
// kAuto takes the fastest algorithm that applies, among those of the placement's library:
//   any   every algorithm above but nccl-tree (the paper's idealized system).
//   nccl  what NCCL implements: all-reduce by ring, or by its tree when the group spans the
//         scale-out network ("NCCL only enables the tree algorithm in multi-node cases",
//         NVIDIA/nccl issue 211); reduce-scatter, all-gather and broadcast by ring only ("The
//         Tree algorithm implements multiple reduce/broadcast operations, so it doesn't apply
//         to allgather/reducescatter", issue 1473; no tree broadcast, issue 317; PAT, NCCL
//         2.23, only with one GPU per node); no recursive doubling, no torus rings. Its
//         ring all-reduce, reduce-scatter and all-gather cost what NCCL's tuning model says
//         (src/graph/tuning.cc): the fastest of LL, LL128 and Simple, each a latency per
//         call, a latency per step by the link the step crosses (NVLink-class or network)
//         and a share of the ring's bandwidth, in place of the spans' a and h (collectives.cpp
//         lists the figures). Its tree's inner rings, broadcast, send/recv and all-to-all
//         keep the spans' a and h. An algorithm that does not apply to the
// collective or the placement costs +infinity (kTorus needs one grid span; kHierarchical
// applies to all-reduce, reduce-scatter and all-gather). Send/recv ignores the algorithm; so
// does all-to-all except that only kAuto and kRing (pairwise) apply. p = 1 or n <= 0 costs 0.
// No allocation: this runs in the inner loop of strategy search.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/system/group_placement.hpp"

namespace pathfinder {

enum class Collective { kAllReduce, kReduceScatter, kAllGather, kAllToAll, kBroadcast, kSendRecv };
enum class CollectiveAlgorithm {
  kAuto,
  kRing,
  kTree,
  kRecursiveDoubling,
  kTorus,
  kHierarchical,
  kNcclTree
};

[[nodiscard]] std::string_view to_string(Collective c);
[[nodiscard]] std::string_view to_string(CollectiveAlgorithm a);
[[nodiscard]] std::optional<Collective> parse_collective(std::string_view s);
[[nodiscard]] std::optional<CollectiveAlgorithm> parse_collective_algorithm(std::string_view s);
[[nodiscard]] std::vector<std::string> valid_collectives();
[[nodiscard]] std::vector<std::string> valid_collective_algorithms();

// The bytes per second each member moves in a large pipelined ring over g (one direction): the
// slowest span's bandwidth times the rings crossing it at once, each through another member's
// port (the flat ring's bandwidth term above); zero for a group of one.
[[nodiscard]] Bandwidth ring_byte_rate(const GroupPlacement& g);

// Time for every member of g to finish collective c on `bytes` (see above).
[[nodiscard]] Time collective_time(const GroupPlacement& g, Collective c, Bytes bytes,
                                   CollectiveAlgorithm a = CollectiveAlgorithm::kAuto);

// Bytes one member sends over each tier (indexed by Tier) for collective c on `bytes`: the
// bandwidth-optimal volume whatever the algorithm (energy accounting, issue 16). Ring-shaped
// collectives (all-reduce 2(p-1)/p·n, reduce-scatter and all-gather (p-1)/p·n, broadcast
// (p-1)/p·n on average) spread it over the tiers as a ring through every member crosses them:
// of its p hops, Π_{j>=l} m_j − Π_{j>l} m_j cross span l and no outer one (the outermost
// span m_l: it carries the wrap-around). All-to-all sends
// n/p to each of the c_l = (members below span l)·(m_l − 1) members first reached over span
// l; send/recv sends n over the outermost span. p = 1 or n <= 0 sends nothing.
[[nodiscard]] std::array<Bytes, kMaxTiers> link_bytes(const GroupPlacement& g, Collective c,
                                                      Bytes bytes);

// An all-to-all whose copies bound for one remote scale-up domain cross the scale-out tier
// once and are forwarded inside it (DeepEP's dispatch and combine: "forwarding data from NVLink
// domain to RDMA domain"; Megatron-Core's flex dispatcher): of the flat all-to-all's
// scale-out bytes only `cross_share` (a token's distinct remote domains over its copies) cross
// it, and each tier inside a domain carries what lands on the domain's other members from
// every source, the forwarding overlapped with the transfers (the slower tier binds). Without a
// scale-out span, or at cross_share >= 1, the flat all-to-all. Time and bytes per tier.
[[nodiscard]] Time forwarded_all_to_all(const GroupPlacement& g, Bytes bytes, double cross_share);
[[nodiscard]] std::array<Bytes, kMaxTiers> forwarded_all_to_all_link_bytes(const GroupPlacement& g,
                                                                         Bytes bytes,
                                                                         double cross_share);

// The algorithm kAuto picks (the first of ring, tree, recursive doubling, torus,
// hierarchical among equals); kRing for p = 1.
[[nodiscard]] CollectiveAlgorithm auto_algorithm(const GroupPlacement& g, Collective c,
                                                 Bytes bytes);

// nccl-tests' bus bandwidth of a measured or modelled time: algbw = bytes/time times
// 2(p-1)/p for all-reduce, (p-1)/p for reduce-scatter, all-gather and all-to-all, 1 otherwise.
[[nodiscard]] Bandwidth bus_bandwidth(Collective c, int members, Bytes bytes, Time time);

}  // namespace pathfinder
