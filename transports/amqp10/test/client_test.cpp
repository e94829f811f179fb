// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The AMQP 1.0 layer against a real Apache ActiveMQ Artemis broker (issue 12): send and
// receive, the prefetch window, every settle outcome, reconnect after the broker's kill -9 and
// restart (old deliveries refused, never settled on the new connection), close.

#include <babelqueue/amqp10/client.hpp>
#include <babelqueue/testing/contract.hpp>
#include <babelqueue/testing/fault_kit.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "artemis_server.hpp"
#include "raw_amqp10.hpp"

namespace babelqueue::amqp10::test {
namespace {

using babelqueue::testing::eventually;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr milliseconds kWait{30'000};
constexpr milliseconds kShort{300};

Options options_for(const ArtemisServer& server, std::uint32_t prefetch = 100) {
  Options o;
  o.host = "127.0.0.1";
  o.port = server.port();
  if (!server.anonymous()) {
    o.user = std::string(ArtemisServer::kUser);
    o.password = std::string(ArtemisServer::kPassword);
  }
  o.prefetch = prefetch;
  o.capabilities = {"queue"};
  o.timeout = kWait;
  return o;
}

RawAmqp10 raw_for(const ArtemisServer& server) {
  return server.anonymous() ? RawAmqp10(server.host_port(), "", "")
                            : RawAmqp10(server.host_port(), std::string(ArtemisServer::kUser),
                                        std::string(ArtemisServer::kPassword));
}

// `prefix` and `i`, appended piece by piece: GCC 12 -O2 reports a bogus -Wrestrict for
// `"m" + std::to_string(i)`.
std::string numbered(std::string prefix, int i) {
  prefix += std::to_string(i);
  return prefix;
}

Message text(const std::string& body) {
  Message m;
  m.body = body;
  m.body_kind = BodyKind::StringValue;
  return m;
}

class Amqp10OnArtemis : public ::testing::Test {
 protected:
  void SetUp() override {
    BABELQUEUE_REQUIRE_ARTEMIS();
    queue_ = babelqueue::testing::unique_queue_name();
  }
  static ArtemisServer& server() { return shared_artemis_server(); }
  const std::string& queue() const { return queue_; }

 private:
  std::string queue_;
};

TEST_F(Amqp10OnArtemis, RoundTripKeepsEveryField) {
  Client client(options_for(server()));
  Message m;
  m.body = "{\"job\":\"urn:babel:orders:created\"}";
  m.body_kind = BodyKind::StringValue;
  m.correlation_id = "7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b";
  m.creation_time_ms = 1749132727000;
  m.annotations = {{"x-opt-jms-type", std::string("urn:babel:orders:created")}};
  m.properties = {{"bq_schema_version", std::string("1")}, {"bq_attempts", std::string("0")}};
  client.send(queue(), m);
  Message data;
  data.body = std::string("\xff\x00raw", 5);
  client.send(queue(), data);

  std::optional<Delivery> first = client.receive(queue(), kWait);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->connection(), 1U);
  const Message& got = first->message();
  EXPECT_EQ(got.body, m.body);
  EXPECT_EQ(got.body_kind, BodyKind::StringValue);
  EXPECT_TRUE(got.durable);
  EXPECT_EQ(got.delivery_count, 0U);
  EXPECT_EQ(got.correlation_id, m.correlation_id);
  EXPECT_EQ(got.creation_time_ms, m.creation_time_ms);
  EXPECT_EQ(got.annotations.at("x-opt-jms-type"), Value(std::string("urn:babel:orders:created")));
  EXPECT_EQ(got.properties, m.properties);
  first->accept();
  std::optional<Delivery> second = client.receive(queue(), kWait);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->message().body, data.body);
  EXPECT_EQ(second->message().body_kind, BodyKind::Data);
  second->accept();
  EXPECT_FALSE(client.receive(queue(), kShort).has_value());
  EXPECT_EQ(raw_for(server()).message_count(queue()), 0);
}

TEST_F(Amqp10OnArtemis, ReceiverCreditIsThePrefetchWindow) {
  const RawAmqp10 raw = raw_for(server());
  for (int i = 0; i < 10; ++i)
    raw.send(queue(), RawMessage{.body = numbered("m", i)});
  Client client(options_for(server(), 3));
  std::optional<Delivery> first = client.receive(queue(), kWait);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->message().body, "m0");
  // One handed out gave one credit back; the window is full again when the credit is 0:
  // 1 handed out + 3 buffered.
  EXPECT_TRUE(eventually([&] { return client.receiver_credit(queue()) == 0; }, kWait));
  // Another consumer gets the 6 that are not in our window.
  EXPECT_EQ(raw.receive(queue(), 10, milliseconds(1'000)).size(), 6U);
  first->accept();
  for (const char* expected : {"m1", "m2", "m3"}) {
    std::optional<Delivery> d = client.receive(queue(), kWait);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->message().body, expected);
    d->accept();
  }
  EXPECT_EQ(client.receiver_credit(numbered("not-", 0)), -1);
}

// Prefetch 0 (explicit credit, ASB-5): no credit while no receive waits, one per waiting
// receive, drained when it times out; another consumer gets what this one does not hold.
TEST_F(Amqp10OnArtemis, ExplicitCreditHoldsNothingWhileNoReceiveWaits) {
  const RawAmqp10 raw = raw_for(server());
  Client client(options_for(server(), 0));
  EXPECT_FALSE(client.receive(queue(), kShort).has_value());
  EXPECT_FALSE(client.receive(queue(), kShort).has_value());
  EXPECT_EQ(client.receiver_credit(queue()), 0) << "drained after the timed-out receive";
  for (int i = 0; i < 3; ++i)
    raw.send(queue(), RawMessage{.body = numbered("m", i)});
  std::optional<Delivery> first = client.receive(queue(), kWait);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->message().body, "m0");
  EXPECT_EQ(client.receiver_credit(queue()), 0);
  EXPECT_EQ(raw.receive(queue(), 10, milliseconds(1'000)).size(), 2U) << "we held only one";
  first->accept();
  EXPECT_FALSE(client.receive(queue(), kShort).has_value());
  EXPECT_EQ(client.receiver_credit(queue()), 0);
}

TEST_F(Amqp10OnArtemis, SettleOutcomes) {
  Client client(options_for(server()));
  client.send(queue(), text("x"));
  auto next = [&] {
    std::optional<Delivery> d = client.receive(queue(), kWait);
    if (!d) throw std::runtime_error("no delivery");
    return std::move(*d);
  };
  Delivery d = next();
  EXPECT_EQ(d.message().delivery_count, 0U);
  d.modify(true);  // the rewind (ART-8): delivery-count + 1
  d = next();
  EXPECT_EQ(d.message().delivery_count, 1U);
  d.modify(false);  // not failed: no count
  d = next();
  EXPECT_EQ(d.message().delivery_count, 1U);
  d.release();  // no count
  d = next();
  EXPECT_EQ(d.message().delivery_count, 1U);
  EXPECT_EQ(d.message().body, "x");
  d.modify(true);
  d = next();
  EXPECT_EQ(d.message().delivery_count, 2U);
  d.accept();
  // A delivery settled once refuses the next settle.
  EXPECT_THROW(d.accept(), TransportError);
  EXPECT_FALSE(client.receive(queue(), kShort).has_value());

  // rejected with a condition: the broker drops it from the queue (to its own DLQ address).
  client.send(queue(), text("poison"));
  d = next();
  // A reject whose info cannot be sent settles nothing.
  EXPECT_THROW(d.reject("babelqueue:poison", "x", {{"k", Other{"symbol"}}}), ConfigError);
  d.reject("babelqueue:poison", "not decodable", {{"reason", std::string("test")}});
  EXPECT_FALSE(client.receive(queue(), kShort).has_value());
  EXPECT_EQ(raw_for(server()).message_count(queue()), 0);
}

// browse reads the queue head first without taking anything (a copy-mode receiver that drains
// its credit: the end of the queue is the broker's answer), and settles hand over without waiting;
// flush() returns once they went out.
TEST_F(Amqp10OnArtemis, BrowseTakesNothingAndFlushSendsTheSettles) {
  Client client(options_for(server()));
  EXPECT_TRUE(client.browse(queue(), 0).empty());
  for (int i = 0; i < 3; ++i)
    client.send(queue(), text(numbered("m", i)));
  const std::vector<Message> all = client.browse(queue(), 0);
  ASSERT_EQ(all.size(), 3U);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(all[static_cast<std::size_t>(i)].body, numbered("m", i));
  const std::vector<Message> two = client.browse(queue(), 2);
  ASSERT_EQ(two.size(), 2U);
  EXPECT_EQ(two[1].body, "m1");
  EXPECT_EQ(raw_for(server()).message_count(queue()), 3);
  for (const char* expected : {"m0", "m1", "m2"}) {
    std::optional<Delivery> d = client.receive(queue(), kWait);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->message().body, expected);
    EXPECT_EQ(d->message().delivery_count, 0U) << "the browse counted as a delivery";
    d->accept();
  }
  client.flush();
  EXPECT_TRUE(eventually([&] { return raw_for(server()).message_count(queue()) == 0; }, kWait));
}

TEST_F(Amqp10OnArtemis, SendsAreConcurrentAndEachWaitsForItsOutcome) {
  Client client(options_for(server()));
  std::vector<std::thread> senders;
  for (int t = 0; t < 4; ++t) {
    senders.emplace_back([&client, t, this] {
      for (int i = 0; i < 25; ++i)
        client.send(queue(), text(numbered(numbered("", t) + "-", i)));
    });
  }
  for (std::thread& s : senders)
    s.join();
  // Every send returned after its accepted outcome: all 100 are in the queue now.
  EXPECT_EQ(raw_for(server()).message_count(queue()), 100);
  EXPECT_EQ(raw_for(server()).receive(queue(), 100, kWait).size(), 100U);
}

TEST_F(Amqp10OnArtemis, WrongPasswordFailsTheSendWithATimeoutNamingNoSecret) {
  Options o = options_for(server());
  o.password = "wrong-secret";
  o.timeout = milliseconds(500);
  Client client(o);
  try {
    client.send(queue(), text("x"));
    ADD_FAILURE() << "sent with a wrong password";
  } catch (const TimeoutError& e) {
    EXPECT_EQ(std::string(e.what()).find("wrong-secret"), std::string::npos) << e.what();
    // Why it did not connect: the broker's SASL outcome.
    EXPECT_NE(std::string(e.what()).find("the last connection failed"), std::string::npos)
        << e.what();
  }
}

TEST_F(Amqp10OnArtemis, CloseWakesABlockedReceiveAndDetaches) {
  Client client(options_for(server()));
  client.send(queue(), text("kept"));
  std::optional<Delivery> held = client.receive(queue(), kWait);
  ASSERT_TRUE(held.has_value());
  std::optional<std::string> error;
  std::thread blocked([&] {
    try {
      static_cast<void>(client.receive(queue(), std::chrono::minutes(1)));
    } catch (const ClosedError& e) {
      error = e.what();
    }
  });
  std::this_thread::sleep_for(milliseconds(100));  // let it block
  const auto closing = Clock::now();
  client.close();
  blocked.join();
  EXPECT_LT(Clock::now() - closing, milliseconds(5'000));
  EXPECT_TRUE(error.has_value());
  EXPECT_THROW(client.send(queue(), text("y")), ClosedError);
  EXPECT_THROW(held->accept(), StaleDeliveryError);
  // The unsettled message went back to the queue when the link detached.
  const std::vector<RawMessage> back = raw_for(server()).receive(queue(), 1, kWait);
  ASSERT_EQ(back.size(), 1U);
  EXPECT_EQ(back[0].body, "kept");
}

TEST(Amqp10OnOwnArtemis, ReconnectsAfterKillNineAndNeverSettlesOldDeliveries) {
  BABELQUEUE_REQUIRE_ARTEMIS();
  ArtemisServer server;
  const std::string queue = "reconnect";
  Options o = options_for(server);
  o.reconnect_cap = milliseconds(500);
  Client client(o);
  client.send(queue, text("durable-1"));
  client.send(queue, text("durable-2"));
  std::optional<Delivery> old = client.receive(queue, kWait);
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->connection(), 1U);

  server.kill();
  server.restart();
  // A send after the restart goes out on a new connection (the layer reconnected).
  client.send(queue, text("after"));
  EXPECT_GE(client.connection(), 2U);
  // The delivery of the dead connection is refused, not settled on the new one.
  try {
    old->accept();
    ADD_FAILURE() << "settled a delivery of the dead connection";
  } catch (const StaleDeliveryError& e) {
    EXPECT_EQ(e.code(), ErrorCode::StaleDelivery);
    EXPECT_FALSE(e.is_transient());
  }
  // Both durable messages come again (the first was never settled), then the new one: nothing
  // lost.
  std::vector<std::string> bodies;
  while (bodies.size() < 3) {
    std::optional<Delivery> d = client.receive(queue, kWait);
    ASSERT_TRUE(d.has_value()) << "got only " << bodies.size();
    EXPECT_GE(d->connection(), 2U);
    bodies.push_back(d->message().body);
    d->accept();
  }
  std::sort(bodies.begin(), bodies.end());
  EXPECT_EQ(bodies, (std::vector<std::string>{"after", "durable-1", "durable-2"}));
  EXPECT_FALSE(client.receive(queue, kShort).has_value());
  EXPECT_EQ(raw_for(server).message_count(queue), 0);
}

}  // namespace
}  // namespace babelqueue::amqp10::test
