// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/testing/contract.hpp>

/// @file
/// DelayedPublishContract: a DelayedPublisher whose `publish_delayed` delays (to within
/// `Promises::delay_granularity`). A transport that answers DelayUnsupported (Redis default
/// layout, RDS-13) does not instantiate it. See contract.hpp for how to instantiate it.

namespace babelqueue::testing {

/// The fixture of DelayedPublishContract.
///
/// Thread-safety: a GoogleTest fixture.
template <class Traits>
class DelayedPublishContract : public ContractTest<Traits, DelayedPublisher> {
 protected:
  static constexpr std::chrono::milliseconds kDelay = delay_beyond_granularity(Traits::promises);
};

TYPED_TEST_SUITE_P(DelayedPublishContract);

TYPED_TEST_P(DelayedPublishContract, RT3_ADelayedMessageIsNotDeliveredBeforeItsDelay) {
  const auto published = std::chrono::steady_clock::now();
  ASSERT_TRUE(this->template cap<DelayedPublisher>()
                  .publish_delayed(this->queue(), contract_body(1), TestFixture::kDelay)
                  .ok());
  const auto m = pop_message(this->transport(), this->queue(), TestFixture::kDelay + kWithin);
  const auto waited = std::chrono::steady_clock::now() - published;
  ASSERT_TRUE(m.has_value()) << "the delayed message never came";
  EXPECT_EQ(body_number(m->body), 1);
  EXPECT_GE(waited, TestFixture::kDelay - TestFixture::promises.delay_granularity);
  EXPECT_TRUE(ack_and_settle(this->transport(), *m).ok());
}

// The Inspector, when the transport has one and counts at all, does not count the waiting
// message as ready, and counts it as delayed where the broker has that figure
// (Promises::counts_delayed); an Inspector without counts (Pulsar without its admin API) reports
// none, which InspectorContract covers. The delay, 10 minutes, outlasts the test and fits every
// broker's limit (SQS DelaySeconds: 15 minutes).
TYPED_TEST_P(DelayedPublishContract, RT3_ADelayedMessageDoesNotHoldUpTheQueue) {
  Transport& t = this->transport();
  ASSERT_TRUE(this->template cap<DelayedPublisher>()
                  .publish_delayed(this->queue(), contract_body(1), std::chrono::minutes(10))
                  .ok());
  ASSERT_TRUE(t.publish(this->queue(), contract_body(2)).ok());
  if (Inspector* inspector = capability<Inspector>(t)) {
    const auto stats = inspector->stats(this->queue(), {});
    ASSERT_TRUE(stats.has_value()) << stats.error().what();
    if (stats->ready.has_value()) {
      EXPECT_EQ(stats->ready, 1);
      if (TestFixture::promises.counts_delayed) {
        EXPECT_EQ(stats->delayed, 1);
      } else {
        EXPECT_FALSE(stats->delayed.has_value()) << "a delayed count the broker does not have";
      }
    } else {
      EXPECT_FALSE(stats->delayed.has_value()) << "a delayed count without a ready count";
    }
  }
  const auto m = pop_message(t, this->queue(), kWithin);
  ASSERT_TRUE(m.has_value()) << "the delayed message held up the queue";
  EXPECT_EQ(body_number(m->body), 2);
  EXPECT_TRUE(ack_and_settle(t, *m).ok());
  EXPECT_FALSE(pop_message(t, this->queue(), kBriefly).has_value()) << "came before its delay";
}

TYPED_TEST_P(DelayedPublishContract, RT3_ANonPositiveDelayPublishesAtOnce) {
  Transport& t = this->transport();
  DelayedPublisher& delayed = this->template cap<DelayedPublisher>();
  ASSERT_TRUE(delayed.publish_delayed(this->queue(), contract_body(1), {}).ok());
  ASSERT_TRUE(
      delayed.publish_delayed(this->queue(), contract_body(2), std::chrono::milliseconds(-5)).ok());
  ASSERT_TRUE(t.publish(this->queue(), contract_body(3)).ok());
  std::vector<std::int64_t> got;
  for (int i = 0; i < 3; ++i) {
    const auto m = pop_message(t, this->queue(), kWithin);
    ASSERT_TRUE(m.has_value());
    got.push_back(body_number(m->body).value_or(-1));
    EXPECT_TRUE(ack_and_settle(t, *m).ok());
  }
  if (!TestFixture::promises.fifo) std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::int64_t>{1, 2, 3}));
}

TYPED_TEST_P(DelayedPublishContract, RT2_PublishDelayedAfterCloseFailsWithClosed) {
  this->transport().close();
  EXPECT_TRUE(is_closed(this->template cap<DelayedPublisher>().publish_delayed(
      this->queue(), contract_body(1), std::chrono::seconds(1))));
}

REGISTER_TYPED_TEST_SUITE_P(DelayedPublishContract, RT3_ADelayedMessageIsNotDeliveredBeforeItsDelay,
                            RT3_ADelayedMessageDoesNotHoldUpTheQueue,
                            RT3_ANonPositiveDelayPublishesAtOnce,
                            RT2_PublishDelayedAfterCloseFailsWithClosed);

}  // namespace babelqueue::testing
