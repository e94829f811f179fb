// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Frames encoded independently of the codec (support/make_vectors.py, from the protocol's
// documentation: its own varints, CRC-32C and framing), kept as the fuzzer's seeds in
// fuzz/corpus/fuzz_pulsar_frame, decoded here.

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "batch.hpp"
#include "compression.hpp"
#include "frame.hpp"

namespace babelqueue::pulsar::wire {
namespace {

constexpr std::string_view kVectors = BABELQUEUE_PULSAR_VECTORS_DIR;
constexpr std::size_t kMax = 1U << 20;

std::string vector_bytes(const std::string& name) {
  std::ifstream in(std::string(kVectors) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in) << "no vector " << name << " in " << kVectors;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Frame only_frame(const std::string& name) {
  FrameReader reader;
  reader.feed(vector_bytes(name));
  std::optional<Frame> frame = reader.next();
  EXPECT_TRUE(frame) << name;
  EXPECT_EQ(reader.buffered(), 0U) << name;
  return frame ? std::move(*frame) : Frame{};
}

TEST(Vectors, Ping) {
  EXPECT_EQ(only_frame("ping").command.type(), pb::BaseCommand::PING);
}

TEST(Vectors, MessageWithProperties) {
  const Frame frame = only_frame("message");
  ASSERT_EQ(frame.command.type(), pb::BaseCommand::MESSAGE);
  const pb::CommandMessage& command = frame.command.message();
  EXPECT_EQ(command.consumer_id(), 1U);
  EXPECT_EQ(command.message_id().ledgerid(), 5U);
  EXPECT_EQ(command.message_id().entryid(), 9U);
  EXPECT_EQ(command.message_id().partition(), -1);  // the protocol's default
  EXPECT_EQ(command.redelivery_count(), 2U);
  const Message message = decode_message(frame.payload_section);
  EXPECT_EQ(message.metadata.producer_name(), "p");
  EXPECT_EQ(message.metadata.publish_time(), 1'700'000'000'000U);
  ASSERT_EQ(message.metadata.properties_size(), 1);
  EXPECT_EQ(message.metadata.properties(0).key(), "bq-job");
  EXPECT_EQ(message.metadata.properties(0).value(), "urn:bq:job:x:v1");
  EXPECT_EQ(message.metadata.compression(), pb::NONE);
  EXPECT_EQ(message.payload, R"({"job":"urn:bq:job:x:v1"})");
}

// A batch of two, plain and compressed as raw Snappy and as an LZ4 block.
TEST(Vectors, BatchesPlainAndCompressed) {
  for (const std::string name : {"batch", "batch-snappy", "batch-lz4"}) {
    const Message message = decode_message(only_frame(name).payload_section);
    ASSERT_EQ(message.metadata.num_messages_in_batch(), 2) << name;
    const std::string batch = decompress(message.metadata.compression(), message.payload,
                                         message.metadata.uncompressed_size(), kMax);
    const std::vector<BatchEntry> entries = split_batch(batch, 2);
    ASSERT_EQ(entries.size(), 2U) << name;
    EXPECT_EQ(entries[0].payload, "one") << name;
    EXPECT_EQ(entries[1].payload, "two!") << name;
  }
}

}  // namespace
}  // namespace babelqueue::pulsar::wire
