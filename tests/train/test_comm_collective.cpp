// PlacedComm (engine/train/comm_collective.hpp): a graph's collectives timed on their groups'
// placements, through a memo of the last 16 distinct ones.
#include <catch2/catch.hpp>

#include "engine/train/comm_collective.hpp"
#include "tests/system/system_fixtures.hpp"

namespace pathfinder {

TEST_CASE("PlacedComm: every collective as collective_time and link_bytes give it, past the memo",
          "[train]") {
  // 8 A100s over NVSwitch: the tensor group all 8, the data group 4 of them (stride 2). 40
  // distinct collectives (more than the memo's 16, so entries are replaced), each asked for
  // twice in a row and again after the others: always the direct computation's numbers.
  const SystemGraph sys = test::shipped_system("a100", 8);
  const GroupPlacement tensor = place_group(sys, 8, 1), data = place_group(sys, 4, 2);
  const PlacedComm comm({&tensor, nullptr, nullptr, &data, nullptr, nullptr});
  std::vector<Communication> all;
  for (int i = 1; i <= 20; ++i) {
    all.push_back({CommKind::kAllReduce, CommGroup::kTensor, units::kibibytes * (64.0 * i)});
    all.push_back({CommKind::kAllGather, CommGroup::kData, units::kibibytes * (64.0 * i)});
  }
  for (int round = 0; round < 2; ++round) {
    for (const Communication& c : all) {
      const GroupPlacement& g = c.group == CommGroup::kTensor ? tensor : data;
      const Collective kind = collective_of(c.kind);
      for (int again = 0; again < 2; ++again) {
        CHECK(comm.time(c) == collective_time(g, kind, c.bytes));
        CHECK(comm.link_bytes(c) == link_bytes(g, kind, c.bytes));
      }
    }
  }
  // The same bytes on another group or as another collective is another entry: an all-gather
  // of 1 MiB over 8 moves 7/8 MiB per member, the all-reduce twice that.
  const Communication ar{CommKind::kAllReduce, CommGroup::kTensor, units::kibibytes * 1024.0};
  const Communication ag{CommKind::kAllGather, CommGroup::kTensor, units::kibibytes * 1024.0};
  double sent_ar = 0.0, sent_ag = 0.0;
  for (const Bytes b : comm.link_bytes(ar)) sent_ar += b.si();
  for (const Bytes b : comm.link_bytes(ag)) sent_ag += b.si();
  CHECK(sent_ag == Approx(7.0 / 8.0 * 1024 * 1024));
  CHECK(sent_ar == Approx(2.0 * sent_ag));
}

}  // namespace pathfinder
