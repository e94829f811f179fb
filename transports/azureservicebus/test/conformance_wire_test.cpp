// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The conformance `asb` block through real messages on the scripted peer: what the transport
// sends, read back by the peer with its AMQP types (inspect: ASB-4, ASB-T1: message-id,
// correlation-id, subject, content-type as strings, `bq-schema-version` and `bq-created-at` as
// long, one Data section with the body's bytes), messages stored by the peer with a chosen
// delivery-count and typed application properties, read through `pop` (ASB-6, ASB-T2 floor
// vectors; ASB-9, ASB-T3: the manifest's string and typed gate cases, int32/int64 1 decode,
// float, double, boolean and binary reject), and their settlement (ASB-T4: complete, abandon,
// native dead-letter with reason and description), and the $management peek (Inspector).

#include <babelqueue/app.hpp>
#include <babelqueue/binding/azureservicebus.hpp>
#include <babelqueue/binding/common.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/testing/publish_paths.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "binding/fixtures.hpp"
#include "peer_test.hpp"

namespace babelqueue::azureservicebus::test {
namespace {

using babelqueue::testing::kBriefly;
using babelqueue::testing::kWithin;
using babelqueue::testing::pop_message;
using babelqueue::testing::publish_paths;
using babelqueue::testing::PublishPath;
using babelqueue::testing::PublishPathName;

const Json& projection_block() {
  return binding_test::manifest_block("asb", "property_projection");
}

// The one stored message of `entity` (a test failure when there is not exactly one).
Json the_message(const std::string& entity) {
  const Json all = PeerTest::stored(entity);
  if (all.as_array().size() != 1) {
    ADD_FAILURE() << "expected one message in " << entity << ", got " << all.dump();
    return Json::object();
  }
  return all.as_array()[0];
}

std::string field(const Json& m, const char* section, const char* key, const char* part) {
  const Json* s = m.find(section);
  const Json* entry = s == nullptr ? nullptr : s->find(key);
  const Json* v = entry == nullptr ? nullptr : entry->find(part);
  if (v == nullptr) return "<absent>";
  return v->is_string() ? v->as_string() : v->dump();
}

std::string base64_of(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const auto n = (static_cast<unsigned>(static_cast<unsigned char>(bytes[i])) << 16U) |
                   (static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 1])) << 8U) |
                   static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 2]));
    for (int k = 18; k >= 0; k -= 6)
      out += kAlphabet[(n >> static_cast<unsigned>(k)) & 63U];
  }
  if (i < bytes.size()) {
    unsigned n = static_cast<unsigned>(static_cast<unsigned char>(bytes[i])) << 16U;
    if (i + 1 < bytes.size())
      n |= static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 1])) << 8U;
    out += kAlphabet[(n >> 18U) & 63U];
    out += kAlphabet[(n >> 12U) & 63U];
    out += i + 1 < bytes.size() ? kAlphabet[(n >> 6U) & 63U] : '=';
    out += '=';
  }
  return out;
}

class ConformanceWire : public PeerTest, public ::testing::WithParamInterface<PublishPath> {};

TEST_P(ConformanceWire, ASB_T1_TheProjectionIsOnTheMessage) {
  const std::string body = binding_test::order_created();
  ASSERT_FALSE(body.empty());
  auto t = transport();
  ASSERT_TRUE(GetParam().publish(*t, queue(), body).ok());
  const Json m = the_message(queue());
  const Json* message = projection_block().find("message");
  ASSERT_NE(message, nullptr);
  for (const char* key : {"message_id", "correlation_id", "subject", "content_type"}) {
    EXPECT_EQ(field(m, "properties", key, "value"), message->find(key)->as_string()) << key;
  }
  for (const char* key : {"message_id", "correlation_id", "subject"})
    EXPECT_EQ(field(m, "properties", key, "type"), "string") << key << ": never uuid-typed";
  EXPECT_EQ(field(m, "properties", "content_type", "type"), "symbol") << "AMQP's type for it";
  const Json* props = projection_block().find("application_properties");
  ASSERT_NE(props, nullptr);
  EXPECT_EQ(field(m, "application_properties", "bq-schema-version", "type"), "long");
  EXPECT_EQ(field(m, "application_properties", "bq-schema-version", "value"),
            props->find("bq-schema-version")->dump());
  EXPECT_EQ(field(m, "application_properties", "bq-created-at", "type"), "long");
  EXPECT_EQ(field(m, "application_properties", "bq-created-at", "value"),
            props->find("bq-created-at")->dump());
  EXPECT_EQ(field(m, "application_properties", "bq-source-lang", "type"), "string");
  EXPECT_EQ(field(m, "application_properties", "bq-source-lang", "value"),
            props->find("bq-source-lang")->as_string());
  EXPECT_EQ(m.find("application_properties")->as_object().size(), 3U) << m.dump();
  const Json* sections = m.find("body");
  ASSERT_NE(sections, nullptr);
  ASSERT_EQ(sections->as_array().size(), 1U) << "exactly one Data section";
  EXPECT_EQ(sections->as_array()[0].find("section")->as_string(), "data");
  EXPECT_EQ(sections->as_array()[0].find("base64")->as_string(), base64_of(body))
      << "the body was re-encoded";
  EXPECT_TRUE(m.find("durable")->as_bool());
  t->close();
}

TEST_P(ConformanceWire, ASB_T1_AnUndecodableBodyTravelsWithContentTypeOnly) {
  auto t = transport();
  for (const std::string& body : binding_test::undecodable_bodies) {
    ASSERT_TRUE(GetParam().publish(*t, queue(), body).ok());
    const Json m = the_message(queue());
    EXPECT_EQ(field(m, "properties", "content_type", "value"), "application/json") << body;
    EXPECT_EQ(field(m, "properties", "message_id", "value"), "<absent>") << body;
    EXPECT_TRUE(m.find("application_properties")->as_object().empty()) << body;
    EXPECT_EQ(m.find("body")->as_array()[0].find("base64")->as_string(), base64_of(body));
    auto got = pop_message(*t, queue(), kWithin);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->body, body);
    ASSERT_TRUE(t->ack(*got).ok());
    EXPECT_EQ(count_becomes(queue(), "active", 0), 0);
  }
  t->close();
}

INSTANTIATE_TEST_SUITE_P(Paths, ConformanceWire, ::testing::ValuesIn(publish_paths()),
                         PublishPathName());

using ConformanceReceive = PeerTest;

// Stores `body` in `entity` at header delivery-count `count` with typed application
// properties {key: [type, value]}.
void enqueue(const std::string& entity, const std::string& body, int count = 0,
             const Json& typed = Json::object()) {
  const Json spec = Json::object({{"entity", entity},
                                  {"body", body},
                                  {"delivery_count", count},
                                  {"typed_application_properties", typed}});
  std::string command = spec.dump();
  command.insert(0, "enqueue ");
  PeerTest::peer().control(command);
}

// ASB-6, ASB-T2: header delivery-count d arrives as DeliveryCount d + 1, and the App's floor.
TEST_F(ConformanceReceive, ASB_T2_TheDeliveryCountIsTheHeaderPlusOne) {
  const Json* cases = binding_test::manifest_block("asb", "attempts_reconciliation").find("cases");
  ASSERT_NE(cases, nullptr);
  auto t = transport();
  for (const Json& c : cases->as_array()) {
    const std::int64_t dc = *c.find("delivery_count")->as_int64();
    if (dc == 0) continue;  // DeliveryCount 0 is not on the wire (header 0 is DeliveryCount 1)
    enqueue(queue(),
            binding_test::order_created_with_attempts(*c.find("body_attempts")->as_int64()),
            static_cast<int>(dc - 1));
    auto m = pop_message(*t, queue(), kWithin);
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->delivery_count, dc);
    EXPECT_EQ(binding::reconcile_attempts(*c.find("body_attempts")->as_int64(), m->delivery_count),
              *c.find("expected_attempts")->as_int64())
        << c.find("name")->as_string();
    ASSERT_TRUE(t->ack(*m).ok());
  }
}

// ASB-9, ASB-T3: every gate case of the manifest (strings and numbers), plus the typed cases of
// the spec: int32 and int64 1 decode; float, double 1.0, boolean and binary reject.
TEST_F(ConformanceReceive, ASB_T3_TheTypedGate) {
  const Json* cases = binding_test::manifest_block("asb", "schema_version_gate").find("cases");
  ASSERT_NE(cases, nullptr);
  const std::string body = binding_test::order_created();
  struct Case {
    Json typed;  // {"bq-schema-version": [type, value]} or {}
    bool reject;
    binding::amqp10::Value value;
  };
  std::vector<Case> all;
  for (const Json& c : cases->as_array()) {
    const bool reject = c.find("expect")->as_string() == "reject";
    const Json* absent = c.find("absent");
    if (absent != nullptr && absent->as_bool()) {
      all.push_back({Json::object(), reject, std::monostate{}});
      continue;
    }
    const Json& v = *c.find("value");
    if (v.is_string()) {
      all.push_back({Json::object({{"bq-schema-version", Json::array({"string", v})}}), reject,
                     v.as_string()});
    } else if (v.as_int64()) {
      const std::int64_t n = *v.as_int64();
      all.push_back({Json::object({{"bq-schema-version", Json::array({"int", v})}}), reject,
                     static_cast<std::int32_t>(n)});
      all.push_back({Json::object({{"bq-schema-version", Json::array({"long", v})}}), reject, n});
    } else {
      all.push_back({Json::object({{"bq-schema-version", Json::array({"double", v})}}), reject,
                     v.as_number().as_double()});
    }
  }
  all.push_back({Json::object({{"bq-schema-version", Json::array({"double", 1.0})}}), true, 1.0});
  all.push_back({Json::object({{"bq-schema-version", Json::array({"float", 1.0})}}), true, 1.0F});
  all.push_back(
      {Json::object({{"bq-schema-version", Json::array({"boolean", true})}}), true, true});
  all.push_back({Json::object({{"bq-schema-version", Json::array({"binary", "1"})}}), true,
                 binding::amqp10::Binary{"1"}});
  all.push_back({Json::object({{"bq-schema-version", Json::array({"null", nullptr})}}), false,
                 std::monostate{}});
  for (const Case& c : all)
    enqueue(queue(), body, 0, c.typed);
  std::vector<std::string> rejected;
  Options o = parse_url(peer().url());
  o.on_schema_version_rejected = [&](std::string_view version, std::string_view q) {
    EXPECT_EQ(q, queue());
    rejected.emplace_back(version);
  };
  ServiceBusTransport t(o);
  std::vector<std::string> expected;
  for (std::size_t i = 0; i < all.size(); ++i) {
    auto m = pop_message(t, queue(), kWithin);
    ASSERT_TRUE(m.has_value()) << "case " << i;
    const auto gate = binding::azureservicebus::schema_version_gate(all[i].value);
    EXPECT_EQ(gate.reject, all[i].reject) << "case " << i << ": " << all[i].typed.dump();
    if (all[i].reject) {
      EXPECT_EQ(m->route, gate.route) << "case " << i << ": " << all[i].typed.dump();
      EXPECT_FALSE(m->route.empty()) << "case " << i << ": " << all[i].typed.dump();
      expected.push_back(gate.version);
    } else {
      EXPECT_TRUE(m->route.empty())
          << "case " << i << ": " << all[i].typed.dump() << " " << m->route;
    }
    EXPECT_EQ(m->body, body);
    ASSERT_TRUE(t.ack(*m).ok());
  }
  EXPECT_EQ(rejected, expected) << "OB-6 hook once per reject";
}

// ASB-7, ASB-8, ASB-T4: complete removes; abandon (modified{delivery-failed}) redelivers with
// DeliveryCount + 1; a second settle is StaleDelivery.
TEST_F(ConformanceReceive, ASB_T4_CompleteAndAbandon) {
  auto t = transport();
  ASSERT_TRUE(t->publish(queue(), binding_test::order_created()).ok());
  for (std::int64_t expected = 1; expected <= 3; ++expected) {
    auto m = pop_message(*t, queue(), kWithin);
    ASSERT_TRUE(m.has_value()) << "delivery " << expected;
    EXPECT_EQ(m->delivery_count, expected);
    ASSERT_TRUE(t->rewind(*m).ok());
    EXPECT_TRUE(t->ack(*m).is(ErrorCode::StaleDelivery)) << "settled twice";
  }
  auto last = pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->delivery_count, 4);
  ASSERT_TRUE(t->ack(*last).ok());
  EXPECT_FALSE(pop_message(*t, queue(), kBriefly).has_value());
  EXPECT_EQ(count_becomes(queue(), "active", 0), 0);
  EXPECT_EQ(peer().count(queue(), "locked"), 0);
}

// ASB-10, ASB-T4: hand_to_broker in both modes.
TEST_F(ConformanceReceive, ASB_T4_HandToBrokerAbandonsOrDeadLetters) {
  {
    auto t = transport();
    ASSERT_TRUE(t->publish(queue(), "not an envelope").ok());
    auto m = pop_message(*t, queue(), kWithin);
    ASSERT_TRUE(m.has_value());
    ASSERT_TRUE(t->hand_to_broker(*m, "poison: not JSON").ok());
    auto again = pop_message(*t, queue(), kWithin);
    ASSERT_TRUE(again.has_value()) << "abandon returns it";
    EXPECT_EQ(again->delivery_count, 2);
    ASSERT_TRUE(t->ack(*again).ok());
  }
  auto t = transport("native_dead_letter=dead_letter");
  ASSERT_TRUE(t->publish(queue(), "not an envelope").ok());
  enqueue(queue(), binding_test::order_created(), 0,
          Json::object({{"bq-schema-version", Json::array({"long", 2})}}));
  auto poison = pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(poison.has_value());
  // 6001 bytes of UTF-8: "x" and 3000 two-byte characters.
  std::string long_why = "x";
  for (int i = 0; i < 3000; ++i)
    long_why += "\xC3\xA9";
  ASSERT_TRUE(t->hand_to_broker(*poison, long_why).ok());
  auto gated = pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(gated.has_value());
  ASSERT_FALSE(gated->route.empty());
  ASSERT_TRUE(t->hand_to_broker(*gated, "unsupported schema version 2").ok());
  const std::string dlq = queue() + "/$DeadLetterQueue";
  EXPECT_EQ(count_becomes(queue(), "dead_lettered", 2), 2);
  EXPECT_EQ(peer().count(queue(), "active"), 0);
  const Json dead = stored(dlq);
  ASSERT_EQ(dead.as_array().size(), 2U);
  EXPECT_EQ(field(dead.as_array()[0], "application_properties", "DeadLetterReason", "value"),
            "poison");
  EXPECT_EQ(
      field(dead.as_array()[0], "application_properties", "DeadLetterErrorDescription", "value"),
      long_why.substr(0, 4095))
      << "cut to 4096 bytes on a UTF-8 boundary (byte 4096 would split a character)";
  EXPECT_EQ(field(dead.as_array()[1], "application_properties", "DeadLetterReason", "value"),
            "unsupported_schema_version");
  EXPECT_EQ(
      field(dead.as_array()[1], "application_properties", "DeadLetterErrorDescription", "value"),
      "unsupported schema version 2");
  // The native DLQ is an entity of its own: it can be popped.
  auto back = pop_message(*t, dlq, kWithin);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->body, "not an envelope");
  EXPECT_EQ(back->headers.at("DeadLetterReason"), "poison");
  ASSERT_TRUE(t->ack(*back).ok());
}

// Inspector: $management peek locks nothing; stats counts by peeking.
TEST_F(ConformanceReceive, PeekAndStatsThroughManagement) {
  auto t = transport();
  EXPECT_TRUE(t->peek(queue(), 0)->empty());
  for (int i = 0; i < 150; ++i) {
    std::string body = std::to_string(i);
    body.insert(0, 1, 'm');
    ASSERT_TRUE(t->publish_with_headers(queue(), body, {{"x-i", "v"}}).ok());
  }
  ASSERT_TRUE(t->publish(default_dead_letter_name(queue()), "dead").ok());
  const auto all = t->peek(queue(), 0);
  ASSERT_TRUE(all.has_value()) << all.error().what();
  ASSERT_EQ(all->size(), 150U) << "pages of 100 are followed";
  EXPECT_EQ((*all)[0].body, "m0");
  EXPECT_EQ((*all)[149].body, "m149");
  EXPECT_EQ((*all)[0].headers.at("x-i"), "v");
  const auto head = t->peek(queue(), 2);
  ASSERT_TRUE(head.has_value());
  ASSERT_EQ(head->size(), 2U);
  EXPECT_EQ((*head)[1].body, "m1");
  EXPECT_EQ(peer().count(queue(), "locked"), 0) << "peek locked a message";
  const auto s = t->stats(queue(), "");
  ASSERT_TRUE(s.has_value()) << s.error().what();
  EXPECT_EQ(s->ready, 150);
  EXPECT_EQ(s->dead_letter, 1);
  EXPECT_FALSE(s->in_flight.has_value());
  auto m = pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->body, "m0") << "peek consumed nothing";
  ASSERT_TRUE(t->ack(*m).ok());
  t->close();
  EXPECT_EQ(t->peek(queue(), 1).error().code(), ErrorCode::Closed);
}

}  // namespace
}  // namespace babelqueue::azureservicebus::test
