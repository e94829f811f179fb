// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The App end to end on ArtemisTransport against the shared broker, checked with RawAmqp10 (the
// broker's message counts and what `<q>.dlq` holds): a handled message is accepted (ART-7) and
// gone; a failure is retried by a republish with attempts + 1, then dead-lettered to `<q>.dlq`
// (ART-9, OB-8); poison bytes and a gate-rejected message go to `<q>.dlq` untouched (D-2,
// ART-6); four workers handle every message once; refused credentials name no secret.

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
#include "shared_broker_test.hpp"

namespace babelqueue::artemis::test {
namespace {

using babelqueue::testing::AppOn;
using babelqueue::testing::handler_failure;
using babelqueue::testing::kWithin;
using std::chrono::milliseconds;

constexpr std::string_view kUrn = "urn:babelqueue:contract";

class ArtemisAppTest : public SharedBrokerTest {
 protected:
  App& app(AppOptions options = {}) {
    return app_.start(transport(), std::move(options), milliseconds(500));
  }
  void close_transport() { app_.transport().close(); }
  std::string dlq() const { return queue() + ".dlq"; }

 private:
  AppOn<ArtemisTransport> app_;
};

// ART-7: handled messages are accepted: the queue is empty afterwards.
TEST_F(ArtemisAppTest, ART7_HandledMessagesAreAccepted) {
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
  EXPECT_EQ(count_becomes(queue(), 0), 0);
}

// OB-8, ART-9: a failure is republished with attempts + 1; the last attempt goes to `<q>.dlq`
// as a dead-letter record naming the queue; nothing is left on the queue.
TEST_F(ArtemisAppTest, OB8_AFailureIsRetriedThenDeadLettered) {
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
  EXPECT_EQ(count_becomes(queue(), 0), 0);
  const std::vector<RawMessage> dead = raw().receive(dlq(), 1, kWithin);
  ASSERT_EQ(dead.size(), 1U);
  EXPECT_EQ(count_becomes(dlq(), 0), 0) << "dead-lettered twice";
  const Envelope env = decode(dead[0].body);
  EXPECT_EQ(env.meta().id, id);
  ASSERT_TRUE(env.dead_letter().has_value()) << dead[0].body;
  EXPECT_EQ(env.dead_letter()->original_queue, queue());
  EXPECT_EQ(dead[0].properties.at("bq_attempts"), std::to_string(env.attempts()))
      << "the DLQ write carries the ART-4 projection";
}

// D-2: bytes that are no envelope reach `<q>.dlq` as the ADR-0035 poison record of exactly
// those bytes, whatever body section carried them.
TEST_F(ArtemisAppTest, D2_PoisonGoesToTheDlq) {
  const std::string poison("\xFF\xFE{\"job\":\"urn:x\"}\x80", 18);
  RawMessage out;
  out.body = poison;
  raw().send(queue(), out);
  App& a = app({.dead_letter = true});
  a.handle(kUrn, [](Context&, const Envelope&) { return Status(); });
  EXPECT_TRUE(a.drain(queue(), 1).status.ok());
  close_transport();
  const std::vector<RawMessage> dead = raw().receive(dlq(), 1, kWithin);
  ASSERT_EQ(dead.size(), 1U);
  const Json json = Json::parse(dead[0].body);
  const Json expected = Json::parse(poison_record(poison, "", queue()));
  ASSERT_NE(json.find("raw"), nullptr) << dead[0].body;
  EXPECT_EQ(*json.find("raw"), *expected.find("raw"));
  EXPECT_EQ(*json.find("raw_encoding"), *expected.find("raw_encoding"));
  EXPECT_EQ(count_becomes(queue(), 0), 0);
}

// ART-6, OB-8: a message the bq_schema_version gate rejects goes to `<q>.dlq` as its original
// bytes; no handler runs.
TEST_F(ArtemisAppTest, OB8_AGateRejectedMessageGoesToTheDlqAsItsBytes) {
  const std::string body = binding_test::order_created();
  RawMessage out;
  out.body = body;
  out.properties = {{"bq_schema_version", "2"}};
  raw().send(queue(), out);
  std::atomic<int> handled{0};
  App& a = app({.dead_letter = true});
  a.handle_any([&](Context&, const Envelope&) {
    ++handled;
    return Status();
  });
  EXPECT_TRUE(a.drain(queue(), 1).status.ok());
  close_transport();
  const std::vector<RawMessage> dead = raw().receive(dlq(), 1, kWithin);
  ASSERT_EQ(dead.size(), 1U);
  EXPECT_EQ(dead[0].body, body);
  EXPECT_EQ(handled.load(), 0);
  EXPECT_EQ(count_becomes(queue(), 0), 0);
}

// Four workers on one transport: every message is handled exactly once and accepted.
TEST_F(ArtemisAppTest, FourWorkersHandleEveryMessageOnce) {
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
  EXPECT_EQ(count_becomes(queue(), 0), 0);
}

}  // namespace
}  // namespace babelqueue::artemis::test

namespace babelqueue::artemis::test {
namespace {

using ArtemisCredentials = SharedBrokerTest;

// Refused credentials: the publish fails (no outcome: the broker refused the SASL exchange),
// naming why and never the password; a consume stops with a ConfigError (D-3).
TEST_F(ArtemisCredentials, RefusedCredentialsFailThePublishNamingNoSecret) {
  std::string bad = "artemis://";
  bad += ArtemisServer::kUser;
  bad += ":not-the-secret-42@";
  bad += server().host_port();
  bad += "?timeout=500";
  ArtemisTransport t(bad);
  const Status s = t.publish(queue(), "{}");
  ASSERT_FALSE(s.ok()) << "published with a wrong password";
  const std::string what = s.error().what();
  EXPECT_EQ(what.find("not-the-secret-42"), std::string::npos) << what;
  EXPECT_NE(what.find("the last connection failed"), std::string::npos) << what;
  // D-3: a consume stops on refused credentials instead of waiting forever.
  App app(std::make_shared<ArtemisTransport>(bad), {.poll_timeout = milliseconds(200)});
  app.handle_any([](Context&, const Envelope&) { return Status(); });
  const Status consumed = app.consume(queue());
  ASSERT_FALSE(consumed.ok());
  EXPECT_TRUE(consumed.is(ErrorCode::Config)) << consumed.error().what();
  EXPECT_EQ(std::string(consumed.error().what()).find("not-the-secret-42"), std::string::npos);
}

}  // namespace
}  // namespace babelqueue::artemis::test
