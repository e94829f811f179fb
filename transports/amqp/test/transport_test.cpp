// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// AmqpTransport against the shared RabbitMQ node, checked on the wire with a RawClient (and
// rabbitmqctl where only the broker knows): the interop scenarios of spec/04 §10 that concern
// the transport itself (AMQP-T2, T9, T10, T12, T13, T14) and the declare modes (quorum,
// passive). The scenarios that go through the App are in app_flow_test.cpp.

#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "shared_node_test.hpp"

namespace babelqueue::amqp::test {
namespace {

using babelqueue::testing::contract_body;
using babelqueue::testing::kBriefly;
using babelqueue::testing::kWithin;
using babelqueue::testing::unique_queue_name;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// A pop that rides out transient errors (a consumer lost with its connection) until a message
// comes or kWithin passes, as App::consume would.
std::optional<ReceivedMessage> pop_riding_out(Transport& t, std::string_view queue) {
  const auto until = Clock::now() + kWithin;
  while (Clock::now() < until) {
    auto r = t.pop(queue, milliseconds(500));
    if (r && r.value()) return std::move(*r.value());
    if (!r && !r.error().is_transient()) {
      ADD_FAILURE() << "pop failed: " << r.error().what();
      return std::nullopt;
    }
  }
  ADD_FAILURE() << "nothing came from " << queue;
  return std::nullopt;
}

::testing::AssertionResult is_channel_error(const Status& st, std::string_view code,
                                            std::string_view queue) {
  if (st.ok()) return ::testing::AssertionFailure() << "succeeded";
  const std::string what = st.error().what();
  if (st.error().is_transient()) return ::testing::AssertionFailure() << "transient: " << what;
  if (!st.is(ErrorCode::Transport))
    return ::testing::AssertionFailure() << "not Transport: " << what;
  if (what.find(code) == std::string::npos || what.find(queue) == std::string::npos) {
    return ::testing::AssertionFailure() << "does not name " << code << " and the queue: " << what;
  }
  return ::testing::AssertionSuccess();
}

bool has_line(std::string_view text, std::string_view line) {
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    if (text.substr(0, end) == line) return true;
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return false;
}

class AmqpTransportTest : public SharedNodeTest {};

// The consume modes: push (D-8, the default) and basic.get (AMQP-18).
class AmqpModeTest : public SharedNodeTest, public ::testing::WithParamInterface<const char*> {
 protected:
  std::shared_ptr<AmqpTransport> mode_transport() { return transport(GetParam()); }
};

std::string mode_name(const ::testing::TestParamInfo<const char*>& mode) {
  return *mode.param == 0 ? "Push" : "Get";
}

INSTANTIATE_TEST_SUITE_P(Modes, AmqpModeTest, ::testing::Values("", "?consume=get"), mode_name);

// AMQP-T2 / AMQP-14: riders as `S` beside the contract headers, which win a collision; a blank
// key or value is dropped; no riders publish exactly what `publish` does.
TEST_F(AmqpTransportTest, AMQP_T2_RidersMergeUnderTheContractHeaders) {
  auto t = transport();
  const std::string body = contract_body(1);
  const std::string traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  ASSERT_TRUE(t->publish_with_headers(queue(), body,
                                      {{"traceparent", traceparent},
                                       {"tracestate", "vendor=1"},
                                       {"bq-replay-bypass", "1"},
                                       {"x-source-lang", "ATTACKER"},
                                       {"", "blank key"},
                                       {"blank-value", ""}})
                  .ok());
  const auto m = raw_get(queue());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->body, body);
  ASSERT_TRUE(m->properties.headers.has_value());
  EXPECT_EQ(*m->properties.headers,
            (RawTable{{"bq-replay-bypass", RawField::long_string("1")},
                      {"traceparent", RawField::long_string(traceparent)},
                      {"tracestate", RawField::long_string("vendor=1")},
                      {"x-attempts", RawField::int32(0)},
                      {"x-schema-version", RawField::int32(1)},
                      {"x-source-lang", RawField::long_string(std::string(SOURCE_LANG))}}))
      << to_string(*m->properties.headers);

  ASSERT_TRUE(t->publish_with_headers(queue(), body, {}).ok());
  ASSERT_TRUE(t->publish(queue(), body).ok());
  const auto with_none = raw_get(queue());
  const auto plain = raw_get(queue());
  ASSERT_TRUE(with_none.has_value());
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(with_none->properties, plain->properties);
  EXPECT_EQ(with_none->body, plain->body);
  // This thread's later publishes project into the storage the one with riders used: none of
  // its riders stays behind.
  ASSERT_TRUE(with_none->properties.headers.has_value());
  EXPECT_EQ(*with_none->properties.headers,
            (RawTable{{"x-attempts", RawField::int32(0)},
                      {"x-schema-version", RawField::int32(1)},
                      {"x-source-lang", RawField::long_string(std::string(SOURCE_LANG))}}))
      << to_string(*with_none->properties.headers);
}

// AMQP-T9 (AMQP-2, AMQP-3, AMQP-23): no connection before the first call; after the broker
// closed it, the next call re-dials and re-declares (the queue, deleted meanwhile, is back); an
// ack of a delivery from before the drop is StaleDelivery and the message comes again, marked
// redelivered.
TEST_P(AmqpModeTest, AMQP_T9_LazyThenReconnectsRedeclaresAndRedeliversAfterTheBrokerDropsIt) {
  const std::size_t before = server().list_connections();
  auto t = mode_transport();
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(server().list_connections(), before) << "connected before the first call (AMQP-2)";
  ASSERT_TRUE(t->publish(queue(), contract_body(1)).ok());
  EXPECT_EQ(server().list_connections(), before + 1);

  drop_raw();  // else its connection lingers as closing: it never answers the close
  server().close_all_connections("AMQP-T9 between calls");
  ASSERT_TRUE(connections_become(0));
  reconnect_raw();
  raw().delete_queue(queue());
  ASSERT_TRUE(t->publish(queue(), contract_body(2)).ok()) << "the next call did not re-dial";
  EXPECT_EQ(raw().message_count(queue()), 1U) << "the queue was not declared again";

  const auto held = pop_riding_out(*t, queue());
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(babelqueue::testing::body_number(held->body), 2);
  drop_raw();
  server().close_all_connections("AMQP-T9 with a delivery held");
  ASSERT_TRUE(connections_become(0));
  reconnect_raw();
  const Status stale = t->ack(*held);
  EXPECT_TRUE(stale.is(ErrorCode::StaleDelivery)) << (stale.ok() ? "ok" : stale.error().what());

  const auto again = pop_riding_out(*t, queue());
  ASSERT_TRUE(again.has_value()) << "the message of the dropped channel never came back";
  EXPECT_EQ(again->body, held->body);  // the same meta.id
  t->close();                          // hands it back once more, for the RawClient to read
  const auto raw_again = raw_get(queue());
  ASSERT_TRUE(raw_again.has_value());
  EXPECT_TRUE(raw_again->redelivered);
  EXPECT_EQ(raw_again->body, held->body);
  EXPECT_EQ(raw().message_count(queue()), 0U) << "a message came twice";
}

// AMQP-T10 (AMQP-5): a delivery held for 3x a 1 s heartbeat keeps its connection; its ack
// succeeds and it is not redelivered.
TEST_F(AmqpTransportTest, AMQP_T10_AHeldDeliveryOutlivesThreeHeartbeatIntervals) {
  constexpr std::chrono::seconds kHeartbeat{1};
  auto t = transport("?heartbeat=1");
  ASSERT_TRUE(t->publish(queue(), contract_body(1)).ok());
  const auto m = babelqueue::testing::pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(m.has_value());
  const CommandResult timeouts = server().ctl({"list_connections", "--quiet", "timeout"});
  ASSERT_EQ(timeouts.exit_code, 0) << timeouts.output;
  EXPECT_TRUE(has_line(timeouts.output, "1")) << "no connection negotiated a 1 s heartbeat:\n"
                                              << timeouts.output;
  const std::size_t connections = server().list_connections();

  std::this_thread::sleep_for(3 * kHeartbeat);
  EXPECT_TRUE(t->ack(*m).ok());
  EXPECT_TRUE(t->flush().ok());
  EXPECT_EQ(server().list_connections(), connections) << "the broker dropped the connection";
  EXPECT_FALSE(babelqueue::testing::pop_message(*t, queue(), kBriefly).has_value())
      << "the held delivery was redelivered";
  t->close();
  EXPECT_EQ(raw().message_count(queue()), 0U);
}

// AMQP-T12 (AMQP-12, AMQP-14): a URN beyond 255 bytes leaves `type` out (logged), the message
// is still published; a 256-byte rider key is dropped, a 255-byte one kept.
TEST_F(AmqpTransportTest, AMQP_T12_ShortStringsBeyond255BytesAreOmittedNotTruncated) {
  Seen<std::string> warnings;
  Options options;
  options = parse_url(server().url(), std::move(options));
  options.logger = [&warnings](LogLevel level, std::string_view text) {
    if (level == LogLevel::Warning) warnings.add(std::string(text));
  };
  AmqpTransport t(std::move(options));
  const std::string urn = "urn:babel:" + std::string(300, 'u');
  const std::string body = encode(make(urn, Json::object({{"n", 1}})));
  const std::string long_key(256, 'k');
  const std::string longest_key(255, 'k');
  ASSERT_TRUE(
      t.publish_with_headers(queue(), body, {{long_key, "dropped"}, {longest_key, "kept"}}).ok());
  const auto m = raw_get(queue());
  ASSERT_TRUE(m.has_value()) << "the message was not published";
  EXPECT_EQ(m->body, body);
  EXPECT_FALSE(m->properties.type.has_value()) << "type was truncated, not omitted";
  EXPECT_TRUE(m->properties.message_id.has_value());
  EXPECT_EQ(raw_header(*m, long_key), nullptr);
  ASSERT_NE(raw_header(*m, longest_key), nullptr);
  EXPECT_EQ(*raw_header(*m, longest_key), RawField::long_string("kept"));
  const std::vector<std::string> logged = warnings.wait_for(2);
  ASSERT_EQ(logged.size(), 2U) << "an omission was not logged";
  EXPECT_EQ(std::count_if(logged.begin(), logged.end(),
                          [](const std::string& w) { return w.find("\"type\"") != w.npos; }),
            1);
}

// AMQP-T13 (AMQP-8): a declare against a queue with other arguments fails with a non-transient
// error naming the 406; the publishes and pops that follow, on other queues, work.
TEST_F(AmqpTransportTest, AMQP_T13_AnIncompatibleQueueIsA406AndTheNextCallsWork) {
  raw().declare(queue(), true, {{"x-max-length", RawField::int32(10)}});
  auto t = transport();
  EXPECT_TRUE(is_channel_error(t->publish(queue(), contract_body(1)), "406", queue()));
  const std::string other = unique_queue_name();
  EXPECT_TRUE(t->publish(other, contract_body(2)).ok()) << "the publish channel stayed broken";
  EXPECT_EQ(raw().message_count(other), 1U);

  const auto refused = t->pop(queue(), kBriefly);
  ASSERT_FALSE(refused.has_value()) << "a pop of the incompatible queue succeeded";
  EXPECT_TRUE(is_channel_error(refused.error(), "406", queue()));
  const auto m = babelqueue::testing::pop_message(*t, other, kWithin);
  ASSERT_TRUE(m.has_value()) << "the consume channel stayed broken";
  EXPECT_EQ(babelqueue::testing::body_number(m->body), 2);
  EXPECT_TRUE(babelqueue::testing::ack_and_settle(*t, *m).ok());
  EXPECT_EQ(raw().message_count(queue()), 0U) << "the refused publish was stored";
}

// AMQP-T14 (AMQP-4, AMQP-19): a pop waiting on an empty queue returns nothing after its
// timeout and holds up no other thread's publish meanwhile.
TEST_P(AmqpModeTest, AMQP_T14_AnEmptyPopWaitsItsTimeoutWithoutBlockingPublishes) {
  constexpr milliseconds kTimeout{500};
  auto t = mode_transport();
  const std::string other = unique_queue_name();
  ASSERT_TRUE(t->publish(other, contract_body(0)).ok());  // connected and declared
  Status published;
  Clock::time_point published_at;
  const auto start = Clock::now();
  std::thread publisher([&] {
    std::this_thread::sleep_for(milliseconds(100));
    published = t->publish(other, contract_body(1));
    published_at = Clock::now();
  });
  const auto r = t->pop(queue(), kTimeout);
  const auto returned_at = Clock::now();
  publisher.join();
  ASSERT_TRUE(r.has_value()) << r.error().what();
  EXPECT_FALSE(r.value().has_value());
  EXPECT_GE(returned_at - start, kTimeout - babelqueue::testing::Promises{}.pop_timeout_slack);
  EXPECT_TRUE(published.ok()) << published.error().what();
  EXPECT_LT(published_at, returned_at) << "the publish waited for the pop";
  EXPECT_EQ(raw().message_count(other), 2U);
}

// Quorum declare (issue 9): the queue is a quorum queue, and a redelivery carries the broker's
// x-delivery-count, which ReceivedMessage::delivery_count reflects (1-based).
TEST_F(AmqpTransportTest, QuorumQueuesCountDeliveries) {
  auto first = transport("?declare=quorum");
  ASSERT_TRUE(first->publish(queue(), contract_body(1)).ok());
  EXPECT_EQ(raw().queue_declare_error(queue(), {{"x-queue-type", RawField::long_string("quorum")}}),
            std::nullopt);
  EXPECT_EQ(
      raw().queue_declare_error(queue(), {{"x-queue-type", RawField::long_string("classic")}}),
      406);
  const auto m = babelqueue::testing::pop_message(*first, queue(), kWithin);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->headers.count("x-delivery-count"), 0U) << "a first delivery";
  first->close();  // returns it to the queue unacked

  auto second = transport("?declare=quorum");
  const auto again = babelqueue::testing::pop_message(*second, queue(), kWithin);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->body, m->body);
  EXPECT_EQ(again->headers.at("x-delivery-count"), "1");
  EXPECT_EQ(again->delivery_count, 2);
  EXPECT_TRUE(babelqueue::testing::ack_and_settle(*second, *again).ok());
}

// Passive declare (issue 9): a missing queue is a non-transient 404 naming it, for publish and
// pop; a queue the operator declared works.
TEST_P(AmqpModeTest, PassiveDeclareUsesOnlyExistingQueues) {
  auto t =
      transport(std::string(GetParam()).empty() ? "?declare=passive"
                                                : std::string(GetParam()) + "&declare=passive");
  EXPECT_TRUE(is_channel_error(t->publish(queue(), contract_body(1)), "404", queue()));
  const auto missing = t->pop(queue(), kBriefly);
  ASSERT_FALSE(missing.has_value());
  EXPECT_TRUE(is_channel_error(missing.error(), "404", queue()));
  EXPECT_EQ(raw().message_count(queue()), std::nullopt) << "the passive mode declared the queue";

  raw().declare(queue());
  ASSERT_TRUE(t->publish(queue(), contract_body(2)).ok());
  const auto m = babelqueue::testing::pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(babelqueue::testing::body_number(m->body), 2);
  EXPECT_TRUE(babelqueue::testing::ack_and_settle(*t, *m).ok());
}

}  // namespace
}  // namespace babelqueue::amqp::test
