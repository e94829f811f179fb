// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/testing/contract.hpp>

/// @file
/// ReleaseContract: Releaser (RT-3): a released delivery comes back, its attempt counted as
/// `Promises::release_counts` says, and a stale ack does not remove the redelivery. Whether the
/// delay is honoured is ReleaseDelayContract's. See contract.hpp for how to instantiate it.

namespace babelqueue::testing {

/// The fixture of ReleaseContract.
///
/// Thread-safety: a GoogleTest fixture.
template <class Traits>
class ReleaseContract : public ContractTest<Traits, Releaser> {
 protected:
  /// Expects `next` to be `previous` delivered once more, its attempt counted.
  static void expect_counted(const ReceivedMessage& previous, const ReceivedMessage& next) {
    EXPECT_EQ(body_number(next.body), body_number(previous.body)) << "another message came";
    if (Traits::promises.release_counts == AttemptCounting::DeliveryCount) {
      EXPECT_GE(previous.delivery_count, 1);
      EXPECT_EQ(next.delivery_count, previous.delivery_count + 1);
    } else {
      const auto before = body_attempts(previous.body);
      ASSERT_TRUE(before.has_value()) << previous.body;
      EXPECT_EQ(body_attempts(next.body), *before + 1) << next.body;
    }
  }
};

TYPED_TEST_SUITE_P(ReleaseContract);

TYPED_TEST_P(ReleaseContract, RT3_AReleasedDeliveryComesBackWithItsAttemptCounted) {
  Transport& t = this->transport();
  Releaser& releaser = this->template cap<Releaser>();
  auto previous = this->publish_and_pop(1);
  ASSERT_TRUE(previous.has_value());
  for (int release = 1; release <= 2; ++release) {
    SCOPED_TRACE(::testing::Message() << "release " << release);
    ASSERT_TRUE(releaser.release(*previous, std::chrono::milliseconds::zero()).ok());
    auto next = pop_message(t, this->queue(), kWithin);
    ASSERT_TRUE(next.has_value()) << "the released message never came back";
    TestFixture::expect_counted(*previous, *next);
    previous = std::move(next);
  }
  EXPECT_TRUE(ack_and_settle(t, *previous).ok());
  EXPECT_FALSE(pop_message(t, this->queue(), kBriefly).has_value());
}

TYPED_TEST_P(ReleaseContract, RT3_AStaleAckAfterReleaseDoesNotRemoveTheRedelivery) {
  Transport& t = this->transport();
  const auto first = this->publish_and_pop(1);
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(
      this->template cap<Releaser>().release(*first, std::chrono::milliseconds::zero()).ok());
  EXPECT_TRUE(is_promised(ack_and_settle(t, *first), TestFixture::promises.stale_settle_error));
  const auto again = pop_message(t, this->queue(), kWithin);
  ASSERT_TRUE(again.has_value()) << "the stale ack removed the released message";
  TestFixture::expect_counted(*first, *again);
  EXPECT_TRUE(ack_and_settle(t, *again).ok());
  EXPECT_FALSE(pop_message(t, this->queue(), kBriefly).has_value());
}

TYPED_TEST_P(ReleaseContract, RT2_ReleaseAfterCloseFailsWithClosed) {
  Transport& t = this->transport();
  const auto m = this->publish_and_pop(1);
  ASSERT_TRUE(m.has_value());
  t.close();
  EXPECT_TRUE(
      is_closed(this->template cap<Releaser>().release(*m, std::chrono::milliseconds::zero())));
}

REGISTER_TYPED_TEST_SUITE_P(ReleaseContract, RT3_AReleasedDeliveryComesBackWithItsAttemptCounted,
                            RT3_AStaleAckAfterReleaseDoesNotRemoveTheRedelivery,
                            RT2_ReleaseAfterCloseFailsWithClosed);

}  // namespace babelqueue::testing
