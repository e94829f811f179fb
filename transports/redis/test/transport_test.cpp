// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// RedisTransport against a real redis-server: the Transport contract and the capabilities in
// both layouts, the options, and the App on top of it. The cross-SDK scenarios RDS-T1..T19 are
// in interop_test.cpp, the faults in fault_test.cpp.

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/redis/transport.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "raw_client.hpp"
#include "redis_server.hpp"
#include "server_test.hpp"

namespace bq = babelqueue;
namespace rd = babelqueue::redis;
using namespace std::chrono_literals;

namespace {

std::string envelope(std::string_view queue = "orders", int order_id = 1042) {
  bq::MakeOptions mo;
  mo.queue = queue;
  return bq::encode(
      bq::make("urn:babel:orders:created", bq::Json::object({{"order_id", order_id}}), mo));
}

class RedisTransportTest : public rd::test::SharedRedisServerTest,
                           public ::testing::WithParamInterface<rd::Layout> {
 protected:
  rd::Options options(int prefetch = 16) const {
    rd::Options o = rd::parse_url(server().url());
    o.layout = GetParam();
    o.prefetch = prefetch;
    return o;
  }
  bool default_layout() const { return GetParam() == rd::Layout::Default; }
};

TEST_P(RedisTransportTest, PublishPopAckRoundTripKeepsBytes) {
  rd::RedisTransport t(options());
  const std::string body = envelope();
  ASSERT_TRUE(t.publish("orders", body));
  auto got = t.pop("orders", 0ms);
  ASSERT_TRUE(got.has_value()) << got.error().what();
  ASSERT_TRUE(got->has_value());
  const bq::ReceivedMessage& m = **got;
  EXPECT_EQ(m.body, body);
  EXPECT_EQ(m.queue, "orders");
  EXPECT_FALSE(m.poison);
  EXPECT_TRUE(m.headers.empty());
  const rd::Keys k = t.keys("orders");
  EXPECT_EQ(default_layout() ? raw().llen(k.in_flight) : raw().zcard(k.in_flight), 1);
  ASSERT_TRUE(t.ack(m));
  ASSERT_TRUE(t.flush());  // pipelined acks are sent by the next pop, flush() or close()
  EXPECT_EQ(default_layout() ? raw().llen(k.in_flight) : raw().zcard(k.in_flight), 0);
  if (default_layout()) {
    EXPECT_EQ(raw().zcard(k.schedule), 0);
  }
  auto none = t.pop("orders", 0ms);
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());
}

// Decode once (issue 8): the transport hands the envelope it decoded to classify poison along
// with the message, so the App does not decode the body a second time.
TEST_P(RedisTransportTest, PopCarriesTheEnvelopeItDecodedOrThePoisonReason) {
  rd::RedisTransport t(options());
  const std::string body = envelope("orders", 7);
  ASSERT_TRUE(t.publish_with_headers("orders", body, {{"traceparent", "00-abc-def-01"}}));
  ASSERT_TRUE(t.publish("orders", R"({"job":"urn:x","attempts":0,"data":[]})"));
  auto good = t.pop("orders", 0ms);
  ASSERT_TRUE(good.has_value() && good->has_value());
  ASSERT_TRUE((*good)->decoded.has_value());
  const auto expected = bq::try_decode(body);
  ASSERT_TRUE(expected.has_value());
  EXPECT_TRUE(*(*good)->decoded == *expected);  // the unframed body's envelope
  EXPECT_FALSE((*good)->poison);
  auto bad = t.pop("orders", 0ms);
  ASSERT_TRUE(bad.has_value() && bad->has_value());
  EXPECT_FALSE((*bad)->decoded.has_value());
  EXPECT_TRUE((*bad)->poison);  // RDS-27, RDS-48: the strict codec rejects an array `data`
  EXPECT_NE((*bad)->poison_reason.find("data"), std::string::npos) << (*bad)->poison_reason;
}

TEST_P(RedisTransportTest, ImmediateAcksSettleOnReturn) {
  rd::Options o = options();
  o.pipelined_acks = false;
  rd::RedisTransport t(o);
  ASSERT_TRUE(t.publish("orders", envelope()));
  auto got = t.pop("orders", 0ms);
  ASSERT_TRUE(got.has_value() && got->has_value());
  ASSERT_TRUE(t.ack(**got));
  const rd::Keys k = t.keys("orders");
  EXPECT_EQ(default_layout() ? raw().llen(k.in_flight) : raw().zcard(k.in_flight), 0);
}

TEST_P(RedisTransportTest, PendingAcksRideOnTheNextReserve) {
  rd::RedisTransport t(options(1));
  ASSERT_TRUE(t.publish("orders", envelope("orders", 1)));
  ASSERT_TRUE(t.publish("orders", envelope("orders", 2)));
  auto first = t.pop("orders", 0ms);
  ASSERT_TRUE(first.has_value() && first->has_value());
  ASSERT_TRUE(t.ack(**first));
  const rd::Keys k = t.keys("orders");
  auto in_flight = [&] {
    return default_layout() ? raw().llen(k.in_flight) : raw().zcard(k.in_flight);
  };
  EXPECT_EQ(in_flight(), 1);  // queued, not sent yet
  auto second = t.pop("orders", 0ms);
  ASSERT_TRUE(second.has_value() && second->has_value());
  EXPECT_EQ(in_flight(), 1);  // the first ack went out with this reserve; the second is held
  ASSERT_TRUE(t.ack(**second));
  t.close();
  EXPECT_EQ(in_flight(), 0);
}

TEST_P(RedisTransportTest, BatchPublishKeepsOrderAcrossChunks) {
  rd::RedisTransport t(options());
  std::vector<std::string> bodies;
  for (int i = 0; i < 2500; ++i)
    bodies.push_back(envelope("orders", i));
  ASSERT_TRUE(t.publish_batch("orders", bodies));
  const rd::Keys k = t.keys("orders");
  EXPECT_EQ(raw().lrange(k.ready), bodies);
  if (!default_layout()) {
    EXPECT_EQ(raw().llen(k.notify), 2500);  // one token per job (RDS-42)
  }
  for (int i = 0; i < 2500; ++i) {
    auto got = t.pop("orders", 0ms);
    ASSERT_TRUE(got.has_value() && got->has_value());
    ASSERT_EQ((*got)->body, bodies[static_cast<std::size_t>(i)]);
    ASSERT_TRUE(t.ack(**got));
  }
  t.close();
  EXPECT_EQ(default_layout() ? raw().llen(k.in_flight) : raw().zcard(k.in_flight), 0);
}

TEST_P(RedisTransportTest, StatsAndPeek) {
  rd::RedisTransport t(options(1));
  ASSERT_TRUE(t.publish("orders", envelope()));
  ASSERT_TRUE(t.publish("orders", envelope()));
  auto got = t.pop("orders", 0ms);
  ASSERT_TRUE(got.has_value() && got->has_value());
  ASSERT_TRUE(t.dead_letter(**got, "orders.dlq", "record"));
  ASSERT_TRUE(t.publish("orders", envelope()));
  auto second = t.pop("orders", 0ms);
  ASSERT_TRUE(second.has_value() && second->has_value());
  if (!default_layout()) {
    ASSERT_TRUE(t.publish_delayed("orders", envelope(), 60s));
  }
  auto stats = t.stats("orders", "");
  ASSERT_TRUE(stats.has_value()) << stats.error().what();
  EXPECT_EQ(stats->ready, 1);
  EXPECT_EQ(stats->in_flight, 1);
  // The default layout has no delayed set (RDS-13): the figure is unknown, not zero.
  EXPECT_EQ(stats->delayed, default_layout() ? std::nullopt : std::optional<std::int64_t>(1));
  EXPECT_EQ(stats->dead_letter, 1);
  auto peeked = t.peek("orders.dlq", 0);
  ASSERT_TRUE(peeked.has_value());
  ASSERT_EQ(peeked->size(), 1u);
  EXPECT_EQ((*peeked)[0].body, "record");
  EXPECT_TRUE((*peeked)[0].headers.empty());
  auto one = t.peek("orders", 1);
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->size(), 1u);
  EXPECT_EQ(t.stats("orders", "")->dead_letter, 1);  // peek changed nothing
}

TEST_P(RedisTransportTest, TheCapabilitiesAreReachableThroughTheTransportInterface) {
  rd::RedisTransport t(options());
  bq::Transport& base = t;
  EXPECT_NE(bq::capability<bq::DelayedPublisher>(base), nullptr);
  EXPECT_NE(bq::capability<bq::Flusher>(base), nullptr);
  bq::Inspector* inspector = bq::capability<bq::Inspector>(base);
  ASSERT_NE(inspector, nullptr);
  const std::string body = envelope();
  ASSERT_TRUE(t.publish_with_headers("orders", body, {{"traceparent", "00-abc-def-01"}}));
  auto peeked = inspector->peek("orders", 0);
  ASSERT_TRUE(peeked.has_value()) << peeked.error().what();
  ASSERT_EQ(peeked->size(), 1u);
  EXPECT_EQ((*peeked)[0].body, body);  // RDS-15: the frame is unwrapped, as pop would
  if (default_layout()) {
    EXPECT_EQ((*peeked)[0].headers, (bq::Headers{{"traceparent", "00-abc-def-01"}}));
  } else {
    EXPECT_TRUE((*peeked)[0].headers.empty());  // RDS-43: the Laravel layout drops headers
  }
  auto stats = inspector->stats("orders", "elsewhere");
  ASSERT_TRUE(stats.has_value()) << stats.error().what();
  EXPECT_EQ(stats->ready, 1);
  EXPECT_EQ(stats->dead_letter, 0);
}

TEST_P(RedisTransportTest, ReleaseRaisesAttemptsInTheStoredBody) {
  rd::RedisTransport t(options());
  ASSERT_TRUE(t.publish("orders", envelope()));
  auto got = t.pop("orders", 0ms);
  ASSERT_TRUE(got.has_value() && got->has_value());
  ASSERT_TRUE(t.release(**got, 0ms));
  const rd::Keys k = t.keys("orders");
  if (!default_layout()) {
    EXPECT_EQ(raw().zcard(k.schedule), 1);  // RDS-54: due at the next migrate
  }
  auto again = t.pop("orders", 0ms);
  ASSERT_TRUE(again.has_value() && again->has_value());
  EXPECT_EQ(bq::decode((*again)->body).attempts(), 1);
}

TEST_P(RedisTransportTest, PoisonIsFlaggedAndCannotBeReleased) {
  rd::RedisTransport t(options());
  ASSERT_TRUE(t.publish("orders", "not json"));
  auto got = t.pop("orders", 0ms);
  ASSERT_TRUE(got.has_value() && got->has_value());
  EXPECT_TRUE((*got)->poison);
  EXPECT_FALSE((*got)->poison_reason.empty());
  EXPECT_EQ((*got)->body, "not json");
  const bq::Status st = t.release(**got, 0ms);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code(), bq::ErrorCode::ReleaseUnsupported);
}

TEST_P(RedisTransportTest, AppRetriesDeadLettersAndAcks) {
  auto t = std::make_shared<rd::RedisTransport>(options());
  bq::AppOptions ao;
  ao.default_queue = "orders";
  ao.max_attempts = 3;
  ao.dead_letter = true;
  ao.poll_timeout = 0ms;
  bq::App app(t, ao);
  int calls = 0;
  app.handle("urn:babel:orders:created", [&](bq::Context&, const bq::Envelope& env) {
    ++calls;
    if (env.data().find("order_id")->as_int64() == 13) throw std::runtime_error("unlucky");
  });
  app.publish("urn:babel:orders:created", bq::Json::object({{"order_id", 1}}));
  app.publish("urn:babel:orders:created", bq::Json::object({{"order_id", 13}}));
  const bq::DrainResult r = app.drain("orders");
  EXPECT_TRUE(r.status.ok()) << r.status.error().what();
  EXPECT_EQ(calls, 4);  // 1 + three attempts of the unlucky one
  t->close();
  const rd::Keys dlq = t->keys("orders.dlq");
  const auto records = raw().lrange(dlq.ready);
  ASSERT_EQ(records.size(), 1u);
  const bq::Envelope dead = bq::decode(records[0]);
  ASSERT_TRUE(dead.dead_letter());
  EXPECT_EQ(dead.dead_letter()->error.value_or(""), "unlucky");
  EXPECT_EQ(dead.attempts(), 3);  // D5: the incremented value, = max_attempts
  const rd::Keys k = t->keys("orders");
  EXPECT_EQ(raw().llen(k.ready), 0);
  EXPECT_EQ(default_layout() ? raw().llen(k.in_flight) : raw().zcard(k.in_flight), 0);
}

TEST_P(RedisTransportTest, CloseIsIdempotentAndLaterCallsFailClosed) {
  rd::RedisTransport t(options());
  t.close();
  t.close();
  const bq::Status st = t.publish("orders", envelope());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code(), bq::ErrorCode::Closed);
  auto got = t.pop("orders", 0ms);
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().code(), bq::ErrorCode::Closed);
}

TEST_P(RedisTransportTest, EmptyQueueNameIsAConfigError) {
  rd::RedisTransport t(options());
  const bq::Status st = t.publish("", envelope());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code(), bq::ErrorCode::Config);
}

INSTANTIATE_TEST_SUITE_P(BothLayouts, RedisTransportTest,
                         ::testing::Values(rd::Layout::Default, rd::Layout::Laravel),
                         [](const ::testing::TestParamInfo<rd::Layout>& p) {
                           return p.param == rd::Layout::Default ? "Default" : "Laravel";
                         });

TEST(RedisTransportOptions, InvalidValuesAreConfigErrors) {
  auto bad = [](auto mutate) {
    rd::Options o;
    mutate(o);
    try {
      rd::RedisTransport t(o);
    } catch (const bq::ConfigError&) {
      return true;
    }
    return false;
  };
  EXPECT_TRUE(bad([](rd::Options& o) { o.retry_after = std::chrono::seconds(-1); }));  // RDS-59
  EXPECT_TRUE(bad([](rd::Options& o) { o.migration_batch_size = 0; }));                // RDS-51
  EXPECT_TRUE(bad([](rd::Options& o) { o.migration_batch_size = -2; }));
  EXPECT_TRUE(bad([](rd::Options& o) { o.prefetch = 0; }));
  EXPECT_TRUE(bad([](rd::Options& o) {  // RDS-53: the read timeout must outlast a BLPOP slice
    o.layout = rd::Layout::Laravel;
    o.connection.command_timeout = 1s;
  }));
  EXPECT_FALSE(bad([](rd::Options& o) { o.retry_after = std::nullopt; }));
  EXPECT_FALSE(bad([](rd::Options& o) { o.retry_after = std::chrono::seconds(0); }));
}

TEST(RedisTransportOptions, DelayedPublishNeedsTheLaravelLayout) {
  rd::RedisTransport t(rd::Options{});  // connects lazily: the error comes before any I/O
  const bq::Status st = t.publish_delayed("orders", envelope(), 5s);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code(), bq::ErrorCode::DelayUnsupported);  // RDS-13
}

// The names in `keys` as {ready, in_flight, schedule, notify}: one comparison checks a layout.
std::vector<std::string> names_of(const rd::Keys& keys) {
  return {keys.ready, keys.in_flight, keys.schedule, keys.notify};
}

TEST(RedisTransportOptions, KeysOfBothLayouts) {
  rd::Options o;
  o.processing_suffix = ":inflight";
  EXPECT_EQ(names_of(rd::RedisTransport(o).keys("orders")),
            (std::vector<std::string>{"orders",  // RDS-10
                                      "orders:inflight", "orders:inflight:deadlines", ""}));
  o.layout = rd::Layout::Laravel;
  o.laravel_key_prefix = "laravel_database_queues:";
  EXPECT_EQ(names_of(rd::RedisTransport(o).keys("orders")),
            (std::vector<std::string>{"laravel_database_queues:orders",  // RDS-40
                                      "laravel_database_queues:orders:reserved",
                                      "laravel_database_queues:orders:delayed",
                                      "laravel_database_queues:orders:notify"}));
}

}  // namespace
