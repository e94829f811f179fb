// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/errors.hpp>
#include <babelqueue/in_memory_transport.hpp>
#include <babelqueue/transport.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using babelqueue::ErrorCode;
using babelqueue::Headers;
using babelqueue::InMemoryTransport;
using babelqueue::ReceivedMessage;
using babelqueue::Transport;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Generous bounds: a "prompt" wake-up must happen well within kPrompt, and a pop that is only
// woken by its own timeout (kLongTimeout) would miss that by far. Both are long enough that a
// loaded CI machine never trips them.
constexpr milliseconds kLongTimeout{10'000};
constexpr auto kPrompt = std::chrono::seconds(2);

// Closes the transport when a test leaves early (a failed ASSERT), so a consumer still blocked in
// pop returns and its std::async future can be destroyed instead of hanging the test. Declare it
// after the futures: it is then destroyed, and closes, before they are.
class CloseOnExit {
 public:
  explicit CloseOnExit(InMemoryTransport& t) : t_(t) {}
  ~CloseOnExit() { t_.close(); }
  CloseOnExit(const CloseOnExit&) = delete;
  CloseOnExit& operator=(const CloseOnExit&) = delete;

 private:
  InMemoryTransport& t_;
};

// Pops with no wait and unwraps the result; fails the test on an error.
std::optional<ReceivedMessage> pop_now(InMemoryTransport& t, std::string_view queue) {
  auto r = t.pop(queue, milliseconds::zero());
  EXPECT_TRUE(r.has_value()) << (r.has_value() ? "" : r.error().what());
  return r.has_value() ? std::move(r).value() : std::nullopt;
}

std::string pop_body(InMemoryTransport& t, std::string_view queue) {
  auto m = pop_now(t, queue);
  return m ? m->body : std::string("<none>");
}

// Waits (without a fixed sleep) until `n` pops are blocked on `queue`; false after 10 s.
bool wait_for_blocked(const InMemoryTransport& t, std::string_view queue, std::size_t n) {
  const auto give_up = Clock::now() + std::chrono::seconds(10);
  while (t.blocked_pops(queue) < n) {
    if (Clock::now() > give_up) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

TEST(InMemoryTransport, RT3_CapabilitiesAreHeadersReleaseDelayedPublishAndInspection) {
  std::unique_ptr<Transport> t = std::make_unique<InMemoryTransport>();
  EXPECT_NE(dynamic_cast<babelqueue::HeaderPublisher*>(t.get()), nullptr);
  EXPECT_NE(dynamic_cast<babelqueue::Releaser*>(t.get()), nullptr);
  EXPECT_NE(dynamic_cast<babelqueue::DelayedPublisher*>(t.get()), nullptr);
  EXPECT_NE(dynamic_cast<babelqueue::Inspector*>(t.get()), nullptr);
  EXPECT_EQ(dynamic_cast<babelqueue::Flusher*>(t.get()), nullptr);
  EXPECT_EQ(dynamic_cast<babelqueue::Restorer*>(t.get()), nullptr);
  EXPECT_EQ(dynamic_cast<babelqueue::Rewinder*>(t.get()), nullptr);
  EXPECT_EQ(dynamic_cast<babelqueue::DeadLetterer*>(t.get()), nullptr);
  EXPECT_EQ(dynamic_cast<babelqueue::KeyedRepublisher*>(t.get()), nullptr);
  EXPECT_EQ(dynamic_cast<babelqueue::BrokerDeadLetter*>(t.get()), nullptr);
  EXPECT_EQ(dynamic_cast<babelqueue::DeadLetterNaming*>(t.get()), nullptr);
}

TEST(InMemoryTransport, RT5_FifoPerQueue) {
  InMemoryTransport t;
  for (const char* body : {"a", "b", "c"})
    ASSERT_TRUE(t.publish("orders", body).ok());
  EXPECT_EQ(t.size("orders"), 3U);
  for (const char* want : {"a", "b", "c"}) {
    auto m = pop_now(t, "orders");
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->body, want);
    EXPECT_EQ(m->queue, "orders");
    EXPECT_TRUE(m->headers.empty());
    EXPECT_FALSE(m->poison);
    EXPECT_TRUE(m->route.empty());
    EXPECT_FALSE(m->key.has_value());
  }
  EXPECT_FALSE(pop_now(t, "orders").has_value());
  EXPECT_EQ(t.size("orders"), 0U);
}

TEST(InMemoryTransport, RT5_FifoAcrossInterleavingAndALargeBacklog) {
  InMemoryTransport t;
  // Interleaved publish/pop, then a backlog large enough to span many storage blocks.
  int next_in = 0;
  int next_out = 0;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 7; ++i)
      ASSERT_TRUE(t.publish("q", std::to_string(next_in++)).ok());
    for (int i = 0; i < 5; ++i)
      ASSERT_EQ(pop_body(t, "q"), std::to_string(next_out++));
  }
  for (int i = 0; i < 5000; ++i)
    ASSERT_TRUE(t.publish("q", std::to_string(next_in++)).ok());
  EXPECT_EQ(t.size("q"), static_cast<std::size_t>(next_in - next_out));
  while (next_out < next_in)
    ASSERT_EQ(pop_body(t, "q"), std::to_string(next_out++));
  EXPECT_FALSE(pop_now(t, "q").has_value());
  // Usable again after the backlog was drained.
  ASSERT_TRUE(t.publish("q", "again").ok());
  EXPECT_EQ(pop_body(t, "q"), "again");
}

TEST(InMemoryTransport, RT5_QueuesAreIndependent) {
  InMemoryTransport t;
  ASSERT_TRUE(t.publish("a", "a1").ok());
  ASSERT_TRUE(t.publish("b", "b1").ok());
  ASSERT_TRUE(t.publish("a", "a2").ok());
  EXPECT_EQ(t.size("a"), 2U);
  EXPECT_EQ(t.size("b"), 1U);
  EXPECT_EQ(t.size("c"), 0U);
  EXPECT_FALSE(pop_now(t, "c").has_value());
  auto b = pop_now(t, "b");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->body, "b1");
  EXPECT_EQ(b->queue, "b");
  EXPECT_FALSE(pop_now(t, "b").has_value());
  EXPECT_EQ(pop_body(t, "a"), "a1");
  EXPECT_EQ(pop_body(t, "a"), "a2");
}

TEST(InMemoryTransport, RT5_BodyIsStoredVerbatim) {
  InMemoryTransport t;
  const std::string body("\xff\xfe not json \0 with a NUL", 25);
  ASSERT_TRUE(t.publish("q", body).ok());
  ASSERT_TRUE(t.publish("q", "").ok());
  EXPECT_EQ(pop_body(t, "q"), body);
  auto empty = pop_now(t, "q");
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->body, "");
}

TEST(InMemoryTransport, RT5_HeadersRoundTrip) {
  InMemoryTransport t;
  Headers headers{{"bq-replay-bypass", "1"}, {"traceparent", "00-abc-def-01"}};
  ASSERT_TRUE(t.publish_with_headers("q", "body", headers).ok());
  headers["traceparent"] = "changed after publish";  // the transport keeps its own copy
  auto m = pop_now(t, "q");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->body, "body");
  EXPECT_EQ(m->headers, (Headers{{"bq-replay-bypass", "1"}, {"traceparent", "00-abc-def-01"}}));
}

TEST(InMemoryTransport, RT5_EmptyHeadersBehaveLikePublish) {
  InMemoryTransport t;
  ASSERT_TRUE(t.publish_with_headers("q", "x", Headers{}).ok());
  ASSERT_TRUE(t.publish("q", "y").ok());
  auto x = pop_now(t, "q");
  auto y = pop_now(t, "q");
  ASSERT_TRUE(x.has_value());
  ASSERT_TRUE(y.has_value());
  EXPECT_EQ(x->body, "x");
  EXPECT_TRUE(x->headers.empty());
  EXPECT_EQ(x->delivery_count, y->delivery_count);
  EXPECT_TRUE(y->headers.empty());
}

TEST(InMemoryTransport, D7_FirstDeliveryReportsDeliveryCountOne) {
  InMemoryTransport t;
  ASSERT_TRUE(t.publish("q", "x").ok());
  auto m = pop_now(t, "q");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->delivery_count, 1);
}

TEST(InMemoryTransport, RT2_AckEndsTheReservationThatPopAlreadyRemoved) {
  InMemoryTransport t;
  ASSERT_TRUE(t.publish("q", "x").ok());
  ASSERT_TRUE(t.publish("q", "y").ok());
  auto m = pop_now(t, "q");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(t.size("q"), 1U);  // removed on pop, before any ack
  EXPECT_EQ(t.stats("q", {})->in_flight, 1);
  EXPECT_TRUE(t.ack(*m).ok());
  EXPECT_EQ(t.stats("q", {})->in_flight, 0);
  EXPECT_TRUE(t.ack(*m).ok());  // acking twice is harmless
  EXPECT_EQ(t.size("q"), 1U);   // ack touches nothing else
  // An unacked delivery is simply gone (RT-5): no redelivery, only the in-flight count stays.
  auto y = pop_now(t, "q");
  ASSERT_TRUE(y.has_value());
  EXPECT_EQ(y->body, "y");
  EXPECT_FALSE(pop_now(t, "q").has_value());
  EXPECT_EQ(t.stats("q", {})->in_flight, 1);
}

TEST(InMemoryTransport, D7_ASettledOrForeignReservationIsNeverReleasedAgain) {
  InMemoryTransport t;
  InMemoryTransport other;
  ASSERT_TRUE(t.publish("q", "x").ok());
  ASSERT_TRUE(other.publish("q", "foreign").ok());
  auto m = pop_now(t, "q");
  auto foreign = pop_now(other, "q");
  ASSERT_TRUE(m.has_value());
  ASSERT_TRUE(foreign.has_value());
  ASSERT_TRUE(t.release(*m, milliseconds::zero()).ok());
  EXPECT_TRUE(t.release(*m, milliseconds::zero()).ok());  // stale: nothing is put back
  EXPECT_TRUE(t.release(*foreign, milliseconds::zero()).ok());
  EXPECT_TRUE(t.ack(*foreign).ok());
  EXPECT_EQ(t.peek_all("q"), std::vector<std::string>{"x"});
  EXPECT_EQ(other.stats("q", {})->in_flight, 1);  // another transport's ack did not settle it
}

TEST(InMemoryTransport, D7_InspectorCountsDelayedEntriesAndPeeksOnlyDueOnes) {
  InMemoryTransport t;
  ASSERT_TRUE(t.publish_with_headers("q", "ready", Headers{{"k", "v"}}).ok());
  ASSERT_TRUE(t.publish_delayed("q", "later", kLongTimeout).ok());
  ASSERT_TRUE(t.publish_delayed("q", "soon", milliseconds(30)).ok());
  auto s = t.stats("q", {});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->ready, 1);
  EXPECT_EQ(s->delayed, 2);
  EXPECT_EQ(s->dead_letter, 0);
  EXPECT_FALSE(s->consumers.has_value());
  auto peeked = t.peek("q", 0);
  ASSERT_TRUE(peeked.has_value());
  ASSERT_EQ(peeked->size(), 1U);
  EXPECT_EQ((*peeked)[0].body, "ready");
  EXPECT_EQ((*peeked)[0].headers, (Headers{{"k", "v"}}));
  // Once "soon" is due, stats and peek see it as ready (without a pop moving it).
  std::this_thread::sleep_for(milliseconds(40));
  s = t.stats("q", {});
  EXPECT_EQ(s->ready, 2);
  EXPECT_EQ(s->delayed, 1);
  peeked = t.peek("q", 0);
  ASSERT_EQ(peeked->size(), 2U);
  EXPECT_EQ((*peeked)[1].body, "soon");
  EXPECT_EQ(t.peek_all("q"), (std::vector<std::string>{"ready", "soon", "later"}));
}

TEST(InMemoryTransport, D7_NonPositiveTimeoutDoesNotBlock) {
  InMemoryTransport t;
  auto zero = t.pop("q", milliseconds::zero());
  ASSERT_TRUE(zero.has_value());
  EXPECT_FALSE(zero->has_value());
  auto negative = t.pop("q", milliseconds(-5'000));
  ASSERT_TRUE(negative.has_value());
  EXPECT_FALSE(negative->has_value());
  EXPECT_EQ(t.blocked_pops("q"), 0U);
  EXPECT_TRUE(t.queues().empty());  // popping an unknown queue does not create it
}

TEST(InMemoryTransport, D7_PopTimeoutHonoured) {
  InMemoryTransport t;
  constexpr milliseconds timeout{80};
  const auto start = Clock::now();
  auto r = t.pop("q", timeout);
  const auto elapsed = Clock::now() - start;
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->has_value());
  EXPECT_GE(elapsed, timeout - milliseconds(2));
}

TEST(InMemoryTransport, D7_BlockedPopWakesPromptlyOnPublish) {
  InMemoryTransport t;
  auto consumer = std::async(std::launch::async, [&] { return t.pop("q", kLongTimeout); });
  const CloseOnExit guard(t);
  ASSERT_TRUE(wait_for_blocked(t, "q", 1));
  const auto published = Clock::now();
  ASSERT_TRUE(t.publish("q", "hello").ok());
  ASSERT_EQ(consumer.wait_for(kPrompt), std::future_status::ready);
  EXPECT_LT(Clock::now() - published, kPrompt);
  auto r = consumer.get();
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->body, "hello");
  EXPECT_EQ((*r)->queue, "q");
  EXPECT_EQ((*r)->delivery_count, 1);
  EXPECT_EQ(t.blocked_pops("q"), 0U);
}

TEST(InMemoryTransport, D7_PopWithUnboundedTimeoutWaitsForPublish) {
  InMemoryTransport t;  // milliseconds::max() must not overflow the deadline
  auto consumer = std::async(std::launch::async, [&] { return t.pop("q", milliseconds::max()); });
  const CloseOnExit guard(t);
  ASSERT_TRUE(wait_for_blocked(t, "q", 1));
  ASSERT_TRUE(t.publish("q", "late").ok());
  ASSERT_EQ(consumer.wait_for(kPrompt), std::future_status::ready);
  auto r = consumer.get();
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->body, "late");
}

TEST(InMemoryTransport, D7_PublishToAnotherQueueDoesNotSatisfyPop) {
  InMemoryTransport t;
  auto consumer = std::async(std::launch::async, [&] { return t.pop("q", milliseconds(500)); });
  const CloseOnExit guard(t);
  ASSERT_TRUE(wait_for_blocked(t, "q", 1));
  ASSERT_TRUE(t.publish("other", "not for q").ok());
  auto r = consumer.get();
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->has_value());
  EXPECT_EQ(t.size("other"), 1U);
}

TEST(InMemoryTransport, D7_ReleaseRedeliversAfterDelayAndCountsTheAttempt) {
  InMemoryTransport t;
  const Headers headers{{"h", "v"}};
  ASSERT_TRUE(t.publish_with_headers("q", "{\"attempts\":0}", headers).ok());
  auto first = pop_now(t, "q");
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->delivery_count, 1);

  constexpr milliseconds delay{120};
  const auto released = Clock::now();
  ASSERT_TRUE(t.release(*first, delay).ok());
  EXPECT_EQ(t.size("q"), 1U);  // stored, but not yet visible
  EXPECT_FALSE(pop_now(t, "q").has_value());
  const auto entries = t.peek_entries("q");
  ASSERT_EQ(entries.size(), 1U);
  EXPECT_TRUE(entries[0].delayed);
  EXPECT_EQ(entries[0].delivery_count, 1);

  auto second = t.pop("q", kLongTimeout);
  ASSERT_TRUE(second.has_value());
  ASSERT_TRUE(second->has_value());
  EXPECT_GE(Clock::now() - released, delay - milliseconds(2));
  EXPECT_EQ((*second)->body, "{\"attempts\":0}");  // body untouched
  EXPECT_EQ((*second)->headers, headers);
  EXPECT_EQ((*second)->queue, "q");
  EXPECT_EQ((*second)->delivery_count, 2);

  // A release without delay is visible at once and keeps counting.
  ASSERT_TRUE(t.release(**second, milliseconds::zero()).ok());
  auto third = pop_now(t, "q");
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(third->delivery_count, 3);
  EXPECT_EQ(third->body, "{\"attempts\":0}");
  EXPECT_EQ(t.size("q"), 0U);
}

TEST(InMemoryTransport, D7_ReleasedEntryGoesToTheTail) {
  InMemoryTransport t;
  ASSERT_TRUE(t.publish("q", "a").ok());
  ASSERT_TRUE(t.publish("q", "b").ok());
  auto a = pop_now(t, "q");
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(t.release(*a, milliseconds::zero()).ok());
  ASSERT_TRUE(t.publish("q", "c").ok());
  EXPECT_EQ(t.peek_all("q"), (std::vector<std::string>{"b", "a", "c"}));
  EXPECT_EQ(pop_body(t, "q"), "b");
  EXPECT_EQ(pop_body(t, "q"), "a");
  EXPECT_EQ(pop_body(t, "q"), "c");
}

TEST(InMemoryTransport, D7_DelayedEntriesJoinTheTailInDueOrder) {
  InMemoryTransport t;
  ASSERT_TRUE(t.publish_delayed("q", "late", milliseconds(90)).ok());
  ASSERT_TRUE(t.publish_delayed("q", "early", milliseconds(30)).ok());
  ASSERT_TRUE(t.publish("q", "now").ok());
  EXPECT_EQ(t.size("q"), 3U);
  EXPECT_EQ(t.peek_all("q"), (std::vector<std::string>{"now", "early", "late"}));
  EXPECT_EQ(pop_body(t, "q"), "now");
  EXPECT_FALSE(pop_now(t, "q").has_value());
  for (const char* want : {"early", "late"}) {
    auto r = t.pop("q", kLongTimeout);
    ASSERT_TRUE(r.has_value());
    ASSERT_TRUE(r->has_value());
    EXPECT_EQ((*r)->body, want);
    EXPECT_EQ((*r)->delivery_count, 1);  // a delayed publish is a first delivery
  }
  EXPECT_EQ(t.size("q"), 0U);
}

TEST(InMemoryTransport, D7_DueEntryPrecedesLaterPublishes) {
  InMemoryTransport t;
  ASSERT_TRUE(t.publish_delayed("q", "due", milliseconds(20)).ok());
  std::this_thread::sleep_for(milliseconds(40));  // "due" falls due before "after" is published
  ASSERT_TRUE(t.publish("q", "after").ok());
  EXPECT_EQ(pop_body(t, "q"), "due");
  EXPECT_EQ(pop_body(t, "q"), "after");
}

TEST(InMemoryTransport, D7_DelayedEntryWakesABlockedPop) {
  InMemoryTransport t;
  constexpr milliseconds delay{100};
  // The delayed entry exists before the pop blocks: the pop waits until its due time.
  const auto start = Clock::now();
  ASSERT_TRUE(t.publish_delayed("q", "scheduled", delay).ok());
  auto r = t.pop("q", kLongTimeout);
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->body, "scheduled");
  EXPECT_GE(Clock::now() - start, delay - milliseconds(2));
  EXPECT_LT(Clock::now() - start, kPrompt);
}

TEST(InMemoryTransport, D7_ReleaseWhileAPopIsBlockedWakesItOnTime) {
  InMemoryTransport t;
  ASSERT_TRUE(t.publish("q", "job").ok());
  auto m = pop_now(t, "q");
  ASSERT_TRUE(m.has_value());
  // The consumer blocks with a long timeout first; the release must shorten its wait.
  auto consumer = std::async(std::launch::async, [&] { return t.pop("q", kLongTimeout); });
  const CloseOnExit guard(t);
  ASSERT_TRUE(wait_for_blocked(t, "q", 1));
  constexpr milliseconds delay{100};
  const auto released = Clock::now();
  ASSERT_TRUE(t.release(*m, delay).ok());
  ASSERT_EQ(consumer.wait_for(kPrompt), std::future_status::ready);
  EXPECT_GE(Clock::now() - released, delay - milliseconds(2));
  auto r = consumer.get();
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->body, "job");
  EXPECT_EQ((*r)->delivery_count, 2);
}

TEST(InMemoryTransport, D7_EveryBlockedPopSeesItsDelayedEntryOnTime) {
  // Two consumers are blocked; two delayed entries arrive, the earlier one first. Only one
  // consumer is told about the first (the second is not a new earliest due time), so the one that
  // takes "first" must hand the wait for "second" on to the other; otherwise "second" would only
  // be delivered at that consumer's own deadline.
  InMemoryTransport t;
  auto c1 = std::async(std::launch::async, [&] { return t.pop("q", kLongTimeout); });
  auto c2 = std::async(std::launch::async, [&] { return t.pop("q", kLongTimeout); });
  const CloseOnExit guard(t);
  ASSERT_TRUE(wait_for_blocked(t, "q", 2));
  ASSERT_TRUE(t.publish_delayed("q", "first", milliseconds(50)).ok());
  ASSERT_TRUE(t.publish_delayed("q", "second", milliseconds(150)).ok());
  ASSERT_EQ(c1.wait_for(kPrompt), std::future_status::ready);
  ASSERT_EQ(c2.wait_for(kPrompt), std::future_status::ready);
  std::vector<std::string> got;
  for (auto* f : {&c1, &c2}) {
    auto r = f->get();
    ASSERT_TRUE(r.has_value());
    ASSERT_TRUE(r->has_value());
    got.push_back((*r)->body);
  }
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"first", "second"}));
}

TEST(InMemoryTransport, RT2_CloseWakesBlockedPopsAndFailsEveryCall) {
  InMemoryTransport t;
  ASSERT_TRUE(t.publish("kept", "x").ok());
  auto c1 = std::async(std::launch::async, [&] { return t.pop("q", kLongTimeout); });
  auto c2 = std::async(std::launch::async, [&] { return t.pop("q", kLongTimeout); });
  const CloseOnExit guard(t);
  ASSERT_TRUE(wait_for_blocked(t, "q", 2));
  t.close();
  ASSERT_EQ(c1.wait_for(kPrompt), std::future_status::ready);
  ASSERT_EQ(c2.wait_for(kPrompt), std::future_status::ready);
  for (auto* f : {&c1, &c2}) {
    auto r = f->get();
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), ErrorCode::Closed);
  }

  t.close();  // idempotent
  ReceivedMessage msg;
  msg.queue = "q";
  msg.body = "b";
  msg.delivery_count = 1;
  const auto closed = [](const babelqueue::Status& s) {
    return !s.ok() && s.is(ErrorCode::Closed) && !s.error().is_transient();
  };
  EXPECT_TRUE(closed(t.publish("q", "b")));
  EXPECT_TRUE(closed(t.publish_with_headers("q", "b", Headers{{"k", "v"}})));
  EXPECT_TRUE(closed(t.publish_delayed("q", "b", milliseconds(10))));
  EXPECT_TRUE(closed(babelqueue::Status(t.stats("q", {}).error())));
  EXPECT_TRUE(closed(babelqueue::Status(t.peek("q", 0).error())));
  EXPECT_TRUE(closed(t.release(msg, milliseconds::zero())));
  EXPECT_TRUE(closed(t.ack(msg)));
  for (milliseconds timeout : {milliseconds::zero(), milliseconds(50)}) {
    auto r = t.pop("kept", timeout);  // even with a message stored
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), ErrorCode::Closed);
  }
  EXPECT_THROW(t.publish("q", "b").throw_if_error(), babelqueue::Error);
  // Nothing was added, and the test helpers still see what was stored.
  EXPECT_EQ(t.size("q"), 0U);
  EXPECT_EQ(t.peek_all("kept"), (std::vector<std::string>{"x"}));
}

TEST(InMemoryTransport, RT5_TestHelpersPeekDrainAndListQueues) {
  InMemoryTransport t;
  ASSERT_TRUE(t.publish("orders", "o1").ok());
  ASSERT_TRUE(t.publish_with_headers("orders", "o2", Headers{{"k", "v"}}).ok());
  ASSERT_TRUE(t.publish_delayed("orders", "o3", kLongTimeout).ok());
  ASSERT_TRUE(t.publish("orders.dlq", "d1").ok());
  ASSERT_TRUE(t.publish("a", "a1").ok());
  EXPECT_EQ(t.queues(), (std::vector<std::string>{"a", "orders", "orders.dlq"}));

  EXPECT_EQ(t.peek_all("orders"), (std::vector<std::string>{"o1", "o2", "o3"}));
  EXPECT_EQ(t.size("orders"), 3U);  // peeking removes nothing
  const auto entries = t.peek_entries("orders");
  ASSERT_EQ(entries.size(), 3U);
  EXPECT_TRUE(entries[0].headers.empty());
  EXPECT_EQ(entries[1].headers, (Headers{{"k", "v"}}));
  EXPECT_FALSE(entries[1].delayed);
  EXPECT_TRUE(entries[2].delayed);
  EXPECT_EQ(entries[2].delivery_count, 0);

  EXPECT_EQ(t.drain_raw("orders"), (std::vector<std::string>{"o1", "o2", "o3"}));
  EXPECT_EQ(t.size("orders"), 0U);
  EXPECT_TRUE(t.peek_all("orders").empty());
  EXPECT_TRUE(t.drain_raw("missing").empty());
  EXPECT_EQ(t.queues(), (std::vector<std::string>{"a", "orders.dlq"}));
  ASSERT_TRUE(t.publish("orders", "o4").ok());  // the drained queue still works
  EXPECT_EQ(pop_body(t, "orders"), "o4");
}

TEST(InMemoryTransport, RT5_ConcurrentPublishersAndConsumersDeliverEachMessageOnce) {
  constexpr int kProducers = 8;
  constexpr int kPerProducer = 10'000;
  constexpr int kTotal = kProducers * kPerProducer;
  constexpr int kConsumers = 2;
  InMemoryTransport t;
  std::atomic<int> received{0};
  std::atomic<bool> failed{false};

  // Each consumer records what it got; each must see every producer's messages in order (the
  // queue is FIFO and a consumer's pops are ordered).
  std::vector<std::vector<int>> got(kConsumers);
  std::vector<std::thread> consumers;
  for (int c = 0; c < kConsumers; ++c) {
    consumers.emplace_back([&, c] {
      const auto give_up = Clock::now() + std::chrono::seconds(60);
      while (received.load() < kTotal && Clock::now() < give_up) {
        auto r = t.pop("q", milliseconds(50));
        if (!r.has_value()) {
          failed = true;
          return;
        }
        if (!r->has_value()) continue;
        got[static_cast<std::size_t>(c)].push_back(std::stoi((*r)->body));
        EXPECT_EQ((*r)->delivery_count, 1);
        received.fetch_add(1);
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < kPerProducer; ++i) {
        if (!t.publish("q", std::to_string(p * kPerProducer + i)).ok()) failed = true;
      }
    });
  }
  for (auto& th : producers)
    th.join();
  for (auto& th : consumers)
    th.join();

  EXPECT_FALSE(failed.load());
  EXPECT_EQ(received.load(), kTotal);
  EXPECT_EQ(t.size("q"), 0U);
  std::vector<int> seen(kTotal, 0);
  for (const auto& list : got) {
    std::vector<int> last(kProducers, -1);
    for (int v : list) {
      ASSERT_GE(v, 0);
      ASSERT_LT(v, kTotal);
      ++seen[static_cast<std::size_t>(v)];
      const auto p = static_cast<std::size_t>(v / kPerProducer);
      EXPECT_GT(v, last[p]) << "per-producer order broken";
      last[p] = v;
    }
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), kTotal);  // each exactly once
}

}  // namespace
