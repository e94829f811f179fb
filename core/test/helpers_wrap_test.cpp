// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/idempotency.hpp>
#include <babelqueue/in_memory_transport.hpp>
#include <babelqueue/schema.hpp>

#include <gtest/gtest.h>

#include "support/failing_store.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using babelqueue::App;
using babelqueue::AppOptions;
using babelqueue::Context;
using babelqueue::Envelope;
using babelqueue::Error;
using babelqueue::ErrorCode;
using babelqueue::Handler;
using babelqueue::Headers;
using babelqueue::InMemoryTransport;
using babelqueue::Json;
using babelqueue::ReceivedMessage;
using babelqueue::Result;
using babelqueue::Status;
using babelqueue::Transport;
using babelqueue::TransportError;
using babelqueue::idempotency::InMemoryStore;
using babelqueue::idempotency::Store;

constexpr std::string_view kUrn = "urn:babel:orders:created";
constexpr std::chrono::milliseconds kNoWait{0};

// An in-memory transport that counts acks (the in-memory ack is a no-op, so it cannot tell).
class AckCounting final : public Transport, public babelqueue::HeaderPublisher {
 public:
  InMemoryTransport base;
  std::atomic<int> acks{0};

  Status publish(std::string_view queue, std::string body) override {
    return base.publish(queue, std::move(body));
  }
  Result<std::optional<ReceivedMessage>> pop(std::string_view queue,
                                             std::chrono::milliseconds timeout) override {
    return base.pop(queue, timeout);
  }
  Status ack(const ReceivedMessage& msg) override {
    ++acks;
    return base.ack(msg);
  }
  void close() override { base.close(); }
  Status publish_with_headers(std::string_view queue, std::string body,
                              const Headers& headers) override {
    return base.publish_with_headers(queue, std::move(body), headers);
  }
};

AppOptions app_options(int max_attempts = 3, bool dead_letter = false) {
  return AppOptions{.default_queue = "orders",
                    .max_attempts = max_attempts,
                    .dead_letter = dead_letter,
                    .poll_timeout = kNoWait};
}

// The body of an order-created message with meta.id `id`.
std::string order(std::string_view id, std::string_view data = R"({"order_id":7})") {
  return std::string(R"({"job":"urn:babel:orders:created","trace_id":"trace-1","data":)") +
         std::string(data) + R"(,"meta":{"id":")" + std::string(id) +
         R"(","queue":"orders","lang":"go","schema_version":1,"created_at":1749132727000},)"
         R"("attempts":0})";
}

// Calls a wrapped handler directly, as the App would, for one delivery of `body`.
Status call(const Handler& h, const std::string& body) {
  ReceivedMessage msg;
  msg.body = body;
  msg.queue = "orders";
  const std::atomic<bool> stopping{false};
  Context ctx(msg, stopping);
  return h(ctx, babelqueue::decode(body));
}

using babelqueue::test::FailingStore;

// ---- HLP-2: idempotency::wrap_handler ----

TEST(HelpersWrap, HLP2_DuplicateDeliveryThroughTheAppRunsOnceAndAcksBoth) {
  auto t = std::make_shared<AckCounting>();
  auto store = std::make_shared<InMemoryStore>();
  App app(t, app_options());
  int runs = 0;
  app.handle(kUrn, babelqueue::idempotency::wrap_handler(
                       store, [&](Context&, const Envelope& env) -> Status {
                         ++runs;
                         EXPECT_EQ(env.meta().id, "dup-1");
                         return {};
                       }));
  ASSERT_TRUE(t->publish("orders", order("dup-1")).ok());
  ASSERT_TRUE(t->publish("orders", order("dup-1")).ok());

  const babelqueue::DrainResult drained = app.drain();
  EXPECT_TRUE(drained.status.ok());
  EXPECT_EQ(drained.count, 2U);
  EXPECT_EQ(runs, 1) << "the duplicate must not run the handler again";
  EXPECT_EQ(t->acks.load(), 2) << "both deliveries are acked";
  EXPECT_EQ(t->base.size("orders"), 0U) << "nothing was retried";
  EXPECT_EQ(t->base.size("orders.dlq"), 0U);
  EXPECT_TRUE(store->seen("dup-1"));
  EXPECT_EQ(store->size(), 1U);
}

TEST(HelpersWrap, HLP2_HandlerErrorPropagatesAndLeavesTheIdUnmarked) {
  auto store = std::make_shared<InMemoryStore>();
  int runs = 0;
  const Handler h =
      babelqueue::idempotency::wrap_handler(store, [&](Context&, const Envelope&) -> Status {
        ++runs;
        return Error(ErrorCode::Handler, "boom");
      });
  const Status first = call(h, order("A"));
  ASSERT_FALSE(first.ok());
  EXPECT_STREQ(first.error().what(), "boom");
  EXPECT_FALSE(store->seen("A")) << "a failed run must not be remembered";
  const Status second = call(h, order("A"));
  EXPECT_FALSE(second.ok());
  EXPECT_EQ(runs, 2) << "a redelivery after a failure runs again";
  EXPECT_EQ(store->size(), 0U);
}

TEST(HelpersWrap, HLP2_RetryThroughTheAppRunsAgainAfterAFailure) {
  auto t = std::make_shared<AckCounting>();
  auto store = std::make_shared<InMemoryStore>();
  App app(t, app_options(3));
  std::vector<bool> seen_before;
  app.handle(kUrn, babelqueue::idempotency::wrap_handler(
                       store, [&](Context&, const Envelope& env) -> Status {
                         seen_before.push_back(store->seen(env.meta().id));
                         if (seen_before.size() == 1) return Error(ErrorCode::Handler, "transient");
                         return {};
                       }));
  ASSERT_TRUE(t->publish("orders", order("R-1")).ok());
  // The retry republishes the same meta.id; then a late duplicate arrives.
  EXPECT_EQ(app.drain().count, 2U);
  ASSERT_TRUE(t->publish("orders", order("R-1")).ok());
  EXPECT_EQ(app.drain().count, 1U);
  EXPECT_EQ(seen_before, (std::vector<bool>{false, false}))
      << "the retry ran (the id was not marked by the failure); the duplicate was skipped";
  EXPECT_TRUE(store->seen("R-1"));
  EXPECT_EQ(t->base.size("orders"), 0U);
}

TEST(HelpersWrap, HLP2_ThrowingHandlerPropagatesAndLeavesTheIdUnmarked) {
  auto store = std::make_shared<InMemoryStore>();
  const Handler h = babelqueue::idempotency::wrap_handler(
      store, [](Context&, const Envelope&) -> Status { throw std::runtime_error("kaput"); });
  EXPECT_THROW((void)call(h, order("A")), std::runtime_error);
  EXPECT_FALSE(store->seen("A"));
}

TEST(HelpersWrap, HLP2_RememberFailureIsReportedAndStillOk) {
  auto store = std::make_shared<FailingStore>();
  store->remember_throws = true;
  std::vector<std::string> reported;
  int runs = 0;
  const Handler h = babelqueue::idempotency::wrap_handler(
      store,
      [&](Context&, const Envelope&) -> Status {
        ++runs;
        return {};
      },
      [&](std::string_view id, const std::exception& e) {
        reported.push_back(std::string(id) + ": " + e.what());
      });
  EXPECT_TRUE(call(h, order("A")).ok()) << "a remember failure is ignored (Go, spec Q13)";
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(store->remember_calls, 1);
  EXPECT_EQ(reported, std::vector<std::string>{"A: write failed"});
}

TEST(HelpersWrap, HLP2_SeenErrorPropagatesWithoutRunning) {
  auto store = std::make_shared<FailingStore>();
  store->seen_throws = true;
  int runs = 0;
  const Handler h =
      babelqueue::idempotency::wrap_handler(store, [&](Context&, const Envelope&) -> Status {
        ++runs;
        return {};
      });
  EXPECT_THROW((void)call(h, order("A")), TransportError);
  EXPECT_EQ(runs, 0);
}

TEST(HelpersWrap, HLP2_MissingIdFailsOpen) {
  auto store = std::make_shared<InMemoryStore>();
  int runs = 0;
  const Handler h =
      babelqueue::idempotency::wrap_handler(store, [&](Context&, const Envelope&) -> Status {
        ++runs;
        return {};
      });
  EXPECT_TRUE(call(h, order("")).ok());
  EXPECT_TRUE(call(h, order("")).ok());
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(store->size(), 0U);
}

TEST(HelpersWrap, HLP2_NullStoreOrHandlerIsAConfigError) {
  const Handler ok = [](Context&, const Envelope&) -> Status { return {}; };
  EXPECT_THROW((void)babelqueue::idempotency::wrap_handler(nullptr, ok), babelqueue::ConfigError);
  EXPECT_THROW(
      (void)babelqueue::idempotency::wrap_handler(std::make_shared<InMemoryStore>(), Handler{}),
      babelqueue::ConfigError);
}

// ---- HLP-13: schema::wrap_handler and publish_checked ----

// The HLP-14 conformance schema.
std::shared_ptr<const babelqueue::schema::MapProvider> orders_provider() {
  return std::make_shared<const babelqueue::schema::MapProvider>(std::map<std::string, std::string>{
      {std::string(kUrn),
       R"({"type":"object","required":["order_id"],"properties":{"order_id":{"type":"integer",)"
       R"("minimum":1},"amount":{"type":"number","minimum":0},"currency":{"enum":["USD","EUR",)"
       R"("TRY"]}},"additionalProperties":false})"}});
}

TEST(HelpersWrap, HLP13_InvalidPayloadIsAHandlerErrorThenDeadLettered) {
  auto t = std::make_shared<InMemoryTransport>();
  App app(t, app_options(2, true));
  int runs = 0;
  app.handle(kUrn, babelqueue::schema::wrap_handler(orders_provider(),
                                                    [&](Context&, const Envelope&) -> Status {
                                                      ++runs;
                                                      return {};
                                                    }));
  ASSERT_TRUE(t->publish("orders", order("bad-1", R"({"amount":10})")).ok());

  const babelqueue::DrainResult drained = app.drain();
  EXPECT_TRUE(drained.status.ok());
  EXPECT_EQ(drained.count, 2U) << "retried once, then dead-lettered (max_attempts 2)";
  EXPECT_EQ(runs, 0) << "an invalid payload never reaches the handler";
  EXPECT_EQ(t->size("orders"), 0U);
  const std::vector<std::string> dlq = t->peek_all("orders.dlq");
  ASSERT_EQ(dlq.size(), 1U);
  const Envelope dead = babelqueue::decode(dlq[0]);
  ASSERT_TRUE(dead.dead_letter().has_value());
  EXPECT_EQ(dead.dead_letter()->reason, "failed");
  EXPECT_EQ(dead.dead_letter()->attempts, 2);
  ASSERT_TRUE(dead.dead_letter()->error.has_value());
  const std::string& error = *dead.dead_letter()->error;
  EXPECT_NE(error.find("invalid payload for urn:babel:orders:created"), std::string::npos) << error;
  EXPECT_NE(error.find("order_id"), std::string::npos) << "the violation text: " << error;
}

TEST(HelpersWrap, HLP13_WrapReturnsInvalidPayloadAndPassesValidOrUnregistered) {
  int runs = 0;
  const Handler h =
      babelqueue::schema::wrap_handler(orders_provider(), [&](Context&, const Envelope&) -> Status {
        ++runs;
        return Error(ErrorCode::Handler, "inner");
      });
  const Status invalid = call(h, order("A", R"({"order_id":"x"})"));
  ASSERT_FALSE(invalid.ok());
  EXPECT_EQ(invalid.error().code(), ErrorCode::InvalidPayload);
  EXPECT_EQ(runs, 0);

  const Status valid = call(h, order("B", R"({"order_id":1042,"currency":"USD"})"));
  ASSERT_FALSE(valid.ok());
  EXPECT_STREQ(valid.error().what(), "inner") << "a valid payload runs the handler, whose "
                                                 "status is returned unchanged";
  EXPECT_EQ(runs, 1);

  // No schema registered for this URN: opt-in, so it runs.
  const std::string other = R"({"job":"urn:babel:other","trace_id":"t","data":{"anything":[1]},)"
                            R"("meta":{"id":"C","schema_version":1},"attempts":0})";
  EXPECT_FALSE(call(h, other).ok());
  EXPECT_EQ(runs, 2);
}

TEST(HelpersWrap, HLP13_ProviderFailureThrowsOutOfTheWrapper) {
  class Broken final : public babelqueue::schema::Provider {
   public:
    std::optional<babelqueue::schema::Schema> schema(std::string_view) const override {
      throw babelqueue::ConfigError("schema file unreadable");
    }
  };
  const Handler h = babelqueue::schema::wrap_handler(
      std::make_shared<const Broken>(), [](Context&, const Envelope&) -> Status { return {}; });
  EXPECT_THROW((void)call(h, order("A")), babelqueue::ConfigError);
  EXPECT_THROW((void)babelqueue::schema::wrap_handler(nullptr, h), babelqueue::ConfigError);
}

TEST(HelpersWrap, HLP13_PublishCheckedRejectsBeforePublishing) {
  auto t = std::make_shared<InMemoryTransport>();
  App app(t, app_options());
  const auto provider = orders_provider();

  try {
    (void)babelqueue::schema::publish_checked(app, *provider, "  urn:babel:orders:created ",
                                              Json::object({{"order_id", 0}}));
    FAIL() << "an invalid payload must throw (the URN is trimmed before the lookup)";
  } catch (const babelqueue::schema::InvalidPayload& e) {
    EXPECT_EQ(e.urn(), kUrn);
    EXPECT_EQ(e.violations().size(), 1U);
  }
  EXPECT_EQ(t->size("orders"), 0U) << "nothing is published when the check fails";

  const std::string id = babelqueue::schema::publish_checked(
      app, *provider, kUrn, Json::object({{"order_id", 1042}}), {.queue = "checked"});
  const std::vector<std::string> out = t->peek_all("checked");
  ASSERT_EQ(out.size(), 1U);
  const Envelope env = babelqueue::decode(out[0]);
  EXPECT_EQ(env.meta().id, id);
  EXPECT_EQ(env.data(), Json::object({{"order_id", 1042}}));
}

}  // namespace
