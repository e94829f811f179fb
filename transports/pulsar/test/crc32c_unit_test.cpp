// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "crc32c.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace babelqueue::pulsar::wire {
namespace {

std::string bytes(std::size_t size, unsigned char (*at)(std::size_t)) {
  std::string out;
  for (std::size_t i = 0; i < size; ++i)
    out.push_back(static_cast<char>(at(i)));
  return out;
}

// The check value of CRC-32C and the iSCSI test vectors (RFC 3720, B.4).
TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(crc32c(""), 0x00000000U);
  EXPECT_EQ(crc32c("123456789"), 0xE3069283U);
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAU);
  EXPECT_EQ(crc32c(std::string(32, '\xff')), 0x62A8AB43U);
  EXPECT_EQ(crc32c(bytes(32, [](std::size_t i) { return static_cast<unsigned char>(i); })),
            0x46DD794EU);
  EXPECT_EQ(crc32c(bytes(32, [](std::size_t i) { return static_cast<unsigned char>(31 - i); })),
            0x113FDB5CU);
}

// Slice-by-8 and the byte loop agree at every length and alignment, and a CRC continues.
TEST(Crc32c, ContinuesAcrossPiecesAndAlignments) {
  const std::string data =
      bytes(301, [](std::size_t i) { return static_cast<unsigned char>(i * 7 + 3); });
  const std::uint32_t whole = crc32c(data);
  for (std::size_t cut = 0; cut <= data.size(); ++cut) {
    const std::string_view view(data);
    ASSERT_EQ(crc32c(view.substr(cut), crc32c(view.substr(0, cut))), whole) << "cut at " << cut;
  }
  std::uint32_t bytewise = 0;
  for (const char c : data)
    bytewise = crc32c(std::string_view(&c, 1), bytewise);
  EXPECT_EQ(bytewise, whole);
}

TEST(Crc32c, DetectsASingleFlippedBit) {
  std::string data(100, 'a');
  const std::uint32_t original = crc32c(data);
  data[57] = static_cast<char>(data[57] ^ 0x10);
  EXPECT_NE(crc32c(data), original);
}

}  // namespace
}  // namespace babelqueue::pulsar::wire
