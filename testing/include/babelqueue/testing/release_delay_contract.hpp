// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/testing/contract.hpp>

/// @file
/// ReleaseDelayContract: a Releaser that honours `release(msg, delay)`'s delay, to within
/// `Promises::delay_granularity`. A transport that redelivers at once (Redis default layout,
/// RDS-25) does not instantiate it. See contract.hpp for how to instantiate it.

namespace babelqueue::testing {

/// The fixture of ReleaseDelayContract.
///
/// Thread-safety: a GoogleTest fixture.
template <class Traits>
class ReleaseDelayContract : public ContractTest<Traits, Releaser> {
 protected:
  static constexpr std::chrono::milliseconds kDelay = delay_beyond_granularity(Traits::promises);
};

TYPED_TEST_SUITE_P(ReleaseDelayContract);

TYPED_TEST_P(ReleaseDelayContract, RT3_AReleasedDeliveryIsNotRedeliveredBeforeItsDelay) {
  Transport& t = this->transport();
  const auto first = this->publish_and_pop(1);
  ASSERT_TRUE(first.has_value());
  const auto released = std::chrono::steady_clock::now();
  ASSERT_TRUE(this->template cap<Releaser>().release(*first, TestFixture::kDelay).ok());
  const auto again = pop_message(t, this->queue(), TestFixture::kDelay + kWithin);
  const auto waited = std::chrono::steady_clock::now() - released;
  ASSERT_TRUE(again.has_value()) << "the released message never came back";
  EXPECT_EQ(body_number(again->body), 1);
  EXPECT_GE(waited, TestFixture::kDelay - TestFixture::promises.delay_granularity);
  EXPECT_TRUE(ack_and_settle(t, *again).ok());
}

TYPED_TEST_P(ReleaseDelayContract, RT3_AReleaseWithADelayDoesNotHoldUpTheQueue) {
  Transport& t = this->transport();
  const auto first = this->publish_and_pop(1);
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(this->template cap<Releaser>().release(*first, std::chrono::hours(1)).ok());
  ASSERT_TRUE(t.publish(this->queue(), contract_body(2)).ok());
  const auto next = pop_message(t, this->queue(), kWithin);
  ASSERT_TRUE(next.has_value()) << "the delayed release held up the queue";
  EXPECT_EQ(body_number(next->body), 2);
  EXPECT_TRUE(ack_and_settle(t, *next).ok());
  EXPECT_FALSE(pop_message(t, this->queue(), kBriefly).has_value()) << "came before its delay";
}

REGISTER_TYPED_TEST_SUITE_P(ReleaseDelayContract,
                            RT3_AReleasedDeliveryIsNotRedeliveredBeforeItsDelay,
                            RT3_AReleaseWithADelayDoesNotHoldUpTheQueue);

}  // namespace babelqueue::testing
