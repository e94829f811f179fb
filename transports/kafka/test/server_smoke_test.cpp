// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The Kafka test support itself (issue 10): the private KRaft broker (KafkaServer) and the raw
// librdkafka client (RawKafka) every integration test of transports/kafka builds on.

#include <gtest/gtest.h>

#include <sys/types.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "kafka_server.hpp"
#include "raw_kafka.hpp"

namespace babelqueue::kafka::test {
namespace {

using babelqueue::testing::read_file;
using babelqueue::testing::report_figure;
using babelqueue::testing::rss_kib;

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kReadTimeout{30'000};

std::string numbered(const char* prefix, int i) {
  // Appended piece by piece: GCC 12 -O2 reports a bogus -Wrestrict for `"v" + std::string`.
  std::string text = prefix;
  text += std::to_string(i);
  return text;
}

std::vector<std::string> values_of(const std::vector<RawRecord>& records) {
  std::vector<std::string> values;
  for (const RawRecord& record : records)
    values.push_back(record.value);
  return values;
}

TEST(KafkaSmoke, SharedBrokerIsTheJvmOnLoopback) {
  BABELQUEUE_REQUIRE_KAFKA();
  const auto first_use = Clock::now();
  KafkaServer& server = shared_kafka_server();
  report_figure("shared broker first use (start if this test runs first)",
                std::chrono::duration_cast<milliseconds>(Clock::now() - first_use).count());
  report_figure("shared broker start-up incl. formatting the log dir", server.started_in().count());
  report_figure("broker JVM RSS", rss_kib(server.pid()) / 1024, "MiB");
  ASSERT_TRUE(server.running());
  // The PID BrokerProcess signals is the JVM's: the launch shell exec'd java.
  EXPECT_EQ(read_file("/proc/" + std::to_string(server.pid()) + "/comm"), "java\n");
  EXPECT_EQ(server.bootstrap(), "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(server.url(), "kafka://127.0.0.1:" + std::to_string(server.port()) + "/");
  EXPECT_EQ(server.url("partitions=3&group=g"),
            "kafka://127.0.0.1:" + std::to_string(server.port()) + "/?partitions=3&group=g");
  RawKafka raw(server.bootstrap());
  EXPECT_EQ(raw.cluster_id(kReadTimeout), server.cluster_id());
  EXPECT_EQ(server.cluster_id().size(), 22U);
}

TEST(KafkaSmoke, RawRoundTripKeepsKeysAndHeaders) {
  BABELQUEUE_REQUIRE_KAFKA();
  RawKafka raw(shared_kafka_server().bootstrap());
  const std::string topic = "smoke-round-trip";
  raw.create_topic(topic, 1);
  raw.create_topic(topic, 1);  // exists: fine
  EXPECT_EQ(raw.partition_count(topic), 1);
  EXPECT_EQ(raw.end_offset(topic, 0), 0);

  raw.produce(topic, std::nullopt, "null key");
  raw.produce(topic, std::string(), "empty key", {{"h", std::string()}});
  raw.produce(topic, "k1", std::string("bin\0ary", 7),
              {{"a", "1"}, {"null-valued", std::nullopt}, {"a", "2"}}, 0);
  EXPECT_EQ(raw.end_offset(topic, 0), 3);

  const std::vector<RawRecord> records = raw.read_all(topic, kReadTimeout);
  ASSERT_EQ(records.size(), 3U);
  for (std::size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].topic, topic);
    EXPECT_EQ(records[i].partition, 0);
    EXPECT_EQ(records[i].offset, static_cast<std::int64_t>(i));
    EXPECT_GT(records[i].timestamp_ms, 1'600'000'000'000);
  }
  EXPECT_EQ(records[0].key, std::nullopt);
  EXPECT_EQ(records[0].value, "null key");
  EXPECT_TRUE(records[0].headers.empty());
  EXPECT_EQ(records[1].key, std::optional<std::string>(""));
  EXPECT_EQ(records[1].headers, (std::vector<RawHeader>{{"h", std::string()}}));
  EXPECT_EQ(records[2].key, std::optional<std::string>("k1"));
  EXPECT_EQ(records[2].value, std::string("bin\0ary", 7));
  EXPECT_EQ(records[2].headers,
            (std::vector<RawHeader>{{"a", "1"}, {"null-valued", std::nullopt}, {"a", "2"}}));
}

TEST(KafkaSmoke, ReadAllCoversEveryPartitionInOrder) {
  BABELQUEUE_REQUIRE_KAFKA();
  RawKafka raw(shared_kafka_server().bootstrap());
  const std::string topic = "smoke-partitions";
  raw.create_topic(topic, 3);
  EXPECT_EQ(raw.partition_count(topic), 3);
  for (int i = 0; i < 6; ++i)
    raw.produce(topic, std::nullopt, numbered("r", i), {}, (5 - i) % 3);
  const std::vector<RawRecord> records = raw.read_all(topic, kReadTimeout);
  std::vector<std::int32_t> partitions;
  for (const RawRecord& record : records)
    partitions.push_back(record.partition);
  EXPECT_EQ(partitions, (std::vector<std::int32_t>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(values_of(records), (std::vector<std::string>{"r2", "r5", "r1", "r4", "r0", "r3"}));
  EXPECT_TRUE(raw.read_all("smoke-empty-" + std::to_string(::getpid()), kReadTimeout).empty());
}

TEST(KafkaSmoke, CommittedOfAnUnknownGroupIsMinusOne) {
  BABELQUEUE_REQUIRE_KAFKA();
  RawKafka raw(shared_kafka_server().bootstrap());
  raw.create_topic("smoke-committed", 1);
  raw.produce("smoke-committed", std::nullopt, "x");
  const auto started = Clock::now();
  EXPECT_EQ(raw.committed("smoke-no-such-group", "smoke-committed", 0), -1);
  report_figure("committed() of an unknown group",
                std::chrono::duration_cast<milliseconds>(Clock::now() - started).count());
}

TEST(KafkaSmoke, KilledBrokerRestartsWithItsRecords) {
  BABELQUEUE_REQUIRE_KAFKA();
  KafkaServer server(KafkaServer::Config{.partitions = 2, .extra_properties = {}});
  report_figure("own broker start-up incl. formatting the log dir", server.started_in().count());
  const std::string topic = "smoke-durable";
  {
    RawKafka raw(server.bootstrap());
    for (int i = 0; i < 10; ++i)
      raw.produce(topic, numbered("k", i), numbered("v", i));
    // Auto-created with num.partitions from the Config.
    EXPECT_EQ(raw.partition_count(topic), 2);
  }
  const pid_t first_pid = server.pid();
  const int port = server.port();
  server.kill();
  EXPECT_FALSE(server.running());
  EXPECT_NE(::kill(first_pid, 0), 0);
  server.restart();
  report_figure("restart after kill -9", server.started_in().count());
  EXPECT_NE(server.pid(), first_pid);
  EXPECT_EQ(server.port(), port);
  RawKafka raw(server.bootstrap());
  std::vector<std::string> values = values_of(raw.read_all(topic, kReadTimeout));
  std::sort(values.begin(), values.end());
  EXPECT_EQ(values,
            (std::vector<std::string>{"v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9"}));
  EXPECT_NE(server.log_tail(200).find("kafka"), std::string::npos);
}

}  // namespace
}  // namespace babelqueue::kafka::test
