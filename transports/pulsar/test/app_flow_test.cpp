// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The App end to end on PulsarTransport against the shared broker, checked with RawPulsar (what
// `<q>.dlq` holds) and a fresh transport (what the subscription still has): a handled message is
// acked (PLS-9) and gone; a failure is retried by a republish with attempts + 1, then
// dead-lettered to `<q>.dlq` (PLS-11, OB-8); poison bytes and a gate-rejected message go to
// `<q>.dlq` untouched (D-2, PLS-8); four workers handle every message once.

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/testing/app_fixture.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "binding/fixtures.hpp"
#include "transport_test.hpp"

namespace babelqueue::pulsar::test {
namespace {

using babelqueue::testing::AppOn;
using babelqueue::testing::handler_failure;
using babelqueue::testing::kWithin;
using std::chrono::milliseconds;

constexpr std::string_view kUrn = "urn:babelqueue:contract";

class PulsarAppTest : public SharedBrokerTest {
 protected:
  App& app(AppOptions options = {}) {
    return app_.start(transport(), std::move(options), milliseconds(500));
  }
  void close_transport() { app_.transport().close(); }
  std::string dlq() const { return queue() + ".dlq"; }

 private:
  AppOn<PulsarTransport> app_;
};

// PLS-9: handled messages are acked: the subscription has nothing left afterwards.
TEST_F(PulsarAppTest, PLS9_HandledMessagesAreAcked) {
  App& a = app();
  std::vector<std::string> ids;
  for (int n = 1; n <= 3; ++n)
    ids.push_back(a.publish(kUrn, Json::object({{"n", n}}), {.queue = queue()}));
  std::vector<std::string> handled;  // drain dispatches on this thread
  a.handle(kUrn, [&](Context&, const Envelope& env) {
    handled.emplace_back(env.meta().id);
    return Status();
  });
  const DrainResult drained = a.drain(queue(), 3);
  EXPECT_TRUE(drained.status.ok()) << drained.status.error().what();
  EXPECT_EQ(handled, ids);
  close_transport();
  EXPECT_TRUE(nothing_left(queue()));
}

// OB-8, PLS-11: a failure is republished with attempts + 1; the last attempt goes to `<q>.dlq`
// as a dead-letter record naming the queue, with the PLS-5 properties; nothing is left.
TEST_F(PulsarAppTest, PLS11_AFailureIsRetriedThenDeadLettered) {
  App& a = app({.max_attempts = 2, .dead_letter = true});
  const std::string id = a.publish(kUrn, Json::object({{"n", 1}}), {.queue = queue()});
  std::vector<std::int64_t> attempts;
  a.handle(kUrn, [&](Context&, const Envelope& env) {
    attempts.push_back(env.attempts());
    return handler_failure("OB-8");
  });
  EXPECT_TRUE(a.drain(queue(), 2).status.ok());
  close_transport();
  EXPECT_EQ(attempts, (std::vector<std::int64_t>{0, 1}));
  EXPECT_TRUE(nothing_left(queue()));
  const std::vector<RawMessage> dead = read_all(dlq(), 2);
  ASSERT_EQ(dead.size(), 1U) << "dead-lettered never or twice";
  const Envelope env = decode(dead[0].message.payload);
  EXPECT_EQ(env.meta().id, id);
  ASSERT_TRUE(env.dead_letter().has_value()) << dead[0].message.payload;
  EXPECT_EQ(env.dead_letter()->original_queue, queue());
  bool has_attempts = false;
  for (const auto& p : dead[0].message.metadata.properties()) {
    if (p.key() == "bq-attempts") {
      has_attempts = true;
      EXPECT_EQ(p.value(), std::to_string(env.attempts()));
    }
  }
  EXPECT_TRUE(has_attempts) << "the DLQ write carries the PLS-5 properties";
}

// D-2: bytes that are no envelope reach `<q>.dlq` as the poison record of exactly those bytes.
TEST_F(PulsarAppTest, D2_PoisonGoesToTheDlq) {
  const std::string poison("\xFF\xFE{\"job\":\"urn:x\"}\x80", 18);
  {
    RawPulsar raw(server().port(), kWithin);
    raw.send(raw.create_producer(topic_for(queue())), poison);
  }
  App& a = app({.dead_letter = true});
  a.handle(kUrn, [](Context&, const Envelope&) { return Status(); });
  EXPECT_TRUE(a.drain(queue(), 1).status.ok());
  close_transport();
  const std::vector<RawMessage> dead = read_all(dlq(), 1, kWithin);
  ASSERT_EQ(dead.size(), 1U);
  const Json json = Json::parse(dead[0].message.payload);
  const Json expected = Json::parse(poison_record(poison, "", queue()));
  ASSERT_NE(json.find("raw"), nullptr) << dead[0].message.payload;
  EXPECT_EQ(*json.find("raw"), *expected.find("raw"));
  EXPECT_EQ(*json.find("raw_encoding"), *expected.find("raw_encoding"));
  EXPECT_TRUE(nothing_left(queue()));
}

// PLS-8, OB-8: a message the bq-schema-version gate rejects goes to `<q>.dlq` as its original
// bytes; no handler runs.
TEST_F(PulsarAppTest, PLS8_AGateRejectedMessageGoesToTheDlqAsItsBytes) {
  const std::string body = binding_test::order_created();
  {
    RawPulsar raw(server().port(), kWithin);
    raw.send(raw.create_producer(topic_for(queue())), body, {{"bq-schema-version", "2"}});
  }
  std::atomic<int> handled{0};
  App& a = app({.dead_letter = true});
  a.handle_any([&](Context&, const Envelope&) {
    ++handled;
    return Status();
  });
  EXPECT_TRUE(a.drain(queue(), 1).status.ok());
  close_transport();
  const std::vector<RawMessage> dead = read_all(dlq(), 1, kWithin);
  ASSERT_EQ(dead.size(), 1U);
  EXPECT_EQ(dead[0].message.payload, body);
  EXPECT_EQ(handled.load(), 0);
  EXPECT_TRUE(nothing_left(queue()));
}

// Four workers on one transport: every message is handled exactly once and acked.
TEST_F(PulsarAppTest, FourWorkersHandleEveryMessageOnce) {
  constexpr int kMessages = 200;
  App& a = app({.concurrency = 4});
  std::set<std::string> ids;
  for (int n = 0; n < kMessages; ++n)
    ids.insert(a.publish(kUrn, Json::object({{"n", n}}), {.queue = queue()}));
  std::mutex mu;
  std::multiset<std::string> seen;
  a.handle(kUrn, [&](Context&, const Envelope& env) {
    std::lock_guard lock(mu);
    seen.emplace(env.meta().id);
    if (seen.size() == kMessages) a.stop();
    return Status();
  });
  EXPECT_TRUE(a.consume(queue()).ok());
  close_transport();
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()), ids);
  EXPECT_EQ(seen.size(), ids.size()) << "a message was handled twice";
  EXPECT_TRUE(nothing_left(queue()));
}

}  // namespace
}  // namespace babelqueue::pulsar::test
