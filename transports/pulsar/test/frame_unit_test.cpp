// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "frame.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "crc32c.hpp"

namespace babelqueue::pulsar::wire {
namespace {

using ::testing::HasSubstr;

std::string raw(std::initializer_list<unsigned> values) {
  std::string out;
  for (const unsigned value : values)
    out.push_back(static_cast<char>(value));
  return out;
}

pb::BaseCommand ping() {
  pb::BaseCommand command;
  command.set_type(pb::BaseCommand::PING);
  command.mutable_ping();
  return command;
}

pb::BaseCommand send(std::uint64_t producer, std::uint64_t sequence) {
  pb::BaseCommand command;
  command.set_type(pb::BaseCommand::SEND);
  command.mutable_send()->set_producer_id(producer);
  command.mutable_send()->set_sequence_id(sequence);
  return command;
}

pb::MessageMetadata metadata(std::uint64_t sequence) {
  pb::MessageMetadata meta;
  meta.set_producer_name("standalone-0-1");
  meta.set_sequence_id(sequence);
  meta.set_publish_time(1'700'000'000'000);
  auto* property = meta.add_properties();
  property->set_key("bq-job");
  property->set_value("urn:bq:job:orders.created:v1");
  return meta;
}

template <class Fn>
std::string protocol_error(Fn&& fn) {
  try {
    fn();
  } catch (const ProtocolError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no ProtocolError";
  return {};
}

// The field numbers are the protocol's: type = 1 (varint 18 = PING), ping = 18 (tag 0x92 0x01,
// empty). The frame is [total 9][command size 5][5 command bytes].
TEST(Frame, PingHasTheProtocolsBytes) {
  const std::string frame = encode_command(ping());
  EXPECT_EQ(frame, raw({0, 0, 0, 9, 0, 0, 0, 5, 0x08, 0x12, 0x92, 0x01, 0x00}));
  const Frame decoded = decode_frame(frame);
  EXPECT_EQ(decoded.command.type(), pb::BaseCommand::PING);
  EXPECT_TRUE(decoded.command.has_ping());
  EXPECT_TRUE(decoded.payload_section.empty());
}

// FLOW: type 11, flow = field 11 {consumer_id = 1: 7, messagePermits = 2: 1000}.
TEST(Frame, FlowHasTheProtocolsBytes) {
  pb::BaseCommand command;
  command.set_type(pb::BaseCommand::FLOW);
  command.mutable_flow()->set_consumer_id(7);
  command.mutable_flow()->set_messagepermits(1000);
  EXPECT_EQ(encode_command(command),
            raw({0, 0, 0, 13, 0, 0, 0, 9, 0x08, 0x0b, 0x5a, 0x05, 0x08, 0x07, 0x10, 0xe8, 0x07}));
}

TEST(Frame, CommandWithoutTypeIsRefused) {
  EXPECT_THAT(protocol_error([] { static_cast<void>(encode_command(pb::BaseCommand{})); }),
              HasSubstr("no type"));
}

TEST(Frame, MessageRoundTripsWithItsChecksum) {
  const std::string payload = R"({"job":"urn:bq:job:orders.created:v1","data":{}})";
  const std::string frame = encode_message(send(3, 42), metadata(42), payload);
  const Frame decoded = decode_frame(frame);
  EXPECT_EQ(decoded.command.type(), pb::BaseCommand::SEND);
  EXPECT_EQ(decoded.command.send().producer_id(), 3U);
  EXPECT_EQ(decoded.command.send().sequence_id(), 42U);
  // [magic 0x0e01][CRC32C of the rest][metadata size][metadata][payload]
  const std::string& section = decoded.payload_section;
  ASSERT_GE(section.size(), 10U);
  EXPECT_EQ(section.substr(0, 2), raw({0x0e, 0x01}));
  EXPECT_EQ(read_u32(section, 2), crc32c(std::string_view(section).substr(6)));
  const Message message = decode_message(section);
  EXPECT_FALSE(message.broker_entry);
  EXPECT_EQ(message.metadata.sequence_id(), 42U);
  EXPECT_EQ(message.metadata.producer_name(), "standalone-0-1");
  ASSERT_EQ(message.metadata.properties_size(), 1);
  EXPECT_EQ(message.metadata.properties(0).value(), "urn:bq:job:orders.created:v1");
  EXPECT_EQ(message.payload, payload);
}

TEST(Frame, EmptyAndBinaryPayloadsRoundTrip) {
  for (const std::string& payload : {std::string(), raw({0, 0xff, 0x0e, 0x01, 0, 0x80})}) {
    const Message message = decode_message(
        decode_frame(encode_message(send(1, 1), metadata(1), payload)).payload_section);
    EXPECT_EQ(message.payload, payload);
  }
}

TEST(Frame, BrokerEntryMetadataBeforeTheChecksumIsRead) {
  const std::string plain =
      decode_frame(encode_message(send(1, 5), metadata(5), "body")).payload_section;
  pb::BrokerEntryMetadata entry;
  entry.set_broker_timestamp(123);
  entry.set_index(77);
  std::string section = raw({0x0e, 0x02});
  append_u32(section, static_cast<std::uint32_t>(entry.ByteSizeLong()));
  entry.AppendToString(&section);
  section += plain;
  const Message message = decode_message(section);
  ASSERT_TRUE(message.broker_entry);
  EXPECT_EQ(message.broker_entry->index(), 77U);
  EXPECT_EQ(message.payload, "body");
}

TEST(Frame, ChecksumMismatchIsNamed) {
  std::string section =
      decode_frame(encode_message(send(1, 1), metadata(1), "payload")).payload_section;
  section.back() = 'X';
  EXPECT_THAT(protocol_error([&] { static_cast<void>(decode_message(section)); }),
              HasSubstr("checksum mismatch"));
}

TEST(Frame, MissingMagicIsNamed) {
  std::string section =
      decode_frame(encode_message(send(1, 1), metadata(1), "payload")).payload_section;
  section[1] = 0x07;
  const std::string what = protocol_error([&] { static_cast<void>(decode_message(section)); });
  EXPECT_THAT(what, HasSubstr("checksum magic 0x0e01"));
  EXPECT_THAT(what, HasSubstr("0x0e07"));
}

TEST(Frame, MetadataSizeBeyondTheFrameIsNamed) {
  std::string checked;
  append_u32(checked, 1000);
  checked += "abc";
  std::string section = raw({0x0e, 0x01});
  append_u32(section, crc32c(checked));
  section += checked;
  EXPECT_THAT(protocol_error([&] { static_cast<void>(decode_message(section)); }),
              HasSubstr("metadata size 1000 exceeds"));
}

TEST(Frame, ShortSectionsAreErrors) {
  const std::string section =
      decode_frame(encode_message(send(1, 1), metadata(1), "p")).payload_section;
  for (std::size_t size = 0; size < section.size(); ++size) {
    EXPECT_THROW(static_cast<void>(decode_message(std::string_view(section).substr(0, size))),
                 ProtocolError)
        << "cut to " << size;
  }
}

TEST(FrameReader, SplitsAStreamFedInAnyPieces) {
  const std::string stream =
      encode_command(ping()) + encode_message(send(9, 1), metadata(1), "first") +
      encode_command(ping()) + encode_message(send(9, 2), metadata(2), std::string(70'000, 'z'));
  for (const std::size_t piece :
       {std::size_t{1}, std::size_t{3}, std::size_t{4096}, stream.size()}) {
    FrameReader reader;
    std::vector<Frame> frames;
    for (std::size_t at = 0; at < stream.size(); at += piece) {
      reader.feed(std::string_view(stream).substr(at, piece));
      while (std::optional<Frame> frame = reader.next())
        frames.push_back(std::move(*frame));
    }
    ASSERT_EQ(frames.size(), 4U) << "pieces of " << piece;
    EXPECT_EQ(frames[0].command.type(), pb::BaseCommand::PING);
    EXPECT_EQ(decode_message(frames[1].payload_section).payload, "first");
    EXPECT_EQ(frames[2].command.type(), pb::BaseCommand::PING);
    EXPECT_EQ(decode_message(frames[3].payload_section).payload, std::string(70'000, 'z'));
    EXPECT_EQ(reader.buffered(), 0U);
  }
}

TEST(FrameReader, WaitsForTheRestOfAFrame) {
  const std::string frame = encode_command(ping());
  FrameReader reader;
  reader.feed(std::string_view(frame).substr(0, frame.size() - 1));
  EXPECT_FALSE(reader.next());
  EXPECT_EQ(reader.buffered(), frame.size() - 1);
  reader.feed(std::string_view(frame).substr(frame.size() - 1));
  EXPECT_TRUE(reader.next());
}

TEST(FrameReader, FrameOverTheMaximumIsAnErrorBeforeItArrives) {
  FrameReader reader(1024);
  std::string header;
  append_u32(header, 1025);
  reader.feed(header);
  EXPECT_THAT(protocol_error([&] { static_cast<void>(reader.next()); }),
              HasSubstr("a frame of 1025 bytes exceeds the maximum of 1024"));
  // Out of step for good: the same error again, whatever follows.
  reader.feed(encode_command(ping()));
  EXPECT_THAT(protocol_error([&] { static_cast<void>(reader.next()); }),
              HasSubstr("exceeds the maximum"));
}

TEST(FrameReader, MaximumFollowsTheBroker) {
  const std::string frame = encode_message(send(1, 1), metadata(1), std::string(2000, 'x'));
  FrameReader reader(100);
  reader.set_max_frame_size(frame.size());
  reader.feed(frame);
  EXPECT_TRUE(reader.next());
}

TEST(FrameReader, BadSizesAndCommandsAreNamed) {
  const auto error_of = [](std::string bytes) {
    FrameReader reader;
    reader.feed(bytes);
    return protocol_error([&] { static_cast<void>(reader.next()); });
  };
  EXPECT_THAT(error_of(raw({0, 0, 0, 2, 0, 0})), HasSubstr("cannot hold its 4-byte command size"));
  EXPECT_THAT(error_of(raw({0, 0, 0, 6, 0, 0, 0, 9, 1, 2})), HasSubstr("command size 9 exceeds"));
  // A length-delimited field whose length runs past the command.
  EXPECT_THAT(error_of(raw({0, 0, 0, 7, 0, 0, 0, 3, 0x12, 0x7f, 0x00})),
              HasSubstr("does not parse"));
  // type = 99, a command type this client does not know.
  EXPECT_THAT(error_of(raw({0, 0, 0, 6, 0, 0, 0, 2, 0x08, 0x63})),
              HasSubstr("without a known type"));
}

TEST(Frame, DecodeFrameWantsExactlyOneFrame) {
  const std::string frame = encode_command(ping());
  EXPECT_THAT(protocol_error([&] { static_cast<void>(decode_frame(frame + "x")); }),
              HasSubstr("frame size field says 9 bytes, 10 follow it"));
  EXPECT_THROW(static_cast<void>(decode_frame(frame.substr(0, 3))), ProtocolError);
}

// Random bytes, and valid frames with random bytes changed: nothing but ProtocolError ever
// comes out (a crash, a hang or another exception fails the test).
TEST(FrameReader, RandomInputNeverCrashes) {
  std::mt19937 random(20261206);
  std::uniform_int_distribution<int> byte(0, 255);
  const std::string valid =
      encode_message(send(4, 4), metadata(4), "payload-bytes") + encode_command(ping());
  for (int round = 0; round < 3000; ++round) {
    std::string input;
    if (round % 2 == 0) {
      const auto size = static_cast<std::size_t>(byte(random)) * 2;
      for (std::size_t i = 0; i < size; ++i)
        input.push_back(static_cast<char>(byte(random)));
      // Small total sizes, so that random frames are complete and get parsed.
      if (input.size() >= 4) input[0] = input[1] = 0;
    } else {
      input = valid;
      for (int flips = 1 + byte(random) % 4; flips > 0; --flips)
        input[static_cast<std::size_t>(byte(random) * 131) % input.size()] =
            static_cast<char>(byte(random));
    }
    FrameReader reader(64 * 1024);
    reader.feed(input);
    try {
      while (std::optional<Frame> frame = reader.next()) {
        if (!frame->payload_section.empty())
          static_cast<void>(decode_message(frame->payload_section));
      }
    } catch (const ProtocolError&) {
      // expected for most inputs
    }
  }
}

}  // namespace
}  // namespace babelqueue::pulsar::wire
