// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/testing/app_fixture.hpp>
#include <babelqueue/testing/contract.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

/// @file
/// AppFlowContract: the App end to end on a broker transport whose dead-letter queue the App
/// writes itself (no DeadLetterer: `<q>.dlq` is an ordinary queue), checked through the broker's
/// own client, not the transport: handled messages are settled and gone; a failure is retried
/// with attempts + 1 and then dead-lettered with the projection (OB-8, RT-35); bytes that are no
/// envelope reach `<q>.dlq` as the poison record of exactly those bytes (D-2); a message the
/// schema-version gate rejects reaches `<q>.dlq` as its bytes and no handler runs (RT-40, OB-8);
/// four workers handle every message once.
///
/// Traits: `set_up()` (optional) and `make()` as in contract.hpp, and:
/// @code
///   // A message of `body` with `properties` (string application properties) sent to `queue` by
///   // the broker's raw client: a producer other than the transport.
///   static void send_foreign(const std::string& queue, const std::string& body,
///                            const std::map<std::string, std::string>& properties);
///   // The messages `queue` holds, read by the broker's raw client: up to kWithin for the first
///   // `n`, and any more that are there.
///   static std::vector<babelqueue::testing::ForeignRecord> read_all(const std::string& queue,
///                                                                   std::size_t n);
///   // True when `queue` has nothing left for the transport's consumers, once the broker has
///   // applied the settles of a transport just closed.
///   static bool nothing_left(const std::string& queue);
///   // The projection's property names of the schema version and of attempts.
///   static constexpr std::string_view schema_version_property = "...";
///   static constexpr std::string_view attempts_property = "...";
/// @endcode
/// Instantiate it inside namespace babelqueue::testing, as the suites of contract.hpp.

namespace babelqueue::testing {

/// A message as the broker's raw client read it: its body and string application properties.
struct ForeignRecord {
  std::string body;
  std::map<std::string, std::string> properties;
};

/// The fixture of AppFlowContract: an App on a fresh transport and a fresh queue per test.
///
/// Thread-safety: a GoogleTest fixture; the tests use it from their own thread.
template <class Traits>
class AppFlowContract : public ::testing::Test {
 protected:
  static constexpr std::string_view kUrn = kContractUrn;

  void SetUp() override {
    if constexpr (requires { Traits::set_up(); }) {
      Traits::set_up();
      if (IsSkipped() || HasFatalFailure()) return;
    }
    queue_ = unique_queue_name();
  }

  /// An App with `options` on a fresh transport (replacing the one before).
  App& app(AppOptions options = {}) {
    return app_.start(std::shared_ptr<Transport>(Traits::make()), std::move(options),
                      std::chrono::milliseconds(500));
  }
  /// Closes the App's transport: its settles reach the broker, what it held goes back.
  void close_transport() { app_.transport().close(); }
  const std::string& queue() const { return queue_; }
  std::string dlq() const { return default_dead_letter_name(queue_); }

 private:
  AppOn<Transport> app_;
  std::string queue_;
};

TYPED_TEST_SUITE_P(AppFlowContract);

// Handled messages are settled (accepted, acked): the queue has nothing left afterwards.
TYPED_TEST_P(AppFlowContract, HandledMessagesAreSettled) {
  App& a = this->app();
  std::vector<std::string> ids;
  for (int n = 1; n <= 3; ++n)
    ids.push_back(a.publish(TestFixture::kUrn, Json::object({{"n", n}}), {.queue = this->queue()}));
  std::vector<std::string> handled;  // drain dispatches on this thread
  a.handle(TestFixture::kUrn, [&](Context&, const Envelope& env) {
    handled.emplace_back(env.meta().id);
    return Status();
  });
  const DrainResult drained = a.drain(this->queue(), 3);
  EXPECT_TRUE(drained.status.ok()) << drained.status.error().what();
  EXPECT_EQ(handled, ids);
  this->close_transport();
  EXPECT_TRUE(TypeParam::nothing_left(this->queue()));
}

// OB-8, RT-35: a failure is republished with attempts + 1; the last attempt goes to `<q>.dlq` as
// a dead-letter record naming the queue, with the projection's attempts; nothing is left.
TYPED_TEST_P(AppFlowContract, OB8_AFailureIsRetriedThenDeadLettered) {
  App& a = this->app({.max_attempts = 2, .dead_letter = true});
  const std::string id =
      a.publish(TestFixture::kUrn, Json::object({{"n", 1}}), {.queue = this->queue()});
  std::vector<std::int64_t> attempts;
  a.handle(TestFixture::kUrn, [&](Context&, const Envelope& env) {
    attempts.push_back(env.attempts());
    return handler_failure("OB-8");
  });
  EXPECT_TRUE(a.drain(this->queue(), 2).status.ok());
  this->close_transport();
  EXPECT_EQ(attempts, (std::vector<std::int64_t>{0, 1}));
  EXPECT_TRUE(TypeParam::nothing_left(this->queue()));
  const std::vector<ForeignRecord> dead = TypeParam::read_all(this->dlq(), 1);
  ASSERT_EQ(dead.size(), 1U) << "dead-lettered never or twice";
  const Envelope env = decode(dead[0].body);
  EXPECT_EQ(env.meta().id, id);
  ASSERT_TRUE(env.dead_letter().has_value()) << dead[0].body;
  EXPECT_EQ(env.dead_letter()->original_queue, this->queue());
  const auto projected = dead[0].properties.find(std::string(TypeParam::attempts_property));
  ASSERT_NE(projected, dead[0].properties.end()) << "the DLQ write carries the projection";
  EXPECT_EQ(projected->second, std::to_string(env.attempts()));
}

// D-2: bytes that are no envelope reach `<q>.dlq` as the poison record of exactly those bytes.
TYPED_TEST_P(AppFlowContract, D2_PoisonGoesToTheDlq) {
  const std::string poison("\xFF\xFE{\"job\":\"urn:x\"}\x80", 18);
  TypeParam::send_foreign(this->queue(), poison, {});
  App& a = this->app({.dead_letter = true});
  a.handle(TestFixture::kUrn, [](Context&, const Envelope&) { return Status(); });
  EXPECT_TRUE(a.drain(this->queue(), 1).status.ok());
  this->close_transport();
  const std::vector<ForeignRecord> dead = TypeParam::read_all(this->dlq(), 1);
  ASSERT_EQ(dead.size(), 1U);
  const Json json = Json::parse(dead[0].body);
  const Json expected = Json::parse(poison_record(poison, "", this->queue()));
  ASSERT_NE(json.find("raw"), nullptr) << dead[0].body;
  EXPECT_EQ(*json.find("raw"), *expected.find("raw"));
  EXPECT_EQ(*json.find("raw_encoding"), *expected.find("raw_encoding"));
  EXPECT_TRUE(TypeParam::nothing_left(this->queue()));
}

// RT-40, OB-8: a message the schema-version gate rejects goes to `<q>.dlq` as its original
// bytes; no handler runs.
TYPED_TEST_P(AppFlowContract, OB8_AGateRejectedMessageGoesToTheDlqAsItsBytes) {
  const std::string body = contract_body(1);
  TypeParam::send_foreign(this->queue(), body,
                          {{std::string(TypeParam::schema_version_property), "2"}});
  std::atomic<int> handled{0};
  App& a = this->app({.dead_letter = true});
  a.handle_any([&](Context&, const Envelope&) {
    ++handled;
    return Status();
  });
  EXPECT_TRUE(a.drain(this->queue(), 1).status.ok());
  this->close_transport();
  const std::vector<ForeignRecord> dead = TypeParam::read_all(this->dlq(), 1);
  ASSERT_EQ(dead.size(), 1U);
  EXPECT_EQ(dead[0].body, body);
  EXPECT_EQ(handled.load(), 0);
  EXPECT_TRUE(TypeParam::nothing_left(this->queue()));
}

// Four workers on one transport: every message is handled exactly once and settled.
TYPED_TEST_P(AppFlowContract, FourWorkersHandleEveryMessageOnce) {
  constexpr std::size_t kMessages = 200;
  App& a = this->app({.concurrency = 4});
  std::set<std::string> ids;
  for (std::size_t n = 0; n < kMessages; ++n) {
    ids.insert(a.publish(TestFixture::kUrn, Json::object({{"n", static_cast<std::int64_t>(n)}}),
                         {.queue = this->queue()}));
  }
  std::mutex mu;
  std::multiset<std::string> seen;
  a.handle(TestFixture::kUrn, [&](Context&, const Envelope& env) {
    std::lock_guard lock(mu);
    seen.emplace(env.meta().id);
    if (seen.size() == kMessages) a.stop();
    return Status();
  });
  EXPECT_TRUE(a.consume(this->queue()).ok());
  this->close_transport();
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()), ids);
  EXPECT_EQ(seen.size(), ids.size()) << "a message was handled twice";
  EXPECT_TRUE(TypeParam::nothing_left(this->queue()));
}

REGISTER_TYPED_TEST_SUITE_P(AppFlowContract, HandledMessagesAreSettled,
                            OB8_AFailureIsRetriedThenDeadLettered, D2_PoisonGoesToTheDlq,
                            OB8_AGateRejectedMessageGoesToTheDlqAsItsBytes,
                            FourWorkersHandleEveryMessageOnce);

}  // namespace babelqueue::testing
