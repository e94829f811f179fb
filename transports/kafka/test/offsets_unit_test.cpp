// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The KFK-11 tracker: out-of-order acks of N = 3 workers commit only contiguous offsets (KFK-T8);
// a rewind (KFK-12) and a revoke make the deliveries they take back stale.

#include "offsets.hpp"

#include <gtest/gtest.h>

namespace babelqueue::kafka::detail {
namespace {

TEST(KafkaOffsets, OutOfOrderAcksOfThreeWorkersCommitTheContiguousPrefix) {  // KFK-T8
  OffsetTracker t;
  t.assign(0);
  EXPECT_EQ(t.position(0), std::nullopt);
  const auto e10 = *t.hand_out(0, 10);
  const auto e11 = *t.hand_out(0, 11);
  const auto e12 = *t.hand_out(0, 12);
  EXPECT_EQ(t.position(0), 10);
  EXPECT_TRUE(t.uncommitted().empty()) << "nothing settled: nothing to commit";
  EXPECT_TRUE(t.settle(0, 12, e12));
  EXPECT_EQ(t.position(0), 10);
  EXPECT_TRUE(t.settle(0, 11, e11));
  EXPECT_EQ(t.position(0), 10);
  EXPECT_TRUE(t.uncommitted().empty()) << "offset 10 is still outstanding";
  EXPECT_TRUE(t.settle(0, 10, e10));
  EXPECT_EQ(t.position(0), 13);
  EXPECT_FALSE(t.settle(0, 10, e10)) << "settled twice";
  t.committed(0, 13);
  EXPECT_TRUE(t.uncommitted().empty());
  t.uncommit(0);
  ASSERT_EQ(t.uncommitted().size(), 1U);
  EXPECT_EQ(t.uncommitted()[0], std::make_pair(0, std::int64_t{13}));
}

TEST(KafkaOffsets, LastCommitsAreThePositionsOnRecord) {  // what flush() re-sends (KFK-11)
  OffsetTracker t;
  t.assign(0);
  t.assign(1);
  EXPECT_TRUE(t.last_commits().empty());
  t.committed(1, 8);
  ASSERT_EQ(t.last_commits().size(), 1U);
  EXPECT_EQ(t.last_commits()[0], std::make_pair(1, std::int64_t{8}));
  t.uncommit(1);
  EXPECT_TRUE(t.last_commits().empty()) << "a failed commit is not on record";
}

TEST(KafkaOffsets, PartitionsAreIndependent) {
  OffsetTracker t;
  t.assign(0);
  t.assign(1);
  const auto a = *t.hand_out(0, 5);
  (void)*t.hand_out(1, 7);
  EXPECT_TRUE(t.settle(0, 5, a));
  EXPECT_EQ(t.position(0), 6);
  EXPECT_EQ(t.position(1), 7);
  EXPECT_EQ(t.outstanding(1), 1U);
  EXPECT_EQ(t.outstanding(0), 0U);
}

TEST(KafkaOffsets, RewindMakesLaterDeliveriesStale) {  // KFK-12
  OffsetTracker t;
  t.assign(0);
  const auto e0 = *t.hand_out(0, 0);
  const auto e1 = *t.hand_out(0, 1);
  const auto e2 = *t.hand_out(0, 2);
  EXPECT_TRUE(t.rewind(0, 1));
  EXPECT_EQ(t.position(0), 0);
  EXPECT_FALSE(t.settle(0, 1, e1));
  EXPECT_FALSE(t.settle(0, 2, e2));
  EXPECT_TRUE(t.settle(0, 0, e0)) << "an offset before the rewind stays valid";
  EXPECT_EQ(t.position(0), 1) << "never past the rewound offset";
  const auto again = *t.hand_out(0, 1);
  EXPECT_NE(again, e1);
  EXPECT_FALSE(t.settle(0, 1, e1)) << "the old delivery of a re-fetched offset";
  EXPECT_TRUE(t.settle(0, 1, again));
  EXPECT_EQ(t.position(0), 2);
  EXPECT_FALSE(t.rewind(3, 0)) << "not assigned";
}

TEST(KafkaOffsets, RevokeAndReassignMakeOldDeliveriesStale) {
  OffsetTracker t;
  t.assign(0);
  const auto e = *t.hand_out(0, 4);
  t.revoke(0);
  EXPECT_FALSE(t.assigned(0));
  EXPECT_FALSE(t.hand_out(0, 5).has_value());
  EXPECT_FALSE(t.settle(0, 4, e));
  t.assign(0);
  const auto again = *t.hand_out(0, 4);
  EXPECT_FALSE(t.settle(0, 4, e));
  EXPECT_TRUE(t.settle(0, 4, again));
  EXPECT_EQ(t.position(0), 5);
}

}  // namespace
}  // namespace babelqueue::kafka::detail
