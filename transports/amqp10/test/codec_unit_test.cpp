// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The AMQP 1.0 layer without a broker (issue 12): the message codec through Proton's own
// encoding, option checks, and a client whose peer is not there (timeouts, close, ClosedError).

#include <babelqueue/amqp10/client.hpp>
#include <babelqueue/testing/broker_process.hpp>

#include <gtest/gtest.h>

#include <proton/annotation_key.hpp>
#include <proton/codec/map.hpp>
#include <proton/message.hpp>
#include <proton/symbol.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "message_codec.hpp"

namespace babelqueue::amqp10 {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// `m` as it comes back from the wire: encoded by Proton and decoded again.
Message through_the_wire(const Message& m) {
  std::vector<char> bytes;
  detail::to_proton(m).encode(bytes);
  proton::message decoded;
  decoded.decode(bytes);
  return detail::from_proton(decoded);
}

Message full_message() {
  Message m;
  m.body = std::string("{\"a\":\0}", 7);
  m.body_kind = BodyKind::Data;
  m.durable = false;
  m.message_id = "id-1";
  m.correlation_id = "7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b";
  m.content_type = "application/json";
  m.subject = "s";
  m.creation_time_ms = 1749132727000;
  m.annotations = {{"x-opt-jms-type", std::string("urn:babel:orders:created")},
                   {"x-opt-n", std::int64_t{5}}};
  m.properties = {{"bq_schema_version", std::string("1")},
                  {"null", std::monostate{}},
                  {"b", true},
                  {"i8", std::int8_t{-1}},
                  {"u8", std::uint8_t{1}},
                  {"i16", std::int16_t{-2}},
                  {"u16", std::uint16_t{2}},
                  {"i", std::int32_t{-3}},
                  {"l", std::int64_t{1} << 40},
                  {"u", std::uint32_t{7}},
                  {"ul", std::uint64_t{8}},
                  {"f", 1.5F},
                  {"d", 2.25},
                  {"bin", Binary{std::string("\x01\x00", 2)}}};
  return m;
}

TEST(Amqp10Codec, EveryFieldSurvivesTheWire) {
  const Message sent = full_message();
  const Message got = through_the_wire(sent);
  EXPECT_EQ(got.body, sent.body);
  EXPECT_EQ(got.body_kind, BodyKind::Data);
  EXPECT_FALSE(got.durable);
  EXPECT_EQ(got.message_id, sent.message_id);
  EXPECT_EQ(got.correlation_id, sent.correlation_id);
  EXPECT_EQ(got.content_type, sent.content_type);
  EXPECT_EQ(got.subject, sent.subject);
  EXPECT_EQ(got.creation_time_ms, sent.creation_time_ms);
  EXPECT_EQ(got.annotations, sent.annotations);
  EXPECT_EQ(got.properties, sent.properties);
}

TEST(Amqp10Codec, BodyKindsAreKeptApart) {
  Message m;
  m.body = "text";
  m.body_kind = BodyKind::StringValue;
  EXPECT_EQ(through_the_wire(m).body_kind, BodyKind::StringValue);
  EXPECT_EQ(through_the_wire(m).body, "text");
  m.body_kind = BodyKind::BinaryValue;
  EXPECT_EQ(through_the_wire(m).body_kind, BodyKind::BinaryValue);
  EXPECT_EQ(through_the_wire(m).body, "text");
  m.body_kind = BodyKind::Data;
  EXPECT_EQ(through_the_wire(m).body_kind, BodyKind::Data);
  m.body_kind = BodyKind::Unsupported;
  EXPECT_THROW(static_cast<void>(detail::to_proton(m)), ConfigError);
}

// The container thread refills one proton::message for every send: nothing of an earlier
// message may reach a later one, whatever failed in between.
TEST(Amqp10Codec, AReusedMessageEncodesAsAFreshOne) {
  const auto bytes = [](const proton::message& m) {
    std::vector<char> out;
    m.encode(out);
    return out;
  };
  Message bare;
  bare.body = "second";
  bare.body_kind = BodyKind::StringValue;
  Message unsendable = full_message();
  unsendable.properties.emplace("z", Other{"symbol"});
  proton::message reused;
  detail::to_proton(full_message(), reused);
  EXPECT_EQ(bytes(reused), bytes(detail::to_proton(full_message())));
  EXPECT_THROW(detail::to_proton(unsendable, reused), ConfigError);
  detail::to_proton(bare, reused);
  EXPECT_EQ(bytes(reused), bytes(detail::to_proton(bare)));
  proton::message decoded;
  decoded.decode(bytes(reused));
  const Message got = detail::from_proton(decoded);
  EXPECT_EQ(got.body, "second");
  EXPECT_EQ(got.body_kind, BodyKind::StringValue);
  EXPECT_TRUE(got.durable);
  EXPECT_FALSE(got.message_id || got.correlation_id || got.content_type || got.subject ||
               got.creation_time_ms);
  EXPECT_TRUE(got.annotations.empty());
  EXPECT_TRUE(got.properties.empty());
}

TEST(Amqp10Codec, OtherBodiesAndUnsetFields) {
  proton::message m;
  m.body(std::int64_t{42});
  const Message got = detail::from_proton(m);
  EXPECT_EQ(got.body_kind, BodyKind::Unsupported);
  EXPECT_EQ(got.body, "42");
  EXPECT_TRUE(got.durable == false);
  EXPECT_EQ(got.delivery_count, 0U);
  EXPECT_FALSE(got.message_id || got.correlation_id || got.content_type || got.subject ||
               got.creation_time_ms);
  EXPECT_TRUE(got.annotations.empty());
  EXPECT_TRUE(got.properties.empty());
}

TEST(Amqp10Codec, ValuesOfOtherTypesAreNamedAndNotSendable) {
  proton::message m;
  m.properties().put("sym", proton::symbol("a-symbol"));
  m.properties().put("ts", proton::timestamp(1749132727000));
  m.properties().put("c", proton::scalar(wchar_t{'x'}));
  // A compound annotation value is named by its type; a ulong key (the only other key type AMQP
  // allows in annotations) is rendered.
  m.message_annotations().put(proton::symbol("x-map"),
                              proton::value(std::map<std::string, int>{{"a", 1}}));
  m.message_annotations().put(proton::annotation_key(std::uint64_t{7}), proton::value(true));
  const Message got = detail::from_proton(m);
  EXPECT_EQ(got.annotations.at("x-map"), Value(Other{"map"}));
  EXPECT_EQ(got.annotations.at("7"), Value(true));
  EXPECT_EQ(got.properties.at("sym"), Value(Other{"symbol"}));
  EXPECT_EQ(got.properties.at("ts"), Value(Other{"timestamp"}));
  EXPECT_EQ(got.properties.at("c"), Value(Other{"char"}));
  Message out;
  out.properties = {{"x", Other{"symbol"}}};
  EXPECT_THROW(static_cast<void>(detail::to_proton(out)), ConfigError);
}

TEST(Amqp10Options, BadOptionsAreConfigErrors) {
  EXPECT_THROW(Client(Options{.host = ""}), ConfigError);
  EXPECT_THROW(Client(Options{.port = 0}), ConfigError);
  EXPECT_THROW(Client(Options{.port = 70000}), ConfigError);
  EXPECT_NO_THROW(Client(Options{.prefetch = 0}));  // explicit credit (ASB-5), no I/O yet
  EXPECT_THROW(Client(Options{.password = "secret"}), ConfigError);
  EXPECT_THROW(Client(Options{.timeout = milliseconds(0)}), ConfigError);
  try {
    Client(Options{.user = "u", .password = "the-secret", .timeout = milliseconds(0)});
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).find("the-secret"), std::string::npos);
  }
}

// A port nothing listens on.
Options nowhere(milliseconds timeout) {
  return Options{
      .host = "127.0.0.1", .port = babelqueue::testing::free_loopback_port(), .timeout = timeout};
}

TEST(Amqp10Client, ConstructionDoesNoIo) {
  Client client(nowhere(milliseconds(200)));
  EXPECT_EQ(client.connection(), 0U);
  client.close();
  EXPECT_EQ(client.connection(), 0U);
  EXPECT_THROW(client.send("q", Message{}), ClosedError);
}

TEST(Amqp10Client, SendWithoutAPeerTimesOutAndKeepsReconnecting) {
  Client client(nowhere(milliseconds(400)));
  const auto started = Clock::now();
  try {
    client.send("q", Message{.body = "x"});
    ADD_FAILURE() << "sent without a peer";
  } catch (const TimeoutError& e) {
    // It says why: the connection was refused.
    EXPECT_NE(std::string(e.what()).find("the last connection failed"), std::string::npos)
        << e.what();
  }
  EXPECT_GE(Clock::now() - started, milliseconds(400));
  // Refused connections are retried with the backoff: more than one attempt was made.
  EXPECT_GT(client.connection(), 1U);
  const auto closing = Clock::now();
  client.close();
  client.close();  // idempotent
  EXPECT_LT(Clock::now() - closing, milliseconds(2'000));
  EXPECT_THROW(static_cast<void>(client.receive("q", milliseconds(1))), ClosedError);
}

TEST(Amqp10Client, CloseWakesABlockedReceive) {
  Client client(nowhere(milliseconds(5'000)));
  std::optional<std::string> error;
  std::thread receiver([&] {
    try {
      static_cast<void>(client.receive("q", std::chrono::minutes(1)));
    } catch (const ClosedError& e) {
      error = e.what();
    }
  });
  std::this_thread::sleep_for(milliseconds(100));  // let it block
  const auto closing = Clock::now();
  client.close();
  receiver.join();
  EXPECT_LT(Clock::now() - closing, milliseconds(2'000));
  ASSERT_TRUE(error.has_value());
}

TEST(Amqp10Client, ReceiveTimesOutWithNothing) {
  Client client(nowhere(milliseconds(5'000)));
  const auto started = Clock::now();
  EXPECT_FALSE(client.receive("q", milliseconds(150)).has_value());
  EXPECT_GE(Clock::now() - started, milliseconds(150));
}

}  // namespace
}  // namespace babelqueue::amqp10
