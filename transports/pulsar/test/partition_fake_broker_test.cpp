// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// PulsarTransport on the scripted fake broker (testing/peers/pulsar) for what a real broker
// cannot be made to show on demand (issue 13): a partitioned topic that grows while the
// connection is cut. The transport asks PARTITIONED_METADATA again after the reconnect, publishes
// to the new partition and consumes it too.

#include <babelqueue/json.hpp>
#include <babelqueue/pulsar/transport.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>

#include "fake_broker.hpp"

namespace babelqueue::pulsar::test {
namespace {

using std::chrono::milliseconds;

const std::string kQueue = "grows";
const std::string kTopic = "persistent://public/default/grows";

// "m<i>" (appended: GCC 12 warns wrongly, -Wrestrict, of body(i)).
std::string body(int i) {
  std::string out = "m";
  out += std::to_string(i);
  return out;
}

std::int64_t entries(const FakeBroker& fake, int partition) {
  std::string command = "stats " + kTopic + "-partition-";
  command += std::to_string(partition);
  return FakeBroker::number(fake.control(command), {"entries"});
}

TEST(PulsarTransportOnFakeBroker, APartitionAddedWhileDisconnectedIsUsedAfterTheReconnect) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const FakeBroker fake;
  fake.control("partition " + kTopic + " 2");
  PulsarTransport t(fake.url() + "?timeout=10000&ack_batch=1");
  for (int i = 0; i < 4; ++i)
    ASSERT_TRUE(t.publish(kQueue, body(i)).ok());
  EXPECT_EQ(entries(fake, 0), 2);  // round robin
  EXPECT_EQ(entries(fake, 1), 2);
  std::set<std::string> acked;
  for (int i = 0; i < 2; ++i) {
    auto got = t.pop(kQueue, milliseconds(10'000));
    ASSERT_TRUE(got.has_value() && got->has_value());
    ASSERT_TRUE(t.ack(**got).ok());
    acked.insert((*got)->body);
  }
  ASSERT_TRUE(t.flush().ok());

  fake.control("partition " + kTopic + " 3");
  fake.control("drop");
  for (int i = 4; i < 10; ++i)
    ASSERT_TRUE(t.publish(kQueue, body(i)).ok()) << i;
  EXPECT_GE(entries(fake, 2), 1) << "nothing was published to the new partition";
  EXPECT_EQ(entries(fake, 0) + entries(fake, 1) + entries(fake, 2), 10);

  // Every message not acked before the cut comes (again) through the consumers of all three.
  std::set<std::string> expected;
  for (int i = 0; i < 10; ++i) {
    if (!acked.contains(body(i))) expected.insert(body(i));
  }
  std::set<std::string> got;
  while (got != expected) {
    auto m = t.pop(kQueue, milliseconds(10'000));
    ASSERT_TRUE(m.has_value()) << m.error().what();
    ASSERT_TRUE(m->has_value()) << got.size() << " of " << expected.size() << " came";
    EXPECT_FALSE(acked.contains((*m)->body)) << (*m)->body << " was acked before";
    got.insert((*m)->body);
    ASSERT_TRUE(t.ack(**m).ok());
  }
  EXPECT_TRUE(t.flush().ok());
}

// Three partitions with three messages each, all prefetched: pops take from the partitions in
// turn (the one after the partition that gave the last message first), so none waits for
// another to be drained.
TEST(PulsarTransportOnFakeBroker, PopsTakeFromThePartitionsInTurn) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const FakeBroker fake;
  fake.control("partition " + kTopic + " 3");
  for (int p = 0; p < 3; ++p) {
    for (int i = 0; i < 3; ++i) {
      std::string topic = kTopic + "-partition-";
      topic += std::to_string(p);
      fake.enqueue(Json::object({{"topic", topic}, {"payload", std::to_string(p)}}));
    }
  }
  PulsarTransport t(fake.url() + "?timeout=10000");
  auto first = t.pop(kQueue, milliseconds(10'000));
  ASSERT_TRUE(first.has_value() && first->has_value());
  // Wait until every partition's consumer holds its messages.
  const auto delivered = [&](int p) {
    std::string command = "stats " + kTopic + "-partition-";
    command += std::to_string(p);
    command += " babelqueue";
    return FakeBroker::number(fake.control(command),
                              {"subscriptions", "babelqueue", "consumers", "0", "delivered"});
  };
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (delivered(0) + delivered(1) + delivered(2) < 9) {
    ASSERT_LT(std::chrono::steady_clock::now(), until) << "not every message was prefetched";
    std::this_thread::sleep_for(milliseconds(10));
  }
  const int last = std::stoi((*first)->body);
  for (int n = 1; n <= 8; ++n) {
    auto m = t.pop(kQueue, milliseconds(10'000));
    ASSERT_TRUE(m.has_value() && m->has_value());
    EXPECT_EQ(std::stoi((*m)->body), (last + n) % 3) << "pop " << n;
  }
}

}  // namespace
}  // namespace babelqueue::pulsar::test
