// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Partition routing (partition.hpp, issue 13): MurmurHash3 x86 32-bit against the reference
// implementation's published values, the key's partition as Pulsar's Murmur3_32Hash routing
// picks it, and partition topic names.

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "partition.hpp"

namespace babelqueue::pulsar {
namespace {

// The values of Austin Appleby's MurmurHash3_x86_32 (SMHasher) for these inputs and seeds.
TEST(PulsarPartition, Murmur3MatchesTheReferenceValues) {
  EXPECT_EQ(murmur3_32("", 0), 0U);
  EXPECT_EQ(murmur3_32("", 1), 0x514e28b7U);
  EXPECT_EQ(murmur3_32("", 0xffffffffU), 0x81f16f39U);
  EXPECT_EQ(murmur3_32(std::string(4, '\0'), 0), 0x2362f9deU);
  EXPECT_EQ(murmur3_32("a", 0x9747b28cU), 0x7fa09ea6U);
  EXPECT_EQ(murmur3_32("aaaa", 0x9747b28cU), 0x5a97808aU);
  EXPECT_EQ(murmur3_32("abc", 0), 0xb3dd93faU);
  EXPECT_EQ(murmur3_32("Hello, world!", 0x9747b28cU), 0x24884cbaU);
  EXPECT_EQ(murmur3_32("The quick brown fox jumps over the lazy dog", 0x9747b28cU), 0x2fa826cdU);
  // Bytes above 0x7f are unsigned (a signed char would change the tail and the blocks).
  EXPECT_NE(murmur3_32("\xff", 0), murmur3_32("\x7f", 0));
}

// Pulsar's Murmur3_32Hash routing: (murmur3_32(UTF-8 key, seed 0) & 0x7fffffff) % partitions.
TEST(PulsarPartition, AKeysPartitionIsItsMaskedHashModuloThePartitions) {
  for (const std::string key : {"", "abc", "order-1042", "Hello, world!", "\xc3\xa9t\xc3\xa9"}) {
    for (const std::uint32_t n : {1U, 2U, 3U, 7U, 64U}) {
      EXPECT_EQ(partition_of_key(key, n), (murmur3_32(key) & 0x7fffffffU) % n) << key << " " << n;
      EXPECT_LT(partition_of_key(key, n), n);
    }
  }
  EXPECT_EQ(partition_of_key("abc", 3), (0xb3dd93faU & 0x7fffffffU) % 3);
  EXPECT_EQ(partition_of_key("anything", 1), 0U);
}

// What the official Java client 4.2.4 computes for these keys (org.apache.pulsar.client.impl.
// Murmur3Hash32.makeHash, its Murmur3_32Hash routing's hash, run from the broker's jars).
TEST(PulsarPartition, HashesEqualTheJavaClientsMurmur3Hash32) {
  const std::vector<std::pair<std::string, std::uint32_t>> java{{"", 0x0U},
                                                                {"abc", 0x33dd93faU},
                                                                {"order-7", 0x14f7227eU},
                                                                {"customer-42", 0x0d208335U},
                                                                {"a", 0x3c2569b2U},
                                                                {"b", 0x15de7e03U},
                                                                {"\xc3\xa9t\xc3\xa9", 0x3393660fU}};
  for (const auto& [key, hash] : java) {
    EXPECT_EQ(murmur3_32(key) & 0x7fffffffU, hash) << key;
    EXPECT_EQ(partition_of_key(key, 4), hash % 4) << key;
  }
}

TEST(PulsarPartition, KeysSpreadOverEveryPartition) {
  std::set<std::uint32_t> used;
  for (int i = 0; i < 100; ++i)
    used.insert(partition_of_key("key-" + std::to_string(i), 5));
  EXPECT_EQ(used, (std::set<std::uint32_t>{0, 1, 2, 3, 4}));
}

TEST(PulsarPartition, PartitionTopicNames) {
  EXPECT_EQ(partition_topic("persistent://public/default/orders", 0),
            "persistent://public/default/orders-partition-0");
  EXPECT_EQ(partition_topic("orders", 12), "orders-partition-12");
}

}  // namespace
}  // namespace babelqueue::pulsar
