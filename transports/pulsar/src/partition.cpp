// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "partition.hpp"

#include <bit>

namespace babelqueue::pulsar {
namespace {

constexpr std::uint32_t kC1 = 0xcc9e2d51U;
constexpr std::uint32_t kC2 = 0x1b873593U;

std::uint32_t mix_block(std::uint32_t k) noexcept {
  k *= kC1;
  k = std::rotl(k, 15);
  return k * kC2;
}

std::uint32_t byte_at(std::string_view bytes, std::size_t i) noexcept {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i]));
}

}  // namespace

std::uint32_t murmur3_32(std::string_view bytes, std::uint32_t seed) noexcept {
  std::uint32_t h = seed;
  const std::size_t blocks = bytes.size() / 4;
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t i = b * 4;
    // Little-endian blocks, whatever the host's byte order.
    const std::uint32_t k = byte_at(bytes, i) | (byte_at(bytes, i + 1) << 8U) |
                            (byte_at(bytes, i + 2) << 16U) | (byte_at(bytes, i + 3) << 24U);
    h ^= mix_block(k);
    h = std::rotl(h, 13);
    h = h * 5 + 0xe6546b64U;
  }
  const std::size_t tail = blocks * 4;
  std::uint32_t k = 0;
  switch (bytes.size() & 3U) {
    case 3:
      k ^= byte_at(bytes, tail + 2) << 16U;
      [[fallthrough]];
    case 2:
      k ^= byte_at(bytes, tail + 1) << 8U;
      [[fallthrough]];
    case 1:
      k ^= byte_at(bytes, tail);
      h ^= mix_block(k);
      break;
    default:
      break;
  }
  h ^= static_cast<std::uint32_t>(bytes.size());
  h ^= h >> 16U;
  h *= 0x85ebca6bU;
  h ^= h >> 13U;
  h *= 0xc2b2ae35U;
  h ^= h >> 16U;
  return h;
}

std::uint32_t partition_of_key(std::string_view key, std::uint32_t partitions) noexcept {
  return (murmur3_32(key) & 0x7fffffffU) % partitions;
}

std::string partition_topic(std::string_view topic, std::uint32_t n) {
  std::string out(topic);
  out += "-partition-";
  out += std::to_string(n);
  return out;
}

}  // namespace babelqueue::pulsar
