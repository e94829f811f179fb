// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Partitioned topics through the transport (issue 13) on the shared broker, the topics made
// partitioned by the admin REST API: publishes spread round robin over the partitions and every
// meta.id is consumed once across them through the App; a message with a key goes to its key's
// partition (Murmur3_32Hash, read back per partition by RawPulsar); a rewind goes to the
// partition consumer the message came from; `queue stats` sums the partitions and `peek` reads
// across them.

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "partition.hpp"
#include "transport_test.hpp"

namespace babelqueue::pulsar::test {
namespace {

using babelqueue::testing::kWithin;
using std::chrono::milliseconds;

constexpr std::string_view kUrn = "urn:babelqueue:partitions";

class PulsarPartitionTest : public SharedBrokerTest {
 protected:
  // Makes `queue()`'s topic a partitioned topic of `n` partitions.
  void partition(std::uint32_t n) const {
    ASSERT_EQ(admin_put(server(), "/admin/v2/persistent/public/default/" + queue() + "/partitions",
                        std::to_string(n)),
              204);
  }
  static std::shared_ptr<PulsarTransport> inspecting() {
    return transport("admin_url=" + server().admin_url());
  }
  // The first `count` messages of partition `n` of `queue()`, read through a subscription of
  // their own (fewer when it has no more).
  std::vector<RawMessage> read_partition(std::uint32_t n, std::size_t count) const {
    return read_topic(partition_topic(topic_for(queue()), n), count, kWithin);
  }
};

std::string detail(const QueueStats& stats, std::string_view name) {
  for (const auto& [key, value] : stats.details) {
    if (key == name) return value;
  }
  return "(no detail " + std::string(name) + ")";
}

// Publish (one by one and as a batch) goes round robin over 3 partitions: `queue stats` sums
// them (20 each); two App workers consume every meta.id exactly once across the partitions;
// afterwards nothing is left in any of them.
TEST_F(PulsarPartitionTest, EveryMessageOnceAcrossThePartitions) {
  partition(3);
  const std::shared_ptr<PulsarTransport> t = inspecting();
  AppOptions options;
  options.concurrency = 2;
  options.poll_timeout = milliseconds(500);
  App app(t, options);
  std::set<std::string> ids;
  for (int n = 0; n < 30; ++n)
    ids.insert(app.publish(kUrn, Json::object({{"n", n}}), {.queue = queue()}));
  std::vector<std::string> batch;
  for (int n = 30; n < 60; ++n) {
    const Envelope env = make(kUrn, Json::object({{"n", n}}));
    ids.emplace(env.meta().id);
    batch.push_back(encode(env));
  }
  ASSERT_TRUE(t->publish_batch(queue(), batch).ok());
  ASSERT_EQ(ids.size(), 60U);

  const Result<QueueStats> before = t->stats(queue(), "");
  ASSERT_TRUE(before.has_value()) << before.error().what();
  EXPECT_EQ(before->ready, 60);
  EXPECT_EQ(detail(*before, "partitions"), "3");
  for (int p = 0; p < 3; ++p) {
    EXPECT_EQ(detail(*before, "partition " + std::to_string(p)), "backlog 20, unacked 0");
  }
  // The admin API peeks no partitioned topic: the transport peeks partition after partition.
  const Result<std::vector<PeekedMessage>> peeked = t->peek(queue(), 25);
  ASSERT_TRUE(peeked.has_value()) << peeked.error().what();
  ASSERT_EQ(peeked->size(), 25U);
  for (const PeekedMessage& m : *peeked) {
    EXPECT_TRUE(ids.contains(std::string(decode(m.body).meta().id))) << m.body;
    EXPECT_EQ(m.headers.find("bq-job") != m.headers.end(), true);
  }

  std::mutex mu;
  std::multiset<std::string> seen;
  app.handle(kUrn, [&](Context&, const Envelope& env) {
    const std::lock_guard lock(mu);
    seen.emplace(env.meta().id);
    if (seen.size() == ids.size()) app.stop();
    return Status();
  });
  EXPECT_TRUE(app.consume(queue()).ok());
  ASSERT_TRUE(t->flush().ok());
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()), ids);
  EXPECT_EQ(seen.size(), ids.size()) << "a message was handled twice";
  const Result<QueueStats> after = t->stats(queue(), "");
  ASSERT_TRUE(after.has_value()) << after.error().what();
  EXPECT_EQ(after->ready, 0);
  EXPECT_EQ(after->in_flight, 0);
  t->close();
  EXPECT_TRUE(nothing_left(queue()));
}

// A message with a key (republish of a message that had one, restore) goes to the partition
// (Murmur3_32(key) & 0x7fffffff) % 4 with the key, every time; the transport's pop gives it back
// with the key.
TEST_F(PulsarPartitionTest, KeysMapToAStablePartition) {
  partition(4);
  const std::shared_ptr<PulsarTransport> t = transport();
  const std::vector<std::string> keys{"a", "b", "order-7", "customer-42", "\xc3\xa9t\xc3\xa9"};
  std::map<std::uint32_t, std::multiset<std::string>> expected;  // partition -> keys
  for (const std::string& key : keys) {
    for (int round = 0; round < 2; ++round) {
      ReceivedMessage source;
      source.key = key;
      ASSERT_TRUE(t->republish(queue(), key + "/" + std::to_string(round), source).ok());
      expected[partition_of_key(key, 4)].insert(key);
    }
    ReceivedMessage restored;
    restored.queue = queue();
    restored.body = key + "/restored";
    restored.key = key;
    restored.headers.insert_or_assign("rider", "kept");
    ASSERT_TRUE(t->restore(restored).ok());
    expected[partition_of_key(key, 4)].insert(key);
  }
  // Each partition holds exactly its keys' messages: as many as were published in all, so a
  // message in another partition leaves its own short.
  std::size_t total = 0;
  for (std::uint32_t p = 0; p < 4; ++p) {
    const std::multiset<std::string>& want = expected[p];
    const std::vector<RawMessage> got = read_partition(p, want.size());
    std::multiset<std::string> got_keys;
    for (const RawMessage& m : got) {
      got_keys.insert(m.message.metadata.partition_key());
      EXPECT_TRUE(m.message.payload.starts_with(m.message.metadata.partition_key() + "/"))
          << m.message.payload;
    }
    EXPECT_EQ(got_keys, want) << "partition " << p;
    total += got.size();
  }
  EXPECT_EQ(total, keys.size() * 3);

  std::multiset<std::string> popped;
  for (std::size_t i = 0; i < keys.size() * 3; ++i) {
    auto got = t->pop(queue(), kWithin);
    ASSERT_TRUE(got.has_value()) << got.error().what();
    ASSERT_TRUE(got->has_value()) << "message " << i << " did not come";
    const ReceivedMessage& m = **got;
    ASSERT_TRUE(m.key.has_value());
    EXPECT_TRUE(m.body.starts_with(*m.key + "/")) << m.body;
    if (m.body.ends_with("/restored")) {
      EXPECT_EQ(m.headers.find("rider")->second, "kept");
    }
    popped.insert(*m.key);
    ASSERT_TRUE(t->ack(m).ok());
  }
  std::multiset<std::string> all;
  for (const auto& [p, some] : expected)
    all.insert(some.begin(), some.end());
  EXPECT_EQ(popped, all);
  ASSERT_TRUE(t->flush().ok());
  t->close();
  EXPECT_TRUE(nothing_left(queue()));
}

// Two messages, one per partition: the rewind of one goes to its partition's consumer (the broker
// redelivers it with redelivery_count 1), the ack of the other to its own; then nothing is left.
TEST_F(PulsarPartitionTest, RewindAndAckGoToThePartitionTheMessageCameFrom) {
  partition(2);
  const std::shared_ptr<PulsarTransport> t = transport();
  ASSERT_TRUE(t->publish(queue(), "first").ok());
  ASSERT_TRUE(t->publish(queue(), "second").ok());
  std::map<std::string, ReceivedMessage> got;
  for (int i = 0; i < 2; ++i) {
    auto m = t->pop(queue(), kWithin);
    ASSERT_TRUE(m.has_value() && m->has_value());
    got.emplace((*m)->body, **m);
  }
  ASSERT_EQ(got.size(), 2U);
  ASSERT_TRUE(t->rewind(got.at("first")).ok());
  ASSERT_TRUE(t->ack(got.at("second")).ok());
  auto again = t->pop(queue(), kWithin);
  ASSERT_TRUE(again.has_value() && again->has_value()) << "the rewound message did not come back";
  EXPECT_EQ((*again)->body, "first");
  EXPECT_EQ((*again)->delivery_count, 2U);
  ASSERT_TRUE(t->ack(**again).ok());
  ASSERT_TRUE(t->flush().ok());
  t->close();
  EXPECT_TRUE(nothing_left(queue()));
}

// PLS-11 on partitioned topics: a queue and its `.dlq` of 2 partitions each; failures are
// retried, then dead-lettered into the DLQ's partitions; `queue stats` counts them (the sum).
TEST_F(PulsarPartitionTest, DeadLettersGoToAPartitionedDlq) {
  partition(2);
  ASSERT_EQ(admin_put(server(),
                      "/admin/v2/persistent/public/default/" + queue() + ".dlq/partitions", "2"),
            204);
  const std::shared_ptr<PulsarTransport> t = inspecting();
  AppOptions options;
  options.max_attempts = 2;
  options.dead_letter = true;
  options.poll_timeout = milliseconds(500);
  App app(t, options);
  std::set<std::string> ids;
  for (int n = 0; n < 4; ++n)
    ids.insert(app.publish(kUrn, Json::object({{"n", n}}), {.queue = queue()}));
  app.handle(kUrn,
             [](Context&, const Envelope&) { return Status(Error(ErrorCode::Handler, "no")); });
  EXPECT_TRUE(app.drain(queue(), 8).status.ok());
  ASSERT_TRUE(t->flush().ok());
  const Result<QueueStats> stats = t->stats(queue(), "");
  ASSERT_TRUE(stats.has_value()) << stats.error().what();
  EXPECT_EQ(stats->ready, 0);
  EXPECT_EQ(stats->dead_letter, 4);
  // Round robin: two in each partition of the DLQ.
  std::set<std::string> dead;
  for (std::uint32_t p = 0; p < 2; ++p) {
    RawPulsar raw(server().port(), kWithin);
    raw.subscribe(partition_topic(topic_for(queue() + ".dlq"), p), "check-dlq",
                  proto::CommandSubscribe::Exclusive, 100);
    for (int i = 0; i < 2; ++i)
      dead.emplace(decode(raw.receive().message.payload).meta().id);
  }
  EXPECT_EQ(dead, ids);
}

}  // namespace
}  // namespace babelqueue::pulsar::test
