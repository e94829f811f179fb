// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The App runtime: the required runtime tests RT-T-1..RT-T-16 (02-runtime §13), the RT-6 defaults,
// one test per decision-table row D1..D22 not already covered, and the worker pool / stop
// behaviour of decisions D-3 and D-4.

#include <babelqueue/app.hpp>
#include <babelqueue/binding/common.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/in_memory_transport.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "support/test_transport.hpp"

namespace bq = babelqueue;
using namespace std::chrono_literals;
using bq::test::Behaviour;
using bq::test::Delivery;
using bq::test::kBrokerDeadLetter;
using bq::test::kDeadLetterer;
using bq::test::kDeadLetterNaming;
using bq::test::kHeaderPublisher;
using bq::test::kKeyedRepublisher;
using bq::test::kReleaser;
using bq::test::kRewinder;
using bq::test::Published;
using bq::test::TestTransport;

namespace {

constexpr std::string_view kUrn = "urn:babel:orders:created";

// EX-5 (01-envelope §9): unknown and forbidden members.
constexpr std::string_view kEx5 =
    R"({"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"order_id":1042},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"php","schema_version":1,"created_at":1749132727000,"vendor_flag":true,"vendor_ctx":{"region":"eu-west-1","hops":[1,2]},"ts":5},"attempts":0,"extra_top":{"k":"<v&>"},"timestamp":1})";
// EX-5 re-encoded, with `attempts` = N spliced in.
std::string ex5_encoded(int attempts) {
  return R"({"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"order_id":1042},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"php","schema_version":1,"created_at":1749132727000,"vendor_ctx":{"region":"eu-west-1","hops":[1,2]},"vendor_flag":true},"attempts":)" +
         std::to_string(attempts) + R"(,"extra_top":{"k":"<v&>"}})";
}

// A fresh envelope body for `urn` on queue `queue` with `attempts`.
std::string body_for(std::string_view urn, std::string_view queue = "orders", int attempts = 0) {
  bq::MakeOptions mo;
  mo.queue = queue;
  bq::Envelope env = bq::make(urn, bq::Json::object({{"order_id", 1042}}), mo);
  env.set_attempts(attempts);
  return bq::encode(env);
}

// Collects log lines (thread-safe).
class LogCapture {
 public:
  std::function<void(bq::LogLevel, std::string_view)> sink() {
    return [this](bq::LogLevel level, std::string_view text) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.emplace_back(level, std::string(text));
    };
  }
  std::size_t count(bq::LogLevel level) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::size_t n = 0;
    for (const auto& l : lines_)
      n += l.first == level ? 1 : 0;
    return n;
  }
  std::vector<std::string> lines(bq::LogLevel level) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (const auto& l : lines_)
      if (l.first == level) out.push_back(l.second);
    return out;
  }
  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_.size();
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<bq::LogLevel, std::string>> lines_;
};

// Options for tests: short poll and rewind pause, silent logger.
bq::AppOptions test_options() {
  bq::AppOptions o;
  o.poll_timeout = 20ms;
  o.rewind_pause = 2ms;
  o.logger = [](bq::LogLevel, std::string_view) {};
  return o;
}

// Counts hook calls (thread-safe).
struct HookCounter {
  std::atomic<int> ack{0};
  std::atomic<int> release{0};
  std::atomic<int> dead_letter{0};
  void install(bq::AppOptions& o) {
    o.on_ack_error = [this](const bq::ReceivedMessage&, const bq::Error&) { ++ack; };
    o.on_release_error = [this](const bq::ReceivedMessage&, const bq::Error&) { ++release; };
    o.on_dead_letter_error = [this](const bq::ReceivedMessage&, const bq::Error&) {
      ++dead_letter;
    };
  }
};

// Polls `pred` (1 ms steps) for up to `limit`.
template <class Pred>
bool wait_until(Pred pred, std::chrono::milliseconds limit = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// Calls app.stop() on scope exit, so a failed assertion never leaves a consume thread running.
struct StopOnExit {
  bq::App& app;
  ~StopOnExit() { app.stop(); }
};

bq::Status ok_status() {
  return bq::Status{};
}
bq::Status boom() {
  return bq::Status(bq::Error(bq::ErrorCode::Handler, "boom"));
}

// The dead_letter block members of a DLQ body as raw JSON.
bq::Json dead_letter_json(const std::string& body) {
  const bq::Json j = bq::Json::parse(body);
  const bq::Json* dl = j.find("dead_letter");
  return dl == nullptr ? bq::Json() : *dl;
}

// Checks that `dlq_body` is exactly the ADR-0035 record of `body` consumed from `queue`.
void expect_poison_record(const std::string& dlq_body, std::string_view body,
                          std::string_view queue, std::string_view error) {
  const bq::Json dl = dead_letter_json(dlq_body);
  ASSERT_TRUE(dl.is_object()) << dlq_body;
  const std::int64_t failed_at = dl.find("failed_at")->as_int64().value();
  EXPECT_EQ(dlq_body, bq::poison_record(body, error, queue, failed_at));
  EXPECT_EQ(dl.find("reason")->as_string(), "poison");
  EXPECT_EQ(dl.find("original_queue")->as_string(), queue);
}

std::string decode_error_of(std::string_view body) {
  const auto r = bq::try_decode(body);
  EXPECT_FALSE(r.has_value()) << body;
  return r.has_value() ? std::string() : std::string(r.error().what());
}

struct PaymentDeclined : std::runtime_error {
  PaymentDeclined() : std::runtime_error("card declined") {}
};

// What a handler saw of a delivery's headers (RT-13, HLP-25): registered on kUrn, then one drain.
struct HeaderProbe {
  bq::Headers seen{{"sentinel", "x"}};
  bool replay = true;
  int effects = 0;
  std::size_t dispatched = 0;

  static HeaderProbe drain(bq::App& app, std::string_view queue) {
    auto p = std::make_shared<HeaderProbe>();  // the handler outlives this call
    app.handle(kUrn, [p](bq::Context& ctx, const bq::Envelope&) {
      p->seen = ctx.headers();
      p->replay = ctx.is_replay();
      return bq::bypass_external_effects(ctx, [&p] {
        ++p->effects;
        return ok_status();
      });
    });
    p->dispatched = app.drain(queue).count;
    return *p;
  }
};

}  // namespace

// =============================================================================================
// RT-6 defaults, construction, registration
// =============================================================================================

TEST(AppOptions, RT6_DefaultsMatchTheTable) {
  const bq::AppOptions o;
  EXPECT_EQ(o.default_queue, "default");
  EXPECT_EQ(o.max_attempts, 3);
  EXPECT_EQ(o.unknown_urn, bq::UnknownUrnStrategy::Fail);
  EXPECT_FALSE(o.dead_letter);
  EXPECT_TRUE(o.dead_letter_queue.empty());
  EXPECT_FALSE(o.dead_letter_suffix.has_value());  // nullopt = the default ".dlq"
  EXPECT_EQ(o.poll_timeout, 1s);
  EXPECT_EQ(o.retry_backoff, 0ms);
  EXPECT_EQ(o.unknown_urn_release_delay, 0ms);
  EXPECT_EQ(o.rewind_pause, 1s);
  EXPECT_EQ(o.concurrency, 1);
  EXPECT_FALSE(o.on_ack_error);
  EXPECT_FALSE(o.on_release_error);
  EXPECT_FALSE(o.on_dead_letter_error);
  EXPECT_FALSE(o.on_consume_error);
  EXPECT_FALSE(o.logger);
  bq::App app(std::make_shared<bq::InMemoryTransport>());
  EXPECT_EQ(app.dead_letter_queue_for("orders"), "orders.dlq");  // the default suffix
  EXPECT_EQ(app.options().default_queue, "default");
  EXPECT_FALSE(app.stopping());
}

TEST(AppConstruction, InvalidOptionsAreConfigErrors) {
  EXPECT_THROW(bq::App(nullptr), bq::ConfigError);
  bq::AppOptions zero;
  zero.concurrency = 0;
  EXPECT_THROW(bq::App(std::make_shared<TestTransport<>>(), zero), bq::ConfigError);
  bq::AppOptions negative;
  negative.concurrency = -3;
  EXPECT_THROW(bq::App(std::make_shared<TestTransport<>>(), negative), bq::ConfigError);
  bq::AppOptions bad_enum;
  bad_enum.unknown_urn = static_cast<bq::UnknownUrnStrategy>(42);
  EXPECT_THROW(bq::App(std::make_shared<TestTransport<>>(), bad_enum), bq::ConfigError);
  bq::AppOptions bad_poll;
  bad_poll.poll_timeout = -1ms;
  EXPECT_THROW(bq::App(std::make_shared<TestTransport<>>(), bad_poll), bq::ConfigError);
  try {
    bq::App app(std::make_shared<TestTransport<>>(), zero);
    FAIL() << "no exception";
  } catch (const bq::Error& e) {
    EXPECT_EQ(e.code(), bq::ErrorCode::Config);
  }
}

TEST(AppConstruction, StrategyStringsParseExactlyElseConfigError) {
  EXPECT_EQ(bq::parse_unknown_urn_strategy("fail"), bq::UnknownUrnStrategy::Fail);
  EXPECT_EQ(bq::parse_unknown_urn_strategy("delete"), bq::UnknownUrnStrategy::Delete);
  EXPECT_EQ(bq::parse_unknown_urn_strategy("release"), bq::UnknownUrnStrategy::Release);
  EXPECT_EQ(bq::parse_unknown_urn_strategy("dead_letter"), bq::UnknownUrnStrategy::DeadLetter);
  for (const auto s : {bq::UnknownUrnStrategy::Fail, bq::UnknownUrnStrategy::Delete,
                       bq::UnknownUrnStrategy::Release, bq::UnknownUrnStrategy::DeadLetter}) {
    EXPECT_EQ(bq::parse_unknown_urn_strategy(bq::to_string(s)), s);
  }
  for (const char* bad : {"", "Fail", "FAIL", "dead-letter", "deadletter", " fail", "retry"}) {
    EXPECT_THROW((void)bq::parse_unknown_urn_strategy(bad), bq::ConfigError) << bad;
  }
}

TEST(AppConstruction, MaxAttemptsAcceptsAnyIntAndAtMostOneMeansNoRetry) {
  for (const int max : {INT_MIN, -5, 0, 1}) {
    auto t = std::make_shared<TestTransport<>>();
    bq::AppOptions o = test_options();
    o.max_attempts = max;
    bq::App app(t, o);
    int calls = 0;
    app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
      ++calls;
      return boom();
    });
    t->enqueue("orders", body_for(kUrn));
    EXPECT_EQ(app.drain("orders").count, 1u) << max;
    EXPECT_EQ(calls, 1) << max;
    EXPECT_TRUE(t->published().empty()) << max;  // no retry: D6 drop
    EXPECT_EQ(t->acked().size(), 1u) << max;
  }
  bq::AppOptions big = test_options();
  big.max_attempts = INT_MAX;
  EXPECT_NO_THROW(bq::App(std::make_shared<TestTransport<>>(), big));
}

TEST(AppHandlers, RT11_BlankUrnIsUsageErrorAndKeysAreTrimmed) {
  auto t = std::make_shared<TestTransport<>>();
  bq::App app(t, test_options());
  try {
    app.handle(" \t ", [](bq::Context&, const bq::Envelope&) { return ok_status(); });
    FAIL() << "no exception";
  } catch (const bq::Error& e) {
    EXPECT_EQ(e.code(), bq::ErrorCode::Usage);
  }
  EXPECT_THROW(app.handle("urn:x", bq::Handler{}), bq::Error);
  int first = 0;
  int second = 0;
  app.handle("  urn:babel:orders:created\n", [&](bq::Context&, const bq::Envelope&) {
    ++first;
    return ok_status();
  });
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {  // the last registration wins
    ++second;
    return ok_status();
  });
  t->enqueue("orders", body_for(kUrn));
  EXPECT_EQ(app.drain("orders").count, 1u);
  EXPECT_EQ(first, 0);
  EXPECT_EQ(second, 1);
  // A void handler that does not throw acks.
  app.handle("urn:void", [&](bq::Context&, const bq::Envelope&) { ++first; });
  t->enqueue("orders", body_for("urn:void"));
  EXPECT_EQ(app.drain("orders").count, 1u);
  EXPECT_EQ(first, 1);
  EXPECT_EQ(t->acked().size(), 2u);
}

TEST(AppHandlers, HandleAnyTakesUrnsWithoutAHandlerOnly) {
  auto t = std::make_shared<TestTransport<>>();
  bq::AppOptions o = test_options();
  o.unknown_urn = bq::UnknownUrnStrategy::DeadLetter;
  bq::App app(t, o);
  EXPECT_THROW(app.handle_any(bq::Handler{}), bq::Error);
  std::vector<std::string> generic;
  int specific = 0;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) { ++specific; });
  app.handle_any([&](bq::Context&, const bq::Envelope& env) {
    generic.emplace_back(env.urn());
    return ok_status();
  });
  t->enqueue("orders", body_for(kUrn));
  t->enqueue("orders", body_for("urn:nobody"));
  t->enqueue("orders", R"({"data":{},"meta":{"id":"x","schema_version":1},"attempts":0})");
  EXPECT_EQ(app.drain("orders").count, 3u);
  EXPECT_EQ(specific, 1);
  EXPECT_EQ(generic, std::vector<std::string>{"urn:nobody"});
  // The identity-less body still follows RT-30 (unknown-URN strategy: dead_letter), not the
  // catch-all handler.
  const auto pub = t->published();
  ASSERT_EQ(pub.size(), 1u);
  EXPECT_EQ(pub[0].queue, "orders.dlq");
}

// =============================================================================================
// Producer API (RT-9, RT-10)
// =============================================================================================

TEST(AppPublish, RT9_PublishBuildsEncodesAndTargetsTheQueue) {
  auto t = std::make_shared<TestTransport<>>();
  bq::AppOptions o = test_options();
  o.default_queue = "jobs";
  bq::App app(t, o);
  const std::string id = app.publish(kUrn, bq::Json::object({{"order_id", 7}}));
  bq::PublishOptions blank;
  blank.queue = "  ";
  app.publish(kUrn, bq::Json::object({}), blank);
  bq::PublishOptions to_orders;
  to_orders.queue = "orders";
  to_orders.trace_id = "trace-42";
  app.publish(kUrn, bq::Json::object({}), to_orders);
  const auto pub = t->published();
  ASSERT_EQ(pub.size(), 3u);
  EXPECT_EQ(pub[0].queue, "jobs");
  EXPECT_EQ(pub[0].via, Published::Via::Publish);
  const bq::Envelope env = bq::decode(pub[0].body);
  EXPECT_EQ(env.meta().id, id);
  EXPECT_EQ(env.meta().queue, "jobs");
  EXPECT_EQ(env.meta().lang, "cpp");
  EXPECT_EQ(env.urn(), kUrn);
  EXPECT_EQ(env.attempts(), 0);
  EXPECT_TRUE(bq::accepts(env));
  EXPECT_EQ(env.data().find("order_id")->as_int64(), 7);
  EXPECT_EQ(pub[1].queue, "jobs");  // blank queue = the default queue
  EXPECT_EQ(pub[2].queue, "orders");
  EXPECT_EQ(bq::decode(pub[2].body).trace_id(), "trace-42");
}

TEST(AppPublish, RT9_ErrorsAreThrown) {
  auto t = std::make_shared<TestTransport<>>();
  bq::App app(t, test_options());
  t->fail_publish("default", 1);
  try {
    app.publish(kUrn);
    FAIL() << "no exception";
  } catch (const bq::Error& e) {
    EXPECT_EQ(e.code(), bq::ErrorCode::Transport);
  }
  try {
    app.publish("  ");
    FAIL() << "no exception";
  } catch (const bq::Error& e) {
    EXPECT_EQ(e.code(), bq::ErrorCode::EmptyUrn);
  }
  EXPECT_TRUE(t->published().empty());
  EXPECT_NO_THROW(app.publish(kUrn));  // nothing is retried, the next call works
  EXPECT_EQ(t->published().size(), 1u);
}

// =============================================================================================
// RT-T-1 .. RT-T-16
// =============================================================================================

TEST(AppRuntime, RTT1_PublishConsumeAcksAndEmpties) {
  auto t = std::make_shared<bq::InMemoryTransport>();
  bq::App app(t, test_options());
  StopOnExit guard{app};
  std::optional<std::int64_t> order_id;
  std::string trace;
  bq::Headers seen_headers;
  app.handle(kUrn, [&](bq::Context& ctx, const bq::Envelope& env) {
    order_id = env.data().find("order_id")->as_int64();
    trace = std::string(env.trace_id());
    seen_headers = ctx.headers();
    app.stop();
    return ok_status();
  });
  bq::PublishOptions po;
  po.queue = "orders";
  po.trace_id = "7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b";
  const bq::Headers headers{
      {"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}};
  app.publish_with_headers(kUrn, bq::Json::object({{"order_id", 1042}}), headers, po);
  EXPECT_EQ(t->size("orders"), 1u);
  const bq::Status st = app.consume("orders");
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(order_id, 1042);
  EXPECT_EQ(trace, "7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b");
  EXPECT_EQ(seen_headers, headers);
  EXPECT_EQ(t->size("orders"), 0u);
  EXPECT_TRUE(t->queues().empty());
}

TEST(AppRuntime, RTT2_MaxThreeWithDlqDeadLettersAfterThreeCalls) {
  auto t = std::make_shared<bq::InMemoryTransport>();
  bq::AppOptions o = test_options();
  o.dead_letter = true;
  bq::App app(t, o);
  int calls = 0;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) -> bq::Status {
    ++calls;
    throw std::runtime_error("boom");
  });
  bq::PublishOptions po;
  po.queue = "orders";
  app.publish(kUrn, bq::Json::object({{"order_id", 1042}}), po);
  const bq::DrainResult r = app.drain("orders");
  EXPECT_TRUE(r.status.ok());
  EXPECT_EQ(r.count, 3u);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(t->size("orders"), 0u);
  const auto dlq = t->peek_all("orders.dlq");
  ASSERT_EQ(dlq.size(), 1u);
  const bq::Envelope env = bq::decode(dlq[0]);
  ASSERT_TRUE(env.dead_letter().has_value());
  const bq::DeadLetter& dl = *env.dead_letter();
  EXPECT_EQ(dl.reason, "failed");
  EXPECT_EQ(dl.original_queue, "orders");
  EXPECT_EQ(dl.error, "boom");
  EXPECT_EQ(dl.exception, "std::runtime_error");
  EXPECT_EQ(dl.attempts, 3);
  EXPECT_EQ(dl.lang, "cpp");
  EXPECT_EQ(env.attempts(), 3);
  EXPECT_EQ(env.data().find("order_id")->as_int64(), 1042);
}

TEST(AppRuntime, RTT3_MaxTwoWithoutDlqDropsAfterTwoCalls) {
  auto t = std::make_shared<bq::InMemoryTransport>();
  bq::AppOptions o = test_options();
  o.max_attempts = 2;
  bq::App app(t, o);
  int calls = 0;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
    ++calls;
    return boom();
  });
  bq::PublishOptions po;
  po.queue = "orders";
  app.publish(kUrn, bq::Json::object({}), po);
  EXPECT_EQ(app.drain("orders").count, 2u);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(t->size("orders"), 0u);
  EXPECT_EQ(t->size("orders.dlq"), 0u);
  EXPECT_TRUE(t->queues().empty());
}

TEST(AppRuntime, RTT4_UnknownUrnDeadLetterStrategy) {
  auto t = std::make_shared<TestTransport<>>();
  bq::AppOptions o = test_options();
  o.unknown_urn = bq::UnknownUrnStrategy::DeadLetter;
  bq::App app(t, o);
  const std::string body = body_for("urn:nobody");
  t->enqueue("orders", body);
  EXPECT_EQ(app.drain("orders").count, 1u);
  const auto pub = t->published();
  ASSERT_EQ(pub.size(), 1u);
  EXPECT_EQ(pub[0].queue, "orders.dlq");
  const bq::Envelope env = bq::decode(pub[0].body);
  ASSERT_TRUE(env.dead_letter());
  EXPECT_EQ(env.dead_letter()->reason, "unknown_urn");
  EXPECT_EQ(t->acked(), std::vector<std::string>{body});
  EXPECT_EQ(t->size("orders"), 0u);
}

TEST(AppRuntime, RTT4_UnknownUrnDeleteStrategyDrops) {
  auto t = std::make_shared<TestTransport<>>();
  bq::AppOptions o = test_options();
  o.unknown_urn = bq::UnknownUrnStrategy::Delete;
  bq::App app(t, o);
  t->enqueue("orders", body_for("urn:nobody"));
  EXPECT_EQ(app.drain("orders").count, 1u);
  EXPECT_TRUE(t->published().empty());
  EXPECT_EQ(t->acked().size(), 1u);
  EXPECT_EQ(t->size("orders"), 0u);
}

TEST(AppRuntime, RTT4_UnknownUrnReleaseStrategyRepublishesOnce) {
  auto t = std::make_shared<TestTransport<>>();  // not a Releaser (D-7)
  bq::AppOptions o = test_options();
  o.unknown_urn = bq::UnknownUrnStrategy::Release;
  bq::App app(t, o);
  // Odd but valid bytes: the republish must be the ORIGINAL bytes, not a re-encode.
  const std::string body =
      R"({ "job" : "urn:nobody", "trace_id":"t","data":{"n":1.0},"attempts":0 })";
  t->enqueue("orders", body);
  EXPECT_EQ(app.drain("orders", 1).count, 1u);
  const auto pub = t->published();
  ASSERT_EQ(pub.size(), 1u);
  EXPECT_EQ(pub[0].queue, "orders");
  EXPECT_EQ(pub[0].body, body);
  EXPECT_EQ(t->acked(), std::vector<std::string>{body});
}

TEST(AppRuntime, RTT4_UnknownUrnFailStrategyRequeuesWithAttemptsOne) {
  auto t = std::make_shared<TestTransport<>>();
  bq::App app(t, test_options());
  t->enqueue("orders", body_for("urn:nobody"));
  EXPECT_EQ(app.drain("orders", 1).count, 1u);
  const auto pub = t->published();
  ASSERT_EQ(pub.size(), 1u);
  EXPECT_EQ(pub[0].queue, "orders");
  EXPECT_EQ(bq::decode(pub[0].body).attempts(), 1);
  EXPECT_EQ(t->acked().size(), 1u);
}

TEST(AppRuntime, RTT5_ExplicitDlqNameWins) {
  auto t = std::make_shared<bq::InMemoryTransport>();
  bq::AppOptions o = test_options();
  o.dead_letter = true;
  o.max_attempts = 1;
  o.dead_letter_queue = "graveyard";
  o.dead_letter_suffix = ".dead";
  bq::App app(t, o);
  EXPECT_EQ(app.dead_letter_queue_for("orders"), "graveyard");
  app.handle(kUrn, [](bq::Context&, const bq::Envelope&) { return boom(); });
  ASSERT_TRUE(t->publish("orders", body_for(kUrn)).ok());
  EXPECT_EQ(app.drain("orders").count, 1u);
  EXPECT_EQ(t->size("graveyard"), 1u);
  EXPECT_EQ(t->size("orders.dead"), 0u);
  EXPECT_EQ(t->size("orders.dlq"), 0u);
}

TEST(AppRuntime, RTT5_CustomSuffix) {
  auto t = std::make_shared<bq::InMemoryTransport>();
  bq::AppOptions o = test_options();
  o.dead_letter = true;
  o.max_attempts = 1;
  o.dead_letter_suffix = ".dead";
  bq::App app(t, o);
  EXPECT_EQ(app.dead_letter_queue_for("orders"), "orders.dead");
  app.handle(kUrn, [](bq::Context&, const bq::Envelope&) { return boom(); });
  // The DLQ derives from the consumed queue, never from meta.queue (RT-7).
  ASSERT_TRUE(t->publish("orders", body_for(kUrn, "elsewhere")).ok());
  EXPECT_EQ(app.drain("orders").count, 1u);
  const auto dlq = t->peek_all("orders.dead");
  ASSERT_EQ(dlq.size(), 1u);
  EXPECT_EQ(bq::decode(dlq[0]).dead_letter()->original_queue, "elsewhere");  // meta.queue
  EXPECT_EQ(t->size("elsewhere.dead"), 0u);
}

TEST(AppRuntime, RTT5_ConsumeStopsOnCancellation) {
  auto t = std::make_shared<bq::InMemoryTransport>();
  bq::App app(t, test_options());
  StopOnExit guard{app};
  auto fut = std::async(std::launch::async, [&] { return app.consume("orders"); });
  ASSERT_TRUE(wait_until([&] { return t->blocked_pops("orders") > 0; }));
  app.stop();
  ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(fut.get().ok());
  EXPECT_TRUE(app.stopping());
  // Sticky: a later consume or drain returns ok at once, without popping.
  ASSERT_TRUE(t->publish("orders", body_for(kUrn)).ok());
  EXPECT_TRUE(app.consume("orders").ok());
  const bq::DrainResult r = app.drain("orders");
  EXPECT_EQ(r.count, 0u);
  EXPECT_TRUE(r.status.ok());
  EXPECT_EQ(t->size("orders"), 1u);
}

TEST(AppRuntime, Issue8_DrainStoppedMidwayIsOkWithTheCountSoFar) {
  auto t = std::make_shared<TestTransport<>>();
  bq::App app(t, test_options());
  int calls = 0;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
    if (++calls == 2) app.stop();
    return ok_status();
  });
  for (int i = 0; i < 5; ++i)
    t->enqueue("orders", body_for(kUrn));
  const bq::DrainResult r = app.drain("orders");
  EXPECT_TRUE(r.status.ok());
  EXPECT_EQ(r.count, 2u);
  EXPECT_EQ(t->acked().size(), 2u);  // the stopping handler's message still settled
  EXPECT_EQ(t->size("orders"), 3u);
}

TEST(AppRuntime, RTT5_RunProcessesThenStops) {
  auto t = std::make_shared<bq::InMemoryTransport>();
  bq::AppOptions o = test_options();
  o.default_queue = "jobs";
  bq::App app(t, o);
  StopOnExit guard{app};
  std::atomic<int> calls{0};
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
    ++calls;
    return ok_status();
  });
  for (int i = 0; i < 3; ++i)
    app.publish(kUrn);
  auto fut = std::async(std::launch::async, [&] { return app.run(); });
  ASSERT_TRUE(wait_until([&] { return calls.load() == 3; }));
  app.stop();
  ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(fut.get().ok());
  EXPECT_EQ(calls.load(), 3);
  EXPECT_EQ(t->size("jobs"), 0u);
}

TEST(AppRuntime, RTT6_RetryAndDeadLetterKeepUnknownMembers) {
  // Republish path (no Releaser): the retry body is encode(env) with attempts 1.
  auto t = std::make_shared<TestTransport<>>();
  bq::AppOptions o = test_options();
  o.max_attempts = 2;
  o.dead_letter = true;
  bq::App app(t, o);
  std::vector<std::int64_t> seen_attempts;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope& env) {
    seen_attempts.push_back(env.attempts());
    return boom();
  });
  t->enqueue("orders", std::string(kEx5));
  EXPECT_EQ(app.drain("orders").count, 2u);
  EXPECT_EQ(seen_attempts, (std::vector<std::int64_t>{0, 1}));
  const auto pub = t->published();
  ASSERT_EQ(pub.size(), 2u);
  EXPECT_EQ(pub[0].queue, "orders");
  EXPECT_EQ(pub[0].body, ex5_encoded(1));  // byte-exact: unknown members kept, forbidden dropped
  EXPECT_EQ(pub[1].queue, "orders.dlq");
  const bq::Envelope dead = bq::decode(pub[1].body);
  EXPECT_EQ(dead.dead_letter()->reason, "failed");
  EXPECT_EQ(dead.dead_letter()->attempts, 2);
  EXPECT_EQ(dead.attempts(), 2);
  const bq::Json j = bq::Json::parse(pub[1].body);
  ASSERT_NE(j.find("extra_top"), nullptr);
  EXPECT_EQ(j.find("extra_top")->find("k")->as_string(), "<v&>");
  EXPECT_NE(j.find("meta")->find("vendor_flag"), nullptr);
  EXPECT_NE(j.find("meta")->find("vendor_ctx"), nullptr);
  EXPECT_EQ(j.find("timestamp"), nullptr);
  EXPECT_EQ(j.find("meta")->find("ts"), nullptr);
  // Apart from the dead_letter block, the DLQ body is the retry body with attempts 2.
  EXPECT_EQ(pub[1].body.substr(0, pub[1].body.find(R"(,"dead_letter")")),
            ex5_encoded(2).substr(0, ex5_encoded(2).find(R"(,"extra_top")")));
}

TEST(AppRuntime, RTT6_InMemoryRetryKeepsUnknownMembers) {
  // In-memory (a Releaser stamping delivery_count): the second delivery sees attempts 1.
  auto t = std::make_shared<bq::InMemoryTransport>();
  bq::AppOptions o = test_options();
  o.max_attempts = 2;
  o.dead_letter = true;
  bq::App app(t, o);
  std::vector<std::int64_t> seen_attempts;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope& env) {
    seen_attempts.push_back(env.attempts());
    return boom();
  });
  ASSERT_TRUE(t->publish("orders", std::string(kEx5)).ok());
  EXPECT_EQ(app.drain("orders").count, 2u);
  EXPECT_EQ(seen_attempts, (std::vector<std::int64_t>{0, 1}));
  const auto dlq = t->peek_all("orders.dlq");
  ASSERT_EQ(dlq.size(), 1u);
  const bq::Json j = bq::Json::parse(dlq[0]);
  EXPECT_NE(j.find("extra_top"), nullptr);
  EXPECT_NE(j.find("meta")->find("vendor_ctx"), nullptr);
  EXPECT_EQ(j.find("timestamp"), nullptr);
  EXPECT_EQ(dead_letter_json(dlq[0]).find("attempts")->as_int64(), 2);
}

TEST(AppRuntime, RTT7_RetryReleasesInPlaceWithRetryBackoff) {
  auto t = std::make_shared<TestTransport<kReleaser>>();
  bq::AppOptions o = test_options();
  o.retry_backoff = 7s;
  HookCounter hooks;
  hooks.install(o);
  bq::App app(t, o);
  app.handle(kUrn, [](bq::Context&, const bq::Envelope&) { return boom(); });
  const std::string body = body_for(kUrn);
  t->enqueue("orders", body);
  EXPECT_EQ(app.drain("orders").count, 1u);
  const auto rel = t->released();
  ASSERT_EQ(rel.size(), 1u);
  EXPECT_EQ(rel[0].delay, 7s);
  EXPECT_EQ(rel[0].body, body);  // untouched
  EXPECT_TRUE(t->published().empty());
  EXPECT_TRUE(t->acked().empty());
  EXPECT_EQ(hooks.release.load(), 0);
}

TEST(AppRuntime, RTT7_ReleaseUnsupportedFallsBackToRepublishUnreported) {
  auto t = std::make_shared<TestTransport<kReleaser>>();
  t->set_release_error(bq::Error(bq::ErrorCode::ReleaseUnsupported, "cannot count this body"));
  bq::AppOptions o = test_options();
  HookCounter hooks;
  hooks.install(o);
  bq::App app(t, o);
  app.handle(kUrn, [](bq::Context&, const bq::Envelope&) { return boom(); });
  t->enqueue("orders", body_for(kUrn));
  EXPECT_EQ(app.drain("orders", 1).count, 1u);
  const auto pub = t->published();
  ASSERT_EQ(pub.size(), 1u);
  EXPECT_EQ(pub[0].queue, "orders");
  EXPECT_EQ(bq::decode(pub[0].body).attempts(), 1);
  EXPECT_EQ(t->acked().size(), 1u);
  EXPECT_EQ(hooks.release.load(), 0);
}

TEST(AppRuntime, RTT7_OtherReleaseErrorReportedOnceNoRepublishNoAck) {
  auto t = std::make_shared<TestTransport<kReleaser>>();
  t->set_release_error(bq::TransportError("broker gone"));
  bq::AppOptions o = test_options();
  HookCounter hooks;
  hooks.install(o);
  bq::App app(t, o);
  app.handle(kUrn, [](bq::Context&, const bq::Envelope&) { return boom(); });
  t->enqueue("orders", body_for(kUrn));
  EXPECT_EQ(app.drain("orders").count, 1u);
  EXPECT_EQ(hooks.release.load(), 1);
  EXPECT_TRUE(t->published().empty());
  EXPECT_TRUE(t->acked().empty());
  EXPECT_EQ(t->reserved(), 1u);  // stays reserved; the broker redelivers when it lapses
}

TEST(AppRuntime, RTT7_ReleaseStrategyUsesUnknownUrnReleaseDelay) {
  for (const auto delay : {0ms, 3000ms}) {
    auto t = std::make_shared<TestTransport<kReleaser>>();
    bq::AppOptions o = test_options();
    o.unknown_urn = bq::UnknownUrnStrategy::Release;
    o.retry_backoff = 9s;  // not this one
    if (delay != 0ms) o.unknown_urn_release_delay = delay;
    bq::App app(t, o);
    t->enqueue("orders", body_for("urn:nobody"));
    EXPECT_EQ(app.drain("orders").count, 1u);
    const auto rel = t->released();
    ASSERT_EQ(rel.size(), 1u);
    EXPECT_EQ(rel[0].delay, delay);
    EXPECT_TRUE(t->published().empty());
    EXPECT_TRUE(t->acked().empty());
  }
}

TEST(AppRuntime, RTT8_IdentitylessReleaseIsBoundedThenDeadLettered) {
  auto t = std::make_shared<TestTransport<kReleaser>>(
      Behaviour{.stamp_delivery_count = true, .release_requeues = true});
  bq::AppOptions o = test_options();
  o.unknown_urn = bq::UnknownUrnStrategy::Release;
  o.max_attempts = 3;
  o.dead_letter = true;
  bq::App app(t, o);
  t->enqueue("orders", std::string(R"({"trace_id":"t","data":{}})"));
  EXPECT_EQ(app.drain("orders").count, 3u);  // 3 deliveries
  EXPECT_EQ(t->released().size(), 2u);
  const auto pub = t->published();
  ASSERT_EQ(pub.size(), 1u);
  EXPECT_EQ(pub[0].queue, "orders.dlq");
  const bq::Json dl = dead_letter_json(pub[0].body);
  EXPECT_EQ(dl.find("reason")->as_string(), "unknown_urn");
  EXPECT_EQ(dl.find("attempts")->as_int64(), 3);
  EXPECT_EQ(dl.find("error")->as_string(), R"(no handler for urn "")");
  EXPECT_EQ(dl.find("exception")->as_string(), "babelqueue::UnknownUrnError");
  EXPECT_EQ(t->size("orders"), 0u);
  EXPECT_EQ(t->reserved(), 0u);
}

TEST(AppRuntime, RTT8_DecodableUnknownUrnReleaseIsNeverDeadLettered) {
  auto t = std::make_shared<TestTransport<kReleaser>>(
      Behaviour{.stamp_delivery_count = true, .release_requeues = true});
  bq::AppOptions o = test_options();
  o.unknown_urn = bq::UnknownUrnStrategy::Release;
  o.max_attempts = 3;
  o.dead_letter = true;
  bq::App app(t, o);
  t->enqueue("orders", body_for("urn:nobody"));
  EXPECT_EQ(app.drain("orders", 10).count, 10u);
  EXPECT_EQ(t->released().size(), 10u);
  EXPECT_TRUE(t->published().empty());
  EXPECT_EQ(t->size("orders"), 1u);  // still there, waiting for a handler
  EXPECT_EQ(t->size("orders.dlq"), 0u);
}

TEST(AppRuntime, RTT9_AckFailureReportedOnceOnly) {
  auto t = std::make_shared<TestTransport<>>();
  t->fail_ack(1);
  bq::AppOptions o = test_options();
  o.dead_letter = true;
  HookCounter hooks;
  hooks.install(o);
  bq::App app(t, o);
  int calls = 0;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
    ++calls;
    return ok_status();
  });
  t->enqueue("orders", body_for(kUrn));
  EXPECT_EQ(app.drain("orders").count, 1u);
  EXPECT_EQ(hooks.ack.load(), 1);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(t->failed_acks(), 1);
  EXPECT_TRUE(t->published().empty());
  EXPECT_TRUE(t->dead_lettered().empty());
  EXPECT_EQ(hooks.release.load(), 0);
  EXPECT_EQ(hooks.dead_letter.load(), 0);
}

namespace {
const std::vector<std::string> kPoisonBodies = {
    "not json",
    R"({"job":"urn:x","data":[1]})",
    R"({"job":"urn:x","trace_id":5,"data":{},"attempts":0})",
    R"({"job":"urn:x","trace_id":"t","data":{},"attempts":1.5})",
};
}  // namespace

TEST(AppRuntime, RTT10_PoisonWithDlqOnWritesTheExactRecordOnce) {
  for (const std::string& body : kPoisonBodies) {
    auto t = std::make_shared<bq::InMemoryTransport>();
    bq::AppOptions o = test_options();
    o.dead_letter = true;
    bq::App app(t, o);
    int calls = 0;
    app.handle("urn:x", [&](bq::Context&, const bq::Envelope&) {
      ++calls;
      return ok_status();
    });
    ASSERT_TRUE(t->publish("orders", body).ok());
    EXPECT_EQ(app.drain("orders").count, 1u) << body;  // one delivery, never retried
    EXPECT_EQ(calls, 0);
    EXPECT_EQ(t->size("orders"), 0u);
    const auto dlq = t->peek_all("orders.dlq");
    ASSERT_EQ(dlq.size(), 1u) << body;
    expect_poison_record(dlq[0], body, "orders", decode_error_of(body));
  }
}

TEST(AppRuntime, RTT10_PoisonWithDeleteIsDropped) {
  auto t = std::make_shared<bq::InMemoryTransport>();
  bq::AppOptions o = test_options();
  o.dead_letter = true;
  o.unknown_urn = bq::UnknownUrnStrategy::Delete;
  bq::App app(t, o);
  for (const std::string& body : kPoisonBodies)
    ASSERT_TRUE(t->publish("orders", body).ok());
  EXPECT_EQ(app.drain("orders").count, kPoisonBodies.size());
  EXPECT_TRUE(t->queues().empty());
}

TEST(AppRuntime, RTT10_PoisonWithDlqOffInMemoryStillDeadLettersTheRecord) {
  for (const auto strategy : {bq::UnknownUrnStrategy::Fail, bq::UnknownUrnStrategy::Release}) {
    auto t = std::make_shared<bq::InMemoryTransport>();
    bq::AppOptions o = test_options();
    o.unknown_urn = strategy;
    bq::App app(t, o);
    const std::string body = kPoisonBodies[1];
    ASSERT_TRUE(t->publish("orders", body).ok());
    EXPECT_EQ(app.drain("orders").count, 1u);
    EXPECT_EQ(t->size("orders"), 0u);  // no EMPTY envelope republished
    const auto dlq = t->peek_all("orders.dlq");
    ASSERT_EQ(dlq.size(), 1u);
    expect_poison_record(dlq[0], body, "orders", decode_error_of(body));
  }
}

TEST(AppRuntime, RTT10_PoisonWithDlqOffOnBrokerDeadLetterHandsToBroker) {
  auto t = std::make_shared<TestTransport<kBrokerDeadLetter>>();
  bq::App app(t, test_options());
  t->enqueue("orders", std::string("not json"));
  EXPECT_EQ(app.drain("orders").count, 1u);
  const auto handed = t->handed_to_broker();
  ASSERT_EQ(handed.size(), 1u);
  EXPECT_EQ(handed[0].why, "poison");
  EXPECT_EQ(handed[0].body, "not json");
  EXPECT_TRUE(t->acked().empty());
  EXPECT_TRUE(t->published().empty());
}

TEST(AppRuntime, RTT11_TransportFlaggedPoisonAlwaysWritesTheRecord) {
  const std::string reason = "reserve script flagged an undecodable head";
  for (const auto strategy : {bq::UnknownUrnStrategy::Delete, bq::UnknownUrnStrategy::Fail}) {
    auto t = std::make_shared<TestTransport<kDeadLetterer>>();
    bq::AppOptions o = test_options();
    o.unknown_urn = strategy;  // DLQ off, even delete
    bq::App app(t, o);
    Delivery d;
    d.body = "{\"job\":\x01";
    d.poison = true;
    d.poison_reason = reason;
    t->enqueue("orders", d);
    EXPECT_EQ(app.drain("orders").count, 1u);
    const auto dl = t->dead_lettered();
    ASSERT_EQ(dl.size(), 1u);
    EXPECT_EQ(dl[0].dead_letter_queue, "orders.dlq");
    expect_poison_record(dl[0].body, d.body, "orders", reason);
    EXPECT_TRUE(t->acked().empty());  // the DeadLetterer acknowledges itself
    EXPECT_TRUE(t->published().empty());
    EXPECT_EQ(t->reserved(), 0u);
  }
  // Even a decodable body is not decoded once flagged; without a DeadLetterer: publish + ack.
  auto t = std::make_shared<TestTransport<>>();
  bq::AppOptions o = test_options();
  o.unknown_urn = bq::UnknownUrnStrategy::Delete;
  bq::App app(t, o);
  int calls = 0;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
    ++calls;
    return ok_status();
  });
  Delivery d;
  d.body = body_for(kUrn);
  d.poison = true;
  t->enqueue("orders", d);
  EXPECT_EQ(app.drain("orders").count, 1u);
  EXPECT_EQ(calls, 0);
  const auto pub = t->published();
  ASSERT_EQ(pub.size(), 1u);
  EXPECT_EQ(pub[0].queue, "orders.dlq");
  const bq::Json dl = dead_letter_json(pub[0].body);
  ASSERT_TRUE(dl.is_object());
  expect_poison_record(pub[0].body, d.body, "orders", dl.find("error")->as_string());
  EXPECT_FALSE(dl.find("error")->as_string().empty());
  EXPECT_EQ(t->acked().size(), 1u);
}

namespace {
// A route-gated delivery and a body-level schema_version 2 body.
std::vector<Delivery> unsupported_deliveries() {
  Delivery routed;
  routed.body = body_for(kUrn);  // would decode fine; the gate said no
  routed.route = bq::binding::unsupported_route("2");
  Delivery body_level;
  body_level.body =
      R"({"job":"urn:babel:orders:created","trace_id":"t","data":{},"meta":{"schema_version":2},"attempts":0})";
  return {routed, body_level};
}
}  // namespace

TEST(AppRuntime, RTT12_UnsupportedVersionWithDeleteIsDropped) {
  for (const Delivery& d : unsupported_deliveries()) {
    auto t = std::make_shared<TestTransport<>>();
    bq::AppOptions o = test_options();
    o.dead_letter = true;
    o.unknown_urn = bq::UnknownUrnStrategy::Delete;
    bq::App app(t, o);
    int calls = 0;
    app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
      ++calls;
      return ok_status();
    });
    t->enqueue("orders", d);
    EXPECT_EQ(app.drain("orders").count, 1u);
    EXPECT_EQ(calls, 0);
    EXPECT_EQ(t->acked(), std::vector<std::string>{d.body});
    EXPECT_TRUE(t->published().empty());
  }
}

TEST(AppRuntime, RTT12_UnsupportedVersionWithDlqOnIsByteIdentical) {
  for (const Delivery& d : unsupported_deliveries()) {
    auto t = std::make_shared<TestTransport<>>();
    bq::AppOptions o = test_options();
    o.dead_letter = true;
    bq::App app(t, o);
    int calls = 0;
    app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
      ++calls;
      return ok_status();
    });
    t->enqueue("orders", d);
    EXPECT_EQ(app.drain("orders").count, 1u);
    EXPECT_EQ(calls, 0);
    const auto pub = t->published();
    ASSERT_EQ(pub.size(), 1u);
    EXPECT_EQ(pub[0].queue, "orders.dlq");
    EXPECT_EQ(pub[0].body, d.body);  // no dead_letter block, no reason
    EXPECT_EQ(t->acked(), std::vector<std::string>{d.body});
  }
}

TEST(AppRuntime, RTT12_UnsupportedVersionWithDlqOffIsDropped) {
  for (const Delivery& d : unsupported_deliveries()) {
    auto t = std::make_shared<TestTransport<kRewinder>>();
    bq::App app(t, test_options());
    t->enqueue("orders", d);
    EXPECT_EQ(app.drain("orders").count, 1u);
    EXPECT_EQ(t->acked(), std::vector<std::string>{d.body});
    EXPECT_TRUE(t->published().empty());
    EXPECT_TRUE(t->rewound().empty());
  }
}

TEST(AppRuntime, RTT12_DlqWriteFailureOnRewinderRewindsOnce) {
  for (const Delivery& d : unsupported_deliveries()) {
    auto t = std::make_shared<TestTransport<kRewinder>>();
    t->fail_publish("orders.dlq", 1);
    bq::AppOptions o = test_options();
    o.dead_letter = true;
    HookCounter hooks;
    hooks.install(o);
    LogCapture log;
    o.logger = log.sink();
    bq::App app(t, o);
    t->enqueue("orders", d);
    EXPECT_EQ(app.drain("orders", 1).count, 1u);
    EXPECT_EQ(t->rewound(), std::vector<std::string>{d.body});
    EXPECT_EQ(hooks.dead_letter.load(), 1);
    EXPECT_TRUE(t->acked().empty());
    EXPECT_TRUE(t->published().empty());
    EXPECT_EQ(log.count(bq::LogLevel::Error), 1u);
  }
}

TEST(AppRuntime, RTT13_RepublishFailureHandsBackWithoutAck) {
  auto t = std::make_shared<TestTransport<kRewinder>>();
  t->fail_publish("orders", 1);
  bq::AppOptions o = test_options();
  HookCounter hooks;
  hooks.install(o);
  bq::App app(t, o);
  app.handle(kUrn, [](bq::Context&, const bq::Envelope&) { return boom(); });
  const std::string body = body_for(kUrn);
  t->enqueue("orders", body);
  EXPECT_EQ(app.drain("orders", 1).count, 1u);
  EXPECT_EQ(hooks.release.load(), 1);
  EXPECT_TRUE(t->acked().empty());
  EXPECT_EQ(t->rewound(), std::vector<std::string>{body});
  EXPECT_TRUE(t->published().empty());
  EXPECT_EQ(t->failed_publishes(), 1);
}

TEST(AppRuntime, RTT13_RepublishFailureWithoutRewinderLeavesItReserved) {
  auto t = std::make_shared<TestTransport<>>();
  t->fail_publish("orders", 1);
  bq::AppOptions o = test_options();
  HookCounter hooks;
  hooks.install(o);
  bq::App app(t, o);
  app.handle(kUrn, [](bq::Context&, const bq::Envelope&) { return boom(); });
  t->enqueue("orders", body_for(kUrn));
  EXPECT_EQ(app.drain("orders", 1).count, 1u);
  EXPECT_EQ(hooks.release.load(), 1);
  EXPECT_TRUE(t->acked().empty());
  EXPECT_EQ(t->reserved(), 1u);
}

TEST(AppRuntime, RTT14_PublishWithHeadersOnHeaderPublisher) {
  auto t = std::make_shared<bq::InMemoryTransport>();
  bq::App app(t, test_options());
  const bq::Headers headers{
      {"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
      {std::string(bq::REPLAY_BYPASS_HEADER), "1"}};
  bq::PublishOptions po;
  po.queue = "orders";
  app.publish_with_headers(kUrn, bq::Json::object({}), headers, po);
  const auto stored = t->peek_entries("orders");
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].headers, headers);
  EXPECT_EQ(stored[0].body.find("traceparent"), std::string::npos);  // never inside the envelope
  const HeaderProbe probe = HeaderProbe::drain(app, "orders");
  EXPECT_EQ(probe.dispatched, 1u);
  EXPECT_EQ(probe.seen, headers);
  EXPECT_TRUE(probe.replay);
  EXPECT_EQ(probe.effects, 0);  // skipped on a bypassed replay
}

TEST(AppRuntime, RTT14_PublishWithHeadersFallsBackSilently) {
  auto t = std::make_shared<TestTransport<>>();  // not a HeaderPublisher
  bq::App app(t, test_options());
  const std::string id =
      app.publish_with_headers(kUrn, bq::Json::object({}), {{"traceparent", "x"}});
  auto pub = t->published();
  ASSERT_EQ(pub.size(), 1u);
  EXPECT_EQ(pub[0].via, Published::Via::Publish);
  EXPECT_TRUE(pub[0].headers.empty());
  EXPECT_EQ(bq::decode(pub[0].body).meta().id, id);
  const HeaderProbe probe = HeaderProbe::drain(app, "default");
  EXPECT_EQ(probe.dispatched, 1u);
  EXPECT_TRUE(probe.seen.empty());
  EXPECT_FALSE(probe.replay);
  EXPECT_EQ(probe.effects, 1);
  // Empty headers on a HeaderPublisher are a plain publish.
  auto hp = std::make_shared<TestTransport<kHeaderPublisher>>();
  bq::App hp_app(hp, test_options());
  hp_app.publish_with_headers(kUrn, bq::Json::object({}), {});
  hp_app.publish_with_headers(kUrn, bq::Json::object({}), {{"a", "b"}});
  pub = hp->published();
  ASSERT_EQ(pub.size(), 2u);
  EXPECT_EQ(pub[0].via, Published::Via::Publish);
  EXPECT_EQ(pub[1].via, Published::Via::PublishWithHeaders);
  EXPECT_EQ(pub[1].headers, (bq::Headers{{"a", "b"}}));
}

TEST(AppRuntime, RTT14_ReplayNeedsANonEmptyHeader) {
  bq::ReceivedMessage m;
  const std::atomic<bool> stopping{false};
  EXPECT_FALSE(bq::Context(m, stopping).is_replay());
  m.headers[std::string(bq::REPLAY_BYPASS_HEADER)] = "";
  EXPECT_FALSE(bq::Context(m, stopping).is_replay());
  m.headers[std::string(bq::REPLAY_BYPASS_HEADER)] = "1";
  EXPECT_TRUE(bq::Context(m, stopping).is_replay());
  EXPECT_FALSE(bq::Context(m, stopping).stop_requested());
}

TEST(AppRuntime, RTT15_RouteEscapingVectors) {
  const std::string prefix(bq::binding::UNSUPPORTED_ROUTE_PREFIX);
  EXPECT_EQ(prefix, "babelqueue:unsupported-schema-version:");
  EXPECT_EQ(bq::binding::unsupported_route("2"), prefix + "2");
  EXPECT_EQ(bq::binding::unsupported_route(" 1"), prefix + "+1");
  EXPECT_EQ(bq::binding::unsupported_route("\xC3\xBC"), prefix + "%C3%BC");
  EXPECT_EQ(bq::binding::unsupported_route(std::string(100, 'x')),
            prefix + std::string(64, 'x') + "...");
}

TEST(AppRuntime, RTT15_GateVectorsDecideWhatTheAppSees) {
  const std::vector<std::optional<std::string>> decode = {"1", "",         " \t",
                                                          " ", "\n\v\f\r", std::nullopt};
  const std::vector<std::string> reject = {"2",
                                           "01",
                                           "x",
                                           " 1",
                                           "1 ",
                                           "\t1\n",
                                           "\xC2\xA0",
                                           "\xC2\x85",
                                           "\xE3\x80\x80",
                                           "\xEF\xBB\xBF",
                                           "\xC2\xA0"
                                           "1",
                                           "1\xE3\x80\x80"};
  auto run = [](const std::optional<std::string>& version, int& calls) {
    auto t = std::make_shared<TestTransport<>>();
    bq::AppOptions o = test_options();
    o.dead_letter = true;
    bq::App app(t, o);
    app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
      ++calls;
      return ok_status();
    });
    // What a gating transport does: read the property before decoding.
    const bq::binding::GateDecision g = bq::binding::schema_version_gate(
        version ? std::optional<std::string_view>(*version) : std::nullopt);
    Delivery d;
    d.body = body_for(kUrn);
    if (g.reject) d.route = g.route;
    t->enqueue("orders", d);
    EXPECT_EQ(app.drain("orders").count, 1u);
    return std::make_pair(d.body, t->published());
  };
  for (const auto& v : decode) {
    int calls = 0;
    const auto [body, pub] = run(v, calls);
    EXPECT_EQ(calls, 1) << (v ? *v : "<absent>");
    EXPECT_TRUE(pub.empty());
  }
  for (const auto& v : reject) {
    int calls = 0;
    const auto [body, pub] = run(v, calls);
    EXPECT_EQ(calls, 0) << v;
    ASSERT_EQ(pub.size(), 1u) << v;
    EXPECT_EQ(pub[0].queue, "orders.dlq");
    EXPECT_EQ(pub[0].body, body);
  }
}

TEST(AppRuntime, RTT16_TransientPopErrorsAreRiddenOutWithBackoff) {
  auto t = std::make_shared<TestTransport<>>();
  t->fail_pop_transient(2);
  t->enqueue("orders", body_for(kUrn));
  bq::AppOptions o = test_options();
  LogCapture log;
  o.logger = log.sink();
  std::vector<std::chrono::milliseconds> waits;
  std::vector<bq::ErrorCode> codes;
  o.on_consume_error = [&](const bq::Error& e, std::chrono::milliseconds backoff) {
    waits.push_back(backoff);
    codes.push_back(e.code());
  };
  bq::App app(t, o);
  StopOnExit guard{app};
  int calls = 0;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
    ++calls;
    if (calls == 1) {
      // A successful pop resets the backoff: the next transient error waits 100 ms again.
      t->fail_pop_transient(1);
      t->enqueue("orders", body_for(kUrn));
    } else {
      app.stop();
    }
    return ok_status();
  });
  const auto started = std::chrono::steady_clock::now();
  const bq::Status st = app.consume("orders");
  const auto elapsed = std::chrono::steady_clock::now() - started;
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(waits, (std::vector<std::chrono::milliseconds>{100ms, 200ms, 100ms}));
  EXPECT_EQ(codes, std::vector<bq::ErrorCode>(3, bq::ErrorCode::Transport));
  EXPECT_GE(elapsed, 400ms);  // it really waited
  EXPECT_EQ(log.count(bq::LogLevel::Warning), 3u);
}

TEST(AppRuntime, RTT16_ConfigErrorFromPopEndsConsume) {
  auto t = std::make_shared<TestTransport<>>();
  t->fail_pop_config();
  bq::AppOptions o = test_options();
  int hook_calls = 0;
  o.on_consume_error = [&](const bq::Error&, std::chrono::milliseconds) { ++hook_calls; };
  bq::App app(t, o);
  const bq::Status st = app.consume("orders");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code(), bq::ErrorCode::Config);
  EXPECT_EQ(hook_calls, 0);
  EXPECT_FALSE(app.stopping());
}

// =============================================================================================
// Consume / drain details (RT-14, RT-16)
// =============================================================================================

TEST(AppConsume, RT14_ClosedTransportEndsConsume) {
  auto t = std::make_shared<bq::InMemoryTransport>();
  bq::App app(t, test_options());
  StopOnExit guard{app};
  auto fut = std::async(std::launch::async, [&] { return app.consume("orders"); });
  ASSERT_TRUE(wait_until([&] { return t->blocked_pops("orders") > 0; }));
  t->close();
  ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
  const bq::Status st = fut.get();
  EXPECT_TRUE(st.is(bq::ErrorCode::Closed));
}

TEST(AppConsume, RT14_StopInterruptsTheBackoff) {
  auto t = std::make_shared<TestTransport<>>();
  t->fail_pop_transient(1000);
  bq::AppOptions o = test_options();
  std::atomic<int> errors{0};
  o.on_consume_error = [&](const bq::Error&, std::chrono::milliseconds) { ++errors; };
  bq::App app(t, o);
  StopOnExit guard{app};
  auto fut = std::async(std::launch::async, [&] { return app.consume("orders"); });
  ASSERT_TRUE(wait_until([&] { return errors.load() >= 4; }));  // now in an 800 ms wait
  const auto stop_at = std::chrono::steady_clock::now();
  app.stop();
  ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
  EXPECT_LT(std::chrono::steady_clock::now() - stop_at, 700ms);
  EXPECT_TRUE(fut.get().ok());
}

TEST(AppConsume, RT16_DrainCountsStopsAtMaxAndReportsErrors) {
  auto t = std::make_shared<TestTransport<>>();
  bq::App app(t, test_options());
  int calls = 0;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
    ++calls;
    return calls == 2 ? boom() : ok_status();  // failures are counted as dispatches too
  });
  for (int i = 0; i < 5; ++i)
    t->enqueue("orders", body_for(kUrn));
  bq::DrainResult r = app.drain("orders", 2);
  EXPECT_TRUE(r.status.ok());
  EXPECT_EQ(r.count, 2u);
  EXPECT_EQ(t->size("orders"), 4u);  // 3 left + the retry
  r = app.drain("orders");
  EXPECT_TRUE(r.status.ok());
  EXPECT_EQ(r.count, 4u);
  EXPECT_EQ(calls, 6);
  t->fail_pop_config();
  r = app.drain("orders");
  EXPECT_EQ(r.count, 0u);
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.error().code(), bq::ErrorCode::Config);
}

TEST(AppConsume, RT16_DrainUsesTheDefaultQueue) {
  auto t = std::make_shared<TestTransport<>>();
  bq::AppOptions o = test_options();
  o.default_queue = "jobs";
  bq::App app(t, o);
  app.handle(kUrn, [](bq::Context&, const bq::Envelope&) { return ok_status(); });
  app.publish(kUrn);
  app.publish(kUrn);
  EXPECT_EQ(app.drain().count, 2u);
  EXPECT_EQ(t->acked().size(), 2u);
}

// =============================================================================================
// RT-7 naming, RT-39 floor, body-level version gate, RT-12 causes
// =============================================================================================

TEST(AppDeadLetterNaming, RT7_TransportNamingUnlessExplicit) {
  {
    auto t = std::make_shared<TestTransport<kDeadLetterNaming>>();
    bq::App app(t, test_options());
    EXPECT_EQ(app.dead_letter_queue_for("orders"), "orders-dlq");
    const auto calls = t->naming_calls();
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].first, "orders");
    EXPECT_FALSE(calls[0].second.has_value());  // suffix not explicitly set
  }
  {
    auto t = std::make_shared<TestTransport<kDeadLetterNaming>>();
    bq::AppOptions o = test_options();
    o.dead_letter_suffix = ".dlq";  // explicitly set, even to the default spelling
    bq::App app(t, o);
    EXPECT_EQ(app.dead_letter_queue_for("orders"), "orders.dlq");
    ASSERT_EQ(t->naming_calls().size(), 1u);
    EXPECT_EQ(t->naming_calls()[0].second, ".dlq");
  }
  {
    auto t = std::make_shared<TestTransport<kDeadLetterNaming>>();
    bq::AppOptions o = test_options();
    o.dead_letter_queue = "graveyard";
    bq::App app(t, o);
    EXPECT_EQ(app.dead_letter_queue_for("orders"), "graveyard");
    EXPECT_TRUE(t->naming_calls().empty());
  }
  {
    // A poison record lands in the transport-named DLQ.
    auto t = std::make_shared<TestTransport<kDeadLetterNaming>>();
    bq::App app(t, test_options());
    t->enqueue("orders", std::string("not json"));
    EXPECT_EQ(app.drain("orders").count, 1u);
    ASSERT_EQ(t->published().size(), 1u);
    EXPECT_EQ(t->published()[0].queue, "orders-dlq");
  }
}

TEST(AppAttempts, RT39_DeliveryCountFloorsAttempts) {
  auto t = std::make_shared<TestTransport<>>();
  bq::AppOptions o = test_options();
  o.max_attempts = 100;
  bq::App app(t, o);
  std::vector<std::int64_t> seen;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope& env) {
    seen.push_back(env.attempts());
    return ok_status();
  });
  Delivery low;
  low.body = body_for(kUrn, "orders", 0);
  low.delivery_count = 5;
  Delivery high;
  high.body = body_for(kUrn, "orders", 7);
  high.delivery_count = 2;
  Delivery untracked;
  untracked.body = body_for(kUrn, "orders", 1);
  t->enqueue("orders", low);
  t->enqueue("orders", high);
  t->enqueue("orders", untracked);
  EXPECT_EQ(app.drain("orders").count, 3u);
  EXPECT_EQ(seen, (std::vector<std::int64_t>{4, 7, 1}));
}

TEST(AppAttempts, RT39_FloorCountsTowardsMaxAttempts) {
  auto t = std::make_shared<TestTransport<>>();
  bq::AppOptions o = test_options();
  o.dead_letter = true;
  bq::App app(t, o);
  int calls = 0;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
    ++calls;
    return boom();
  });
  Delivery d;
  d.body = body_for(kUrn);
  d.delivery_count = 3;  // attempts floored to 2, +1 = 3 = max
  t->enqueue("orders", d);
  EXPECT_EQ(app.drain("orders").count, 1u);
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(t->published().size(), 1u);
  EXPECT_EQ(t->published()[0].queue, "orders.dlq");
  EXPECT_EQ(dead_letter_json(t->published()[0].body).find("attempts")->as_int64(), 3);
}

TEST(AppVersionGate, Q2_BodyLevelSchemaVersionGate) {
  auto t = std::make_shared<TestTransport<>>();
  bq::App app(t, test_options());  // DLQ off, fail: D21 drop
  int calls = 0;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
    ++calls;
    return ok_status();
  });
  // RT-33: Go's EMPTY envelope (schema_version 0 present) is version-rejected.
  const std::string empty_go =
      R"({"job":"","trace_id":"","data":null,"meta":{"id":"","queue":"","lang":"","schema_version":0,"created_at":0},"attempts":2})";
  t->enqueue("orders", empty_go);
  EXPECT_EQ(app.drain("orders", 1).count, 1u);
  EXPECT_EQ(t->acked(), std::vector<std::string>{empty_go});
  EXPECT_TRUE(t->published().empty());
  // A null schema_version is not gated; {} is identity-less (D12 fail: republished, attempts 1).
  t->enqueue("orders",
             std::string(R"({"job":"urn:babel:orders:created","meta":{"schema_version":null}})"));
  t->enqueue("orders", std::string("{}"));
  EXPECT_EQ(app.drain("orders", 2).count, 2u);
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(t->published().size(), 1u);
  EXPECT_EQ(t->published()[0].queue, "orders");
  EXPECT_EQ(bq::decode(t->published()[0].body).attempts(), 1);
}

TEST(AppHandlerErrors, RT12_StdExceptionNamesTheDemangledType) {
  auto t = std::make_shared<TestTransport<>>();
  bq::AppOptions o = test_options();
  o.max_attempts = 1;
  o.dead_letter = true;
  bq::App app(t, o);
  app.handle(kUrn,
             [](bq::Context&, const bq::Envelope&) -> bq::Status { throw PaymentDeclined(); });
  t->enqueue("orders", body_for(kUrn));
  EXPECT_EQ(app.drain("orders").count, 1u);
  ASSERT_EQ(t->published().size(), 1u);
  const bq::Envelope env = bq::decode(t->published()[0].body);
  EXPECT_EQ(env.dead_letter()->error, "card declined");
  EXPECT_EQ(env.dead_letter()->exception, bq::cause_of(PaymentDeclined()).type);
  EXPECT_NE(env.dead_letter()->exception->find("PaymentDeclined"), std::string::npos);
}

TEST(AppHandlerErrors, RT12_NonStdThrowNeverStopsTheWorker) {
  auto t = std::make_shared<bq::InMemoryTransport>();
  bq::AppOptions o = test_options();
  o.max_attempts = 1;
  o.dead_letter = true;
  bq::App app(t, o);
  StopOnExit guard{app};
  std::atomic<int> thrown{0};
  std::atomic<int> good{0};
  app.handle("urn:bad", [&](bq::Context&, const bq::Envelope&) -> bq::Status {
    ++thrown;
    throw 42;  // not a std::exception
  });
  app.handle("urn:good", [&](bq::Context&, const bq::Envelope&) {
    ++good;
    app.stop();
    return ok_status();
  });
  ASSERT_TRUE(t->publish("orders", body_for("urn:bad")).ok());
  ASSERT_TRUE(t->publish("orders", body_for("urn:good")).ok());
  auto fut = std::async(std::launch::async, [&] { return app.consume("orders"); });
  ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(fut.get().ok());
  EXPECT_EQ(thrown.load(), 1);
  EXPECT_EQ(good.load(), 1);
  const auto dlq = t->peek_all("orders.dlq");
  ASSERT_EQ(dlq.size(), 1u);
  const bq::Envelope env = bq::decode(dlq[0]);
  EXPECT_EQ(env.dead_letter()->error, "unknown exception");
  EXPECT_EQ(env.dead_letter()->exception, "unknown");
}

TEST(AppHandlerErrors, RT12_ThrowingHooksAndLoggerNeverStopTheWorker) {
  auto t = std::make_shared<TestTransport<>>();
  t->fail_ack(1);
  bq::AppOptions o = test_options();
  o.on_ack_error = [](const bq::ReceivedMessage&, const bq::Error&) {
    throw std::runtime_error("hook bug");
  };
  o.logger = [](bq::LogLevel, std::string_view) { throw 7; };
  bq::App app(t, o);
  int calls = 0;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
    ++calls;
    return ok_status();
  });
  t->enqueue("orders", body_for(kUrn));
  t->enqueue("orders", body_for(kUrn));
  EXPECT_EQ(app.drain("orders").count, 2u);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(t->acked().size(), 1u);
}

// =============================================================================================
// Decision table rows (RT-31) not covered above
// =============================================================================================

TEST(AppDecisionTable, D1_HandlerOkAcksOnly) {
  auto t = std::make_shared<TestTransport<kReleaser | kRewinder | kDeadLetterer>>();
  bq::App app(t, test_options());
  app.handle(kUrn, [](bq::Context&, const bq::Envelope&) { return ok_status(); });
  const std::string body = body_for(kUrn);
  t->enqueue("orders", body);
  EXPECT_EQ(app.drain("orders").count, 1u);
  EXPECT_EQ(t->acked(), std::vector<std::string>{body});
  EXPECT_TRUE(t->published().empty());
  EXPECT_TRUE(t->released().empty());
  EXPECT_TRUE(t->rewound().empty());
  EXPECT_TRUE(t->dead_lettered().empty());
}

TEST(AppDecisionTable, D4_RepublishAndDlqWritesAreKeyed) {
  auto t = std::make_shared<TestTransport<kKeyedRepublisher>>();
  bq::AppOptions o = test_options();
  o.max_attempts = 2;
  o.dead_letter = true;
  bq::App app(t, o);
  app.handle(kUrn, [](bq::Context&, const bq::Envelope&) { return boom(); });
  Delivery keyed;
  keyed.body = body_for(kUrn);
  keyed.key = std::string("k-1\0x", 5);
  t->enqueue("orders", keyed);
  EXPECT_EQ(app.drain("orders", 1).count, 1u);
  Delivery null_key;
  null_key.body = body_for(kUrn, "orders", 1);  // exhausted on this delivery
  t->enqueue("other", null_key);
  EXPECT_EQ(app.drain("other", 1).count, 1u);
  const auto pub = t->published();
  ASSERT_EQ(pub.size(), 2u);
  EXPECT_EQ(pub[0].via, Published::Via::Republish);
  EXPECT_EQ(pub[0].queue, "orders");
  EXPECT_EQ(pub[0].key, keyed.key);  // byte for byte
  EXPECT_EQ(pub[1].via, Published::Via::Republish);
  EXPECT_EQ(pub[1].queue, "other.dlq");
  EXPECT_FALSE(pub[1].key.has_value());  // null stays null
  EXPECT_EQ(t->acked().size(), 2u);
}

TEST(AppDecisionTable, D5_HandlerStatusErrorNamesTheCause) {
  auto t = std::make_shared<TestTransport<kDeadLetterer>>();
  bq::AppOptions o = test_options();
  o.max_attempts = 1;
  o.dead_letter = true;
  bq::App app(t, o);
  app.handle(kUrn, [](bq::Context&, const bq::Envelope&) {
    return bq::Status(bq::Error(bq::ErrorCode::Handler, "inventory unavailable"));
  });
  const std::string body = body_for(kUrn);
  t->enqueue("orders", body);
  EXPECT_EQ(app.drain("orders").count, 1u);
  const auto dl = t->dead_lettered();
  ASSERT_EQ(dl.size(), 1u);
  EXPECT_EQ(dl[0].dead_letter_queue, "orders.dlq");
  const bq::Envelope env = bq::decode(dl[0].body);
  EXPECT_EQ(env.dead_letter()->reason, "failed");
  EXPECT_EQ(env.dead_letter()->error, "inventory unavailable");
  EXPECT_EQ(env.dead_letter()->exception, "babelqueue::Error");
  EXPECT_EQ(env.dead_letter()->attempts, 1);
  EXPECT_TRUE(t->acked().empty());  // the DeadLetterer acknowledged
  EXPECT_TRUE(t->published().empty());
}

TEST(AppDecisionTable, D7_UnknownUrnFailExhaustedIsUnknownUrnWithCause) {
  auto t = std::make_shared<TestTransport<>>();
  bq::AppOptions o = test_options();
  o.max_attempts = 2;
  o.dead_letter = true;
  bq::App app(t, o);
  t->enqueue("orders", body_for("urn:nobody", "orders", 1));
  EXPECT_EQ(app.drain("orders").count, 1u);
  ASSERT_EQ(t->published().size(), 1u);
  EXPECT_EQ(t->published()[0].queue, "orders.dlq");
  const bq::Envelope env = bq::decode(t->published()[0].body);
  EXPECT_EQ(env.dead_letter()->reason, "unknown_urn");
  EXPECT_EQ(env.dead_letter()->error, R"(no handler for urn "urn:nobody")");
  EXPECT_EQ(env.dead_letter()->exception, "babelqueue::UnknownUrnError");
  EXPECT_EQ(env.dead_letter()->attempts, 2);
}

TEST(AppDecisionTable, D7_UnknownUrnFailWithReleaserReleasesInPlace) {
  auto t = std::make_shared<TestTransport<kReleaser>>();
  bq::AppOptions o = test_options();
  o.retry_backoff = 250ms;
  bq::App app(t, o);
  t->enqueue("orders", body_for("urn:nobody"));
  EXPECT_EQ(app.drain("orders").count, 1u);
  ASSERT_EQ(t->released().size(), 1u);
  EXPECT_EQ(t->released()[0].delay, 250ms);
  EXPECT_TRUE(t->published().empty());
}

TEST(AppDecisionTable, D9_ReleaseStrategyRepublishFailureHandsBack) {
  auto t = std::make_shared<TestTransport<kReleaser | kRewinder>>();
  t->set_release_error(bq::Error(bq::ErrorCode::ReleaseUnsupported, "no"));
  t->fail_publish("orders", 1);
  bq::AppOptions o = test_options();
  o.unknown_urn = bq::UnknownUrnStrategy::Release;
  HookCounter hooks;
  hooks.install(o);
  bq::App app(t, o);
  const std::string body = body_for("urn:nobody");
  t->enqueue("orders", body);
  EXPECT_EQ(app.drain("orders", 1).count, 1u);
  EXPECT_EQ(hooks.release.load(), 1);
  EXPECT_EQ(t->rewound(), std::vector<std::string>{body});
  EXPECT_TRUE(t->acked().empty());
}

TEST(AppDecisionTable, D10_DeadLetterStrategyUsesCurrentAttemptsAndNullCause) {
  auto t = std::make_shared<TestTransport<>>();
  bq::AppOptions o = test_options();
  o.unknown_urn = bq::UnknownUrnStrategy::DeadLetter;  // dead_letter option stays false
  bq::App app(t, o);
  t->enqueue("orders", body_for("urn:nobody", "orders", 2));
  EXPECT_EQ(app.drain("orders").count, 1u);
  ASSERT_EQ(t->published().size(), 1u);
  const std::string dlq = t->published()[0].body;
  const bq::Json dl = dead_letter_json(dlq);
  EXPECT_EQ(dl.find("reason")->as_string(), "unknown_urn");
  EXPECT_EQ(dl.find("attempts")->as_int64(), 2);  // not incremented
  EXPECT_TRUE(dl.find("error")->is_null());
  EXPECT_TRUE(dl.find("exception")->is_null());
  EXPECT_EQ(bq::decode(dlq).attempts(), 2);
  EXPECT_EQ(t->acked().size(), 1u);
}

TEST(AppDecisionTable, D12_IdentitylessFailRetries) {
  auto t = std::make_shared<TestTransport<>>();
  bq::AppOptions o = test_options();
  o.max_attempts = 2;
  o.dead_letter = true;
  bq::App app(t, o);
  // First delivery: D7 -> D4 republish with attempts 1.
  t->enqueue("orders", std::string(R"({"trace_id":"t","data":{},"meta":{"schema_version":1}})"));
  EXPECT_EQ(app.drain("orders", 1).count, 1u);
  // Exhausted: D7 -> D5 with reason unknown_urn and the UnknownUrn("") cause.
  t->enqueue("other",
             std::string(R"({"trace_id":"t","data":{},"meta":{"schema_version":1},"attempts":1})"));
  EXPECT_EQ(app.drain("other", 1).count, 1u);
  const auto pub = t->published();
  ASSERT_EQ(pub.size(), 2u);
  EXPECT_EQ(pub[0].queue, "orders");
  EXPECT_EQ(bq::decode(pub[0].body).attempts(), 1);
  EXPECT_EQ(bq::decode(pub[0].body).urn(), "");
  EXPECT_EQ(pub[1].queue, "other.dlq");
  const bq::Json dl = dead_letter_json(pub[1].body);
  ASSERT_TRUE(dl.is_object()) << pub[1].body;
  EXPECT_EQ(dl.find("reason")->as_string(), "unknown_urn");
  EXPECT_EQ(dl.find("attempts")->as_int64(), 2);
  EXPECT_EQ(dl.find("error")->as_string(), R"(no handler for urn "")");
  EXPECT_EQ(t->acked().size(), 2u);
}

TEST(AppVersionGate, Q2_RetryOfAMetaLessBodyIsVersionGatedOnItsNextDelivery) {
  // Known interaction, kept visible on purpose: encode() always writes meta (Go parity, ENV-12),
  // so the republished retry of a body WITHOUT meta carries "schema_version":0 and its next
  // delivery takes the body-level version gate (RT-33, §14 Q2) instead of the D7 path.
  auto t = std::make_shared<TestTransport<>>();
  bq::AppOptions o = test_options();
  o.dead_letter = true;
  bq::App app(t, o);
  const std::string meta_less = R"({"trace_id":"t","data":{}})";
  t->enqueue("orders", meta_less);
  EXPECT_EQ(app.drain("orders", 2).count, 2u);
  const auto pub = t->published();
  ASSERT_EQ(pub.size(), 2u);
  EXPECT_EQ(pub[0].queue, "orders");
  EXPECT_NE(pub[0].body.find(R"("schema_version":0)"), std::string::npos);
  EXPECT_EQ(pub[1].queue, "orders.dlq");
  EXPECT_EQ(pub[1].body, pub[0].body);  // D19: byte-identical, no dead_letter block
}

TEST(AppDecisionTable, D12_IdentitylessDeleteDrops) {
  auto t = std::make_shared<TestTransport<>>();
  bq::AppOptions o = test_options();
  o.unknown_urn = bq::UnknownUrnStrategy::Delete;
  o.dead_letter = true;
  bq::App app(t, o);
  t->enqueue("orders", std::string("{}"));
  EXPECT_EQ(app.drain("orders").count, 1u);
  EXPECT_TRUE(t->published().empty());
  EXPECT_EQ(t->acked().size(), 1u);
}

TEST(AppDecisionTable, D12_IdentitylessDeadLetterStrategy) {
  auto t = std::make_shared<TestTransport<>>();
  bq::AppOptions o = test_options();
  o.unknown_urn = bq::UnknownUrnStrategy::DeadLetter;
  bq::App app(t, o);
  t->enqueue("orders", std::string(R"({"trace_id":"t","data":{"k":1},"attempts":1})"));
  EXPECT_EQ(app.drain("orders").count, 1u);
  ASSERT_EQ(t->published().size(), 1u);
  EXPECT_EQ(t->published()[0].queue, "orders.dlq");
  const bq::Json dl = dead_letter_json(t->published()[0].body);
  EXPECT_EQ(dl.find("reason")->as_string(), "unknown_urn");
  EXPECT_EQ(dl.find("attempts")->as_int64(), 1);
  EXPECT_EQ(dl.find("original_queue")->as_string(), "orders");
}

TEST(AppDecisionTable, D14_PoisonWithDeadLetterStrategyUsesTheDeadLetterer) {
  auto t = std::make_shared<TestTransport<kDeadLetterer | kBrokerDeadLetter>>();
  bq::AppOptions o = test_options();
  o.unknown_urn = bq::UnknownUrnStrategy::DeadLetter;  // DLQ_ON without the option
  bq::App app(t, o);
  t->enqueue("orders", std::string("[1,2]"));
  EXPECT_EQ(app.drain("orders").count, 1u);
  const auto dl = t->dead_lettered();
  ASSERT_EQ(dl.size(), 1u);
  expect_poison_record(dl[0].body, "[1,2]", "orders", decode_error_of("[1,2]"));
  EXPECT_TRUE(t->handed_to_broker().empty());  // DLQ_ON wins over the broker hand-off
}

TEST(AppDecisionTable, D15_BrokerHandOffFailureIsReportedWithoutAck) {
  auto t = std::make_shared<TestTransport<kBrokerDeadLetter>>();
  t->fail_hand_to_broker(1);
  bq::AppOptions o = test_options();
  HookCounter hooks;
  hooks.install(o);
  bq::App app(t, o);
  t->enqueue("orders", std::string("not json"));
  EXPECT_EQ(app.drain("orders").count, 1u);
  EXPECT_EQ(hooks.dead_letter.load(), 1);
  EXPECT_TRUE(t->acked().empty());
  EXPECT_TRUE(t->published().empty());
}

TEST(AppDecisionTable, D16_PoisonDlqOffWithoutBrokerDeadLetterUsesTheDeadLetterer) {
  auto t = std::make_shared<TestTransport<kDeadLetterer | kReleaser>>();
  bq::App app(t, test_options());  // DLQ off, fail
  t->enqueue("orders", std::string("\xFF\xFE\x41"));
  EXPECT_EQ(app.drain("orders").count, 1u);
  const auto dl = t->dead_lettered();
  ASSERT_EQ(dl.size(), 1u);
  expect_poison_record(dl[0].body, "\xFF\xFE\x41", "orders", decode_error_of("\xFF\xFE\x41"));
  EXPECT_TRUE(t->released().empty());  // never retried
  EXPECT_TRUE(t->published().empty());
}

TEST(AppDecisionTable, D19_GateRejectDlqOnViaDeadLetterStrategy) {
  auto t = std::make_shared<TestTransport<kDeadLetterer>>();
  bq::AppOptions o = test_options();
  o.unknown_urn = bq::UnknownUrnStrategy::DeadLetter;
  bq::App app(t, o);
  Delivery d;
  d.body = "not even json";  // never decoded behind a gate
  d.route = bq::binding::unsupported_route("01");
  t->enqueue("orders", d);
  EXPECT_EQ(app.drain("orders").count, 1u);
  const auto dl = t->dead_lettered();
  ASSERT_EQ(dl.size(), 1u);
  EXPECT_EQ(dl[0].body, d.body);
}

TEST(AppDecisionTable, D20_GateRejectBrokerDeadLetter) {
  for (const Delivery& d : unsupported_deliveries()) {
    auto t = std::make_shared<TestTransport<kBrokerDeadLetter>>();
    bq::App app(t, test_options());  // DLQ off
    t->enqueue("orders", d);
    EXPECT_EQ(app.drain("orders").count, 1u);
    const auto handed = t->handed_to_broker();
    ASSERT_EQ(handed.size(), 1u);
    EXPECT_EQ(handed[0].why, "unsupported_schema_version");
    EXPECT_EQ(handed[0].body, d.body);
    EXPECT_TRUE(t->acked().empty());
    EXPECT_TRUE(t->published().empty());
  }
}

TEST(AppDecisionTable, D22_DeadLettererFailureHandsBackWithoutAck) {
  auto t = std::make_shared<TestTransport<kDeadLetterer | kRewinder>>(
      Behaviour{.rewind_requeues = true});
  t->fail_dead_letter(1);
  bq::AppOptions o = test_options();
  o.max_attempts = 1;
  o.dead_letter = true;
  HookCounter hooks;
  hooks.install(o);
  bq::App app(t, o);
  int calls = 0;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
    ++calls;
    return boom();
  });
  const std::string body = body_for(kUrn);
  t->enqueue("orders", body);
  // First delivery: the DLQ write fails -> rewind (requeued); second delivery: it succeeds.
  EXPECT_EQ(app.drain("orders").count, 2u);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(hooks.dead_letter.load(), 1);
  EXPECT_EQ(t->rewound(), std::vector<std::string>{body});
  EXPECT_EQ(t->dead_lettered().size(), 1u);
  EXPECT_TRUE(t->acked().empty());
}

TEST(AppDecisionTable, D22_PoisonDlqWriteFailureWithoutRewinderStaysReserved) {
  auto t = std::make_shared<TestTransport<>>();
  t->fail_publish("orders.dlq", 1);
  bq::AppOptions o = test_options();
  o.dead_letter = true;
  HookCounter hooks;
  hooks.install(o);
  bq::App app(t, o);
  t->enqueue("orders", std::string("not json"));
  EXPECT_EQ(app.drain("orders").count, 1u);
  EXPECT_EQ(hooks.dead_letter.load(), 1);
  EXPECT_TRUE(t->acked().empty());
  EXPECT_EQ(t->reserved(), 1u);
}

// =============================================================================================
// Decode once (issue 8 item 7): the App takes ReceivedMessage::decoded instead of decoding again
// =============================================================================================

namespace {
// A transport that decodes on pop, as Redis does to classify poison, and hands the App its
// result: here deliberately the envelope `decoded_body`, not the body, so a test can tell which
// of the two the App dispatched.
class PreDecodingTransport final : public bq::Transport {
 public:
  explicit PreDecodingTransport(std::string decoded_body)
      : decoded_body_(std::move(decoded_body)) {}
  bq::Status publish(std::string_view queue, std::string body) override {
    return inner_.publish(queue, std::move(body));
  }
  bq::Result<std::optional<bq::ReceivedMessage>> pop(std::string_view queue,
                                                     std::chrono::milliseconds timeout) override {
    auto popped = inner_.pop(queue, timeout);
    if (popped.has_value() && *popped) (*popped)->decoded = bq::decode(decoded_body_);
    return popped;
  }
  bq::Status ack(const bq::ReceivedMessage& msg) override { return inner_.ack(msg); }
  void close() override { inner_.close(); }

 private:
  bq::InMemoryTransport inner_;
  std::string decoded_body_;
};
}  // namespace

TEST(AppDecodeOnce, Issue8_DispatchUsesTheTransportsDecodedEnvelope) {
  const std::string decoded = body_for("urn:babel:orders:decoded");
  auto t = std::make_shared<PreDecodingTransport>(decoded);
  bq::App app(t, test_options());
  std::vector<std::string> seen;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
    seen.emplace_back("body");
    return ok_status();
  });
  app.handle("urn:babel:orders:decoded", [&](bq::Context&, const bq::Envelope& env) {
    seen.emplace_back(env.meta().id);
    return ok_status();
  });
  ASSERT_TRUE(t->publish("orders", body_for(kUrn)).ok());
  // Not even JSON: decoding the body would make it poison; the App must not look at it.
  ASSERT_TRUE(t->publish("orders", "not json").ok());
  EXPECT_EQ(app.drain("orders").count, 2u);
  const std::string id(bq::decode(decoded).meta().id);
  EXPECT_EQ(seen, (std::vector<std::string>{id, id}));
}

TEST(AppDecodeOnce, Issue8_PublicDispatchUsesDecodedToo) {
  auto t = std::make_shared<TestTransport<>>();
  bq::App app(t, test_options());
  std::string urn_seen;
  app.handle_any([&](bq::Context&, const bq::Envelope& env) {
    urn_seen = env.urn();
    return ok_status();
  });
  bq::ReceivedMessage msg;
  msg.queue = "orders";
  msg.body = body_for(kUrn);
  msg.decoded = bq::decode(body_for("urn:babel:orders:decoded"));
  app.dispatch(std::move(msg));
  EXPECT_EQ(urn_seen, "urn:babel:orders:decoded");
}

// =============================================================================================
// Deferred headers: a DeferredHeadersPop's headers are built only when a handler or hook asks
// =============================================================================================

namespace {
// Pops from an in-memory queue through DeferredHeadersPop, leaving the headers to a builder
// that counts its calls; a failing ack when `fail_ack`.
class DeferringTransport final : public bq::Transport, public bq::DeferredHeadersPop {
 public:
  static inline std::atomic<int> builds{0};
  static void build(const bq::ReceivedMessage& /*msg*/, bq::Headers& out) noexcept {
    ++builds;
    out = bq::Headers{{"bq-attempts", "0"}, {"traceparent", "00-t"}};
  }

  explicit DeferringTransport(bool fail_ack = false) : fail_ack_(fail_ack) { builds = 0; }
  bq::Status publish(std::string_view queue, std::string body) override {
    return inner_.publish(queue, std::move(body));
  }
  bq::Result<std::optional<bq::ReceivedMessage>> pop(std::string_view queue,
                                                     std::chrono::milliseconds timeout) override {
    ADD_FAILURE() << "the App pops through DeferredHeadersPop when the transport has it";
    return inner_.pop(queue, timeout);
  }
  bq::Result<std::optional<bq::ReceivedMessage>> pop_deferring_headers(
      std::string_view queue, std::chrono::milliseconds timeout) override {
    auto popped = inner_.pop(queue, timeout);
    if (popped.has_value() && *popped) (*popped)->headers_builder = &build;
    return popped;
  }
  bq::Status ack(const bq::ReceivedMessage& msg) override {
    if (fail_ack_) return bq::Error(bq::ErrorCode::Transport, "ack refused");
    return inner_.ack(msg);
  }
  void close() override { inner_.close(); }

 private:
  bq::InMemoryTransport inner_;
  bool fail_ack_;
};
}  // namespace

TEST(AppDeferredHeaders, AHandlerThatReadsThemSeesThemBuiltOnce) {
  auto t = std::make_shared<DeferringTransport>();
  bq::App app(t, test_options());
  bq::Headers seen;
  bq::Headers seen_again;
  bool replay = true;
  app.handle(kUrn, [&](bq::Context& ctx, const bq::Envelope&) {
    seen = ctx.headers();
    seen_again = ctx.message().headers;
    replay = ctx.is_replay();
    return ok_status();
  });
  ASSERT_TRUE(t->publish("orders", body_for(kUrn)).ok());
  EXPECT_EQ(app.drain("orders").count, 1u);
  const bq::Headers expected{{"bq-attempts", "0"}, {"traceparent", "00-t"}};
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(seen_again, expected);
  EXPECT_FALSE(replay);
  EXPECT_EQ(DeferringTransport::builds.load(), 1);
}

TEST(AppDeferredHeaders, AHandlerThatDoesNotReadThemNeverBuildsThem) {
  auto t = std::make_shared<DeferringTransport>();
  bq::App app(t, test_options());
  int handled = 0;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
    ++handled;
    return ok_status();
  });
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(t->publish("orders", body_for(kUrn)).ok());
  EXPECT_EQ(app.drain("orders").count, 3u);
  EXPECT_EQ(handled, 3);
  EXPECT_EQ(DeferringTransport::builds.load(), 0);
}

TEST(AppDeferredHeaders, AHookSeesThemBuilt) {
  auto t = std::make_shared<DeferringTransport>(/*fail_ack=*/true);
  bq::AppOptions o = test_options();
  bq::Headers seen;
  o.on_ack_error = [&](const bq::ReceivedMessage& msg, const bq::Error&) { seen = msg.headers; };
  bq::App app(t, o);
  app.handle(kUrn, [](bq::Context&, const bq::Envelope&) { return ok_status(); });
  ASSERT_TRUE(t->publish("orders", body_for(kUrn)).ok());
  EXPECT_EQ(app.drain("orders").count, 1u);
  EXPECT_EQ(seen, (bq::Headers{{"bq-attempts", "0"}, {"traceparent", "00-t"}}));
  EXPECT_EQ(DeferringTransport::builds.load(), 1);
}

// =============================================================================================
// Nothing leaves without a word (issue 8 item 12): one Warning per drop by configuration
// =============================================================================================

namespace {
// Drains one delivery from "orders" with `o` (its handler for kUrn fails) and returns the
// warnings; the delivery must have been acked (dropped) exactly once, nothing else logged.
std::vector<std::string> drop_warnings(bq::AppOptions o, const Delivery& d) {
  auto t = std::make_shared<TestTransport<>>();
  LogCapture log;
  o.logger = log.sink();
  bq::App app(t, o);
  app.handle(kUrn, [](bq::Context&, const bq::Envelope&) { return boom(); });
  t->enqueue("orders", d);
  app.drain("orders").status.throw_if_error();
  EXPECT_EQ(t->acked().size(), 1u) << d.body;
  EXPECT_TRUE(t->published().empty()) << d.body;
  EXPECT_EQ(log.size(), log.count(bq::LogLevel::Warning)) << d.body;
  return log.lines(bq::LogLevel::Warning);
}

// The one warning of a message dropped from "orders" (`body` gives the meta.id, if any).
std::vector<std::string> said(std::string_view why, std::string_view body = {}) {
  std::string line = "dropped a message from queue \"orders\"";
  if (!body.empty()) line += " (meta.id \"" + std::string(bq::decode(body).meta().id) + "\")";
  line += ": ";
  line += why;
  return {line};
}

Delivery delivery(std::string body, std::string route = {}) {
  Delivery d;
  d.body = std::move(body);
  d.route = std::move(route);
  return d;
}

std::string version_two_body() {
  std::string body = body_for(kUrn);
  const std::size_t at = body.find("\"schema_version\":1");
  body.replace(at, 18, "\"schema_version\":2");
  return body;
}

constexpr std::string_view kRoute = "babelqueue:unsupported-schema-version:2";
const std::string kRouteVersion =
    "unsupported schema version (route \"" + std::string(kRoute) + "\")";
constexpr std::string_view kDelete = " and the unknown-URN strategy is delete";
constexpr std::string_view kNoBrokerDlq =
    ", dead-lettering is off and the transport has no broker dead-letter mechanism";
constexpr std::string_view kIdentityless = " (an identity-less body: it names no job URN)";
}  // namespace

TEST(AppDropWarnings, D6_ExhaustedWithDeadLetteringOff) {
  bq::AppOptions o = test_options();
  o.max_attempts = 1;
  const std::string body = body_for(kUrn);
  EXPECT_EQ(drop_warnings(o, delivery(body)),
            said("attempts exhausted (1 of max_attempts 1) and dead-lettering is off; last "
                 "error: boom",
                 body));
}

TEST(AppDropWarnings, D6_ExhaustedIdentitylessBodyIsRetriedThenDroppedWithOneWarning) {
  // An identity-less body with a meta: retried to max_attempts, then dropped, said once.
  const std::string identityless =
      R"({"trace_id":"t","data":{},"meta":{"id":"m-1","schema_version":1}})";
  // {"data":{}} has no meta: its retry carries meta.schema_version 0, which the body-level gate
  // rejects on the next delivery (Q2), and that drop is said once too.
  const std::string metaless = R"({"data":{}})";
  const auto d6 = said(
      "attempts exhausted (3 of max_attempts 3) and dead-lettering is off; "
      "last error: no handler for urn \"\"" +
          std::string(kIdentityless),
      identityless);
  const auto d21 = said("unsupported meta.schema_version 0" + std::string(kNoBrokerDlq));
  for (const auto& [body, deliveries, warning] :
       {std::tuple{identityless, 3u, d6}, std::tuple{metaless, 2u, d21}}) {
    auto t = std::make_shared<TestTransport<>>();
    bq::AppOptions o = test_options();
    LogCapture log;
    o.logger = log.sink();
    bq::App app(t, o);
    t->enqueue("orders", body);
    EXPECT_EQ(app.drain("orders").count, deliveries) << body;
    EXPECT_EQ(t->size("orders"), 0u);
    EXPECT_EQ(t->published().size(), deliveries - 1) << body;  // the retries
    EXPECT_EQ(log.size(), 1u) << body;
    EXPECT_EQ(log.lines(bq::LogLevel::Warning), warning);
  }
}

TEST(AppDropWarnings, D8_UnknownUrnWithDelete) {
  bq::AppOptions o = test_options();
  o.unknown_urn = bq::UnknownUrnStrategy::Delete;
  const std::string body = body_for("urn:babel:nobody");
  EXPECT_EQ(drop_warnings(o, delivery(body)),
            said("no handler for urn \"urn:babel:nobody\"" + std::string(kDelete), body));
  // D12 -> D8: an identity-less body says so.
  EXPECT_EQ(drop_warnings(o, delivery(R"({"trace_id":"t","data":{}})")),
            said("no handler for urn \"\"" + std::string(kIdentityless) + std::string(kDelete)));
}

TEST(AppDropWarnings, D13_PoisonWithDelete) {
  bq::AppOptions o = test_options();
  o.unknown_urn = bq::UnknownUrnStrategy::Delete;
  EXPECT_EQ(drop_warnings(o, delivery("not json")),
            said("undecodable body" + std::string(kDelete) + ": " + decode_error_of("not json")));
}

// Both kinds of version rejection, the transport gate's route and the body-level check.
void expect_version_drops(const bq::AppOptions& o, std::string_view why) {
  EXPECT_EQ(drop_warnings(o, delivery(body_for(kUrn), std::string(kRoute))),
            said(kRouteVersion + std::string(why)));
  const std::string body = version_two_body();
  EXPECT_EQ(drop_warnings(o, delivery(body)),
            said("unsupported meta.schema_version 2" + std::string(why), body));
}

TEST(AppDropWarnings, D18_GateRejectedWithDelete) {
  bq::AppOptions o = test_options();
  o.unknown_urn = bq::UnknownUrnStrategy::Delete;
  expect_version_drops(o, kDelete);
}

TEST(AppDropWarnings, D21_GateRejectedDeadLetteringOffNoBrokerDeadLetter) {
  expect_version_drops(test_options(), kNoBrokerDlq);
}

TEST(AppDropWarnings, OnlyDropsWarn) {
  // D1 (handled), a retry and D5 (dead-lettered) settle their messages without a word.
  auto t = std::make_shared<TestTransport<>>();
  bq::AppOptions o = test_options();
  o.dead_letter = true;
  o.max_attempts = 2;
  LogCapture log;
  o.logger = log.sink();
  bq::App app(t, o);
  app.handle("urn:ok", [](bq::Context&, const bq::Envelope&) { return ok_status(); });
  app.handle(kUrn, [](bq::Context&, const bq::Envelope&) { return boom(); });
  t->enqueue("orders", body_for("urn:ok"));
  t->enqueue("orders", body_for(kUrn));
  EXPECT_EQ(app.drain("orders").count, 3u);
  EXPECT_EQ(t->size("orders.dlq"), 1u);
  EXPECT_EQ(log.size(), 0u);
}

// =============================================================================================
// Worker pool and stop (decision D-4)
// =============================================================================================

namespace {
// A gate that handlers wait on, with a counter of arrivals (no sleeps).
class Gate {
 public:
  void arrive() {
    std::lock_guard<std::mutex> lock(mu_);
    ++arrived_;
    ++inside_;
    max_inside_ = std::max(max_inside_, inside_);
    cv_.notify_all();
  }
  void leave() {
    std::lock_guard<std::mutex> lock(mu_);
    --inside_;
  }
  // Waits until `n` have arrived at once (or the limit passes); true when reached.
  bool wait_inside(int n, std::chrono::milliseconds limit = 10s) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, limit, [&] { return inside_ >= n; });
  }
  void open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  bool wait_open(std::chrono::milliseconds limit = 10s) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, limit, [&] { return open_; });
  }
  int max_inside() const {
    std::lock_guard<std::mutex> lock(mu_);
    return max_inside_;
  }
  int arrived() const {
    std::lock_guard<std::mutex> lock(mu_);
    return arrived_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  int inside_ = 0;
  int max_inside_ = 0;
  bool open_ = false;
};
}  // namespace

TEST(AppConcurrency, DecisionD4_FourHandlersRunAtOnceAndNoMoreArePopped) {
  auto t = std::make_shared<bq::InMemoryTransport>();
  bq::AppOptions o = test_options();
  o.concurrency = 4;
  bq::App app(t, o);
  StopOnExit guard{app};
  Gate gate;
  std::atomic<int> done{0};
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
    gate.arrive();
    const bool opened = gate.wait_open();
    gate.leave();
    ++done;
    return opened ? ok_status() : boom();
  });
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE(t->publish("orders", body_for(kUrn)).ok());
  auto fut = std::async(std::launch::async, [&] { return app.consume("orders"); });
  ASSERT_TRUE(gate.wait_inside(4));  // four handlers at once: a latch that needs all four
  // All four workers are busy: the consume thread must not pop a fifth message.
  EXPECT_EQ(t->size("orders"), 6u);
  EXPECT_EQ(gate.arrived(), 4);
  gate.open();
  ASSERT_TRUE(wait_until([&] { return done.load() == 10; }));
  app.stop();
  ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(fut.get().ok());
  EXPECT_EQ(gate.max_inside(), 4);  // never more than N
  EXPECT_EQ(t->size("orders"), 0u);
}

TEST(AppConcurrency, DecisionD4_GracefulStopLetsInFlightHandlersFinishAndSettle) {
  for (const int n : {1, 3}) {
    auto t = std::make_shared<TestTransport<>>();
    bq::AppOptions o = test_options();
    o.concurrency = n;
    bq::App app(t, o);
    StopOnExit guard{app};
    Gate gate;
    std::atomic<bool> saw_stop{false};
    app.handle(kUrn, [&](bq::Context& ctx, const bq::Envelope&) {
      gate.arrive();
      gate.wait_open();
      saw_stop = ctx.stop_requested();
      gate.leave();
      return ok_status();
    });
    for (int i = 0; i < n + 2; ++i)
      t->enqueue("orders", body_for(kUrn));
    auto fut = std::async(std::launch::async, [&] { return app.consume("orders"); });
    ASSERT_TRUE(gate.wait_inside(n)) << n;
    std::thread stopper([&] { app.stop(); });  // stop from another thread
    stopper.join();
    // consume waits for the in-flight handlers; nothing is acked while they are blocked.
    EXPECT_NE(fut.wait_for(30ms), std::future_status::ready) << n;
    EXPECT_TRUE(t->acked().empty());
    gate.open();
    ASSERT_EQ(fut.wait_for(10s), std::future_status::ready) << n;
    EXPECT_TRUE(fut.get().ok());
    // Settled before consume returned: every in-flight message acked, nothing more popped.
    EXPECT_EQ(t->acked().size(), static_cast<std::size_t>(n)) << n;
    EXPECT_EQ(t->size("orders"), 2u) << n;
    EXPECT_EQ(t->reserved(), 0u);
    EXPECT_TRUE(saw_stop.load());
  }
}

TEST(AppConcurrency, DecisionD4_StopInterruptsTheRewindPause) {
  auto t = std::make_shared<TestTransport<kRewinder>>();
  t->fail_publish("orders.dlq", 1000);
  bq::AppOptions o = test_options();
  o.dead_letter = true;
  o.rewind_pause = std::chrono::minutes(10);
  bq::App app(t, o);
  StopOnExit guard{app};
  t->enqueue("orders", std::string("not json"));
  auto fut = std::async(std::launch::async, [&] { return app.consume("orders"); });
  ASSERT_TRUE(wait_until([&] { return !t->rewound().empty(); }));
  app.stop();
  ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(fut.get().ok());
  EXPECT_EQ(t->rewound().size(), 1u);
}

TEST(AppConcurrency, DecisionD4_PooledConsumeDeliversEverythingOnce) {
  auto t = std::make_shared<bq::InMemoryTransport>();
  bq::AppOptions o = test_options();
  o.concurrency = 3;
  bq::App app(t, o);
  StopOnExit guard{app};
  std::mutex mu;
  std::vector<std::string> ids;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope& env) {
    std::lock_guard<std::mutex> lock(mu);
    ids.emplace_back(env.meta().id);
    return ok_status();
  });
  std::vector<std::string> published;
  bq::PublishOptions po;
  po.queue = "orders";
  for (int i = 0; i < 200; ++i)
    published.push_back(app.publish(kUrn, bq::Json::object({}), po));
  auto fut = std::async(std::launch::async, [&] { return app.consume("orders"); });
  ASSERT_TRUE(wait_until([&] {
    std::lock_guard<std::mutex> lock(mu);
    return ids.size() == 200;
  }));
  app.stop();
  ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(fut.get().ok());
  std::sort(ids.begin(), ids.end());
  std::sort(published.begin(), published.end());
  EXPECT_EQ(ids, published);
}

namespace {
// Watches the pool from the transport's side: pops running at once (the contract allows one per
// queue), and messages popped and not yet settled (every handler in these tests succeeds, so an
// ack settles).
class CountingTransport final : public bq::Transport {
 public:
  bq::Status publish(std::string_view queue, std::string body) override {
    return inner_.publish(queue, std::move(body));
  }
  struct Counts {
    int popping = 0;
    int max_popping = 0;
    int in_flight = 0;
    int max_in_flight = 0;
  };

  bq::Result<std::optional<bq::ReceivedMessage>> pop(std::string_view queue,
                                                     std::chrono::milliseconds timeout) override {
    bump(&Counts::popping, &Counts::max_popping, 1);
    auto popped = inner_.pop(queue, timeout);
    bump(&Counts::popping, &Counts::max_popping, -1);
    if (popped.has_value() && *popped) bump(&Counts::in_flight, &Counts::max_in_flight, 1);
    return popped;
  }
  bq::Status ack(const bq::ReceivedMessage& msg) override {
    bump(&Counts::in_flight, &Counts::max_in_flight, -1);
    return inner_.ack(msg);
  }
  void close() override { inner_.close(); }

  Counts counts() const {
    std::lock_guard<std::mutex> lock(mu_);
    return counts_;
  }
  std::size_t size(std::string_view queue) const { return inner_.size(queue); }

 private:
  void bump(int Counts::*value, int Counts::*max, int by) {
    std::lock_guard<std::mutex> lock(mu_);
    counts_.*value += by;
    counts_.*max = std::max(counts_.*max, counts_.*value);
  }

  bq::InMemoryTransport inner_;
  mutable std::mutex mu_;
  Counts counts_;
};
}  // namespace

TEST(AppConcurrency, DecisionD4_SlowHandlersRunFourAtOnceNeverMoreInFlightOnePopAtATime) {
  constexpr int kWorkers = 4;
  constexpr int kMessages = 40;
  auto t = std::make_shared<CountingTransport>();
  bq::AppOptions o = test_options();
  o.concurrency = kWorkers;
  bq::App app(t, o);
  StopOnExit guard{app};
  std::mutex mu;
  std::condition_variable cv;
  int first_wave = 0;  // the first four handlers wait for each other: four run at once
  int inside = 0;
  int max_inside = 0;
  int done = 0;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
    {
      std::unique_lock<std::mutex> lock(mu);
      max_inside = std::max(max_inside, ++inside);
      if (first_wave < kWorkers) {
        ++first_wave;
        cv.notify_all();
        cv.wait_for(lock, 10s, [&] { return first_wave == kWorkers; });
      }
    }
    std::this_thread::sleep_for(1ms);  // slow-ish: the others keep popping meanwhile
    std::lock_guard<std::mutex> lock(mu);
    --inside;
    if (++done == kMessages) app.stop();
    return ok_status();
  });
  for (int i = 0; i < kMessages; ++i)
    ASSERT_TRUE(t->publish("orders", body_for(kUrn)).ok());
  const bq::Status st = app.consume("orders");  // the last handler stops it
  EXPECT_TRUE(st.ok());
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(done, kMessages);
  EXPECT_EQ(max_inside, kWorkers);
  const CountingTransport::Counts counts = t->counts();
  EXPECT_EQ(counts.max_in_flight, kWorkers);
  EXPECT_EQ(counts.max_popping, 1);
  EXPECT_EQ(counts.in_flight, 0);  // all settled before consume returned
  EXPECT_EQ(t->size("orders"), 0u);
}

TEST(AppConcurrency, DecisionD4_ALongHandlerAmongShortOnesDoesNotHoldUpTheQueue) {
  // After many short handlers one worker pops alone (a second one would cost more than it
  // gives); when that worker then runs a long handler, a parked one notices that nothing is
  // popped any more and takes over the queue.
  auto t = std::make_shared<bq::InMemoryTransport>();
  bq::AppOptions o = test_options();
  o.concurrency = 2;
  bq::App app(t, o);
  StopOnExit guard{app};
  std::mutex mu;
  std::condition_variable cv;
  int short_done = 0;
  bool overtaken = false;
  app.handle("urn:short", [&](bq::Context&, const bq::Envelope&) {
    std::lock_guard<std::mutex> lock(mu);
    ++short_done;
    cv.notify_all();
    return ok_status();
  });
  constexpr int kShort = 500;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
    std::unique_lock<std::mutex> lock(mu);
    // Blocks until the short message published after this one was handled elsewhere.
    overtaken = cv.wait_for(lock, 10s, [&] { return short_done > kShort; });
    app.stop();
    return ok_status();
  });
  for (int i = 0; i < kShort; ++i)
    ASSERT_TRUE(t->publish("orders", body_for("urn:short")).ok());
  ASSERT_TRUE(t->publish("orders", body_for(kUrn)).ok());
  ASSERT_TRUE(t->publish("orders", body_for("urn:short")).ok());
  EXPECT_TRUE(app.consume("orders").ok());
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_TRUE(overtaken);
  EXPECT_EQ(short_done, kShort + 1);
}

TEST(AppConcurrency, DecisionD4_PoolSharesOneBackoff) {
  // The worker that hits a transient error keeps the pop turn while it waits, so the next
  // error, on whichever worker, doubles the wait instead of starting again at 100 ms.
  auto t = std::make_shared<TestTransport<>>();
  t->fail_pop_transient(2);
  t->enqueue("orders", body_for(kUrn));
  bq::AppOptions o = test_options();
  o.concurrency = 3;
  std::mutex mu;
  std::vector<std::chrono::milliseconds> waits;
  o.on_consume_error = [&](const bq::Error&, std::chrono::milliseconds backoff) {
    std::lock_guard<std::mutex> lock(mu);
    waits.push_back(backoff);
  };
  bq::App app(t, o);
  StopOnExit guard{app};
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
    app.stop();
    return ok_status();
  });
  EXPECT_TRUE(app.consume("orders").ok());
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(waits, (std::vector<std::chrono::milliseconds>{100ms, 200ms}));
  EXPECT_EQ(t->acked().size(), 1u);
}

TEST(AppConcurrency, RT2_AnExceptionOutOfPopIsRethrownByConsume) {
  // A transport that breaks RT-2 by throwing from pop: consume ends and rethrows it, pooled too.
  struct ThrowingTransport final : bq::Transport {
    bq::Status publish(std::string_view, std::string) override { return {}; }
    bq::Result<std::optional<bq::ReceivedMessage>> pop(std::string_view,
                                                       std::chrono::milliseconds) override {
      throw std::runtime_error("pop exploded");
    }
    bq::Status ack(const bq::ReceivedMessage&) override { return {}; }
    void close() override {}
  };
  for (const int n : {1, 3}) {
    bq::AppOptions o = test_options();
    o.concurrency = n;
    bq::App app(std::make_shared<ThrowingTransport>(), o);
    EXPECT_THROW(
        {
          try {
            (void)app.consume("orders");
          } catch (const std::runtime_error& e) {
            EXPECT_STREQ(e.what(), "pop exploded");
            throw;
          }
        },
        std::runtime_error)
        << n;
  }
}

TEST(AppConcurrency, DecisionD4_NonTransientPopErrorIsReturnedAfterInFlightHandlersSettle) {
  auto t = std::make_shared<TestTransport<>>();
  bq::AppOptions o = test_options();
  o.concurrency = 3;
  bq::App app(t, o);
  StopOnExit guard{app};
  Gate gate;
  app.handle(kUrn, [&](bq::Context&, const bq::Envelope&) {
    gate.arrive();
    gate.wait_open();
    gate.leave();
    return ok_status();
  });
  t->enqueue("orders", body_for(kUrn));
  t->enqueue("orders", body_for(kUrn));
  auto fut = std::async(std::launch::async, [&] { return app.consume("orders"); });
  ASSERT_TRUE(gate.wait_inside(2));
  t->fail_pop_config();  // the third worker's next pop ends the loop
  EXPECT_NE(fut.wait_for(50ms), std::future_status::ready);  // the two handlers still run
  EXPECT_TRUE(t->acked().empty());
  gate.open();
  ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
  const bq::Status st = fut.get();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code(), bq::ErrorCode::Config);
  EXPECT_EQ(t->acked().size(), 2u);
  EXPECT_EQ(t->reserved(), 0u);
  EXPECT_FALSE(app.stopping());
}
