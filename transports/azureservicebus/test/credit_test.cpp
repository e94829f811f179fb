// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// ASB-5, ASB-T6 (issue 12): no prefetch by default. Service Bus locks a message when it is
// transferred, so the receiver holds no credit while no `pop` waits: a `pop` grants one credit
// and drains the link when its wait ends with nothing. The peer's own view (counts: credit held
// by the receiver links, transfers, answered drains, locked messages) is the judge; `prefetch=10`
// is the contrast that shows the same checks fail when credit is held ahead.

#include <babelqueue/azureservicebus/transport.hpp>
#include <babelqueue/json.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include "peer_test.hpp"

namespace babelqueue::azureservicebus::test {
namespace {

using namespace std::chrono_literals;
using babelqueue::testing::eventually;
using babelqueue::testing::kBriefly;
using babelqueue::testing::kWithin;
using babelqueue::testing::pop_message;

constexpr const char* kBodies[] = {"m0", "m1", "m2"};

class Credit : public PeerTest {
 protected:
  // A pop on the still empty entity: the receiver link is open (after CBS) and drained.
  static void open_receiver(Transport& t, const std::string& entity) {
    EXPECT_FALSE(pop_message(t, entity, kBriefly).has_value());
    EXPECT_EQ(count_becomes(entity, "receivers", 1), 1);
    // The link may have opened after that pop's wait: a second pop surely grants and drains.
    EXPECT_FALSE(pop_message(t, entity, kBriefly).has_value());
    EXPECT_EQ(peer().count(entity, "credit"), 0);
  }
  void enqueue(const std::string& body) {
    peer().control("enqueue " + Json::object({{"entity", queue()}, {"body", body}}).dump());
  }
};

// `hold-drains on` until the end of the scope (the peer is shared by the binary's tests).
struct HeldDrains {
  HeldDrains() { PeerTest::peer().control("hold-drains on"); }
  ~HeldDrains() { PeerTest::peer().control("hold-drains off"); }
  HeldDrains(const HeldDrains&) = delete;
  HeldDrains& operator=(const HeldDrains&) = delete;
};

// ASB-T6: publish 3 while no pop waits: the receiver holds no credit, so nothing can be
// transferred (locked); one pop locks exactly one.
TEST_F(Credit, ASB_T6_NothingIsLockedWhileNoPopWaits) {
  auto t = transport();
  open_receiver(*t, queue());
  for (const char* body : kBodies)
    ASSERT_TRUE(t->publish(queue(), body).ok());
  EXPECT_EQ(count_becomes(queue(), "active", 3), 3);
  // Credit 0 at the peer: no transfer can happen until a pop grants one.
  EXPECT_EQ(peer().count(queue(), "credit"), 0);
  EXPECT_EQ(peer().count(queue(), "locked"), 0);
  EXPECT_EQ(peer().count(queue(), "transferred"), 0);

  auto m = pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->body, "m0");
  EXPECT_EQ(peer().count(queue(), "locked"), 1);
  EXPECT_EQ(peer().count(queue(), "active"), 2);
  EXPECT_EQ(peer().count(queue(), "transferred"), 1);
  EXPECT_EQ(peer().count(queue(), "credit"), 0);
  ASSERT_TRUE(t->ack(*m).ok());
  EXPECT_EQ(count_becomes(queue(), "locked", 0), 0);
  EXPECT_EQ(peer().count(queue(), "transferred"), 1) << "nothing more was transferred";
  EXPECT_EQ(peer().count(queue(), "credit"), 0);
}

// The contrast (prefetch is an option): with credit 10 the peer locks every message at once.
TEST_F(Credit, APrefetchWindowLocksAheadOfThePops) {
  auto t = transport("prefetch=10");
  for (const char* body : kBodies)
    ASSERT_TRUE(t->publish(queue(), body).ok());
  auto m = pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(count_becomes(queue(), "locked", 3), 3) << "the window took all three";
  EXPECT_EQ(peer().count(queue(), "transferred"), 3);
  EXPECT_EQ(count_becomes(queue(), "credit", 8), 8) << "10 granted, 3 used, 1 topped up";
  ASSERT_TRUE(t->ack(*m).ok());
  for (const char* body : {kBodies[1], kBodies[2]}) {
    auto next = pop_message(*t, queue(), kWithin);
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(next->body, body);
    ASSERT_TRUE(t->ack(*next).ok());
  }
  EXPECT_EQ(count_becomes(queue(), "locked", 0), 0);
}

// ASB-T6: a pop that times out on an empty entity drains its credit: the peer answered one drain
// per pop and holds no credit after each.
TEST_F(Credit, ASB_T6_APopThatTimesOutDrainsItsCredit) {
  auto t = transport();
  open_receiver(*t, queue());
  for (int i = 0; i < 3; ++i) {
    const std::int64_t drains = peer().count(queue(), "drains");
    EXPECT_FALSE(pop_message(*t, queue(), 50ms).has_value());
    EXPECT_EQ(peer().count(queue(), "drains"), drains + 1) << "pop " << i;
    EXPECT_EQ(peer().count(queue(), "credit"), 0) << "pop " << i;
    EXPECT_EQ(peer().count(queue(), "draining"), 0) << "pop " << i;
  }
  EXPECT_EQ(peer().count(queue(), "transferred"), 0);
  // And the link still works: a message published now waits unlocked for the next pop.
  ASSERT_TRUE(t->publish(queue(), "late").ok());
  EXPECT_EQ(count_becomes(queue(), "active", 1), 1);
  EXPECT_EQ(peer().count(queue(), "locked"), 0);
  auto m = pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->body, "late");
  ASSERT_TRUE(t->ack(*m).ok());
}

// A message the peer transfers while the drain of a timed-out pop is in flight is not lost and
// not left locked unseen: that pop returns it.
TEST_F(Credit, AMessageArrivingDuringTheDrainIsReturned) {
  auto t = transport();
  open_receiver(*t, queue());
  const HeldDrains held;
  auto popped = std::async(std::launch::async, [&] { return pop_message(*t, queue(), 50ms); });
  // The pop's wait ended and its drain request reached the peer, which holds the answer.
  ASSERT_TRUE(eventually([&] { return peer().count(queue(), "draining") == 1; }, kWithin));
  enqueue("during the drain");
  ASSERT_EQ(popped.wait_for(kWithin), std::future_status::ready);
  const std::optional<ReceivedMessage> m = popped.get();
  ASSERT_TRUE(m.has_value()) << "the message sent against the draining credit was dropped";
  EXPECT_EQ(m->body, "during the drain");
  EXPECT_EQ(peer().count(queue(), "locked"), 1);
  EXPECT_EQ(peer().count(queue(), "credit"), 0);
  ASSERT_TRUE(t->ack(*m).ok());
  EXPECT_EQ(count_becomes(queue(), "active", 0), 0);
  EXPECT_EQ(peer().count(queue(), "locked"), 0);
}

// The wait for a drain is bounded by `timeout`: a peer that never answers costs a pop that long,
// not forever; when the answer comes later the credit is gone and the next pop works.
TEST_F(Credit, AnUnansweredDrainIsWaitedForAtMostTheTimeout) {
  auto t = transport("timeout=1000");
  open_receiver(*t, queue());
  {
    const HeldDrains held;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(pop_message(*t, queue(), 50ms).has_value());
    EXPECT_LT(std::chrono::steady_clock::now() - start, kWithin);
    EXPECT_EQ(peer().count(queue(), "draining"), 1) << "the drain is still unanswered";
  }
  EXPECT_EQ(count_becomes(queue(), "credit", 0), 0) << "answered once released";
  EXPECT_EQ(count_becomes(queue(), "draining", 0), 0);
  enqueue("after");
  EXPECT_EQ(count_becomes(queue(), "active", 1), 1);
  EXPECT_EQ(peer().count(queue(), "transferred"), 0) << "no credit was left behind";
  auto m = pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->body, "after");
  ASSERT_TRUE(t->ack(*m).ok());
}

}  // namespace
}  // namespace babelqueue::azureservicebus::test
