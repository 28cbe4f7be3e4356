#include "bench/cache_ceiling.h"

#include <vector>

#include "gtest/gtest.h"

namespace ordo::bench {
namespace {

TEST(CacheCeilingTest, RepeatsAndSchedulingBoundTheSpeedUp) {
  // Two first sends of 10 ms with 4 ms of scheduling each, one repeat of
  // 10 ms: a perfect cache leaves 2 x 6 ms of the 30 ms.
  const std::vector<ServedCall> calls = {
      {absl::Milliseconds(10), absl::Milliseconds(4), false},
      {absl::Milliseconds(10), absl::Milliseconds(4), false},
      {absl::Milliseconds(10), absl::Milliseconds(4), true},
  };
  const CacheCeiling ceiling = CacheCeilingOf(calls);
  EXPECT_EQ(ceiling.calls, 3);
  EXPECT_EQ(ceiling.repeats, 1);
  EXPECT_DOUBLE_EQ(ceiling.schedule_share, 0.4);
  EXPECT_DOUBLE_EQ(ceiling.speedup, 30.0 / 12.0);
}

TEST(CacheCeilingTest, SchedulingLongerThanTheCallCountsAsTheCall) {
  const std::vector<ServedCall> calls = {
      {absl::Milliseconds(10), absl::Milliseconds(12), false},
      {absl::Milliseconds(10), absl::Milliseconds(5), false},
  };
  const CacheCeiling ceiling = CacheCeilingOf(calls);
  EXPECT_DOUBLE_EQ(ceiling.schedule_share, 0.75);
  EXPECT_DOUBLE_EQ(ceiling.speedup, 4.0);
}

TEST(CacheCeilingTest, NothingLeftToTimeGivesNoBound) {
  EXPECT_EQ(CacheCeilingOf({}).speedup, 0);
  const std::vector<ServedCall> only_repeats = {{absl::Milliseconds(3), absl::ZeroDuration(), true}};
  EXPECT_EQ(CacheCeilingOf(only_repeats).speedup, 0);
  EXPECT_EQ(CacheCeilingOf(only_repeats).repeats, 1);
}

TEST(CacheCeilingTest, TheWindowCeilingFreesOnlyTheSeenShareOfScheduling) {
  // Two first sends of 10 ms with 4 ms of scheduling, of which a window
  // cache removes half of the first's and none of the second's; one repeat
  // of 10 ms. Left: 10 - 2 + 10 of the 30 ms.
  const std::vector<ServedCall> calls = {
      {absl::Milliseconds(10), absl::Milliseconds(4), false, 0.5},
      {absl::Milliseconds(10), absl::Milliseconds(4), false, 0.0},
      {absl::Milliseconds(10), absl::Milliseconds(4), true, 1.0},
  };
  const CacheCeiling ceiling = CacheCeilingOf(calls);
  EXPECT_DOUBLE_EQ(ceiling.free_schedule_share, 2.0 / 20.0);
  EXPECT_DOUBLE_EQ(ceiling.window_speedup, 30.0 / 18.0);
  EXPECT_DOUBLE_EQ(ceiling.speedup, 30.0 / 12.0);
  EXPECT_LE(ceiling.window_speedup, ceiling.speedup);
}

TEST(CacheCeilingTest, FreeScheduleShareWeighsPartsByTheirTime) {
  // A 9 ms part with 3 of its 6 ops seen, a 1 ms part with all 2 seen:
  // (4.5 + 1) of 10 ms.
  const std::vector<PartTiming> parts = {
      {absl::Milliseconds(9), 6, 3},
      {absl::Milliseconds(1), 2, 2},
      {absl::ZeroDuration(), 0, 0},  // a cached part: no time, no weight
  };
  EXPECT_DOUBLE_EQ(FreeScheduleShare(parts), 0.55);
  EXPECT_EQ(FreeScheduleShare({}), 0);
  // Time growing as ops squared: the first part keeps a quarter of its 9 ms.
  EXPECT_DOUBLE_EQ(FreeScheduleShare(parts, 2), (9 * 0.75 + 1) / 10);
}

TEST(CacheCeilingTest, OpsExponentFitsAPowerLaw) {
  std::vector<SizedTime> cubic;
  for (int ops : {10, 20, 40, 80}) {
    cubic.push_back({ops, absl::Nanoseconds(int64_t{ops} * ops * ops)});
  }
  EXPECT_NEAR(OpsExponent(cubic), 3, 1e-9);
  const std::vector<SizedTime> one_size = {{10, absl::Microseconds(1)},
                                           {10, absl::Microseconds(2)}};
  EXPECT_EQ(OpsExponent(one_size), 0);
  EXPECT_EQ(OpsExponent({}), 0);
}

// A hand-made stream: cells A, B, C of 10, 20 and 30 ops; a stem S of 1 op.
TEST(CacheCeilingTest, RepeatKindsFollowTheIssuesThreeKinds) {
  const StreamSegment stem{"S", 1, false};
  const StreamSegment a{"A", 10, true}, b{"B", 20, true}, c{"C", 30, true};
  const std::vector<StreamCandidate> stream = {
      {false, {stem, a, a, b}},  // new S, A, B; A again within
      {false, {stem, a, c}},     // S and A across; C new
      {true, {stem, a, c}},      // the second candidate again
      {false, {stem, c, c, b}},  // C across, C within (also seen before), B across
  };
  const RepeatKinds kinds = RepeatKindsOf(stream);
  EXPECT_EQ(kinds.candidates, 4);
  EXPECT_EQ(kinds.repeated_candidates, 1);
  EXPECT_EQ(kinds.cells.of(RepeatKind::kRepeatedCandidate), 2);
  EXPECT_EQ(kinds.cells.of(RepeatKind::kWithinCandidate), 2);
  EXPECT_EQ(kinds.cells.of(RepeatKind::kAcrossCandidates), 3);
  EXPECT_EQ(kinds.cells.of(RepeatKind::kNew), 3);
  EXPECT_EQ(kinds.cells.total(), 10);
  EXPECT_EQ(kinds.cell_ops.of(RepeatKind::kRepeatedCandidate), 40);
  EXPECT_EQ(kinds.cell_ops.of(RepeatKind::kWithinCandidate), 10 + 30);
  EXPECT_EQ(kinds.cell_ops.of(RepeatKind::kAcrossCandidates), 10 + 30 + 20);
  EXPECT_EQ(kinds.cell_ops.of(RepeatKind::kNew), 10 + 20 + 30);
  EXPECT_EQ(kinds.other_ops.of(RepeatKind::kNew), 1);
  EXPECT_EQ(kinds.other_ops.of(RepeatKind::kAcrossCandidates), 2);
  EXPECT_EQ(kinds.other_ops.of(RepeatKind::kRepeatedCandidate), 1);
  // Seen in an earlier candidate, whatever the kind: the first candidate's
  // second A was only seen within, the last one's second C before too.
  EXPECT_EQ(kinds.seen_before[0], (std::vector<bool>{false, false, false, false}));
  EXPECT_EQ(kinds.seen_before[1], (std::vector<bool>{true, true, false}));
  EXPECT_TRUE(kinds.seen_before[2].empty());
  EXPECT_EQ(kinds.seen_before[3], (std::vector<bool>{true, true, true, true}));
}

TEST(CacheCeilingTest, ScheduleTimeByOpsBinsByOpCount) {
  // Eight parts: time proportional to ops (1 us per op) but for the two
  // largest (3 us per op).
  std::vector<SizedTime> parts;
  for (int ops : {10, 20, 30, 40, 50, 60}) parts.push_back({ops, absl::Microseconds(ops)});
  for (int ops : {70, 80}) parts.push_back({ops, absl::Microseconds(3 * ops)});
  parts.push_back({0, absl::Microseconds(5)});  // no ops: left out
  const std::vector<OpsBin> bins = ScheduleTimeByOps(parts);
  ASSERT_EQ(bins.size(), 4u);
  EXPECT_EQ(bins[0].min_ops, 10);
  EXPECT_EQ(bins[0].max_ops, 20);
  EXPECT_EQ(bins[0].count, 2);
  EXPECT_DOUBLE_EQ(bins[0].median_us_per_op, 1);
  EXPECT_DOUBLE_EQ(bins[0].median_ms, 0.010);
  EXPECT_DOUBLE_EQ(bins[2].median_us_per_op, 1);
  EXPECT_EQ(bins[3].min_ops, 70);
  EXPECT_DOUBLE_EQ(bins[3].median_us_per_op, 3);
  EXPECT_TRUE(ScheduleTimeByOps({}).empty());
}

}  // namespace
}  // namespace ordo::bench
