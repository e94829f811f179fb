// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "compression.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <zlib.h>

#include <random>
#include <string>

namespace babelqueue::pulsar::wire {
namespace {

using ::testing::HasSubstr;

constexpr std::size_t kMax = 1U << 20;

const pb::CompressionType kCompressed[] = {pb::LZ4, pb::ZLIB, pb::ZSTD, pb::SNAPPY};

std::string raw(std::initializer_list<unsigned> values) {
  std::string out;
  for (const unsigned value : values)
    out.push_back(static_cast<char>(value));
  return out;
}

std::string error_of(int type, std::string_view data, std::size_t size, std::size_t max = kMax) {
  try {
    static_cast<void>(decompress(type, data, size, max));
  } catch (const ProtocolError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no ProtocolError";
  return {};
}

std::string sample(std::size_t size) {
  std::string text;
  while (text.size() < size)
    text += R"({"job":"urn:bq:job:orders.created:v1","meta":{"id":")" +
            std::to_string(text.size()) + "\"}}";
  text.resize(size);
  return text;
}

TEST(Compression, EveryTypeRoundTrips) {
  for (const pb::CompressionType type : kCompressed) {
    for (const std::size_t size :
         {std::size_t{0}, std::size_t{1}, std::size_t{5000}, std::size_t{300'000}}) {
      const std::string data = sample(size);
      const std::string packed = compress(type, data);
      if (size == 300'000) {
        EXPECT_LT(packed.size(), size / 4) << compression_name(type);
      }
      EXPECT_EQ(decompress(type, packed, size, kMax), data)
          << compression_name(type) << " of " << size << " bytes";
    }
  }
  EXPECT_EQ(compress(pb::NONE, "as is"), "as is");
  EXPECT_EQ(decompress(pb::NONE, "as is", 0, 0), "as is");
}

// The formats Pulsar's clients write, from bytes the formats define: an LZ4 block (token 0x50:
// five literals, no frame magic 04 22 4d 18), raw Snappy (varint length, literal tag), a zlib
// stream (header 78 9c) and a Zstandard frame (magic 28 b5 2f fd).
TEST(Compression, ReadsTheWireFormats) {
  EXPECT_EQ(decompress(pb::LZ4, raw({0x50, 'h', 'e', 'l', 'l', 'o'}), 5, kMax), "hello");
  EXPECT_EQ(decompress(pb::SNAPPY, raw({0x05, 0x10, 'h', 'e', 'l', 'l', 'o'}), 5, kMax), "hello");
  EXPECT_EQ(decompress(
                pb::ZLIB,
                raw({0x78, 0x9c, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0x06, 0x2c, 0x02, 0x15}),
                5, kMax),
            "hello");
  EXPECT_EQ(compress(pb::LZ4, "hello"), raw({0x50, 'h', 'e', 'l', 'l', 'o'}));
  EXPECT_EQ(compress(pb::SNAPPY, "hello"), raw({0x05, 0x10, 'h', 'e', 'l', 'l', 'o'}));
  EXPECT_EQ(compress(pb::ZLIB, "hello").substr(0, 2), raw({0x78, 0x9c}));
  EXPECT_EQ(compress(pb::ZSTD, "hello").substr(0, 4), raw({0x28, 0xb5, 0x2f, 0xfd}));
}

// What the Java client writes: a zlib stream ended by a sync flush, no final block, no Adler-32.
TEST(Compression, ZlibStreamEndedBySyncFlushIsRead) {
  const std::string data = sample(10'000);
  z_stream stream{};
  ASSERT_EQ(deflateInit(&stream, Z_DEFAULT_COMPRESSION), Z_OK);
  std::string packed(deflateBound(&stream, data.size()) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(packed.data());
  stream.avail_out = static_cast<uInt>(packed.size());
  ASSERT_EQ(deflate(&stream, Z_SYNC_FLUSH), Z_OK);
  packed.resize(packed.size() - stream.avail_out);
  deflateEnd(&stream);
  // A sync flush ends with an empty stored block: 00 00 ff ff.
  ASSERT_EQ(packed.substr(packed.size() - 4), raw({0, 0, 0xff, 0xff}));
  EXPECT_EQ(decompress(pb::ZLIB, packed, data.size(), kMax), data);
  EXPECT_THROW(static_cast<void>(decompress(pb::ZLIB, packed, data.size() + 1, kMax)),
               ProtocolError);
}

TEST(Compression, WrongUncompressedSizeIsNamed) {
  const std::string data = sample(1000);
  for (const pb::CompressionType type : kCompressed) {
    const std::string packed = compress(type, data);
    for (const std::size_t size : {std::size_t{999}, std::size_t{1001}}) {
      const std::string what = error_of(type, packed, size);
      EXPECT_THAT(what, HasSubstr(compression_name(type) + " payload")) << what;
    }
  }
}

TEST(Compression, SizeOverTheMaximumIsRefusedFirst) {
  for (const pb::CompressionType type : kCompressed) {
    EXPECT_THAT(error_of(type, "x", std::size_t{1} << 40, kMax),
                HasSubstr("uncompressed size 1099511627776 exceeds the maximum of 1048576"));
  }
}

TEST(Compression, UnknownTypeIsNamed) {
  EXPECT_THAT(error_of(9, "x", 1), HasSubstr("compression type 9 payload: unknown to this client"));
}

TEST(Compression, CorruptDataIsAnError) {
  const std::string data = sample(4000);
  std::mt19937 random(7);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const pb::CompressionType type : kCompressed) {
    const std::string packed = compress(type, data);
    EXPECT_THROW(
        static_cast<void>(decompress(type, packed.substr(0, packed.size() / 2), data.size(), kMax)),
        ProtocolError)
        << compression_name(type);
    // Changed bytes either fail or give some bytes of the promised size: never a crash.
    for (int round = 0; round < 500; ++round) {
      std::string input = packed;
      for (int flips = 1 + byte(random) % 3; flips > 0; --flips)
        input[static_cast<std::size_t>(byte(random) * 17) % input.size()] =
            static_cast<char>(byte(random));
      try {
        ASSERT_EQ(decompress(type, input, data.size(), kMax).size(), data.size());
      } catch (const ProtocolError&) {
        // expected for most inputs
      }
    }
  }
}

}  // namespace
}  // namespace babelqueue::pulsar::wire
