// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Publisher-confirm bookkeeping (decision D-9, AMQP-16): which waiting publishes a basic.ack or
// basic.nack completes, for single and `multiple` confirms in any order.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "confirms.hpp"

namespace {

using babelqueue::amqp::detail::ConfirmTracker;

// "name" or "name!" (nacked) for each completed batch, in order.
std::vector<std::string> names(const std::vector<ConfirmTracker<std::string>::Completed>& done) {
  std::vector<std::string> out;
  for (const auto& c : done)
    out.push_back(c.waiter + (c.nacked ? "!" : ""));
  return out;
}

using Names = std::vector<std::string>;

TEST(AmqpConfirms, D9_AMultipleAckCompletesEveryBatchUpToItsTag) {
  ConfirmTracker<std::string> t;
  t.add(1, "a");  // 1
  t.add(3, "b");  // 2..4
  t.add(2, "c");  // 5..6
  EXPECT_EQ(names(t.settle(3, true, false)), Names{"a"});
  EXPECT_EQ(names(t.settle(6, true, false)), (Names{"b", "c"}));
  EXPECT_TRUE(t.empty());
}

TEST(AmqpConfirms, D9_SingleAcksInAnyOrderCompleteABatchOnlyWhenAllCame) {
  ConfirmTracker<std::string> t;
  t.add(3, "b");  // 1..3
  EXPECT_TRUE(t.settle(3, false, false).empty());
  EXPECT_TRUE(t.settle(1, false, false).empty());
  EXPECT_EQ(names(t.settle(2, false, false)), Names{"b"});
}

TEST(AmqpConfirms, D9_ALaterBatchMayCompleteBeforeAnEarlierOne) {
  ConfirmTracker<std::string> t;
  t.add(1, "a");  // 1
  t.add(1, "b");  // 2
  EXPECT_EQ(names(t.settle(2, false, false)), Names{"b"});
  EXPECT_EQ(names(t.settle(1, false, false)), Names{"a"});
}

TEST(AmqpConfirms, AMQP16_ANackFailsOnlyTheBatchesItCovers) {
  ConfirmTracker<std::string> t;
  t.add(2, "a");                                           // 1..2
  t.add(2, "b");                                           // 3..4
  t.add(1, "c");                                           // 5
  EXPECT_TRUE(t.settle(3, false, true).empty());           // b's 3 nacked, 4 outstanding
  EXPECT_EQ(names(t.settle(2, true, false)), Names{"a"});  // multiple ack 1..2
  EXPECT_EQ(names(t.settle(5, true, false)), (Names{"b!", "c"}));
}

TEST(AmqpConfirms, AMQP16_AMultipleNackFailsEveryOutstandingBatchUpToIt) {
  ConfirmTracker<std::string> t;
  t.add(1, "a");  // 1
  t.add(1, "b");  // 2
  t.add(1, "c");  // 3
  EXPECT_EQ(names(t.settle(1, false, false)), Names{"a"});
  EXPECT_EQ(names(t.settle(2, true, true)), Names{"b!"});
  EXPECT_EQ(names(t.settle(3, false, false)), Names{"c"});
}

TEST(AmqpConfirms, ResetHandsBackEveryWaiterAndRestartsTheNumbering) {
  ConfirmTracker<std::string> t;
  t.add(2, "a");
  t.add(1, "b");
  EXPECT_EQ(t.reset(), (Names{"a", "b"}));
  EXPECT_TRUE(t.empty());
  t.add(1, "c");  // numbered 1 again on the new channel
  EXPECT_EQ(names(t.settle(1, false, false)), Names{"c"});
}

TEST(AmqpConfirms, AConfirmOfNothingOutstandingChangesNothing) {
  ConfirmTracker<std::string> t;
  t.add(2, "a");
  EXPECT_TRUE(t.settle(7, false, false).empty());
  EXPECT_EQ(names(t.settle(2, true, false)), Names{"a"});
}

}  // namespace
