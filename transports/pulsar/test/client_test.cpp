// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The private asynchronous Pulsar client (src/client.hpp, issue 13) against the real broker:
// round trips, pipelined sends, the flow window, negative acks, acks across connections, a
// broker killed and restarted mid-run, close() waking a blocked receive, partitioned topics.

#include <babelqueue/testing/command.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client.hpp"
#include "pulsar_server.hpp"

namespace babelqueue::pulsar::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kWait{30'000};

// A topic of its own per test and run (the shared broker keeps what earlier runs left).
std::string fresh_topic(const std::string& name) {
  static const auto run = std::chrono::system_clock::now().time_since_epoch().count();
  return "persistent://public/default/client-" + name + "-" + std::to_string(run);
}

ClientOptions options_for(const PulsarServer& server) {
  ClientOptions options;
  options.service_url = server.service_url();
  options.operation_timeout = kWait;
  return options;
}

Received receive_one(Consumer& consumer) {
  std::optional<Received> message = consumer.receive(kWait);
  if (!message) throw std::runtime_error("no message within 30 s on " + consumer.topic());
  return std::move(*message);
}

TEST(PulsarClient, RoundTripWithPropertiesAndKey) {
  BABELQUEUE_REQUIRE_PULSAR();
  PulsarServer& server = shared_pulsar_server();
  const std::string topic = fresh_topic("round-trip");
  Client client(options_for(server));
  const LookupResult lookup = client.lookup(topic);
  EXPECT_EQ(lookup.broker_url, server.service_url());
  EXPECT_EQ(client.protocol_version(), 21);
  EXPECT_EQ(client.connection(), 1U);
  EXPECT_EQ(client.partitions(topic), 0U);
  auto consumer = client.subscribe(topic, ConsumerOptions{.subscription = "s"});
  auto producer = client.create_producer(topic);
  const MessageId sent =
      producer->send(OutgoingMessage{.payload = std::string("body\0bytes", 10),
                                     .properties = {{"bq-urn", "urn:test:a"}, {"empty", ""}},
                                     .key = "k1"});
  const Received got = receive_one(*consumer);
  EXPECT_EQ(got.payload, std::string("body\0bytes", 10));
  EXPECT_EQ(got.properties,
            (std::map<std::string, std::string>{{"bq-urn", "urn:test:a"}, {"empty", ""}}));
  EXPECT_EQ(got.key, "k1");
  EXPECT_EQ(got.topic, topic);
  EXPECT_EQ(got.id.ledger, sent.ledger);
  EXPECT_EQ(got.id.entry, sent.entry);
  EXPECT_EQ(got.redelivery_count, 0U);
  consumer->ack(got);
  EXPECT_FALSE(consumer->receive(milliseconds(200)).has_value());
}

TEST(PulsarClient, PipelinedSendsAreReceiptedInOrder) {
  BABELQUEUE_REQUIRE_PULSAR();
  PulsarServer& server = shared_pulsar_server();
  const std::string topic = fresh_topic("pipelined");
  Client client(options_for(server));
  auto producer = client.create_producer(topic);
  constexpr int kCount = 300;
  std::vector<std::future<SendResult>> receipts;
  for (int i = 0; i < kCount; ++i) {
    receipts.push_back(producer->send_async(OutgoingMessage{.payload = std::to_string(i)}));
  }
  std::vector<MessageId> ids;
  for (auto& receipt : receipts) {
    ASSERT_EQ(receipt.wait_for(kWait), std::future_status::ready);
    ids.push_back(receipt.get().get());
  }
  for (std::size_t i = 1; i < ids.size(); ++i) {
    EXPECT_TRUE(ids[i - 1].ledger < ids[i].ledger ||
                (ids[i - 1].ledger == ids[i].ledger && ids[i - 1].entry < ids[i].entry))
        << "receipt " << i << " is not after receipt " << i - 1;
  }
  auto consumer = client.subscribe(topic, ConsumerOptions{.subscription = "s", .prefetch = 50});
  for (int i = 0; i < kCount; ++i) {
    const Received got = receive_one(*consumer);
    ASSERT_EQ(got.payload, std::to_string(i));
    EXPECT_EQ(got.id.entry, ids[static_cast<std::size_t>(i)].entry);
    consumer->ack(got);
  }
}

TEST(PulsarClient, FlowWindowLeavesTheRestToAnotherSharedConsumer) {
  BABELQUEUE_REQUIRE_PULSAR();
  PulsarServer& server = shared_pulsar_server();
  const std::string topic = fresh_topic("flow");
  Client client(options_for(server));
  auto producer = client.create_producer(topic);
  for (int i = 0; i < 20; ++i)
    producer->send(OutgoingMessage{.payload = std::to_string(i)});
  auto first = client.subscribe(topic, ConsumerOptions{.subscription = "s", .prefetch = 5});
  const auto deadline = Clock::now() + kWait;
  while (first->buffered() < 5 && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_EQ(first->buffered(), 5U) << "the first consumer's 5 permits were not used";
  auto second = client.subscribe(topic, ConsumerOptions{.subscription = "s", .prefetch = 100});
  std::set<std::string> rest;
  for (int i = 0; i < 15; ++i)
    rest.insert(receive_one(*second).payload);
  EXPECT_EQ(rest.size(), 15U);
  EXPECT_EQ(first->buffered(), 5U) << "the broker sent beyond the window";
  std::set<std::string> all = rest;
  for (int i = 0; i < 5; ++i)
    all.insert(receive_one(*first).payload);
  EXPECT_EQ(all.size(), 20U);
}

TEST(PulsarClient, NegativeAckRedeliversWithCountOne) {
  BABELQUEUE_REQUIRE_PULSAR();
  PulsarServer& server = shared_pulsar_server();
  const std::string topic = fresh_topic("nack");
  Client client(options_for(server));
  auto consumer = client.subscribe(topic, ConsumerOptions{.subscription = "s"});
  auto producer = client.create_producer(topic);
  producer->send(OutgoingMessage{.payload = "again"});
  const Received first = receive_one(*consumer);
  EXPECT_EQ(first.redelivery_count, 0U);
  consumer->negative_ack(first);
  const Received second = receive_one(*consumer);
  EXPECT_EQ(second.payload, "again");
  EXPECT_EQ(second.id, first.id);
  EXPECT_EQ(second.redelivery_count, 1U);
  consumer->ack(second);
}

TEST(PulsarClient, AckedMessagesAreNotRedeliveredToTheNextConnection) {
  BABELQUEUE_REQUIRE_PULSAR();
  PulsarServer& server = shared_pulsar_server();
  const std::string topic = fresh_topic("ack");
  {
    Client client(options_for(server));
    auto consumer = client.subscribe(topic, ConsumerOptions{.subscription = "s"});
    auto producer = client.create_producer(topic);
    for (int i = 0; i < 6; ++i)
      producer->send(OutgoingMessage{.payload = std::to_string(i)});
    for (int i = 0; i < 6; ++i) {
      const Received got = receive_one(*consumer);
      if (got.payload == "1" || got.payload == "4") continue;  // left unacknowledged
      consumer->ack(got);
    }
    client.close();
    EXPECT_THROW(consumer->ack(Received{}), ClosedError);
  }
  Client again(options_for(server));
  auto consumer = again.subscribe(topic, ConsumerOptions{.subscription = "s"});
  std::set<std::string> redelivered;
  redelivered.insert(receive_one(*consumer).payload);
  redelivered.insert(receive_one(*consumer).payload);
  EXPECT_EQ(redelivered, (std::set<std::string>{"1", "4"}));
  EXPECT_FALSE(consumer->receive(milliseconds(500)).has_value());
}

TEST(PulsarClient, CloseWakesABlockedReceive) {
  BABELQUEUE_REQUIRE_PULSAR();
  PulsarServer& server = shared_pulsar_server();
  Client client(options_for(server));
  auto consumer = client.subscribe(fresh_topic("close"), ConsumerOptions{.subscription = "s"});
  std::atomic<bool> entered{false};
  // The outcome as text: an exception does not cross threads (ThreadSanitizer cannot see the C++
  // runtime's reference count of a shared exception object).
  auto blocked = std::async(std::launch::async, [&]() -> std::string {
    entered = true;
    try {
      return consumer->receive(std::chrono::minutes(5)) ? "a message" : "nothing";
    } catch (const ClosedError&) {
      return "closed";
    }
  });
  while (!entered)
    std::this_thread::yield();
  const auto started = Clock::now();
  client.close();
  ASSERT_EQ(blocked.wait_for(kWait), std::future_status::ready);
  EXPECT_EQ(blocked.get(), "closed");
  EXPECT_LT(Clock::now() - started, kWait);
  EXPECT_THROW(consumer->receive(milliseconds(1)), ClosedError);
  client.close();  // idempotent
}

TEST(PulsarClient, PartitionedTopicAcrossPartitions) {
  BABELQUEUE_REQUIRE_PULSAR();
  PulsarServer& server = shared_pulsar_server();
  const std::string name =
      "client-partitioned-" +
      std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
  const std::string topic = "persistent://public/default/" + name;
  ASSERT_EQ(admin_put(server, "/admin/v2/persistent/public/default/" + name + "/partitions", "3"),
            204);
  Client client(options_for(server));
  ASSERT_EQ(client.partitions(topic), 3U);
  std::vector<std::shared_ptr<Consumer>> consumers;
  for (int p = 0; p < 3; ++p) {
    const std::string partition = topic + "-partition-" + std::to_string(p);
    consumers.push_back(client.subscribe(partition, ConsumerOptions{.subscription = "s"}));
    auto producer = client.create_producer(partition);
    for (int i = 0; i < 4; ++i) {
      producer->send(OutgoingMessage{.payload = std::to_string(p) + "/" + std::to_string(i)});
    }
  }
  for (int p = 0; p < 3; ++p) {
    for (int i = 0; i < 4; ++i) {
      const Received got = receive_one(*consumers[static_cast<std::size_t>(p)]);
      EXPECT_EQ(got.payload, std::to_string(p) + "/" + std::to_string(i));
      EXPECT_EQ(got.topic, topic + "-partition-" + std::to_string(p));
      consumers[static_cast<std::size_t>(p)]->ack(got);
    }
  }
}

// A batch of the official Java client (LZ4, 5 entries, support/PulsarJavaPeer.java) arrives as 5
// messages; acking all 5 acks the batch: a later consumer of the subscription gets nothing.
TEST(PulsarClient, BatchedEntriesOfTheJavaClientAreMessagesAckedAsABatch) {
  BABELQUEUE_REQUIRE_PULSAR();
  PulsarServer& server = shared_pulsar_server();
  const std::string prefix = fresh_topic("java-batch") + "-";
  const std::string topic = prefix + "lz4";
  {
    Client client(options_for(server));
    auto consumer = client.subscribe(topic, ConsumerOptions{.subscription = "s", .prefetch = 3});
    const babelqueue::testing::CommandResult peer = babelqueue::testing::run_command(
        {pulsar_java(), "-cp", pulsar_jars() + "/*", BABELQUEUE_PULSAR_JAVA_PEER,
         server.service_url(), prefix, "5", "LZ4"});
    ASSERT_EQ(peer.exit_code, 0) << peer.output;
    ASSERT_NE(peer.output.find("peer: sent 5 LZ4"), std::string::npos) << peer.output;
    for (int i = 0; i < 5; ++i) {
      const Received got = receive_one(*consumer);
      EXPECT_EQ(got.id.batch_index, i);
      EXPECT_EQ(got.id.batch_size, 5);
      EXPECT_EQ(got.payload, "message " + std::to_string(i) + " of LZ4 " + std::string(2048, 'x'));
      EXPECT_EQ(got.properties, (std::map<std::string, std::string>{{"i", std::to_string(i)}}));
      consumer->ack(got);
    }
  }
  Client again(options_for(server));
  auto consumer = again.subscribe(topic, ConsumerOptions{.subscription = "s"});
  EXPECT_FALSE(consumer->receive(milliseconds(500)).has_value()) << "the batch was not acked";
}

// An Exclusive subscription refuses a second consumer: the broker's ConsumerBusy is a transient
// TransportError naming the topic; the subscription type is the one asked for.
TEST(PulsarClient, ExclusiveSubscriptionRefusesASecondConsumer) {
  BABELQUEUE_REQUIRE_PULSAR();
  PulsarServer& server = shared_pulsar_server();
  const std::string topic = fresh_topic("exclusive");
  Client client(options_for(server));
  const ConsumerOptions exclusive{.subscription = "only", .type = SubscriptionType::Exclusive};
  auto first = client.subscribe(topic, exclusive);
  try {
    static_cast<void>(client.subscribe(topic, exclusive));
    ADD_FAILURE() << "a second consumer joined an Exclusive subscription";
  } catch (const TransportError& e) {
    EXPECT_TRUE(e.is_transient()) << e.what();
    EXPECT_NE(std::string(e.what()).find("ConsumerBusy"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(topic), std::string::npos) << e.what();
  }
  // The first consumer still works.
  client.create_producer(topic)->send(OutgoingMessage{.payload = "x"});
  const Received got = receive_one(*first);
  EXPECT_EQ(got.payload, "x");
  first->ack(got);
}

// A topic unload makes the broker send CLOSE_PRODUCER and CLOSE_CONSUMER: both are re-created on
// the same connection; the deliveries of the closed consumer are refused for ack.
TEST(PulsarClient, RecreatesWhatTheBrokerClosesOnUnload) {
  BABELQUEUE_REQUIRE_PULSAR();
  PulsarServer& server = shared_pulsar_server();
  const std::string name =
      "client-unload-" +
      std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
  const std::string topic = "persistent://public/default/" + name;
  Client client(options_for(server));
  auto consumer = client.subscribe(topic, ConsumerOptions{.subscription = "s"});
  auto producer = client.create_producer(topic);
  producer->send(OutgoingMessage{.payload = "first"});
  const Received first = receive_one(*consumer);
  ASSERT_EQ(admin_put(server, "/admin/v2/persistent/public/default/" + name + "/unload", ""), 204);
  const auto deadline = Clock::now() + kWait;
  while (true) {
    try {
      producer->send(OutgoingMessage{.payload = "second"});
      break;
    } catch (const TransportError& e) {
      ASSERT_TRUE(e.is_transient()) << e.what();
      ASSERT_LT(Clock::now(), deadline) << "the producer was not re-created: " << e.what();
      std::this_thread::sleep_for(milliseconds(50));
    }
  }
  EXPECT_THROW(consumer->ack(first), StaleDeliveryError);
  std::set<std::string> received;
  while (received.size() < 2) {
    const Received got = receive_one(*consumer);
    received.insert(got.payload);
    consumer->ack(got);
  }
  EXPECT_EQ(received, (std::set<std::string>{"first", "second"}));
  EXPECT_EQ(client.connection(), 1U)
      << "an unload closes producers and consumers, not the connection";
}

// kill -9 of the broker mid-run and a restart: the client reconnects, re-creates its producer
// and consumer; every message the broker confirmed arrives at least once; a delivery of the dead
// connection is refused for ack (StaleDeliveryError) and redelivered.
TEST(PulsarClient, ReconnectsAfterBrokerKillAndRestart) {
  BABELQUEUE_REQUIRE_PULSAR();
  PulsarServer server;
  const std::string topic = "persistent://public/default/client-kill";
  ClientOptions options = options_for(server);
  options.keepalive = milliseconds(2'000);
  Client client(options);
  auto consumer = client.subscribe(topic, ConsumerOptions{.subscription = "s"});
  auto producer = client.create_producer(topic);
  std::set<std::string> confirmed;
  for (int i = 0; i < 10; ++i) {
    producer->send(OutgoingMessage{.payload = "before-" + std::to_string(i)});
    confirmed.insert("before-" + std::to_string(i));
  }
  const Received old = receive_one(*consumer);
  EXPECT_EQ(client.connection(), 1U);

  server.kill();
  EXPECT_THROW(producer->send(OutgoingMessage{.payload = "lost"}), TransportError);
  server.restart();
  const auto restarted = Clock::now();

  // The caller resends what failed transiently, until the client is back.
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  for (int i = 0; i < 10; ++i) {
    const std::string payload = "after-" + std::to_string(i);
    while (true) {
      try {
        producer->send(OutgoingMessage{.payload = payload});
        confirmed.insert(payload);
        break;
      } catch (const TransportError& e) {
        ASSERT_TRUE(e.is_transient()) << e.what();
        ASSERT_LT(Clock::now(), deadline) << "no reconnect within 120 s: " << e.what();
        std::this_thread::sleep_for(milliseconds(100));
      }
    }
  }
  babelqueue::testing::report_figure(
      "client: broker ready after restart to 10 resent messages receipted",
      std::chrono::duration_cast<milliseconds>(Clock::now() - restarted).count());
  EXPECT_GE(client.connection(), 2U);
  EXPECT_THROW(consumer->ack(old), StaleDeliveryError);

  std::set<std::string> received;
  const auto receive_deadline = Clock::now() + std::chrono::seconds(120);
  while (!std::includes(received.begin(), received.end(), confirmed.begin(), confirmed.end()) &&
         Clock::now() < receive_deadline) {
    std::optional<Received> got = consumer->receive(milliseconds(1'000));
    if (!got) continue;
    received.insert(got->payload);
    try {
      consumer->ack(*got);
    } catch (const StaleDeliveryError&) {
      // came on a connection that died since; the broker redelivers it
    }
  }
  EXPECT_TRUE(std::includes(received.begin(), received.end(), confirmed.begin(), confirmed.end()))
      << "received " << received.size() << " of " << confirmed.size() << " confirmed messages";
  EXPECT_TRUE(received.count(old.payload));
  babelqueue::testing::report_figure("client: messages confirmed across the kill",
                                     static_cast<long long>(confirmed.size()), "messages");
  babelqueue::testing::report_figure("client: distinct messages received",
                                     static_cast<long long>(received.size()), "messages");
}

}  // namespace
}  // namespace babelqueue::pulsar::test
