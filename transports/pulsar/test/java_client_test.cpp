// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The codec reads what the official Java client writes (issue 13): batched messages, compressed
// with each compression type, produced by support/PulsarJavaPeer.java on the shared broker and
// received raw, decompressed and split by our codec.

#include <babelqueue/testing/command.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "batch.hpp"
#include "compression.hpp"
#include "pulsar_server.hpp"
#include "raw_pulsar.hpp"

namespace babelqueue::pulsar::test {
namespace {

constexpr std::string_view kJavaPeer = BABELQUEUE_PULSAR_JAVA_PEER;
constexpr std::chrono::milliseconds kTimeout{60'000};
constexpr int kCount = 5;
constexpr std::size_t kMax = 1U << 20;

TEST(PulsarJavaClient, BatchedAndCompressedMessagesDecode) {
  BABELQUEUE_REQUIRE_PULSAR();
  PulsarServer& server = shared_pulsar_server();
  const std::string prefix = "persistent://public/default/java-peer-";
  const std::vector<std::string> types = {"NONE", "LZ4", "ZLIB", "ZSTD", "SNAPPY"};
  RawPulsar raw(server.port(), kTimeout);
  std::map<std::uint64_t, std::string> type_of_consumer;
  for (const std::string& type : types) {
    std::string topic = prefix;
    for (const char c : type)
      topic += c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    type_of_consumer[raw.subscribe(topic, "codec", pb::CommandSubscribe::Exclusive, 100)] = type;
  }

  std::vector<std::string> argv = {
      pulsar_java(),        "-cp",  pulsar_jars() + "/*",  std::string(kJavaPeer),
      server.service_url(), prefix, std::to_string(kCount)};
  argv.insert(argv.end(), types.begin(), types.end());
  const babelqueue::testing::CommandResult peer = babelqueue::testing::run_command(argv);
  ASSERT_EQ(peer.exit_code, 0) << peer.output;
  const std::vector<std::string> report = babelqueue::testing::tagged_lines(peer.output, "peer: ");

  for (std::size_t received = 0; received < types.size(); ++received) {
    const RawMessage message = raw.receive();
    const std::string& type = type_of_consumer.at(message.consumer_id);
    SCOPED_TRACE(type);
    EXPECT_THAT(report, ::testing::Contains("sent " + std::to_string(kCount) + " " + type));
    const pb::MessageMetadata& metadata = message.message.metadata;
    EXPECT_EQ(wire::compression_name(metadata.compression()), type);
    if (type != "NONE") {
      EXPECT_LT(message.message.payload.size(), metadata.uncompressed_size() / 4);
    }
    ASSERT_EQ(metadata.num_messages_in_batch(), kCount);
    const std::string batch = wire::decompress(metadata.compression(), message.message.payload,
                                               metadata.uncompressed_size(), kMax);
    const std::vector<wire::BatchEntry> entries = wire::split_batch(batch, kCount);
    for (int i = 0; i < kCount; ++i) {
      const wire::BatchEntry& entry = entries[static_cast<std::size_t>(i)];
      EXPECT_EQ(entry.payload,
                "message " + std::to_string(i) + " of " + type + " " + std::string(2048, 'x'));
      ASSERT_EQ(entry.metadata.properties_size(), 1);
      EXPECT_EQ(entry.metadata.properties(0).key(), "i");
      EXPECT_EQ(entry.metadata.properties(0).value(), std::to_string(i));
    }
    raw.ack(message.consumer_id, message.id);
  }
}

}  // namespace
}  // namespace babelqueue::pulsar::test
