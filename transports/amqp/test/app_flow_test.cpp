// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The App end to end on AmqpTransport against the shared RabbitMQ node, checked on the wire with
// a RawClient: the interop scenarios of spec/04 §10 that go through the App (AMQP-T3..T8,
// T11), where the other SDKs' and Laravel's messages are written the way those producers write
// them (integer field types b/s/I/l, a Laravel `timestamp`, missing properties, Laravel's
// release), and the retry backoff through the TTL holding queue.

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/testing/app_fixture.hpp>
#include <babelqueue/testing/contract.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
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

using babelqueue::testing::AppOn;
using babelqueue::testing::body_attempts;
using babelqueue::testing::contract_body;
using babelqueue::testing::handler_failure;
using babelqueue::testing::kWithin;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kUrn = babelqueue::testing::kContractUrn;
constexpr std::string_view kTraceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

// Runs App::consume on a thread of its own until the object goes.
class Consuming {
 public:
  Consuming(App& app, std::string queue)
      : app_(app), thread_([this, q = std::move(queue)] { status_ = app_.consume(q); }) {}
  ~Consuming() {
    app_.stop();
    thread_.join();
    EXPECT_TRUE(status_.ok()) << status_.error().what();
  }
  Consuming(const Consuming&) = delete;
  Consuming& operator=(const Consuming&) = delete;

 private:
  App& app_;
  Status status_;
  std::thread thread_;
};

// The bytes a base64 text stands for (RFC 4648 alphabet, '=' padding).
std::string from_base64(std::string_view text) {
  constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::uint32_t bits = 0;
  int count = 0;
  for (const char c : text) {
    if (c == '=') break;
    bits = (bits << 6) | static_cast<std::uint32_t>(kAlphabet.find(c));
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xFF));
    }
  }
  return out;
}

class AmqpAppTest : public SharedNodeTest {
 protected:
  // An App on a transport of its own. `poll_timeout` bounds a drain that finds nothing, and how
  // long a consume takes to notice stop().
  App& app(AppOptions options = {}, milliseconds poll_timeout = kWithin) {
    return app_.start(transport(), std::move(options), poll_timeout);
  }
  // Closes the App's transport: its pending acks are written and what it holds is requeued,
  // so the RawClient sees the queue as the broker keeps it.
  void close_transport() { amqp().close(); }
  AmqpTransport& amqp() { return app_.transport(); }

 private:
  AppOn<AmqpTransport> app_;
};

// AMQP-T3: what the Go/Python/Node/PHP SDKs and Laravel write is consumed as it is: every
// integer field type stringified, a Laravel `timestamp`, no properties at all (Laravel's raw DLQ
// record has only four); the App routes on the body's URN, not on `type`.
TEST_F(AmqpAppTest, AMQP_T3_OtherProducersMessagesAreConsumedAndRoutedOnTheBody) {
  struct Producer {
    std::string name;
    RawProperties properties;
    Headers expected;
  };
  const auto contract = [](RawField attempts, RawField version, std::string lang) {
    RawProperties p;
    p.content_type = "application/json";
    p.content_encoding = "utf-8";
    p.delivery_mode = 2;
    p.app_id = "babelqueue";
    p.type = "urn:someone:else";  // advisory only (AMQP-22)
    p.correlation_id = "trace-1";
    p.message_id = "id-1";
    p.headers = RawTable{{"x-attempts", std::move(attempts)},
                         {"x-schema-version", std::move(version)},
                         {"x-source-lang", RawField::long_string(std::move(lang))}};
    return p;
  };
  std::vector<Producer> producers = {
      {"node: b",
       contract(RawField::int8(0), RawField::int8(1), "node"),
       {{"x-attempts", "0"}, {"x-schema-version", "1"}, {"x-source-lang", "node"}}},
      {"go: I",
       contract(RawField::int32(2), RawField::int32(1), "go"),
       {{"x-attempts", "2"}, {"x-schema-version", "1"}, {"x-source-lang", "go"}}},
      {"php: s",
       contract(RawField::int16(300), RawField::int16(1), "php"),
       {{"x-attempts", "300"}, {"x-schema-version", "1"}, {"x-source-lang", "php"}}},
      {"python: l",
       contract(RawField::int64(3'000'000'000), RawField::int64(1), "python"),
       {{"x-attempts", "3000000000"}, {"x-schema-version", "1"}, {"x-source-lang", "python"}}},
      {"laravel: timestamp",
       contract(RawField::int32(0), RawField::int32(1), "php"),
       {{"x-attempts", "0"}, {"x-schema-version", "1"}, {"x-source-lang", "php"}}},
      {"laravel raw DLQ record", {}, {{"x-attempts", "0"}}},
      {"no properties", {}, {}},
  };
  producers[4].properties.timestamp = 1'749'132'727;
  RawProperties& dlq = producers[5].properties;
  dlq.content_type = "application/json";
  dlq.content_encoding = "utf-8";
  dlq.delivery_mode = 2;
  dlq.headers = RawTable{{"x-attempts", RawField::int32(0)}};
  raw().declare(queue());
  std::vector<std::string> bodies;
  for (std::size_t i = 0; i < producers.size(); ++i) {
    bodies.push_back(contract_body(static_cast<std::int64_t>(i)));
    raw().publish(queue(), bodies.back(), producers[i].properties);
  }

  Seen<std::pair<std::string, Headers>> handled;
  Seen<std::string> misrouted;
  App& a = app();
  a.handle(kUrn, [&](Context& ctx, const Envelope&) {
    handled.add({ctx.message().body, ctx.headers()});
    return Status();
  });
  a.handle("urn:someone:else", [&](Context& ctx, const Envelope&) {
    misrouted.add(ctx.message().body);
    return Status();
  });
  const DrainResult drained = a.drain(queue(), producers.size());
  EXPECT_TRUE(drained.status.ok()) << drained.status.error().what();
  const auto got = handled.wait_for(producers.size());
  ASSERT_EQ(got.size(), producers.size());
  for (std::size_t i = 0; i < producers.size(); ++i) {
    SCOPED_TRACE(producers[i].name);
    EXPECT_EQ(got[i].first, bodies[i]);
    EXPECT_EQ(got[i].second, producers[i].expected);
  }
  EXPECT_TRUE(misrouted.wait_for(0).empty()) << "routed on the type property";
  close_transport();
  EXPECT_EQ(raw().message_count(queue()), 0U);
}

// AMQP-T4: what a Laravel worker computes from a C++ publish: attempts() = x-attempts + 1 = 1,
// getJobId() = message_id = meta.id; the header mirrors the body.
TEST_F(AmqpAppTest, AMQP_T4_ALaravelWorkerReadsACppPublishAsAttemptOneWithItsId) {
  const std::string id = app().publish(kUrn, Json::object({{"n", 1}}), {.queue = queue()});
  const auto m = raw_get(queue());
  ASSERT_TRUE(m.has_value());
  const RawField* attempts = raw_header(*m, "x-attempts");
  ASSERT_NE(attempts, nullptr);
  EXPECT_EQ(attempts->tag, 'I');
  EXPECT_EQ(attempts->integer + 1, 1) << "Laravel's attempts()";
  EXPECT_EQ(body_attempts(m->body), attempts->integer);
  EXPECT_EQ(m->properties.message_id, id) << "Laravel's getJobId()";
  const auto env = babelqueue::try_decode(m->body);
  ASSERT_TRUE(env.has_value());
  EXPECT_EQ(env->meta().id, id);
}

// AMQP-T5 (AMQP-27..29): a message Laravel released (same body, x-attempts one higher) is
// counted by its body: with max_attempts 2 a header-based count would dead-letter it, the body's
// retries it, and the retry rewrites x-attempts to the new body value.
TEST_F(AmqpAppTest, AMQP_T5_ALaravelReleaseIsCountedByItsBody) {
  auto producer = transport();
  ASSERT_TRUE(producer->publish(queue(), contract_body(1)).ok());
  const auto reserved = raw_get(queue());  // a Laravel worker reserved it and releases it
  ASSERT_TRUE(reserved.has_value());
  RawProperties released = reserved->properties;
  ASSERT_TRUE(released.headers.has_value());
  for (RawEntry& e : *released.headers) {
    if (e.key == "x-attempts")
      e.value = RawField::int32(static_cast<std::int32_t>(e.value.integer + 1));
  }
  raw().publish(queue(), reserved->body, released);

  Seen<std::int64_t> attempts_seen;
  App& a = app({.max_attempts = 2, .dead_letter = true});
  a.handle(kUrn, [&](Context&, const Envelope& env) {
    attempts_seen.add(env.attempts());
    return handler_failure("AMQP-T5");
  });
  EXPECT_TRUE(a.drain(queue(), 1).status.ok());
  close_transport();
  EXPECT_EQ(attempts_seen.wait_for(1), std::vector<std::int64_t>{0});
  EXPECT_EQ(raw().message_count(a.dead_letter_queue_for(queue())).value_or(0), 0U)
      << "dead-lettered on the header's count";
  const auto retried = raw_get(queue());
  ASSERT_TRUE(retried.has_value());
  EXPECT_EQ(body_attempts(retried->body), 1);
  ASSERT_NE(raw_header(*retried, "x-attempts"), nullptr);
  EXPECT_EQ(*raw_header(*retried, "x-attempts"), RawField::int32(1));
}

// AMQP-T6 (AMQP-25): a retry is the body with attempts + 1 (x-attempts equal) and the same ids;
// the original is acked, so the queue holds one message.
TEST_F(AmqpAppTest, AMQP_T6_ARetryRepublishesAttemptsPlusOneAndAcksTheOriginal) {
  App& a = app();
  const std::string id =
      a.publish(kUrn, Json::object({{"n", 1}}), {.queue = queue(), .trace_id = "trace-T6"});
  a.handle(kUrn, [](Context&, const Envelope&) { return handler_failure("AMQP-T6"); });
  EXPECT_TRUE(a.drain(queue(), 1).status.ok());
  close_transport();
  EXPECT_EQ(raw().message_count(queue()), 1U) << "the original was not acked, or was lost";
  const auto retried = raw_get(queue());
  ASSERT_TRUE(retried.has_value());
  EXPECT_EQ(body_attempts(retried->body), 1);
  ASSERT_NE(raw_header(*retried, "x-attempts"), nullptr);
  EXPECT_EQ(*raw_header(*retried, "x-attempts"), RawField::int32(1));
  EXPECT_EQ(retried->properties.message_id, id);
  EXPECT_EQ(retried->properties.correlation_id, "trace-T6");
  EXPECT_EQ(retried->properties.type, std::string(kUrn));
}

// AMQP-T7 (AMQP-10, AMQP-26): exhausted retries leave a record on the durable `<q>.dlq` whose
// properties and headers are projected from the record; the source queue is empty.
TEST_F(AmqpAppTest, AMQP_T7_ExhaustedRetriesLeaveAProjectedRecordOnTheDurableDlq) {
  App& a = app({.max_attempts = 1, .dead_letter = true});
  const std::string id =
      a.publish(kUrn, Json::object({{"n", 1}}), {.queue = queue(), .trace_id = "trace-T7"});
  a.handle(kUrn, [](Context&, const Envelope&) { return handler_failure("AMQP-T7"); });
  EXPECT_TRUE(a.drain(queue(), 1).status.ok());
  close_transport();
  const std::string dlq = queue() + ".dlq";
  EXPECT_EQ(a.dead_letter_queue_for(queue()), dlq);
  const auto record = raw_get(dlq);
  ASSERT_TRUE(record.has_value());
  const auto env = babelqueue::try_decode(record->body);
  ASSERT_TRUE(env.has_value()) << record->body;
  ASSERT_TRUE(env->dead_letter().has_value()) << record->body;
  EXPECT_EQ(env->dead_letter()->original_queue, queue());
  EXPECT_EQ(record->properties.type, std::string(kUrn));
  EXPECT_EQ(record->properties.message_id, id);
  EXPECT_EQ(record->properties.correlation_id, "trace-T7");
  EXPECT_EQ(record->properties.delivery_mode, 2);
  ASSERT_NE(raw_header(*record, "x-attempts"), nullptr);
  EXPECT_EQ(*raw_header(*record, "x-attempts"),
            RawField::int32(static_cast<std::int32_t>(env->attempts())));
  EXPECT_EQ(raw().message_count(queue()), 0U);
  EXPECT_EQ(raw().queue_declare_error(dlq, {}, true), std::nullopt);
  EXPECT_EQ(raw().queue_declare_error(dlq, {}, false), 406) << "the DLQ is not durable";
}

// AMQP-T8 (AMQP-14, AMQP-21): traceparent travels as a header, reaches the handler's Headers,
// and the body stays as published.
TEST_F(AmqpAppTest, AMQP_T8_TraceparentRoundTrips) {
  App& a = app();
  const std::string body = contract_body(8);
  ASSERT_TRUE(amqp()
                  .publish_with_headers(queue(), body, {{"traceparent", std::string(kTraceparent)}})
                  .ok());
  Seen<std::pair<std::string, Headers>> handled;
  a.handle(kUrn, [&](Context& ctx, const Envelope&) {
    handled.add({ctx.message().body, ctx.headers()});
    return Status();
  });
  EXPECT_TRUE(a.drain(queue(), 1).status.ok());
  const auto got = handled.wait_for(1);
  ASSERT_EQ(got.size(), 1U);
  EXPECT_EQ(got[0].first, body);
  EXPECT_EQ(got[0].second.at("traceparent"), kTraceparent);
}

// AMQP-T11 (AMQP-15, AMQP-20, D-2): a body that is not UTF-8 reaches the codec unchanged, so its
// poison record on `<q>.dlq` (persistent) carries exactly its bytes.
TEST_F(AmqpAppTest, AMQP_T11_ANonUtf8BodyIsDeadLetteredWithItsBytesPersistently) {
  const std::string poison = std::string("\xFF\xFE{\"job\":\"urn:x\"}\x80", 18);
  raw().declare(queue());
  raw().publish(queue(), poison);
  App& a = app({.dead_letter = true});
  a.handle(kUrn, [](Context&, const Envelope&) { return Status(); });
  EXPECT_TRUE(a.drain(queue(), 1).status.ok());
  close_transport();
  const auto record = raw_get(queue() + ".dlq");
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->properties.delivery_mode, 2) << "the poison record is not persistent";
  const Json json = Json::parse(record->body);
  const Json* raw_bytes = json.find("raw");
  ASSERT_NE(raw_bytes, nullptr) << record->body;
  ASSERT_NE(json.find("raw_encoding"), nullptr) << record->body;
  EXPECT_EQ(json.find("raw_encoding")->as_string(), "base64");
  EXPECT_EQ(from_base64(raw_bytes->as_string()), poison);
  EXPECT_EQ(raw().message_count(queue()), 0U);
}

// Retry backoff (issue 9): retry_backoff > 0 goes through the holding queue `<q>.delay.<ms>`
// (x-message-ttl, dead-lettering back to `<q>`): the retry comes no earlier than the backoff,
// with attempts + 1.
TEST_F(AmqpAppTest, RetryBackoffGoesThroughTheTtlHoldingQueue) {
  constexpr milliseconds kBackoff{300};
  // As the contract promises for holding queues (contract_test.cpp): the broker's clock.
  constexpr milliseconds kTtlGranularity{50};
  Seen<std::pair<Clock::time_point, std::int64_t>> calls;
  App& a = app({.retry_backoff = kBackoff}, milliseconds(100));
  a.handle(kUrn, [&](Context&, const Envelope& env) {
    const bool first = env.attempts() == 0;
    calls.add({Clock::now(), env.attempts()});
    return first ? handler_failure("retry me later") : Status();
  });
  ASSERT_TRUE(amqp().publish(queue(), contract_body(1)).ok());
  std::vector<std::pair<Clock::time_point, std::int64_t>> got;
  {
    Consuming consuming(a, queue());
    got = calls.wait_for(2);
  }
  ASSERT_EQ(got.size(), 2U) << "the retry never came";
  EXPECT_EQ(got[0].second, 0);
  EXPECT_EQ(got[1].second, 1);
  EXPECT_GE(got[1].first - got[0].first, kBackoff - kTtlGranularity);

  const std::string holding = amqp().delay_queue(queue(), kBackoff);
  EXPECT_EQ(holding, queue() + ".delay.300");
  EXPECT_EQ(raw().message_count(holding), 0U) << "the holding queue is missing or kept it";
  const auto holding_args = [&](std::int64_t ttl) {
    return RawTable{{"x-message-ttl", RawField::int64(ttl)},
                    {"x-dead-letter-exchange", RawField::long_string("")},
                    {"x-dead-letter-routing-key", RawField::long_string(queue())}};
  };
  EXPECT_EQ(raw().queue_declare_error(holding, holding_args(kBackoff.count())), std::nullopt);
  EXPECT_EQ(raw().queue_declare_error(holding, holding_args(kBackoff.count() + 1)), 406)
      << "the holding queue has no such TTL";
}

}  // namespace
}  // namespace babelqueue::amqp::test
