// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "batch.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

namespace babelqueue::pulsar::wire {
namespace {

using ::testing::HasSubstr;

pb::SingleMessageMetadata entry_metadata(const std::string& id) {
  pb::SingleMessageMetadata metadata;
  auto* property = metadata.add_properties();
  property->set_key("bq-meta-id");
  property->set_value(id);
  metadata.set_sequence_id(7);
  return metadata;
}

std::string three_entries() {
  std::string batch;
  append_batch_entry(batch, entry_metadata("a"), "first");
  append_batch_entry(batch, entry_metadata("b"), "");
  append_batch_entry(batch, entry_metadata("c"), std::string(300, '3'));
  return batch;
}

std::string error_of(std::string_view batch, int count) {
  try {
    static_cast<void>(split_batch(batch, count));
  } catch (const ProtocolError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no ProtocolError";
  return {};
}

TEST(Batch, EntriesRoundTrip) {
  const std::string batch = three_entries();
  const std::vector<BatchEntry> entries = split_batch(batch, 3);
  ASSERT_EQ(entries.size(), 3U);
  EXPECT_EQ(entries[0].payload, "first");
  EXPECT_EQ(entries[0].metadata.properties(0).value(), "a");
  EXPECT_EQ(entries[0].metadata.payload_size(), 5);
  EXPECT_EQ(entries[1].payload, "");
  EXPECT_EQ(entries[2].payload, std::string(300, '3'));
  EXPECT_EQ(entries[2].metadata.sequence_id(), 7U);
}

// The layout: [4-byte size][SingleMessageMetadata][payload]; properties = field 1,
// payload_size = field 3.
TEST(Batch, EntryHasTheProtocolsBytes) {
  pb::SingleMessageMetadata metadata;
  auto* property = metadata.add_properties();
  property->set_key("k");
  property->set_value("v");
  std::string batch;
  append_batch_entry(batch, metadata, "xy");
  EXPECT_EQ(batch, std::string("\0\0\0\x0a\x0a\x06\x0a\x01k\x12\x01v\x18\x02xy", 16));
}

TEST(Batch, CountsThatDoNotFitAreErrors) {
  const std::string batch = three_entries();
  EXPECT_THAT(error_of(batch, 0), HasSubstr("a batch of 0 messages"));
  EXPECT_THAT(error_of(batch, -1), HasSubstr("a batch of -1 messages"));
  EXPECT_THAT(error_of(batch, 2), HasSubstr("bytes follow the last of 2 batch entries"));
  EXPECT_THAT(error_of(batch, 4), HasSubstr("batch entry 4 of 4 is cut short"));
  EXPECT_THAT(error_of(batch, 1'000'000), HasSubstr("a batch of 1000000 messages in"));
}

TEST(Batch, EveryTruncationIsAnError) {
  const std::string batch = three_entries();
  for (std::size_t size = 0; size < batch.size(); ++size) {
    EXPECT_THROW(static_cast<void>(split_batch(std::string_view(batch).substr(0, size), 3)),
                 ProtocolError)
        << "cut to " << size;
  }
}

TEST(Batch, BadPayloadSizesAreNamed) {
  const auto with_size = [](int payload_size, bool set) {
    pb::SingleMessageMetadata metadata;
    if (set) metadata.set_payload_size(payload_size);
    std::string batch;
    append_u32(batch, static_cast<std::uint32_t>(metadata.ByteSizeLong()));
    metadata.AppendToString(&batch);
    batch += "abcd";
    return batch;
  };
  EXPECT_THAT(error_of(with_size(0, false), 1), HasSubstr("has no payload_size"));
  EXPECT_THAT(error_of(with_size(-5, true), 1), HasSubstr("payload_size -5 does not fit"));
  EXPECT_THAT(error_of(with_size(99, true), 1), HasSubstr("payload_size 99 does not fit the 4"));
  std::string bad_metadata;
  append_u32(bad_metadata, 2);
  bad_metadata += "\x0a\x7f";
  EXPECT_THAT(error_of(bad_metadata, 1), HasSubstr("SingleMessageMetadata does not parse"));
}

TEST(Batch, RandomInputNeverCrashes) {
  std::mt19937 random(13);
  std::uniform_int_distribution<int> byte(0, 255);
  const std::string valid = three_entries();
  for (int round = 0; round < 3000; ++round) {
    std::string input = valid;
    for (int flips = 1 + byte(random) % 4; flips > 0; --flips)
      input[static_cast<std::size_t>(byte(random) * 7) % input.size()] =
          static_cast<char>(byte(random));
    try {
      for (const BatchEntry& entry : split_batch(input, 1 + byte(random) % 4))
        ASSERT_LE(entry.payload.size(), input.size());
    } catch (const ProtocolError&) {
      // expected for most inputs
    }
  }
}

}  // namespace
}  // namespace babelqueue::pulsar::wire
