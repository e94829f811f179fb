// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The Pulsar test support itself (issue 13): the private standalone broker (PulsarServer) and the
// raw client on the protocol codec (RawPulsar), which also checks the codec against frames a
// real broker writes and reads.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "pulsar_server.hpp"
#include "raw_pulsar.hpp"

namespace babelqueue::pulsar::test {
namespace {

using babelqueue::testing::read_file;
using babelqueue::testing::report_figure;
using babelqueue::testing::rss_kib;
using ::testing::UnorderedElementsAreArray;

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kTimeout{30'000};

std::string numbered(const char* prefix, int i) {
  std::string text = prefix;
  text += std::to_string(i);
  return text;
}

std::map<std::string, std::string> properties_of(const pb::MessageMetadata& metadata) {
  std::map<std::string, std::string> properties;
  for (const pb::KeyValue& property : metadata.properties())
    properties.emplace(property.key(), property.value());
  return properties;
}

TEST(PulsarSmoke, SharedBrokerIsTheJvmOnLoopback) {
  BABELQUEUE_REQUIRE_PULSAR();
  const auto first_use = Clock::now();
  PulsarServer& server = shared_pulsar_server();
  report_figure("shared broker first use (start if this test runs first)",
                std::chrono::duration_cast<milliseconds>(Clock::now() - first_use).count());
  report_figure("shared broker start-up to a working lookup", server.started_in().count());
  report_figure("broker JVM RSS", rss_kib(server.pid()) / 1024, "MiB");
  ASSERT_TRUE(server.running());
  EXPECT_EQ(read_file("/proc/" + std::to_string(server.pid()) + "/comm"), "java\n");
  EXPECT_EQ(server.service_url(), "pulsar://127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(server.admin_url(), "http://127.0.0.1:" + std::to_string(server.web_port()));

  RawPulsar raw(server.port(), kTimeout);
  EXPECT_THAT(raw.server_version(), ::testing::HasSubstr("4.2.4"));
  EXPECT_EQ(raw.protocol_version(), 21);
  const pb::CommandLookupTopicResponse lookup = raw.lookup("persistent://public/default/smoke");
  EXPECT_EQ(lookup.response(), pb::CommandLookupTopicResponse::Connect);
  EXPECT_EQ(lookup.brokerserviceurl(), server.service_url());
}

// What our codec writes, the broker stores and sends back, and our codec reads: payload bytes,
// properties, sequence ids, checksums.
TEST(PulsarSmoke, RawRoundTripKeepsPayloadAndProperties) {
  BABELQUEUE_REQUIRE_PULSAR();
  RawPulsar raw(shared_pulsar_server().port(), kTimeout);
  const std::string topic = "persistent://public/default/smoke-round-trip";
  const std::uint64_t consumer = raw.subscribe(topic, "smoke", pb::CommandSubscribe::Shared, 100);
  const std::uint64_t producer = raw.create_producer(topic);
  const std::vector<std::string> payloads = {"first", std::string("bin\0ary\xff", 8),
                                             std::string(200'000, 'x')};
  std::vector<pb::MessageIdData> ids;
  for (const std::string& payload : payloads)
    ids.push_back(raw.send(producer, payload, {{"bq-job", "urn:bq:job:smoke:v1"}, {"n", "1"}}));
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    const RawMessage received = raw.receive();
    EXPECT_EQ(received.consumer_id, consumer);
    EXPECT_EQ(received.id.ledgerid(), ids[i].ledgerid());
    EXPECT_EQ(received.id.entryid(), ids[i].entryid());
    EXPECT_EQ(received.redelivery_count, 0U);
    EXPECT_EQ(received.message.payload, payloads[i]);
    EXPECT_EQ(received.message.metadata.sequence_id(), i);
    EXPECT_EQ(properties_of(received.message.metadata),
              (std::map<std::string, std::string>{{"bq-job", "urn:bq:job:smoke:v1"}, {"n", "1"}}));
    raw.ack(consumer, received.id);
  }
}

// kill -9 and a restart on the same data: what the broker confirmed and nobody acknowledged is
// delivered again.
TEST(PulsarSmoke, KilledBrokerKeepsWhatItConfirmed) {
  BABELQUEUE_REQUIRE_PULSAR();
  PulsarServer server;
  report_figure("fresh broker start-up to a working lookup", server.started_in().count());
  const std::string topic = "persistent://public/default/smoke-kill";
  std::vector<std::string> sent;
  {
    RawPulsar raw(server.port(), kTimeout);
    static_cast<void>(raw.subscribe(topic, "survivor", pb::CommandSubscribe::Shared, 100));
    const std::uint64_t producer = raw.create_producer(topic);
    for (int i = 0; i < 5; ++i) {
      sent.push_back(numbered("m", i));
      static_cast<void>(raw.send(producer, sent.back()));
    }
  }
  server.kill();
  ASSERT_FALSE(server.running());
  server.restart();
  report_figure("restart after kill -9 to a working lookup", server.started_in().count());
  report_figure("restarted broker JVM RSS", rss_kib(server.pid()) / 1024, "MiB");
  RawPulsar raw(server.port(), kTimeout);
  static_cast<void>(raw.subscribe(topic, "survivor", pb::CommandSubscribe::Shared, 100));
  std::vector<std::string> received;
  for (std::size_t i = 0; i < sent.size(); ++i)
    received.push_back(raw.receive().message.payload);
  EXPECT_THAT(received, UnorderedElementsAreArray(sent));
}

}  // namespace
}  // namespace babelqueue::pulsar::test
