// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/testing/contract.hpp>

#include <algorithm>
#include <vector>

/// @file
/// TransportContract: the core Transport interface (RT-1, RT-2), for every transport. See
/// contract.hpp for how to instantiate it.

namespace babelqueue::testing {

/// The fixture of TransportContract.
///
/// Thread-safety: a GoogleTest fixture.
template <class Traits>
class TransportContract : public ContractTest<Traits> {};

TYPED_TEST_SUITE_P(TransportContract);

// RT-1: every published body arrives byte for byte, once, in publish order where promised.
TYPED_TEST_P(TransportContract, RT1_PopsEveryPublishedBodyOnceInOrder) {
  Transport& t = this->transport();
  std::vector<std::string> sent;
  for (std::int64_t n = 1; n <= 12; ++n) {
    sent.push_back(contract_body(n));
    ASSERT_TRUE(t.publish(this->queue(), sent.back()).ok());
  }
  std::vector<std::string> got;
  for (std::size_t i = 0; i < sent.size(); ++i) {
    const auto m = pop_message(t, this->queue(), kWithin);
    ASSERT_TRUE(m.has_value()) << "message " << i + 1 << " of " << sent.size() << " never came";
    EXPECT_EQ(m->queue, this->queue());
    got.push_back(m->body);
    EXPECT_TRUE(ack_and_settle(t, *m).ok());
  }
  if (!TestFixture::promises.fifo) {
    std::sort(sent.begin(), sent.end());
    std::sort(got.begin(), got.end());
  }
  EXPECT_EQ(got, sent);
  EXPECT_FALSE(pop_message(t, this->queue(), kBriefly).has_value()) << "a message came twice";
}

TYPED_TEST_P(TransportContract, RT1_QueuesAreIndependent) {
  Transport& t = this->transport();
  const std::string other = this->new_queue();
  ASSERT_TRUE(t.publish(this->queue(), contract_body(1)).ok());
  EXPECT_FALSE(pop_message(t, other, kBriefly).has_value());
  const auto m = pop_message(t, this->queue(), kWithin);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(body_number(m->body), 1);
  EXPECT_TRUE(ack_and_settle(t, *m).ok());
}

// RT-2: "nothing arrived" is an empty result, not an error, and comes no earlier than the
// timeout (less the promised slack).
TYPED_TEST_P(TransportContract, RT2_PopOfAnEmptyQueueReturnsNothingAfterItsTimeout) {
  constexpr std::chrono::milliseconds timeout{300};
  BackgroundPop pop(this->transport(), this->queue(), timeout);
  const auto r = pop.wait(timeout + kWithin);
  ASSERT_TRUE(r.has_value()) << "pop did not return after its timeout";
  ASSERT_TRUE(r->has_value()) << r->error().what();
  EXPECT_FALSE(r->value().has_value());
  EXPECT_GE(pop.elapsed(), timeout - TestFixture::promises.pop_timeout_slack);
}

TYPED_TEST_P(TransportContract, RT2_CloseWakesAPopBlockedOnAnotherThread) {
  BackgroundPop pop(this->transport(), this->queue(), std::chrono::minutes(10));
  this->wait_until_pop_blocks(this->queue());
  this->transport().close();
  const auto r = pop.wait(kWithin);
  ASSERT_TRUE(r.has_value()) << "close() did not wake the blocked pop";
  EXPECT_TRUE(is_closed(*r));
}

TYPED_TEST_P(TransportContract, RT2_CloseIsIdempotentFromAnyThread) {
  Transport& t = this->transport();
  std::vector<std::thread> closers;
  for (int i = 0; i < 4; ++i) {
    closers.emplace_back([&t] { t.close(); });
  }
  for (std::thread& closer : closers) {
    closer.join();
  }
  t.close();
  EXPECT_TRUE(is_closed(t.publish(this->queue(), contract_body(1))));
}

TYPED_TEST_P(TransportContract, RT2_EveryCallAfterCloseFailsWithClosed) {
  Transport& t = this->transport();
  const auto m = this->publish_and_pop(1);
  ASSERT_TRUE(m.has_value());
  t.close();
  EXPECT_TRUE(is_closed(t.publish(this->queue(), contract_body(2))));
  EXPECT_TRUE(is_closed(t.pop(this->queue(), std::chrono::milliseconds::zero())));
  EXPECT_TRUE(is_closed(t.pop(this->queue(), kBriefly)));
  EXPECT_TRUE(is_closed(t.ack(*m)));
}

// A second ack of a settled reservation changes nothing: a message with the very same bytes
// published after the first ack is still delivered.
TYPED_TEST_P(TransportContract, RT2_AStaleAckRemovesNoOtherMessage) {
  Transport& t = this->transport();
  const std::string body = contract_body(7);
  ASSERT_TRUE(t.publish(this->queue(), body).ok());
  const auto first = pop_message(t, this->queue(), kWithin);
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(ack_and_settle(t, *first).ok());
  ASSERT_TRUE(t.publish(this->queue(), body).ok());

  EXPECT_TRUE(is_promised(ack_and_settle(t, *first), TestFixture::promises.stale_settle_error));
  const auto second = pop_message(t, this->queue(), kWithin);
  ASSERT_TRUE(second.has_value()) << "the stale ack removed the other message";
  EXPECT_EQ(second->body, body);
  EXPECT_TRUE(ack_and_settle(t, *second).ok());
  EXPECT_FALSE(pop_message(t, this->queue(), kBriefly).has_value());
}

REGISTER_TYPED_TEST_SUITE_P(TransportContract, RT1_PopsEveryPublishedBodyOnceInOrder,
                            RT1_QueuesAreIndependent,
                            RT2_PopOfAnEmptyQueueReturnsNothingAfterItsTimeout,
                            RT2_CloseWakesAPopBlockedOnAnotherThread,
                            RT2_CloseIsIdempotentFromAnyThread,
                            RT2_EveryCallAfterCloseFailsWithClosed,
                            RT2_AStaleAckRemovesNoOtherMessage);

}  // namespace babelqueue::testing
