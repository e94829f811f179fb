// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The transport against librdkafka's in-process mock cluster (KFK-T4..T7, T9): one mock per
// test, topics created with one partition so that offsets are predictable.

#include <babelqueue/app.hpp>
#include <babelqueue/kafka/transport.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "mock_cluster.hpp"

namespace babelqueue::kafka {
namespace {

using namespace std::chrono_literals;
using testing::MockCluster;

constexpr auto kPopDeadline = 20s;
constexpr std::int16_t kProduceApi = 0;
constexpr int kNotEnoughReplicas = 19;

std::shared_ptr<KafkaTransport> transport(const MockCluster& mock, int publish_timeout_ms = 5000,
                                          int session_timeout_ms = 4000) {
  // session.timeout.ms >= 4000: the mock's later rebalances wait session.timeout.ms - 1000, and
  // drop a member that has not rejoined by then.
  return std::make_shared<KafkaTransport>(
      mock.url("?group_id=g&publish_timeout=" + std::to_string(publish_timeout_ms) +
               "&consumer.session.timeout.ms=" + std::to_string(session_timeout_ms)));
}

// The next record of `queue`, waiting through the first group join.
// The next record of `queue`; through pop_deferring_headers when `deferred`.
ReceivedMessage next(KafkaTransport& t, const std::string& queue, bool deferred = false) {
  const auto deadline = std::chrono::steady_clock::now() + kPopDeadline;
  while (std::chrono::steady_clock::now() < deadline) {
    auto popped = deferred ? t.pop_deferring_headers(queue, 200ms) : t.pop(queue, 200ms);
    if (!popped.has_value()) ADD_FAILURE() << popped.error().what();
    if (popped.has_value() && popped->has_value()) return std::move(**popped);
  }
  ADD_FAILURE() << "no record on " << queue;
  return {};
}

std::string body(int n) {
  return "raw-" + std::to_string(n);
}

TEST(KafkaMock, PublishPopAckAndASecondMemberResumesAfterTheCommit) {  // KFK-T4, KFK-11
  MockCluster mock;
  mock.create_topic("q", 1);
  auto first = transport(mock);
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(first->publish("q", body(i)).ok());
  const ReceivedMessage m0 = next(*first, "q");
  EXPECT_EQ(m0.body, body(0));
  EXPECT_EQ(m0.queue, "q");
  EXPECT_FALSE(m0.key.has_value()) << "publish never invents a key";
  EXPECT_EQ(m0.delivery_count, 0);
  ASSERT_TRUE(first->ack(m0).ok());
  ASSERT_TRUE(first->flush().ok());
  first->close();

  auto second = transport(mock);
  const ReceivedMessage m1 = next(*second, "q");
  EXPECT_EQ(m1.body, body(1)) << "resumes after the committed offset";
  const auto stats = second->stats("q", "");
  ASSERT_TRUE(stats.has_value()) << stats.error().what();
  EXPECT_EQ(stats->ready, 1) << "committed 1 of 3, and m1 is in flight";
  EXPECT_EQ(stats->in_flight, 1);
  ASSERT_FALSE(stats->details.empty());
  EXPECT_EQ(stats->details[0].second, "end 3, committed 1, lag 2");
  EXPECT_EQ(stats->dead_letter, 0);
  EXPECT_FALSE(stats->consumers.has_value()) << "not reported";
}

TEST(KafkaMock, KeysSurviveRepublish) {  // KFK-T4, KFK-8, KFK-13
  MockCluster mock;
  mock.create_topic("src", 1);
  mock.create_topic("dst", 1);
  auto t = transport(mock);
  const std::optional<std::string> keys[] = {std::nullopt, std::string(), std::string("k\0y", 3)};
  for (const auto& key : keys) {
    ReceivedMessage source;
    source.key = key;
    ASSERT_TRUE(t->republish("src", "v", source).ok());
  }
  for (const auto& key : keys) {
    const ReceivedMessage m = next(*t, "src");
    EXPECT_EQ(m.key, key);
    ASSERT_TRUE(t->republish("dst", m.body, m).ok());
    ASSERT_TRUE(t->ack(m).ok());
  }
  for (const auto& key : keys)
    EXPECT_EQ(next(*t, "dst").key, key);
}

TEST(KafkaMock, RewindRedeliversTheSameOffsetWithoutACommit) {  // KFK-T5, KFK-12
  MockCluster mock;
  mock.create_topic("q", 1);
  auto t = transport(mock);
  ASSERT_TRUE(t->publish("q", body(0)).ok());
  ASSERT_TRUE(t->publish("q", body(1)).ok());
  const ReceivedMessage m0 = next(*t, "q");
  const ReceivedMessage m1 = next(*t, "q");
  ASSERT_TRUE(t->rewind(m0).ok());
  EXPECT_TRUE(t->ack(m1).is(ErrorCode::StaleDelivery)) << "after the rewound offset";
  EXPECT_EQ(next(*t, "q").body, body(0));
  EXPECT_EQ(next(*t, "q").body, body(1));
  ASSERT_TRUE(t->flush().ok());
  const auto stats = t->stats("q", "");
  ASSERT_TRUE(stats.has_value()) << stats.error().what();
  EXPECT_EQ(stats->details.at(0).second, "end 2, committed none, lag 2");
}

// A second member joins while the first still holds a record: the revoke (on the first member's
// pop thread, inside consume()) waits for the worker's ack instead of making it stale (with
// revoke_grace=0 the ack is StaleDelivery). The mock coordinator refuses the revoke's commit with
// REBALANCE_IN_PROGRESS (a Kafka broker accepts commits while preparing a rebalance), so that the
// commit lands is left to the integration tests; here the record may be delivered again.
TEST(KafkaMock, RevokeWaitsForTheOutstandingAck) {
  MockCluster mock;
  mock.create_topic("q", 1);
  // The revoke waits for the ack (4 s) within the mock's rebalance window (9 s).
  constexpr int kSession = 10'000;
  auto a = transport(mock, 5000, kSession);
  ASSERT_TRUE(a->publish("q", body(0)).ok());
  const ReceivedMessage held = next(*a, "q");
  ASSERT_EQ(held.body, body(0));
  auto b = transport(mock, 5000, kSession);
  std::atomic<bool> done{false};
  std::optional<ReceivedMessage> got;
  std::mutex got_mu;
  const auto poll = [&](KafkaTransport& t) {
    const auto deadline = std::chrono::steady_clock::now() + kPopDeadline;
    while (!done.load() && std::chrono::steady_clock::now() < deadline) {
      auto popped = t.pop("q", 100ms);
      if (popped.has_value() && popped->has_value()) {
        std::lock_guard<std::mutex> lock(got_mu);
        if (!got) got = std::move(**popped);
        done.store(true);
      }
    }
  };
  Status acked;
  std::thread worker([&] {
    std::this_thread::sleep_for(4s);  // the handler's work; the rebalance starts meanwhile
    acked = a->ack(held);
  });
  std::thread pop_a([&] { poll(*a); });
  std::thread pop_b([&] { poll(*b); });
  worker.join();
  EXPECT_TRUE(transport(mock)->publish("q", body(1)).ok());
  pop_a.join();
  pop_b.join();
  EXPECT_TRUE(acked.ok()) << acked.error().what();
  EXPECT_TRUE(got.has_value()) << "the group delivers again after the rebalance";
}

TEST(KafkaMock, OutOfOrderAcksCommitOnlyTheContiguousPrefix) {  // KFK-T8
  MockCluster mock;
  mock.create_topic("q", 1);
  auto t = transport(mock);
  ASSERT_TRUE(t->publish_batch("q", {body(0), body(1), body(2)}).ok());
  const ReceivedMessage a = next(*t, "q");
  const ReceivedMessage b = next(*t, "q");
  const ReceivedMessage c = next(*t, "q");
  ASSERT_TRUE(t->ack(c).ok());
  ASSERT_TRUE(t->ack(b).ok());
  ASSERT_TRUE(t->flush().ok());
  auto stats = t->stats("q", "");
  ASSERT_TRUE(stats.has_value()) << stats.error().what();
  EXPECT_EQ(stats->details.at(0).second, "end 3, committed none, lag 3");
  ASSERT_TRUE(t->ack(a).ok());
  ASSERT_TRUE(t->flush().ok());
  stats = t->stats("q", "");
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->details.at(0).second, "end 3, committed 3, lag 0");
}

TEST(KafkaMock, ThreeAppWorkersCommitEveryRecordOnce) {  // KFK-T8 through the App, OB-11
  MockCluster mock;
  mock.create_topic("q", 1);
  const std::shared_ptr<KafkaTransport> t = transport(mock);
  App app(t, {.poll_timeout = 5s, .concurrency = 3});
  constexpr int kRecords = 30;
  for (int i = 0; i < kRecords; ++i)
    app.publish("urn:test:n", Json::object({{"n", i}}), {.queue = "q"});
  std::atomic<int> handled{0};
  app.handle("urn:test:n", [&](Context&, const Envelope&) {
    // Uneven work, so that acks arrive out of order.
    std::this_thread::sleep_for(std::chrono::milliseconds(handled.fetch_add(1) % 3));
    return Status();
  });
  const DrainResult drained = app.drain("q", kRecords);
  EXPECT_TRUE(drained.status.ok());
  EXPECT_EQ(drained.count, static_cast<std::size_t>(kRecords));
  ASSERT_TRUE(t->flush().ok());
  const auto stats = t->stats("q", "");
  ASSERT_TRUE(stats.has_value()) << stats.error().what();
  EXPECT_EQ(stats->details.at(0).second, "end 30, committed 30, lag 0");
  EXPECT_EQ(handled.load(), kRecords);
}

TEST(KafkaMock, ProduceErrorsAreReturned) {  // KFK-T6 (acks=all path), KFK-4
  MockCluster mock;
  mock.create_topic("q", 1);
  auto t = transport(mock, 1500);
  mock.push_request_errors(kProduceApi, std::vector<int>(1000, kNotEnoughReplicas));
  const Status s = t->publish("q", body(0));
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.error().is_transient()) << s.error().what();
}

TEST(KafkaMock, AFailingDeadLetterWriteIsNotCommittedAndIsRewound) {  // KFK-T6, OB-8
  MockCluster mock;
  mock.create_topic("q", 1);
  mock.create_topic("q.dlq", 1);
  const std::shared_ptr<KafkaTransport> t = transport(mock, 1500);
  ASSERT_TRUE(t->publish("q", "not an envelope").ok());
  App app(t, {.dead_letter = true, .poll_timeout = 10s, .rewind_pause = 1ms});
  mock.push_request_errors(kProduceApi, std::vector<int>(1000, kNotEnoughReplicas));
  (void)app.drain("q", 1);
  ASSERT_TRUE(t->flush().ok());
  auto stats = t->stats("q", "");
  ASSERT_TRUE(stats.has_value()) << stats.error().what();
  EXPECT_EQ(stats->details.at(0).second, "end 1, committed none, lag 1");
  EXPECT_EQ(stats->dead_letter, 0);

  mock.clear_request_errors(kProduceApi);
  const DrainResult drained = app.drain("q", 1);
  EXPECT_TRUE(drained.status.ok()) << drained.status.error().what();
  ASSERT_TRUE(t->flush().ok());
  stats = t->stats("q", "");
  ASSERT_TRUE(stats.has_value()) << stats.error().what();
  EXPECT_EQ(stats->details.at(0).second, "end 1, committed 1, lag 0");
  // The timed-out write may still land once the errors stop (librdkafka's "possibly persisted"):
  // at least once.
  EXPECT_GE(stats->dead_letter, 1) << "the rewound record reached the dead-letter topic";
}

TEST(KafkaMock, BrokerOutagesAreTransientAndLeaderMovesAreFollowed) {  // KFK-19, OB-10
  MockCluster mock(2);
  mock.create_topic("q", 1);
  mock.set_partition_leader("q", 0, 1);
  auto t = transport(mock, 1500);
  ASSERT_TRUE(t->publish("q", body(0)).ok());
  mock.set_partition_leader("q", 0, 2);
  const Status moved = t->publish("q", body(1));
  EXPECT_TRUE(moved.ok()) << moved.error().what();
  mock.set_broker_down(1);
  mock.set_broker_down(2);
  const Status down = t->publish("q", body(2));
  ASSERT_FALSE(down.ok());
  EXPECT_TRUE(down.error().is_transient()) << down.error().what();
  mock.set_broker_up(1);
  mock.set_broker_up(2);
  // librdkafka reconnects after its own backoff, which a loaded machine can stretch past one
  // publish_timeout: publishing resumes within a bounded number of attempts.
  Status up = t->publish("q", body(3));
  for (int attempt = 1; !up.ok() && attempt < 20; ++attempt) {
    EXPECT_TRUE(up.error().is_transient()) << up.error().what();
    up = t->publish("q", body(3));
  }
  EXPECT_TRUE(up.ok()) << up.error().what();
}

TEST(KafkaMock, ADeferredPopBuildsTheTextHeadersOnFirstUse) {  // OB-4, DeferredHeadersPop
  MockCluster mock;
  mock.create_topic("q", 1);
  auto t = transport(mock, 1500);
  ASSERT_TRUE(t->publish_with_headers("q", body(0), {{"traceparent", "00-a"}}).ok());
  ASSERT_TRUE(t->publish_with_headers("q", body(0), {{"traceparent", "00-a"}}).ok());
  const ReceivedMessage eager = next(*t, "q");
  const ReceivedMessage deferred = next(*t, "q", /*deferred=*/true);
  EXPECT_EQ(eager.headers_builder, nullptr);
  ASSERT_NE(deferred.headers_builder, nullptr);
  EXPECT_TRUE(deferred.headers.empty()) << "not built before first use";
  EXPECT_EQ(deferred.body, eager.body);
  build_headers(deferred);
  EXPECT_EQ(deferred.headers_builder, nullptr);
  EXPECT_EQ(deferred.headers.at("traceparent"), "00-a");
  EXPECT_EQ(deferred.headers, eager.headers) << "the same OB-4 headers as an eager pop";
  ASSERT_TRUE(t->ack(eager).ok());
  ASSERT_TRUE(t->ack(deferred).ok());
}

TEST(KafkaMock, RestoreWritesTheOriginalRecordAndReportsAFailure) {  // KFK-T7, KFK-15
  MockCluster mock;
  mock.create_topic("q", 1);
  auto t = transport(mock, 1500);
  ASSERT_TRUE(t->publish_with_headers("q", body(0), {{"traceparent", "00-a"}}).ok());
  const ReceivedMessage m = next(*t, "q");
  EXPECT_EQ(m.headers.at("traceparent"), "00-a");
  ASSERT_TRUE(t->restore(m).ok());
  const ReceivedMessage again = next(*t, "q");
  EXPECT_EQ(again.body, m.body);
  EXPECT_EQ(again.headers, m.headers);
  EXPECT_EQ(again.key, m.key);

  mock.push_request_errors(kProduceApi, std::vector<int>(1000, kNotEnoughReplicas));
  EXPECT_FALSE(t->restore(again).ok());
  ReceivedMessage foreign;
  foreign.queue = "q";
  EXPECT_TRUE(t->restore(foreign).is(ErrorCode::Usage));
}

TEST(KafkaMock, CloseLeavesNothingPendingAndThenFailsClosed) {  // KFK-T9, KFK-18, OB-12
  MockCluster mock;
  mock.create_topic("q", 1);
  auto t = transport(mock);
  ASSERT_TRUE(t->publish_batch("q", {body(0), body(1)}).ok());
  const ReceivedMessage m = next(*t, "q");
  ASSERT_TRUE(t->ack(m).ok());
  t->close();
  t->close();
  EXPECT_TRUE(t->publish("q", "x").is(ErrorCode::Closed));
  EXPECT_TRUE(t->ack(m).is(ErrorCode::Closed));
  EXPECT_TRUE(t->rewind(m).is(ErrorCode::Closed));

  auto other = transport(mock);
  EXPECT_EQ(next(*other, "q").body, body(1)) << "close committed the ack";
  const auto peeked = other->peek("q", 0);
  ASSERT_TRUE(peeked.has_value()) << peeked.error().what();
  ASSERT_EQ(peeked->size(), 2U);
  EXPECT_EQ((*peeked)[0].body, body(0));
}

}  // namespace
}  // namespace babelqueue::kafka
