// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Interop with pulsar-flex (npm 1.1.1, pure JavaScript with protocol code of its own) on the
// shared real broker (issue 13), run as a subprocess (support/flex_interop_peer.js, its packages
// those of testing/peers/pulsar/install.sh). Envelopes it produces with the PLS-5 properties, as
// another SDK would, arrive through `pop` as the same bytes with those properties, also as the
// messages of one pulsar-flex batch, and the App handles them; what the transport publishes
// (one at a time, a batch, with riders) reaches it with the same bytes and the PLS-5 properties.

#include <babelqueue/app.hpp>
#include <babelqueue/binding/pulsar.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/testing/command.hpp>

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "binding/fixtures.hpp"
#include "fake_broker.hpp"
#include "transport_test.hpp"

namespace babelqueue::pulsar::test {
namespace {

using babelqueue::testing::from_hex;
using babelqueue::testing::kWithin;
using babelqueue::testing::pop_message;
using babelqueue::testing::tagged_lines;
using babelqueue::testing::to_hex;
using Properties = std::map<std::string, std::string>;

constexpr char kUrn[] = "urn:babel:orders:created";

// What the peer sends: a body and the properties it carries.
struct Sent {
  std::string body;
  Properties properties;
};

// The PLS-5 properties of an envelope, as another SDK writes them, and a rider of the peer.
Sent envelope(const std::string& queue, int i) {
  // Non-ASCII text: the bytes must arrive unchanged, not re-encoded.
  std::string body =
      encode(make(kUrn, Json::object({{"i", i}, {"text", "gr\xC3\xBC\xC3\x9F\x65 \xE2\x82\xAC"}}),
                  {.queue = queue}));
  Properties properties = binding::pulsar::properties(body);
  properties.emplace("peer", "pulsar-flex");
  return {std::move(body), std::move(properties)};
}

std::string id_of(const std::string& body) {
  return std::string(decode(body).meta().id);
}

class PulsarFlexInterop : public SharedBrokerTest {
 protected:
  void SetUp() override {
    SharedBrokerTest::SetUp();
    if (IsSkipped()) return;
    BABELQUEUE_REQUIRE_FAKE_PULSAR();  // node and the npm packages pulsar-flex is among
  }
  // flex_interop_peer.js `command` URL TOPIC of queue() `args`.
  babelqueue::testing::CommandResult peer(const std::string& command,
                                          const std::vector<std::string>& args = {},
                                          const std::string& input = {}) const {
    std::vector<std::string> argv = {command, server().service_url(), topic_for(queue())};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_node_peer(BABELQUEUE_PULSAR_FLEX_PEER, argv, input);
  }
  // `sent` produced by the peer ("produce" or "produce-batch"), each with its properties.
  void produce(const std::string& command, const std::vector<Sent>& sent) const {
    std::string input;
    for (const Sent& s : sent) {
      Json properties = Json::object({});
      for (const auto& [key, value] : s.properties)
        properties[key] = value;
      input +=
          Json::object({{"payload_hex", to_hex(s.body)}, {"properties", properties}}).dump() + "\n";
    }
    const auto produced = peer(command, {}, input);
    ASSERT_EQ(produced.exit_code, 0) << produced;
    ASSERT_EQ(tagged_lines(produced.output, "SENT "),
              std::vector<std::string>{std::to_string(sent.size())})
        << produced;
  }
  // Pops every message of `sent` through `t` (any order): the same bytes and properties, a first
  // delivery; each acked. Nothing is left afterwards.
  void pop_all(PulsarTransport& t, const std::vector<Sent>& sent) const {
    std::map<std::string, const Sent*> by_id;
    for (const Sent& s : sent)
      by_id.emplace(id_of(s.body), &s);
    std::set<std::string> got;
    for (std::size_t i = 0; i < sent.size(); ++i) {
      const auto m = pop_message(t, queue(), kWithin);
      ASSERT_TRUE(m.has_value()) << "after " << i;
      const std::string id = id_of(m->body);
      ASSERT_TRUE(by_id.contains(id)) << m->body;
      EXPECT_EQ(m->body, by_id.at(id)->body) << "the bytes changed";
      EXPECT_EQ(Properties(m->headers.begin(), m->headers.end()), by_id.at(id)->properties);
      EXPECT_EQ(m->delivery_count, 1);
      EXPECT_TRUE(got.insert(id).second) << "delivered twice: " << id;
      ASSERT_TRUE(t.ack(*m).ok());
    }
    t.close();
    EXPECT_EQ(got.size(), sent.size());
    EXPECT_TRUE(nothing_left(queue()));
  }
};

// (a) pulsar-flex's single messages (each waits for its receipt) arrive through `pop` as the
// same bytes with their properties.
TEST_F(PulsarFlexInterop, FlexMessagesArriveAsTheSameBytesWithTheirProperties) {
  std::vector<Sent> sent;
  for (int i = 0; i < 10; ++i)
    sent.push_back(envelope(queue(), i));
  // The subscription first (a pop makes it, from the earliest message).
  PulsarTransport t(url());
  ASSERT_TRUE(t.pop(queue(), std::chrono::milliseconds(1)).has_value());
  ASSERT_NO_FATAL_FAILURE(produce("produce", sent));
  pop_all(t, sent);
}

// (c) One pulsar-flex batch message (num_messages_in_batch, a SingleMessageMetadata with the
// properties per message, no compression: pulsar-flex has none) arrives as its messages.
TEST_F(PulsarFlexInterop, FlexBatchArrivesAsItsMessages) {
  std::vector<Sent> sent;
  for (int i = 0; i < 7; ++i)
    sent.push_back(envelope(queue(), i));
  sent[3].properties.emplace("only", "the fourth");  // per message, not per batch
  PulsarTransport t(url());
  ASSERT_TRUE(t.pop(queue(), std::chrono::milliseconds(1)).has_value());
  ASSERT_NO_FATAL_FAILURE(produce("produce-batch", sent));
  pop_all(t, sent);
}

// (a) The App consumes what pulsar-flex produced: each envelope handled once with its payload,
// attempts 0; bytes that are no envelope go to `<q>.dlq` as the poison record of those bytes (D-2).
TEST_F(PulsarFlexInterop, TheAppHandlesFlexMessagesAndDeadLettersItsPoison) {
  std::vector<Sent> sent;
  for (int i = 0; i < 3; ++i)
    sent.push_back(envelope(queue(), i));
  const std::string poison("\xFF\xFE{\"job\":\"urn:x\"}\x80", 18);
  auto transport = std::make_shared<PulsarTransport>(url());
  App app(transport, {.dead_letter = true, .poll_timeout = std::chrono::milliseconds(500)});
  ASSERT_TRUE(transport->pop(queue(), std::chrono::milliseconds(1)).has_value());
  std::vector<Sent> with_poison = sent;
  with_poison.push_back({poison, {{"peer", "pulsar-flex"}}});
  ASSERT_NO_FATAL_FAILURE(produce("produce", with_poison));
  std::map<std::string, Json> handled;  // meta.id -> payload; drain dispatches on this thread
  app.handle(kUrn, [&](Context&, const Envelope& env) {
    EXPECT_EQ(env.attempts(), 0);
    EXPECT_TRUE(handled.emplace(std::string(env.meta().id), env.data()).second);
    return Status();
  });
  const DrainResult drained = app.drain(queue(), with_poison.size());
  EXPECT_TRUE(drained.status.ok()) << drained.status.error().what();
  EXPECT_EQ(drained.count, with_poison.size());
  transport->close();
  ASSERT_EQ(handled.size(), sent.size());
  for (const Sent& s : sent) {
    ASSERT_TRUE(handled.contains(id_of(s.body)));
    EXPECT_EQ(handled.at(id_of(s.body)), decode(s.body).data());
  }
  EXPECT_TRUE(nothing_left(queue()));
  const std::vector<RawMessage> dead = read_all(queue() + ".dlq", 1, kWithin);
  ASSERT_EQ(dead.size(), 1U);
  const Json json = Json::parse(dead[0].message.payload);
  const Json expected = Json::parse(poison_record(poison, "", queue()));
  ASSERT_NE(json.find("raw"), nullptr) << dead[0].message.payload;
  EXPECT_EQ(*json.find("raw"), *expected.find("raw"));
}

// (b) What the transport publishes (one at a time, a batch, with riders) reaches pulsar-flex with
// the same bytes and the PLS-5 properties, a first delivery.
TEST_F(PulsarFlexInterop, OurMessagesReachPulsarFlex) {
  // pulsar-flex subscribes at the latest message (it sends no initial position): the durable
  // subscription is made first, from the earliest.
  {
    RawPulsar raw(server().port(), kWithin);
    raw.subscribe(topic_for(queue()), "flex", proto::CommandSubscribe::Shared, 0);
  }
  std::map<std::string, Sent> sent;  // meta.id -> body, properties
  {
    PulsarTransport t(url());
    for (int i = 0; i < 3; ++i) {
      std::string body = encode(make(kUrn, Json::object({{"i", i}}), {.queue = queue()}));
      ASSERT_TRUE(t.publish(queue(), body).ok());
      sent.emplace(id_of(body), Sent{body, binding::pulsar::properties(body)});
    }
    std::vector<std::string> batch;
    for (int i = 3; i < 6; ++i) {
      batch.push_back(encode(make(kUrn, Json::object({{"i", i}}), {.queue = queue()})));
      sent.emplace(id_of(batch.back()),
                   Sent{batch.back(), binding::pulsar::properties(batch.back())});
    }
    ASSERT_TRUE(t.publish_batch(queue(), batch).ok());
    const std::string body = encode(make(kUrn, Json::object({{"i", 6}}), {.queue = queue()}));
    const Headers riders{{"tenant", "acme"}};
    ASSERT_TRUE(t.publish_with_headers(queue(), body, riders).ok());
    sent.emplace(id_of(body), Sent{body, binding::pulsar::properties(body, riders)});
  }
  const auto consumed = peer("consume", {"flex", std::to_string(sent.size())});
  ASSERT_EQ(consumed.exit_code, 0) << consumed;
  const std::vector<std::string> lines = tagged_lines(consumed.output, "MSG ");
  ASSERT_EQ(lines.size(), sent.size()) << consumed;
  std::set<std::string> got;
  for (const std::string& line : lines) {
    const Json m = Json::parse(line);
    const std::string body = from_hex(m.find("payload_hex")->as_string());
    const std::string id = id_of(body);
    ASSERT_TRUE(sent.contains(id)) << body;
    EXPECT_EQ(body, sent.at(id).body);
    Properties properties;
    for (const auto& [key, value] : m.find("properties")->as_object())
      properties.emplace(key, value.as_string());
    EXPECT_EQ(properties, sent.at(id).properties);
    EXPECT_EQ(properties.at("bq-message-id"), id);
    EXPECT_EQ(m.find("redelivery_count")->as_int64(), std::optional<std::int64_t>(0));
    got.insert(id);
  }
  EXPECT_EQ(got.size(), sent.size());
}

}  // namespace
}  // namespace babelqueue::pulsar::test
