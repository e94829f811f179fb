// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/testing/contract.hpp>

/// @file
/// DeadLetterContract: DeadLetterer (RT-3, RT-36): `dead_letter` writes the record and settles the
/// reservation in one gated step, so a reservation that was already settled gets no second
/// record. See contract.hpp for how to instantiate it.

namespace babelqueue::testing {

/// The fixture of DeadLetterContract.
///
/// Thread-safety: a GoogleTest fixture.
template <class Traits>
class DeadLetterContract : public ContractTest<Traits, DeadLetterer> {
 protected:
  /// The dead-letter queue of this test's queue.
  std::string dlq() { return dead_letter_queue_of(this->transport(), this->queue()); }
  /// Pops a record from dlq() and acks it; nullopt when none came within `timeout`.
  std::optional<std::string> pop_record(std::chrono::milliseconds timeout) {
    auto m = pop_message(this->transport(), dlq(), timeout);
    if (!m) return std::nullopt;
    EXPECT_TRUE(ack_and_settle(this->transport(), *m).ok());
    return std::move(m->body);
  }
};

TYPED_TEST_SUITE_P(DeadLetterContract);

TYPED_TEST_P(DeadLetterContract, RT36_DeadLetterWritesTheRecordAndSettlesTheMessage) {
  Transport& t = this->transport();
  const auto m = this->publish_and_pop(1);
  ASSERT_TRUE(m.has_value());
  const std::string record = contract_body(100);
  ASSERT_TRUE(this->template cap<DeadLetterer>().dead_letter(*m, this->dlq(), record).ok());
  EXPECT_EQ(this->pop_record(kWithin), record);
  EXPECT_FALSE(pop_message(t, this->queue(), kBriefly).has_value()) << "the message came back";
}

TYPED_TEST_P(DeadLetterContract, RT36_ASettledReservationGetsNoSecondRecord) {
  DeadLetterer& dead_letterer = this->template cap<DeadLetterer>();
  const auto m = this->publish_and_pop(1);
  ASSERT_TRUE(m.has_value());
  ASSERT_TRUE(dead_letterer.dead_letter(*m, this->dlq(), contract_body(100)).ok());
  EXPECT_TRUE(is_promised(dead_letterer.dead_letter(*m, this->dlq(), contract_body(200)),
                          TestFixture::promises.stale_settle_error));
  EXPECT_EQ(body_number(this->pop_record(kWithin).value_or("")), 100);
  EXPECT_EQ(this->pop_record(kBriefly), std::nullopt) << "a second record was written";
}

TYPED_TEST_P(DeadLetterContract, RT36_AStaleAckAfterDeadLetterKeepsTheRecord) {
  Transport& t = this->transport();
  const auto m = this->publish_and_pop(1);
  ASSERT_TRUE(m.has_value());
  const std::string record = contract_body(100);
  ASSERT_TRUE(this->template cap<DeadLetterer>().dead_letter(*m, this->dlq(), record).ok());
  EXPECT_TRUE(is_promised(ack_and_settle(t, *m), TestFixture::promises.stale_settle_error));
  EXPECT_EQ(this->pop_record(kWithin), record);
  EXPECT_FALSE(pop_message(t, this->queue(), kBriefly).has_value()) << "the message came back";
}

TYPED_TEST_P(DeadLetterContract, RT2_DeadLetterAfterCloseFailsWithClosed) {
  Transport& t = this->transport();
  const auto m = this->publish_and_pop(1);
  ASSERT_TRUE(m.has_value());
  const std::string dlq = this->dlq();
  t.close();
  EXPECT_TRUE(
      is_closed(this->template cap<DeadLetterer>().dead_letter(*m, dlq, contract_body(100))));
}

REGISTER_TYPED_TEST_SUITE_P(DeadLetterContract, RT36_DeadLetterWritesTheRecordAndSettlesTheMessage,
                            RT36_ASettledReservationGetsNoSecondRecord,
                            RT36_AStaleAckAfterDeadLetterKeepsTheRecord,
                            RT2_DeadLetterAfterCloseFailsWithClosed);

}  // namespace babelqueue::testing
