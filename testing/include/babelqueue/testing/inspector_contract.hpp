// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/testing/contract.hpp>

#include <algorithm>
#include <vector>

/// @file
/// InspectorContract: Inspector (`babelqueue queue stats`, `dlq list`): the counts move with
/// publish, pop and ack, a stale ack leaves another reservation in flight, and peek consumes
/// nothing. The counts are checked as sums where a transport may reserve ahead of the App
/// (prefetch), and the in-flight count only where `Promises::counts_in_flight` says the broker
/// has it. See contract.hpp for how to instantiate it.

namespace babelqueue::testing {

/// The fixture of InspectorContract.
///
/// Thread-safety: a GoogleTest fixture.
template <class Traits>
class InspectorContract : public ContractTest<Traits, Inspector> {
 protected:
  /// The stats of this test's queue (blank dead-letter name); fails the test on an error.
  QueueStats stats() {
    auto s = this->template cap<Inspector>().stats(this->queue(), {});
    EXPECT_TRUE(s.has_value()) << (s.has_value() ? "" : s.error().what());
    return s.has_value() ? std::move(*s) : QueueStats{};
  }
  /// Expects `s.in_flight` to be `n`, or nullopt when the broker has no such figure.
  static void expect_in_flight(const QueueStats& s, std::int64_t n) {
    if (Traits::promises.counts_in_flight) {
      EXPECT_EQ(s.in_flight, n);
    } else {
      EXPECT_FALSE(s.in_flight.has_value()) << "an in-flight count the broker does not have";
    }
  }
  /// Expects `ready` plus (where counted) in-flight to be `n`: with prefetch, the broker may
  /// have handed a reservation's neighbours to the consumer ahead of its pops.
  static void expect_ready_and_in_flight(const QueueStats& s, std::int64_t n) {
    ASSERT_TRUE(s.ready.has_value()) << "no ready count";
    if (Traits::promises.counts_in_flight) {
      ASSERT_TRUE(s.in_flight.has_value()) << "no in-flight count";
      EXPECT_EQ(*s.ready + *s.in_flight, n);
    } else {
      EXPECT_LE(*s.ready, n);
      EXPECT_FALSE(s.in_flight.has_value()) << "an in-flight count the broker does not have";
    }
  }
};

TYPED_TEST_SUITE_P(InspectorContract);

TYPED_TEST_P(InspectorContract, StatsCountReadyAndInFlightMessages) {
  Transport& t = this->transport();
  QueueStats s = this->stats();
  EXPECT_EQ(s.ready, 0);
  TestFixture::expect_in_flight(s, 0);
  for (std::int64_t n = 1; n <= 3; ++n) {
    ASSERT_TRUE(t.publish(this->queue(), contract_body(n)).ok());
  }
  s = this->stats();
  EXPECT_EQ(s.ready, 3);
  TestFixture::expect_in_flight(s, 0);

  const auto first = pop_message(t, this->queue(), kWithin);
  ASSERT_TRUE(first.has_value());
  s = this->stats();
  TestFixture::expect_ready_and_in_flight(s, 3);
  if (TestFixture::promises.counts_in_flight) {
    EXPECT_GE(s.in_flight.value_or(0), 1);
  } else {
    EXPECT_LE(s.ready.value_or(3), 2) << "the reservation is still counted as ready";
  }

  ASSERT_TRUE(ack_and_settle(t, *first).ok());
  TestFixture::expect_ready_and_in_flight(this->stats(), 2);
  for (int i = 0; i < 2; ++i) {
    const auto m = pop_message(t, this->queue(), kWithin);
    ASSERT_TRUE(m.has_value());
    ASSERT_TRUE(ack_and_settle(t, *m).ok());
  }
  s = this->stats();
  EXPECT_EQ(s.ready, 0);
  TestFixture::expect_in_flight(s, 0);
}

TYPED_TEST_P(InspectorContract, AStaleAckLeavesTheOtherReservationInFlight) {
  Transport& t = this->transport();
  ASSERT_TRUE(t.publish(this->queue(), contract_body(1)).ok());
  ASSERT_TRUE(t.publish(this->queue(), contract_body(2)).ok());
  const auto first = pop_message(t, this->queue(), kWithin);
  const auto second = pop_message(t, this->queue(), kWithin);
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(second.has_value());
  ASSERT_TRUE(ack_and_settle(t, *first).ok());
  EXPECT_TRUE(is_promised(ack_and_settle(t, *first), TestFixture::promises.stale_settle_error));
  TestFixture::expect_in_flight(this->stats(), 1);
  ASSERT_TRUE(ack_and_settle(t, *second).ok()) << "the stale ack settled the other reservation";
  TestFixture::expect_in_flight(this->stats(), 0);
  EXPECT_FALSE(pop_message(t, this->queue(), kBriefly).has_value())
      << "the stale ack handed a reservation back";
}

// A blank dead-letter name means the transport's default (its DeadLetterNaming, RT-7).
TYPED_TEST_P(InspectorContract, StatsCountTheDeadLetterQueue) {
  Transport& t = this->transport();
  const std::string custom = this->new_queue();
  for (std::int64_t n = 1; n <= 2; ++n) {
    ASSERT_TRUE(t.publish(dead_letter_queue_of(t, this->queue()), contract_body(n)).ok());
  }
  ASSERT_TRUE(t.publish(custom, contract_body(3)).ok());
  const QueueStats s = this->stats();
  EXPECT_EQ(s.ready, 0);
  EXPECT_EQ(s.dead_letter, 2);
  const auto named = this->template cap<Inspector>().stats(this->queue(), custom);
  ASSERT_TRUE(named.has_value()) << named.error().what();
  EXPECT_EQ(named->dead_letter, 1);
}

TYPED_TEST_P(InspectorContract, PeekShowsTheHeadAndConsumesNothing) {
  Transport& t = this->transport();
  Inspector& inspector = this->template cap<Inspector>();
  const auto empty = inspector.peek(this->queue(), 0);
  ASSERT_TRUE(empty.has_value()) << empty.error().what();
  EXPECT_TRUE(empty->empty());

  const Headers headers{{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}};
  HeaderPublisher* with_headers = capability<HeaderPublisher>(t);
  const bool headers_expected = with_headers != nullptr && TestFixture::promises.carries_headers;
  std::vector<std::string> sent;
  for (std::int64_t n = 1; n <= 3; ++n) {
    sent.push_back(contract_body(n));
    const Status st = n == 2 && with_headers != nullptr
                          ? with_headers->publish_with_headers(this->queue(), sent.back(), headers)
                          : t.publish(this->queue(), sent.back());
    ASSERT_TRUE(st.ok());
  }

  const auto all = inspector.peek(this->queue(), 0);
  ASSERT_TRUE(all.has_value()) << all.error().what();
  std::vector<std::string> bodies;
  for (const PeekedMessage& p : *all) {
    bodies.push_back(p.body);
    EXPECT_EQ(published_headers(p.headers, TestFixture::promises),
              body_number(p.body) == 2 && headers_expected ? headers : Headers{})
        << p.body;
  }
  const auto two = inspector.peek(this->queue(), 2);
  ASSERT_TRUE(two.has_value()) << two.error().what();
  ASSERT_EQ(two->size(), 2U);
  if (TestFixture::promises.fifo) {
    EXPECT_EQ(bodies, sent);
    EXPECT_EQ((*two)[0].body, sent[0]);
    EXPECT_EQ((*two)[1].body, sent[1]);
  } else {
    std::sort(bodies.begin(), bodies.end());
    std::sort(sent.begin(), sent.end());
    EXPECT_EQ(bodies, sent);
  }

  // Every message is still there to be consumed. (Not stats().ready: RabbitMQ answers a stat
  // ahead of the requeue of what the peek held, so the count may lag it for a moment.)
  std::vector<std::string> popped;
  for (std::size_t n = 0; n < sent.size(); ++n) {
    const auto m = pop_message(t, this->queue(), kWithin);
    ASSERT_TRUE(m.has_value()) << "peek consumed: " << popped.size() << " of 3 left";
    popped.push_back(m->body);
    EXPECT_TRUE(ack_and_settle(t, *m).ok());
  }
  if (!TestFixture::promises.fifo) std::sort(popped.begin(), popped.end());
  EXPECT_EQ(popped, sent);
}

TYPED_TEST_P(InspectorContract, RT2_StatsAndPeekAfterCloseFailWithClosed) {
  this->transport().close();
  Inspector& inspector = this->template cap<Inspector>();
  EXPECT_TRUE(is_closed(inspector.stats(this->queue(), {})));
  EXPECT_TRUE(is_closed(inspector.peek(this->queue(), 0)));
}

REGISTER_TYPED_TEST_SUITE_P(InspectorContract, StatsCountReadyAndInFlightMessages,
                            AStaleAckLeavesTheOtherReservationInFlight,
                            StatsCountTheDeadLetterQueue, PeekShowsTheHeadAndConsumesNothing,
                            RT2_StatsAndPeekAfterCloseFailWithClosed);

}  // namespace babelqueue::testing
