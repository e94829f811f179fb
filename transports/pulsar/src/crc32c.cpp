// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "crc32c.hpp"

#include <array>
#include <cstddef>

namespace babelqueue::pulsar::wire {
namespace {

constexpr std::uint32_t kPolynomial = 0x82F63B78U;

using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

// tables[0] is the byte-at-a-time table; tables[k][b] is the CRC of byte b followed by k zero
// bytes, so eight bytes fold in with eight look-ups (slice-by-8).
constexpr Tables make_tables() {
  Tables tables{};
  for (std::uint32_t byte = 0; byte < 256; ++byte) {
    std::uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc & 1U) != 0 ? (crc >> 1) ^ kPolynomial : crc >> 1;
    tables[0][byte] = crc;
  }
  for (std::size_t byte = 0; byte < 256; ++byte) {
    for (std::size_t slice = 1; slice < 8; ++slice) {
      const std::uint32_t previous = tables[slice - 1][byte];
      tables[slice][byte] = (previous >> 8) ^ tables[0][previous & 0xffU];
    }
  }
  return tables;
}

constexpr Tables kTables = make_tables();

constexpr std::uint32_t load_le32(const unsigned char* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

}  // namespace

std::uint32_t crc32c(std::string_view data, std::uint32_t crc) noexcept {
  crc = ~crc;
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  std::size_t left = data.size();
  while (left >= 8) {
    const std::uint32_t low = crc ^ load_le32(p);
    const std::uint32_t high = load_le32(p + 4);
    crc = kTables[7][low & 0xffU] ^ kTables[6][(low >> 8) & 0xffU] ^
          kTables[5][(low >> 16) & 0xffU] ^ kTables[4][low >> 24] ^ kTables[3][high & 0xffU] ^
          kTables[2][(high >> 8) & 0xffU] ^ kTables[1][(high >> 16) & 0xffU] ^
          kTables[0][high >> 24];
    p += 8;
    left -= 8;
  }
  for (; left > 0; --left, ++p)
    crc = (crc >> 8) ^ kTables[0][(crc ^ *p) & 0xffU];
  return ~crc;
}

}  // namespace babelqueue::pulsar::wire
