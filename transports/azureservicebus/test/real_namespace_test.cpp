// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// ASB-T7, against a real Service Bus namespace, gated on BABELQUEUE_ASB_CONNECTION_STRING (a
// connection string whose namespace has the queues `orders` and `orders.dlq`, duplicate detection
// off, ASB-12): a round trip over TLS with CBS, and poison handed to the native dead-letter queue.
// Skipped with the reason when the variable is unset.

#include <babelqueue/azureservicebus/transport.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/testing/contract.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace babelqueue::azureservicebus::test {
namespace {

using babelqueue::testing::kWithin;
using babelqueue::testing::pop_message;

std::optional<std::string> connection_string() {
  const char* cs = std::getenv("BABELQUEUE_ASB_CONNECTION_STRING");
  if (cs == nullptr || *cs == '\0') return std::nullopt;
  return std::string(cs);
}

#define BABELQUEUE_REQUIRE_NAMESPACE()                                                    \
  if (!connection_string()) {                                                             \
    GTEST_SKIP() << "BABELQUEUE_ASB_CONNECTION_STRING is not set (a real namespace with " \
                    "the queues orders and orders.dlq)";                                  \
  }

TEST(RealNamespace, ASB_T7_RoundTrip) {
  BABELQUEUE_REQUIRE_NAMESPACE();
  ServiceBusTransport t(parse_connection_string(*connection_string()));
  const std::string body = encode(make("urn:babel:orders:created", Json::object({{"n", 1}})));
  ASSERT_TRUE(t.publish("orders", body).ok());
  // Other messages may be waiting: complete until ours comes.
  for (int i = 0; i < 100; ++i) {
    auto m = pop_message(t, "orders", kWithin);
    ASSERT_TRUE(m.has_value()) << "ours never came";
    ASSERT_TRUE(t.ack(*m).ok());
    if (m->body == body) {
      EXPECT_EQ(m->headers.at("bq-schema-version"), "1");
      return;
    }
  }
  FAIL() << "ours was not among 100 messages";
}

TEST(RealNamespace, ASB_T7_PoisonToTheNativeDeadLetterQueue) {
  BABELQUEUE_REQUIRE_NAMESPACE();
  Options o = parse_connection_string(*connection_string());
  o.native_dead_letter = NativeDeadLetter::DeadLetter;
  ServiceBusTransport t(o);
  const std::string poison = "not an envelope " + babelqueue::testing::unique_queue_name();
  ASSERT_TRUE(t.publish("orders", poison).ok());
  for (int i = 0; i < 100; ++i) {
    auto m = pop_message(t, "orders", kWithin);
    ASSERT_TRUE(m.has_value()) << "ours never came";
    if (m->body != poison) {
      ASSERT_TRUE(t.rewind(*m).ok());
      continue;
    }
    ASSERT_TRUE(t.hand_to_broker(*m, "poison: not JSON").ok());
    const auto dead = t.peek("orders/$DeadLetterQueue", 0);
    ASSERT_TRUE(dead.has_value()) << dead.error().what();
    bool found = false;
    for (const PeekedMessage& p : *dead)
      found = found || p.body == poison;
    EXPECT_TRUE(found) << "not in orders/$DeadLetterQueue";
    return;
  }
  FAIL() << "ours was not among 100 messages";
}

}  // namespace
}  // namespace babelqueue::azureservicebus::test
