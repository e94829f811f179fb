// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The private Pulsar client (src/client.hpp, issue 13) against the scripted fake broker
// (testing/peers/pulsar, support/fake_broker.hpp): what a real broker does not show on demand:
// lookup redirects (to the broker connected to and to another), partitioned-topic metadata, a
// dropped connection, chosen redelivery counts, batches compressed as the Java and Go clients write
// them, an accepted and a refused token, broker PINGs, a CLOSE_CONSUMER, and the flow window seen
// from the broker's side.

#include <babelqueue/testing/command.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <future>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client.hpp"
#include "fake_broker.hpp"

namespace babelqueue::pulsar::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using ::testing::HasSubstr;

constexpr milliseconds kWait{10'000};
const std::string kTopic = "persistent://public/default/fake-topic";

ClientOptions options_for(const std::string& url) {
  ClientOptions options;
  options.service_url = url;
  options.operation_timeout = kWait;
  return options;
}

Received receive_one(Consumer& consumer) {
  std::optional<Received> message = consumer.receive(kWait);
  if (!message) throw std::runtime_error("no message within 10 s on " + consumer.topic());
  return std::move(*message);
}

// Polls `done` every 10 ms until it holds; throws (failing the test) naming `what` after 10 s.
void wait_until(const std::function<bool()>& done, const std::string& what) {
  const auto end = Clock::now() + kWait;
  while (!done()) {
    if (Clock::now() > end) throw std::runtime_error("timed out waiting for " + what);
    std::this_thread::sleep_for(milliseconds(10));
  }
}

// A field of the subscription "babelqueue" (ConsumerOptions' default) of kTopic: backlog,
// pending, acked, or of its first consumer: consumer.granted, .delivered, .permits, .acks.
std::int64_t sub_stat(const FakeBroker& fake, const std::string& field,
                      const std::string& topic = kTopic) {
  const Json stats = fake.control("stats " + topic + " babelqueue");
  if (field.starts_with("consumer.")) {
    return FakeBroker::number(stats,
                              {"subscriptions", "babelqueue", "consumers", "0", field.substr(9)});
  }
  return FakeBroker::number(stats, {"subscriptions", "babelqueue", field});
}

// send(), repeated while it fails transiently (a reconnect in progress: the caller resends, as
// client.hpp says) for up to 10 s; a non-transient error or the deadline throws.
MessageId send_retrying(Producer& producer, const std::string& payload) {
  const auto end = Clock::now() + kWait;
  while (true) {
    try {
      return producer.send({payload});
    } catch (const TransportError& e) {
      if (!e.is_transient() || Clock::now() > end) throw;
      std::this_thread::sleep_for(milliseconds(20));
    }
  }
}

// "m<i>" (appended: GCC 12 reports a false -Wrestrict for "m" + std::to_string(i)).
std::string numbered(int i) {
  std::string text = "m";
  text += std::to_string(i);
  return text;
}

Json message(const std::string& payload) {
  return Json::object({{"topic", kTopic}, {"payload", payload}});
}

// ---- lookup ----

TEST(PulsarClientOnFakeBroker, FollowsRedirectsToTheBrokerItIsConnectedTo) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const FakeBroker fake;
  fake.control("redirect " + kTopic + " self 3");
  Client client(options_for(fake.url()));
  const LookupResult result = client.lookup(kTopic);
  EXPECT_EQ(result.redirects, 3);
  EXPECT_EQ(result.broker_url, fake.url());

  // create_producer() looks the topic up again and follows the redirects there too.
  fake.control("redirect " + kTopic + " self 2");
  const auto producer = client.create_producer(kTopic);
  EXPECT_EQ(producer->send({"after two redirects"}).entry, 0U);
  EXPECT_EQ(FakeBroker::number(fake.control("stats " + kTopic), {"entries"}), 1);

  // A broker redirecting forever is given up on after 8, naming the topic.
  fake.control("redirect " + kTopic + " self 9");
  try {
    static_cast<void>(client.lookup(kTopic));
    ADD_FAILURE() << "9 redirects were followed";
  } catch (const TransportError& e) {
    EXPECT_THAT(e.what(), HasSubstr("more than 8 redirects"));
    EXPECT_THAT(e.what(), HasSubstr(kTopic));
  }
}

// Sends numbered(first..first+count-1) with send_retrying().
void send_numbered(Producer& producer, int first, int count) {
  for (int i = first; i < first + count; ++i)
    static_cast<void>(send_retrying(producer, numbered(i)));
}

// Receives and acks into `seen` until it holds `count` payloads (duplicates of a redelivery
// allowed), failing after 10 s without a message; a stale ack (its connection gone) is skipped:
// the broker redelivers that message.
void receive_until(Consumer& consumer, std::set<std::string>& seen, std::size_t count) {
  while (seen.size() < count) {
    const Received message = receive_one(consumer);
    try {
      consumer.ack(message);
    } catch (const StaleDeliveryError&) {
      continue;
    }
    seen.insert(message.payload);
  }
}

TEST(PulsarClientOnFakeBroker, RedirectToAnotherBrokerIsServedByAConnectionToIt) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const FakeBroker fake;
  fake.control("redirect " + kTopic + " second");
  Client client(options_for(fake.url()));
  const LookupResult result = client.lookup(kTopic);
  EXPECT_EQ(result.broker_url, fake.second_url());
  EXPECT_EQ(result.redirects, 1);

  // The producer and the consumer use a connection to the second listener (the first answers
  // PRODUCER and SUBSCRIBE of the topic with ServiceNotReady): nothing is lost.
  const auto consumer = client.subscribe(kTopic, {});
  const auto producer = client.create_producer(kTopic);
  send_numbered(*producer, 0, 100);
  std::set<std::string> seen;
  receive_until(*consumer, seen, 100);
  const Json connections = fake.control("connections");
  EXPECT_EQ(FakeBroker::number(connections, {"connects", "second"}), 1);
  EXPECT_EQ(FakeBroker::number(connections, {"connects", "primary"}), 1);

  // Both connections cut: the one to the second broker is remade (looked up again through the
  // first), and the rest of the messages arrive there too.
  EXPECT_GE(FakeBroker::number(fake.control("drop"), {"dropped"}), 2);
  send_numbered(*producer, 100, 100);
  receive_until(*consumer, seen, 200);
  for (int i = 0; i < 200; ++i)
    EXPECT_TRUE(seen.contains(numbered(i))) << numbered(i);
  EXPECT_EQ(seen.size(), 200U);
  EXPECT_GE(FakeBroker::number(fake.control("connections"), {"connects", "second"}), 2);
  wait_until([&] { return sub_stat(fake, "backlog") == 0; }, "every message acked");
  EXPECT_EQ(FakeBroker::number(fake.control("stats " + kTopic), {"entries"}), 200);
}

TEST(PulsarClientOnFakeBroker, SubscriptionCreationAndConfirmedAcksUseTheTopicsBroker) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const FakeBroker fake;
  fake.control("redirect " + kTopic + " second");
  Client client(options_for(fake.url()));
  // Made through the connection to the second listener (the first answers SUBSCRIBE of the topic
  // with ServiceNotReady): the subscription exists, with no consumer, before anyone consumes.
  client.create_subscription(kTopic, "babelqueue", SubscriptionType::Shared);
  const auto producer = client.create_producer(kTopic);
  send_numbered(*producer, 0, 10);
  EXPECT_EQ(sub_stat(fake, "backlog"), 10);

  // One ACK frame with a request id on the consumer's connection: when ack() returns, the
  // broker's ACK_RESPONSE came, so the acks are applied.
  const auto consumer = client.subscribe(kTopic, {});
  std::vector<Received> received;
  for (int i = 0; i < 10; ++i)
    received.push_back(receive_one(*consumer));
  EXPECT_TRUE(consumer->current(received.front()));
  EXPECT_EQ(consumer->ack(received, true), 0U);
  EXPECT_EQ(sub_stat(fake, "backlog"), 0);
  EXPECT_EQ(sub_stat(fake, "consumer.acks"), 10);
  const Json connections = fake.control("connections");
  EXPECT_EQ(FakeBroker::number(connections, {"connects", "second"}), 1);
  EXPECT_EQ(FakeBroker::number(connections, {"connects", "primary"}), 1);

  // The connection to the second broker cut: what it delivered is no longer current, and a
  // batch of it is left out (counted), nothing sent.
  send_numbered(*producer, 10, 1);
  const Received before = receive_one(*consumer);
  EXPECT_GE(FakeBroker::number(fake.control("drop"), {"dropped"}), 2);
  wait_until([&] { return !consumer->current(before); }, "the drop seen by the client");
  EXPECT_EQ(consumer->ack(std::vector<Received>{before}, true), 1U);
  // Redelivered on the new connection, and acked there.
  std::set<std::string> seen;
  receive_until(*consumer, seen, 1);
  EXPECT_TRUE(seen.contains(numbered(10)));
  wait_until([&] { return sub_stat(fake, "backlog") == 0; }, "the redelivered message acked");
}

TEST(PulsarClientOnFakeBroker, ReadsPartitionedMetadataAndThePartitionOfAMessage) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const FakeBroker fake;
  fake.control("partition " + kTopic + " 3");
  Client client(options_for(fake.url()));
  EXPECT_EQ(client.partitions(kTopic), 3U);
  EXPECT_EQ(client.partitions(kTopic + "-plain"), 0U);

  const std::string partition = kTopic + "-partition-2";
  const auto consumer = client.subscribe(partition, {});
  client.create_producer(partition)->send({"to partition 2"});
  const Received got = receive_one(*consumer);
  EXPECT_EQ(got.payload, "to partition 2");
  EXPECT_EQ(got.id.partition, 2);
  EXPECT_EQ(got.topic, partition);
}

// ---- producing ----

TEST(PulsarClientOnFakeBroker, EachSendResolvesWithItsOwnReceipt) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const FakeBroker fake;
  Client client(options_for(fake.url()));
  const auto producer = client.create_producer(kTopic);
  std::vector<std::future<SendResult>> sends;
  for (int i = 0; i < 5; ++i) {
    sends.push_back(producer->send_async(
        {"message " + std::to_string(i), {{"i", std::to_string(i)}}, "key-" + std::to_string(i)}));
  }
  std::vector<MessageId> ids;
  for (auto& send : sends)
    ids.push_back(send.get().get());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(ids[i].ledger, ids[0].ledger);
    EXPECT_EQ(ids[i].entry, i);
  }
  EXPECT_EQ(FakeBroker::number(fake.control("stats " + kTopic), {"entries"}), 5);

  const auto consumer = client.subscribe(kTopic, {});
  for (int i = 0; i < 5; ++i) {
    const Received got = receive_one(*consumer);
    EXPECT_EQ(got.payload, "message " + std::to_string(i));
    EXPECT_EQ(got.properties, (std::map<std::string, std::string>{{"i", std::to_string(i)}}));
    EXPECT_EQ(got.key, "key-" + std::to_string(i));
    EXPECT_EQ(got.id, ids[static_cast<std::size_t>(i)]);
  }
}

// ---- connection ----

TEST(PulsarClientOnFakeBroker, DroppedConnectionReconnectsWithBackoffAndRefusesStaleAcks) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const FakeBroker fake;
  ClientOptions options = options_for(fake.url());
  options.reconnect_initial = milliseconds(300);
  Client client(options);
  const auto consumer = client.subscribe(kTopic, {});
  const auto producer = client.create_producer(kTopic);
  producer->send({"before the drop"});
  const Received first = receive_one(*consumer);
  EXPECT_EQ(first.connection, 1U);

  const auto dropped_at = Clock::now();
  EXPECT_EQ(FakeBroker::number(fake.control("drop"), {"dropped"}), 1);
  wait_until([&] { return client.connection() >= 2; }, "the reconnect");
  // The kit's Backoff: the first attempt waits reconnect_initial.
  EXPECT_GE(Clock::now() - dropped_at, options.reconnect_initial);
  EXPECT_EQ(FakeBroker::number(fake.control("connections"), {"connects", "primary"}), 2);

  // The dead connection's delivery is never acked on the new one: the broker redelivers it.
  EXPECT_THROW(consumer->ack(first), StaleDeliveryError);
  const Received again = receive_one(*consumer);
  EXPECT_EQ(again.payload, "before the drop");
  EXPECT_EQ(again.connection, 2U);
  EXPECT_EQ(again.redelivery_count, 0U);  // a lost consumer's messages keep their count
  consumer->ack(again);
  wait_until([&] { return sub_stat(fake, "acked") == 1; }, "the ack");
  EXPECT_EQ(sub_stat(fake, "consumer.acks"), 1);  // the stale ack was never sent

  // The producer was re-created: a send goes through (retried while it still reconnects).
  send_retrying(*producer, "after the drop");
  const Received after = receive_one(*consumer);
  EXPECT_EQ(after.payload, "after the drop");
  consumer->ack(after);
  wait_until([&] { return sub_stat(fake, "backlog") == 0; }, "an empty backlog");
}

TEST(PulsarClientOnFakeBroker, NothingIsLostWhenTheConnectionDropsMidRun) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const FakeBroker fake;
  ClientOptions options = options_for(fake.url());
  options.reconnect_initial = milliseconds(20);
  Client client(options);
  ConsumerOptions consumer_options;
  consumer_options.prefetch = 10;
  const auto consumer = client.subscribe(kTopic, consumer_options);
  const auto producer = client.create_producer(kTopic);
  constexpr std::size_t kMessages = 300;

  // Receives and acks until every payload was seen; acks of a dead connection's deliveries are
  // refused (the fake redelivers those).
  std::set<std::string> seen;
  std::size_t stale = 0;
  std::thread consuming([&] {
    const auto end = Clock::now() + 3 * kWait;
    while (seen.size() < kMessages && Clock::now() < end) {
      const std::optional<Received> got = consumer->receive(milliseconds(100));
      if (!got) continue;
      seen.insert(got->payload);
      try {
        consumer->ack(*got);
      } catch (const StaleDeliveryError&) {
        ++stale;
      }
    }
  });
  // Sends pipelined 30 at a time; every third window the connection drops while they are in
  // flight. A send failed by the drop is resent (at least once: a stored message whose receipt
  // was lost is stored twice).
  int drops = 0;
  std::size_t resent = 0;
  for (std::size_t first = 0; first < kMessages; first += 30) {
    std::vector<std::pair<std::string, std::future<SendResult>>> window;
    for (std::size_t i = first; i < first + 30; ++i) {
      std::string payload = numbered(static_cast<int>(i));
      window.emplace_back(payload, producer->send_async({payload}));
    }
    if (first / 30 % 3 == 1) {
      drops += static_cast<int>(FakeBroker::number(fake.control("drop"), {"dropped"}));
    }
    for (auto& [payload, sent] : window) {
      ASSERT_EQ(sent.wait_for(kWait), std::future_status::ready) << payload;
      const SendResult result = sent.get();
      if (result.failure) {
        ASSERT_TRUE(result.failure->transient) << result.failure->what;
        send_retrying(*producer, payload);
        ++resent;
      }
    }
  }
  consuming.join();
  EXPECT_EQ(drops, 3);
  EXPECT_EQ(seen.size(), kMessages);
  for (std::size_t i = 0; i < kMessages; ++i)
    EXPECT_EQ(seen.count(numbered(static_cast<int>(i))), 1U) << i;
  // Acks lost with a connection come back as redeliveries: ack them until the backlog is empty.
  wait_until(
      [&] {
        if (const std::optional<Received> again = consumer->receive(milliseconds(20))) {
          EXPECT_EQ(seen.count(again->payload), 1U) << again->payload;
          consumer->ack(*again);
        }
        return sub_stat(fake, "backlog") == 0;
      },
      "every message acked");
  EXPECT_GE(FakeBroker::number(fake.control("connections"), {"connects", "primary"}), 4);
  EXPECT_GE(FakeBroker::number(fake.control("stats " + kTopic), {"entries"}), 300);
  std::cout << "[ figure   ] 3 drops mid-run: " << resent << " sends failed and resent, " << stale
            << " stale acks refused\n";
}

TEST(PulsarClientOnFakeBroker, RefusedTokenIsAClearConfigError) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const FakeBroker fake({"--token", "the-secret"});
  for (const std::string token : {"", "a-wrong-token"}) {
    ClientOptions options = options_for(fake.url());
    options.token = token;
    Client client(options);
    try {
      static_cast<void>(client.lookup(kTopic));
      ADD_FAILURE() << "the broker's refusal was not reported";
    } catch (const ConfigError& e) {
      EXPECT_FALSE(e.is_transient());
      EXPECT_THAT(e.what(), HasSubstr("CONNECT to 127.0.0.1:"));
      EXPECT_THAT(e.what(), HasSubstr("AuthenticationError"));
      EXPECT_THAT(e.what(), HasSubstr("Unable to authenticate"));
      EXPECT_THAT(e.what(), ::testing::Not(HasSubstr("the-secret")));
      if (!token.empty()) {
        EXPECT_THAT(e.what(), ::testing::Not(HasSubstr(token)));
      }
    }
    EXPECT_THROW(static_cast<void>(client.create_producer(kTopic)), ConfigError);
  }
  EXPECT_GE(FakeBroker::number(fake.control("connections"), {"refused_auth"}), 4);
}

TEST(PulsarClientOnFakeBroker, TokenIsAcceptedByEveryBroker) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const FakeBroker fake({"--token", "the-secret"});
  fake.control("redirect " + kTopic + " second");
  ClientOptions options = options_for(fake.url());
  options.token = "the-secret";
  Client client(options);
  const auto consumer = client.subscribe(kTopic, {});
  client.create_producer(kTopic)->send({"authenticated"});
  const Received message = receive_one(*consumer);
  EXPECT_EQ(message.payload, "authenticated");
  consumer->ack(message);
  const Json connections = fake.control("connections");
  EXPECT_EQ(FakeBroker::number(connections, {"refused_auth"}), 0);
  EXPECT_EQ(FakeBroker::number(connections, {"connects", "second"}), 1);
}

TEST(PulsarClientOnFakeBroker, AnswersTheBrokersPingAndKeepsAliveWithItsOwn) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const FakeBroker fake;
  ClientOptions options = options_for(fake.url());
  options.keepalive = milliseconds(50);
  Client client(options);
  static_cast<void>(client.lookup(kTopic));
  const Json reply = fake.control("ping");
  EXPECT_EQ(FakeBroker::number(reply, {"pinged"}), 1);
  EXPECT_EQ(FakeBroker::number(reply, {"ponged"}), 1);

  // Our PINGs every keep-alive interval, answered: an otherwise idle connection outlives more
  // than two intervals (a peer silent for two is dead).
  wait_until([&] { return FakeBroker::number(fake.control("connections"), {"pings"}) >= 4; },
             "4 PINGs of the client");
  EXPECT_EQ(client.connection(), 1U);
  EXPECT_EQ(FakeBroker::number(fake.control("connections"), {"connects", "primary"}), 1);
}

// ---- consuming ----

TEST(PulsarClientOnFakeBroker, ReadsRedeliveryCounts) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const FakeBroker fake;
  Json redelivered = message("seen four times");
  redelivered["redelivery_count"] = 4;
  fake.enqueue(redelivered);
  fake.enqueue(message("new"));
  Client client(options_for(fake.url()));
  const auto consumer = client.subscribe(kTopic, {});

  const Received first = receive_one(*consumer);
  EXPECT_EQ(first.payload, "seen four times");
  EXPECT_EQ(first.redelivery_count, 4U);
  const Received fresh = receive_one(*consumer);
  EXPECT_EQ(fresh.redelivery_count, 0U);

  consumer->negative_ack(first);
  consumer->negative_ack(fresh);
  std::map<std::string, std::uint32_t> counts;
  for (int i = 0; i < 2; ++i) {
    const Received again = receive_one(*consumer);
    counts[again.payload] = again.redelivery_count;
    consumer->ack(again);
  }
  EXPECT_EQ(counts, (std::map<std::string, std::uint32_t>{{"seen four times", 5}, {"new", 1}}));
  wait_until([&] { return sub_stat(fake, "backlog") == 0; }, "an empty backlog");
}

TEST(PulsarClientOnFakeBroker, PermitsNeverExceedThePrefetchWindow) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const FakeBroker fake;
  Client client(options_for(fake.url()));
  ConsumerOptions options;
  options.prefetch = 4;
  const auto consumer = client.subscribe(kTopic, options);
  for (int i = 0; i < 20; ++i)
    fake.enqueue(message(numbered(i)));

  wait_until([&] { return consumer->buffered() == 4; }, "a full window");
  EXPECT_EQ(sub_stat(fake, "consumer.granted"), 4);
  EXPECT_EQ(sub_stat(fake, "consumer.delivered"), 4);
  EXPECT_EQ(sub_stat(fake, "consumer.permits"), 0);

  for (int i = 0; i < 20; ++i) {
    const Received got = receive_one(*consumer);
    EXPECT_EQ(got.payload, numbered(i));
    consumer->ack(got);
    // What the broker may still send (granted) minus what was handed out stays within the window.
    EXPECT_LE(sub_stat(fake, "consumer.granted") - (i + 1), 4) << "after message " << i;
    EXPECT_LE(consumer->buffered(), 4U);
  }
  wait_until([&] { return sub_stat(fake, "backlog") == 0; }, "an empty backlog");
}

TEST(PulsarClientOnFakeBroker, BrokerClosingTheConsumerResubscribesAndRefusesStaleAcks) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const FakeBroker fake;
  fake.enqueue(message("held"));
  Client client(options_for(fake.url()));
  const auto consumer = client.subscribe(kTopic, {});
  const Received held = receive_one(*consumer);

  EXPECT_EQ(FakeBroker::number(fake.control("close-consumers " + kTopic), {"closed"}), 1);
  const Received again = receive_one(*consumer);  // after the re-subscribe
  EXPECT_EQ(again.payload, "held");
  EXPECT_EQ(again.connection, held.connection);
  EXPECT_GT(again.incarnation, held.incarnation);
  EXPECT_THROW(consumer->ack(held), StaleDeliveryError);
  consumer->ack(again);
  wait_until([&] { return sub_stat(fake, "acked") == 1; }, "the ack");
  EXPECT_EQ(sub_stat(fake, "consumer.acks"), 1);
}

TEST(PulsarClientOnFakeBroker, ConsumerClosedByItsBrokerFollowsTheTopicToAnother) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const FakeBroker fake;
  fake.enqueue(message("held"));
  Client client(options_for(fake.url()));
  const auto consumer = client.subscribe(kTopic, {});
  const Received held = receive_one(*consumer);
  EXPECT_EQ(FakeBroker::number(fake.control("connections"), {"connects", "second"}), 0);

  // The topic moves to the second broker (as an unload does): the consumer is looked up again
  // and re-subscribes over a connection to it; the unacked message comes back there.
  fake.control("redirect " + kTopic + " second");
  EXPECT_EQ(FakeBroker::number(fake.control("close-consumers " + kTopic), {"closed"}), 1);
  const Received again = receive_one(*consumer);
  EXPECT_EQ(again.payload, "held");
  EXPECT_NE(again.connection, held.connection) << "the connection to the second broker";
  EXPECT_THROW(consumer->ack(held), StaleDeliveryError);
  consumer->ack(again);
  wait_until([&] { return sub_stat(fake, "acked") == 1; }, "the ack");
  EXPECT_EQ(FakeBroker::number(fake.control("connections"), {"connects", "second"}), 1);
  EXPECT_EQ(client.connection(), 2U) << "one connection per broker, none remade";
}

// ---- batches, as the Java and Go clients write them ----

struct BatchCase {
  std::string compression;
  std::string writer;
};

class PulsarClientOnFakeBrokerBatch : public ::testing::TestWithParam<BatchCase> {};

TEST_P(PulsarClientOnFakeBrokerBatch, DecodesEachSingleMessage) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const FakeBroker fake;
  // A compressible text of ~8 KiB (the Java client leaves batches under 4 KiB uncompressed),
  // every byte value, and an empty payload.
  std::string text;
  while (text.size() < 8'000)
    text += "babelqueue batch entry " + std::to_string(text.size()) + "; ";
  std::string bytes;
  for (int round = 0; round < 4; ++round) {
    for (int b = 0; b < 256; ++b)
      bytes.push_back(static_cast<char>(b));
  }
  const std::vector<std::string> payloads = {text, bytes, ""};
  Json messages = Json::array();
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    Json one = Json::object({{"payload_hex", babelqueue::testing::to_hex(payloads[i])},
                             {"properties", Json::object({{"i", std::to_string(i)}})}});
    if (i == 0) one["key"] = "first-key";
    messages.push_back(std::move(one));
  }
  fake.enqueue(Json::object({{"topic", kTopic},
                             {"batch", true},
                             {"compression", GetParam().compression},
                             {"writer", GetParam().writer},
                             {"messages", std::move(messages)}}));

  Client client(options_for(fake.url()));
  const auto consumer = client.subscribe(kTopic, {});
  std::vector<Received> got;
  for (std::size_t i = 0; i < payloads.size(); ++i)
    got.push_back(receive_one(*consumer));
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    SCOPED_TRACE("entry " + std::to_string(i));
    EXPECT_EQ(got[i].payload, payloads[i]);
    EXPECT_EQ(got[i].properties, (std::map<std::string, std::string>{{"i", std::to_string(i)}}));
    EXPECT_EQ(got[i].key, i == 0 ? std::optional<std::string>("first-key") : std::nullopt);
    EXPECT_EQ(got[i].id.batch_index, static_cast<std::int32_t>(i));
    EXPECT_EQ(got[i].id.batch_size, 3);
    EXPECT_EQ(got[i].id.entry, got[0].id.entry);
  }
  // The batch is acknowledged as one entry once all its messages are.
  for (const Received& one : got)
    consumer->ack(one);
  wait_until([&] { return sub_stat(fake, "acked") == 1; }, "the batch's ack");
  EXPECT_EQ(sub_stat(fake, "backlog"), 0);
}

INSTANTIATE_TEST_SUITE_P(Codecs, PulsarClientOnFakeBrokerBatch,
                         ::testing::Values(BatchCase{"NONE", "java"}, BatchCase{"LZ4", "java"},
                                           BatchCase{"ZLIB", "java"}, BatchCase{"ZLIB", "go"},
                                           BatchCase{"ZSTD", "java"}, BatchCase{"SNAPPY", "java"}),
                         [](const ::testing::TestParamInfo<BatchCase>& param_info) {
                           return param_info.param.compression + "_" + param_info.param.writer;
                         });

}  // namespace
}  // namespace babelqueue::pulsar::test
