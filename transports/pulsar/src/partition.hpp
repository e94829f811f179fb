// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

/// @file
/// Partitioned topics (issue 13): partition N of a topic is the topic `<topic>-partition-N`, and
/// a message with a key goes to the partition its key hashes to, as Pulsar's clients route with
/// the Murmur3_32Hash hashing scheme (the scheme Pulsar recommends for routing that agrees
/// across client languages): MurmurHash3 x86 32-bit, seed 0, of the key's bytes, its top bit
/// cleared, modulo the partition count.

namespace babelqueue::pulsar {

/// MurmurHash3 x86 32-bit of `bytes` with `seed`.
[[nodiscard]] std::uint32_t murmur3_32(std::string_view bytes, std::uint32_t seed = 0) noexcept;

/// The partition (0..partitions-1) of a message with `key`: (murmur3_32(key) & 0x7fffffff) %
/// partitions. `partitions` > 0.
[[nodiscard]] std::uint32_t partition_of_key(std::string_view key,
                                             std::uint32_t partitions) noexcept;

/// `<topic>-partition-<n>`.
[[nodiscard]] std::string partition_topic(std::string_view topic, std::uint32_t n);

}  // namespace babelqueue::pulsar
