// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/binding.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

namespace bb = babelqueue::binding;
using babelqueue::Json;
using bb::AmqpValue;

constexpr std::string_view kUrn = "urn:babel:orders:created";
constexpr std::string_view kTrace = "7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b";
constexpr std::string_view kId = "f1e2d3c4-b5a6-4789-90ab-cdef01234567";
constexpr std::int64_t kCreatedAt = 1749132727000;

std::string conformance_dir() {
  if (const char* env = std::getenv("BABELQUEUE_CONFORMANCE_DIR"); env != nullptr && *env != 0) {
    return env;
  }
  return BABELQUEUE_DEFAULT_CONFORMANCE_DIR;
}

// The bytes of a shared conformance file; empty (plus a test failure) when it cannot be read.
std::string read_conformance(const std::string& relative) {
  const std::string path = conformance_dir() + "/" + relative;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return {};
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string order_created() {
  return read_conformance("fixtures/order-created.json");
}

const Json& manifest() {
  static const Json m = Json::parse(read_conformance("manifest.json"));
  return m;
}

template <class T>
AmqpValue av(T v) {
  return AmqpValue(std::in_place_type<T>, std::move(v));
}

// A compact envelope with the given meta/attempts members, for omission and width tests.
std::string envelope(std::string_view job, std::string_view meta, std::string_view attempts) {
  std::string s = R"({"job":")";
  s += job;
  s += R"(","trace_id":"t-1","data":{},"meta":)";
  s += meta;
  s += R"(,"attempts":)";
  s += attempts;
  s += "}";
  return s;
}

std::string route(std::string_view escaped) {
  return std::string(bb::UNSUPPORTED_ROUTE_PREFIX) + std::string(escaped);
}

const std::vector<std::string> undecodable_bodies = {
    "not json", R"({"job":"urn:x","data":[1]})", "",
    "[1,2]",    std::string("\xFF\xFE\x41"),     R"({"job":"urn:x","attempts":1.5})"};

// ---------------------------------------------------------------------------------------------
// Contract values (OB-2)
// ---------------------------------------------------------------------------------------------

TEST(BindingContract, OB2_OrderCreatedContract) {
  const std::optional<bb::Contract> c = bb::contract_of(order_created());
  ASSERT_TRUE(c.has_value());
  const bb::Contract expected{
      std::string(kUrn), std::string(kTrace), std::string(kId), "php", 1, kCreatedAt, 0};
  EXPECT_EQ(*c, expected);
}

TEST(BindingContract, OB2_UndecodableHasNoContract) {
  for (const std::string& body : undecodable_bodies) {
    EXPECT_FALSE(bb::contract_of(body).has_value()) << body;
  }
}

TEST(BindingContract, OB2_UrnAliasIsResolved) {
  const std::optional<bb::Contract> c = bb::contract_of(R"({"urn":"  urn:a:b  ","data":{}})");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->urn, "urn:a:b");
  EXPECT_EQ(c->attempts, 0);
  EXPECT_EQ(c->schema_version, 0);
}

// ---------------------------------------------------------------------------------------------
// RabbitMQ (04 AMQP-12..15, AMQP-30)
// ---------------------------------------------------------------------------------------------

TEST(RabbitmqBinding, AMQP30_OrderCreatedProjection) {
  const bb::RabbitmqProjection p = bb::rabbitmq_projection(order_created());
  EXPECT_EQ(p.properties.type, std::string(kUrn));
  EXPECT_EQ(p.properties.correlation_id, std::string(kTrace));
  EXPECT_EQ(p.properties.message_id, std::string(kId));
  EXPECT_EQ(p.properties.app_id, "babelqueue");
  EXPECT_EQ(p.properties.content_type, "application/json");
  EXPECT_EQ(p.properties.content_encoding, "utf-8");
  EXPECT_EQ(p.properties.delivery_mode, 2);
  const std::map<std::string, bb::RabbitmqFieldValue> expected{
      {"x-schema-version", bb::RabbitmqFieldValue(std::in_place_type<std::int32_t>, 1)},
      {"x-source-lang", bb::RabbitmqFieldValue(std::in_place_type<std::string>, "php")},
      {"x-attempts", bb::RabbitmqFieldValue(std::in_place_type<std::int32_t>, 0)},
  };
  EXPECT_EQ(p.headers, expected);
  EXPECT_TRUE(p.omitted.empty());
}

TEST(RabbitmqBinding, AMQPT1_FieldTableTags) {
  const bb::RabbitmqProjection p = bb::rabbitmq_projection(order_created());
  ASSERT_EQ(p.headers.count("x-attempts"), 1U);
  ASSERT_EQ(p.headers.count("x-schema-version"), 1U);
  ASSERT_EQ(p.headers.count("x-source-lang"), 1U);
  EXPECT_EQ(bb::field_tag(p.headers.at("x-attempts")), 'I');
  EXPECT_EQ(bb::field_tag(p.headers.at("x-schema-version")), 'I');
  EXPECT_EQ(bb::field_tag(p.headers.at("x-source-lang")), 'S');
}

TEST(RabbitmqBinding, AMQP13_Int64OutsideInt32AndOmissions) {
  const std::string body =
      envelope("urn:x", R"({"id":"","queue":"q","lang":"","schema_version":0,"created_at":0})",
               "3000000000");
  const bb::RabbitmqProjection p = bb::rabbitmq_projection(body);
  ASSERT_EQ(p.headers.size(), 1U);  // no x-schema-version (0), no x-source-lang (empty)
  const bb::RabbitmqFieldValue& attempts = p.headers.at("x-attempts");
  EXPECT_EQ(bb::field_tag(attempts), 'l');
  EXPECT_EQ(std::get<std::int64_t>(attempts), 3000000000);
  EXPECT_FALSE(p.properties.message_id.has_value());  // empty meta.id omitted
  EXPECT_EQ(p.properties.correlation_id, "t-1");
  EXPECT_EQ(p.properties.type, "urn:x");

  const bb::RabbitmqProjection edge =
      bb::rabbitmq_projection(envelope("urn:x", R"({"schema_version":3000000000})", "2147483647"));
  EXPECT_EQ(bb::field_tag(edge.headers.at("x-attempts")), 'I');
  EXPECT_EQ(std::get<std::int32_t>(edge.headers.at("x-attempts")), 2147483647);
  EXPECT_EQ(bb::field_tag(edge.headers.at("x-schema-version")), 'l');
  EXPECT_EQ(std::get<std::int64_t>(edge.headers.at("x-schema-version")), 3000000000);
  const bb::RabbitmqProjection over =
      bb::rabbitmq_projection(envelope("urn:x", "{}", "2147483648"));
  EXPECT_EQ(bb::field_tag(over.headers.at("x-attempts")), 'l');
}

TEST(RabbitmqBinding, AMQP15_UndecodableCarriesConstantsOnly) {
  for (const std::string& body : undecodable_bodies) {
    const bb::RabbitmqProjection p = bb::rabbitmq_projection(body);
    EXPECT_EQ(p.properties, bb::RabbitmqProperties{}) << body;
    EXPECT_EQ(p.properties.delivery_mode, 2);
    EXPECT_EQ(p.properties.app_id, "babelqueue");
    EXPECT_FALSE(p.properties.type.has_value());
    EXPECT_TRUE(p.headers.empty()) << body;
  }
  const bb::RabbitmqProjection with_riders =
      bb::rabbitmq_projection("not json", {{"traceparent", "00-a-b-01"}});
  ASSERT_EQ(with_riders.headers.size(), 1U);
  EXPECT_EQ(std::get<std::string>(with_riders.headers.at("traceparent")), "00-a-b-01");
}

TEST(RabbitmqBinding, AMQP14_RidersMergedContractWins) {
  const bb::Riders riders{
      {"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
      {"tracestate", "k=v"},
      {"bq-replay-bypass", "1"},
      {"x-source-lang", "ATTACKER"},
      {"x-attempts", "99"},
      {"", "blank-key"},
      {"empty-value", ""}};
  const bb::RabbitmqProjection p = bb::rabbitmq_projection(order_created(), riders);
  EXPECT_EQ(p.headers.size(), 6U);
  EXPECT_EQ(std::get<std::string>(p.headers.at("traceparent")),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  EXPECT_EQ(bb::field_tag(p.headers.at("tracestate")), 'S');
  EXPECT_EQ(std::get<std::string>(p.headers.at("bq-replay-bypass")), "1");
  EXPECT_EQ(std::get<std::string>(p.headers.at("x-source-lang")), "php");
  EXPECT_EQ(std::get<std::int32_t>(p.headers.at("x-attempts")), 0);
  EXPECT_EQ(p.headers.count(""), 0U);
  EXPECT_EQ(p.headers.count("empty-value"), 0U);
  EXPECT_TRUE(p.omitted.empty());
}

TEST(RabbitmqBinding, AMQP14_EmptyRidersEqualPlainPublish) {
  const bb::RabbitmqProjection plain = bb::rabbitmq_projection(order_created());
  const bb::RabbitmqProjection blank =
      bb::rabbitmq_projection(order_created(), {{"", "x"}, {"k", ""}});
  EXPECT_EQ(plain.properties, blank.properties);
  EXPECT_EQ(plain.headers, blank.headers);
}

TEST(RabbitmqBinding, AMQP12_ShortStringLimitOmitsNeverTruncates) {
  const std::string urn256 = "urn:" + std::string(252, 'a');
  const std::string urn255 = "urn:" + std::string(251, 'a');
  ASSERT_EQ(urn256.size(), 256U);

  const bb::RabbitmqProjection longer = bb::rabbitmq_projection(envelope(urn256, "{}", "0"));
  EXPECT_FALSE(longer.properties.type.has_value());
  EXPECT_EQ(longer.properties.correlation_id, "t-1");
  ASSERT_EQ(longer.omitted.size(), 1U);
  EXPECT_EQ(longer.omitted[0], (bb::Omitted{"type", 256}));
  EXPECT_EQ(longer.headers.count("x-attempts"), 1U);  // still published with its headers

  const bb::RabbitmqProjection exact = bb::rabbitmq_projection(envelope(urn255, "{}", "0"));
  EXPECT_EQ(exact.properties.type, urn255);
  EXPECT_TRUE(exact.omitted.empty());

  const std::string key256(256, 'k');
  const std::string key255(255, 'k');
  const bb::RabbitmqProjection keys =
      bb::rabbitmq_projection(order_created(), {{key256, "v"}, {key255, "v"}});
  EXPECT_EQ(keys.headers.count(key256), 0U);
  EXPECT_EQ(keys.headers.count(key255), 1U);
  ASSERT_EQ(keys.omitted.size(), 1U);
  EXPECT_EQ(keys.omitted[0], (bb::Omitted{key256, 256}));
}

// ---------------------------------------------------------------------------------------------
// SQS (05 SQS-6, SQS-10)
// ---------------------------------------------------------------------------------------------

TEST(SqsBinding, SQS6_OrderCreatedAttributes) {
  const bb::SqsProjection p = bb::sqs_projection(order_created());
  const std::vector<bb::SqsAttribute> expected{
      {"bq-job", "String", std::string(kUrn)},       {"bq-trace-id", "String", std::string(kTrace)},
      {"bq-message-id", "String", std::string(kId)}, {"bq-schema-version", "Number", "1"},
      {"bq-source-lang", "String", "php"},           {"bq-created-at", "Number", "1749132727000"},
  };
  EXPECT_EQ(p.attributes, expected);
  EXPECT_TRUE(p.dropped_riders.empty());
}

TEST(SqsBinding, SQS6_UndecodableHasNoAttributes) {
  for (const std::string& body : undecodable_bodies) {
    EXPECT_TRUE(bb::sqs_projection(body).attributes.empty()) << body;
  }
}

TEST(SqsBinding, SQS6_OmissionRules) {
  const bb::SqsProjection p = bb::sqs_projection(R"({"job":"urn:x","data":{},"attempts":4})");
  const std::vector<bb::SqsAttribute> expected{{"bq-job", "String", "urn:x"}};
  EXPECT_EQ(p.attributes, expected);
}

TEST(SqsBinding, SQST1_RidersSortedSkipExistingAndCapTen) {
  const bb::Riders riders{{"r8", "8"},         {"r1", "1"}, {"r3", "3"},  {"r2", "2"},
                          {"r5", "5"},         {"r4", "4"}, {"r7", "7"},  {"r6", "6"},
                          {"bq-job", "spoof"}, {"", "x"},   {"blank", ""}};
  const bb::SqsProjection p = bb::sqs_projection(order_created(), riders);
  ASSERT_EQ(p.attributes.size(), bb::SQS_MAX_ATTRIBUTES);
  EXPECT_EQ(p.attributes[0], (bb::SqsAttribute{"bq-job", "String", std::string(kUrn)}));
  EXPECT_EQ(p.attributes[5].name, "bq-created-at");
  EXPECT_EQ(p.attributes[6], (bb::SqsAttribute{"r1", "String", "1"}));
  EXPECT_EQ(p.attributes[7], (bb::SqsAttribute{"r2", "String", "2"}));
  EXPECT_EQ(p.attributes[8], (bb::SqsAttribute{"r3", "String", "3"}));
  EXPECT_EQ(p.attributes[9], (bb::SqsAttribute{"r4", "String", "4"}));
  const std::vector<std::string> dropped{"r5", "r6", "r7", "r8"};
  EXPECT_EQ(p.dropped_riders, dropped);
}

TEST(SqsBinding, SQS6_RidersOnUndecodableBody) {
  const bb::SqsProjection p = bb::sqs_projection("not json", {{"traceparent", "tp"}});
  const std::vector<bb::SqsAttribute> expected{{"traceparent", "String", "tp"}};
  EXPECT_EQ(p.attributes, expected);
}

TEST(SqsBinding, SQS10_ReceiveCountVectors) {
  struct Case {
    std::int64_t body;
    std::optional<std::string_view> count;
    std::int64_t expected;
  };
  const Case cases[] = {
      {0, "1", 0},         {0, "3", 2}, {2, "5", 4}, {5, "1", 5}, {4, "not-a-number", 4},
      {3, std::nullopt, 3}};
  for (const Case& c : cases) {
    EXPECT_EQ(bb::reconcile_attempts(c.body, bb::sqs_delivery_count(c.count)), c.expected)
        << c.body << "," << c.count.value_or("<absent>");
  }
}

TEST(SqsBinding, SQS10_ReceiveCountParsing) {
  EXPECT_EQ(bb::sqs_delivery_count(std::nullopt), 0);
  EXPECT_EQ(bb::sqs_delivery_count("1"), 1);
  EXPECT_EQ(bb::sqs_delivery_count("42"), 42);
  EXPECT_EQ(bb::sqs_delivery_count("0"), 0);
  EXPECT_EQ(bb::sqs_delivery_count("-1"), 0);
  EXPECT_EQ(bb::sqs_delivery_count(""), 0);
  EXPECT_EQ(bb::sqs_delivery_count("2.5"), 0);
  EXPECT_EQ(bb::sqs_delivery_count("99999999999999999999"), 0);
}

// ---------------------------------------------------------------------------------------------
// Azure Service Bus (05 ASB-4, ASB-6, ASB-9)
// ---------------------------------------------------------------------------------------------

TEST(AsbBinding, ASB4_OrderCreatedProjection) {
  const bb::AsbProjection p = bb::asb_projection(order_created());
  EXPECT_EQ(p.subject, std::string(kUrn));
  EXPECT_EQ(p.correlation_id, std::string(kTrace));
  EXPECT_EQ(p.message_id, std::string(kId));
  EXPECT_EQ(p.content_type, "application/json");
  const std::map<std::string, AmqpValue> expected{
      {"bq-schema-version", av<std::int64_t>(1)},
      {"bq-source-lang", av<std::string>("php")},
      {"bq-created-at", av<std::int64_t>(kCreatedAt)},
  };
  EXPECT_EQ(p.application_properties, expected);
  EXPECT_TRUE(std::holds_alternative<std::int64_t>(p.application_properties.at("bq-created-at")));
}

TEST(AsbBinding, ASB4_UndecodableKeepsContentTypeOnly) {
  for (const std::string& body : undecodable_bodies) {
    const bb::AsbProjection p = bb::asb_projection(body);
    EXPECT_EQ(p.content_type, "application/json");
    EXPECT_FALSE(p.subject.has_value());
    EXPECT_FALSE(p.correlation_id.has_value());
    EXPECT_FALSE(p.message_id.has_value());
    EXPECT_TRUE(p.application_properties.empty()) << body;
  }
}

TEST(AsbBinding, OB3_RidersAreStringPropertiesContractWins) {
  const bb::AsbProjection p = bb::asb_projection(
      order_created(), {{"traceparent", "tp"}, {"bq-source-lang", "ATTACKER"}, {"", "x"}});
  EXPECT_EQ(p.application_properties.size(), 4U);
  EXPECT_EQ(p.application_properties.at("traceparent"), av<std::string>("tp"));
  EXPECT_EQ(p.application_properties.at("bq-source-lang"), av<std::string>("php"));
}

TEST(AsbBinding, ASB6_DeliveryCountVectors) {
  // Manifest vectors in the SDKs' 1-based DeliveryCount.
  const std::int64_t sdk[][3] = {{0, 1, 0}, {0, 3, 2}, {2, 5, 4}, {5, 2, 5}, {4, 1, 4}, {3, 0, 3}};
  for (const auto& v : sdk) {
    EXPECT_EQ(bb::reconcile_attempts(v[0], v[1]), v[2]) << v[0] << "," << v[1];
  }
  // The same outcomes from the AMQP header delivery-count (0-based) the transport reads.
  EXPECT_EQ(bb::asb_delivery_count(0), 1);
  const std::int64_t wire[][3] = {{0, 0, 0}, {0, 2, 2}, {2, 4, 4}, {5, 1, 5}, {4, 0, 4}};
  for (const auto& v : wire) {
    EXPECT_EQ(
        bb::reconcile_attempts(v[0], bb::asb_delivery_count(static_cast<std::uint32_t>(v[1]))),
        v[2])
        << v[0] << "," << v[1];
  }
  EXPECT_EQ(bb::asb_delivery_count(std::numeric_limits<std::uint32_t>::max()), 4294967296);
}

TEST(AsbBinding, ASB9_TypedGateIntegralOneDecodes) {
  const AmqpValue ones[] = {av<std::int8_t>(1),   av<std::uint8_t>(1),  av<std::int16_t>(1),
                            av<std::uint16_t>(1), av<std::int32_t>(1),  av<std::uint32_t>(1),
                            av<std::int64_t>(1),  av<std::uint64_t>(1), AmqpValue{}};
  for (const AmqpValue& v : ones) {
    EXPECT_FALSE(bb::asb_schema_version_gate(v).reject) << v.index();
  }
}

TEST(AsbBinding, ASB9_TypedGateRejects) {
  const std::pair<AmqpValue, std::string> rejects[] = {
      {av<std::int32_t>(2), "2"},
      {av<std::int64_t>(2), "2"},
      {av<std::int32_t>(0), "0"},
      {av<std::int64_t>(0), "0"},
      {av<std::int8_t>(-1), "-1"},
      {av<std::uint64_t>(std::numeric_limits<std::uint64_t>::max()), "18446744073709551615"},
      {av<double>(1.5), "1.5"},
      {av<double>(1.0), "1.0"},
      {av<float>(1.0F), "1.0"},
      {av<double>(1e21), "1.0e+21"},
      {av<bool>(true), "true"},
      {av<bool>(false), "false"},
      {av<bb::AmqpBinary>(bb::AmqpBinary{"1"}), "31"},
      {av<bb::AmqpOther>(bb::AmqpOther{"symbol"}), "<symbol>"},
  };
  for (const auto& [value, text] : rejects) {
    const bb::GateDecision d = bb::asb_schema_version_gate(value);
    EXPECT_TRUE(d.reject) << text;
    EXPECT_EQ(d.version, text);
    EXPECT_EQ(d.route, bb::unsupported_route(text));
  }
  EXPECT_EQ(bb::asb_schema_version_gate(av<std::int64_t>(2)).route, route("2"));
  EXPECT_EQ(bb::asb_schema_version_gate(av<bb::AmqpOther>(bb::AmqpOther{"symbol"})).route,
            route("%3Csymbol%3E"));
}

TEST(AsbBinding, ASB9_TypedGateStringsFollowStringRules) {
  EXPECT_FALSE(bb::asb_schema_version_gate(av<std::string>("1")).reject);
  EXPECT_FALSE(bb::asb_schema_version_gate(av<std::string>(" \t")).reject);
  EXPECT_TRUE(bb::asb_schema_version_gate(av<std::string>("01")).reject);
  const bb::GateDecision padded = bb::asb_schema_version_gate(av<std::string>(" 1"));
  EXPECT_TRUE(padded.reject);
  EXPECT_EQ(padded.route, route("+1"));
}

// ---------------------------------------------------------------------------------------------
// Pulsar (05 PLS-5, PLS-7)
// ---------------------------------------------------------------------------------------------

TEST(PulsarBinding, PLS5_OrderCreatedProperties) {
  const std::map<std::string, std::string> expected{
      {"bq-job", std::string(kUrn)},       {"bq-trace-id", std::string(kTrace)},
      {"bq-message-id", std::string(kId)}, {"bq-schema-version", "1"},
      {"bq-source-lang", "php"},           {"bq-attempts", "0"},
  };
  EXPECT_EQ(bb::pulsar_properties(order_created()), expected);
}

TEST(PulsarBinding, PLS5_UndecodableCarriesRidersOnly) {
  for (const std::string& body : undecodable_bodies) {
    EXPECT_TRUE(bb::pulsar_properties(body).empty()) << body;
  }
  const std::map<std::string, std::string> riders_only{{"traceparent", "tp"}};
  EXPECT_EQ(bb::pulsar_properties("not json", {{"traceparent", "tp"}, {"x", ""}}), riders_only);
}

TEST(PulsarBinding, OB3_RidersContractWins) {
  const auto props = bb::pulsar_properties(
      order_created(), {{"bq-attempts", "7"}, {"traceparent", "tp"}, {"", "x"}, {"e", ""}});
  EXPECT_EQ(props.size(), 7U);
  EXPECT_EQ(props.at("bq-attempts"), "0");
  EXPECT_EQ(props.at("traceparent"), "tp");
}

TEST(PulsarBinding, PLS7_RedeliveryCountVectors) {
  const std::int64_t cases[][3] = {{0, 0, 0}, {0, 2, 2}, {2, 5, 5},
                                   {5, 1, 5}, {4, 0, 4}, {3, 3, 3}};
  for (const auto& v : cases) {
    EXPECT_EQ(bb::reconcile_attempts(v[0], bb::pulsar_delivery_count(v[1])), v[2])
        << v[0] << "," << v[1];
  }
  EXPECT_EQ(bb::pulsar_delivery_count(std::nullopt), 1);
  EXPECT_EQ(bb::pulsar_delivery_count(-4), 1);
  EXPECT_EQ(bb::pulsar_delivery_count(std::numeric_limits<std::int64_t>::max()),
            std::numeric_limits<std::int64_t>::max());
}

// ---------------------------------------------------------------------------------------------
// Kafka (05 KFK-5, KFK-10)
// ---------------------------------------------------------------------------------------------

TEST(KafkaBinding, KFK5_OrderCreatedHeadersAndTimestamp) {
  const bb::KafkaProjection p = bb::kafka_projection(order_created());
  const std::vector<std::pair<std::string, std::string>> expected{
      {"bq-job", std::string(kUrn)},       {"bq-trace-id", std::string(kTrace)},
      {"bq-message-id", std::string(kId)}, {"bq-schema-version", "1"},
      {"bq-source-lang", "php"},           {"bq-attempts", "0"},
  };
  EXPECT_EQ(p.headers, expected);
  EXPECT_EQ(p.timestamp_ms, kCreatedAt);
}

TEST(KafkaBinding, KFK5_UndecodableHasNoHeadersAndClientTime) {
  for (const std::string& body : undecodable_bodies) {
    const bb::KafkaProjection p = bb::kafka_projection(body);
    EXPECT_TRUE(p.headers.empty()) << body;
    EXPECT_EQ(p.timestamp_ms, 0);
  }
}

TEST(KafkaBinding, KFK5_RidersAppendedSkippingPresentKeys) {
  const bb::KafkaProjection p = bb::kafka_projection(
      order_created(),
      {{"traceparent", "tp"}, {"bq-attempts", "9"}, {"a", "1"}, {"", "x"}, {"b", ""}});
  ASSERT_EQ(p.headers.size(), 8U);
  EXPECT_EQ(p.headers[5], (std::pair<std::string, std::string>{"bq-attempts", "0"}));
  EXPECT_EQ(p.headers[6], (std::pair<std::string, std::string>{"a", "1"}));
  EXPECT_EQ(p.headers[7], (std::pair<std::string, std::string>{"traceparent", "tp"}));
}

TEST(KafkaBinding, KFK5_OmissionRulesAndUrnAlias) {
  const bb::KafkaProjection p =
      bb::kafka_projection(R"({"urn":"urn:a:b","trace_id":"","meta":{"created_at":0}})");
  const std::vector<std::pair<std::string, std::string>> expected{{"bq-job", "urn:a:b"},
                                                                  {"bq-attempts", "0"}};
  EXPECT_EQ(p.headers, expected);
  EXPECT_EQ(p.timestamp_ms, 0);

  const bb::KafkaProjection alias =
      bb::kafka_projection(read_conformance("fixtures/urn-alias.json"));
  ASSERT_FALSE(alias.headers.empty());
  EXPECT_EQ(alias.headers[0], (std::pair<std::string, std::string>{"bq-job", std::string(kUrn)}));

  EXPECT_EQ(bb::kafka_projection(R"({"job":"urn:x","meta":{"created_at":-5}})").timestamp_ms, 0);
}

TEST(KafkaBinding, KFK10_HeaderIsAuthoritative) {
  struct Case {
    std::int64_t body;
    std::optional<std::string_view> header;
    std::int64_t expected;
  };
  const Case cases[] = {{0, "0", 0}, {0, "2", 2}, {3, std::nullopt, 3}, {5, "1", 1}, {1, "4", 4}};
  for (const Case& c : cases) {
    const std::optional<std::int64_t> header =
        c.header ? bb::parse_attempts_header(*c.header) : std::nullopt;
    EXPECT_EQ(bb::kafka_attempts(c.body, header), c.expected) << c.body;

    const std::string body =
        envelope("urn:x", R"({"id":"m","queue":"q","lang":"go","schema_version":1,"created_at":1})",
                 std::to_string(c.body));
    const std::optional<std::string> rewritten = bb::kafka_reconcile_body(body, header);
    if (c.expected == c.body) {
      EXPECT_FALSE(rewritten.has_value()) << "bytes must stay untouched for " << c.body;
    } else {
      ASSERT_TRUE(rewritten.has_value()) << c.body;
      EXPECT_EQ(babelqueue::decode(*rewritten).attempts(), c.expected);
    }
  }
}

TEST(KafkaBinding, KFK10_RewriteIsTheReEmit) {
  // EX-2: the pretty-printed fixture re-emitted compact with attempts 1, lang kept.
  const std::optional<std::string> rewritten = bb::kafka_reconcile_body(order_created(), 1);
  ASSERT_TRUE(rewritten.has_value());
  EXPECT_EQ(
      *rewritten,
      R"({"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b",)"
      R"("data":{"order_id":1042},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567",)"
      R"("queue":"orders","lang":"php","schema_version":1,"created_at":1749132727000},)"
      R"("attempts":1})");

  // Lexemes and unknown members survive (ENV-34).
  const std::string extras =
      R"({"job":"urn:x","trace_id":"t","data":{"big":12345678901234567890,"f":1.0},)"
      R"("meta":{"schema_version":1,"vendor":true},"attempts":0,"extra_top":{"k":"<v&>"}})";
  const std::optional<std::string> kept = bb::kafka_reconcile_body(extras, 3);
  ASSERT_TRUE(kept.has_value());
  EXPECT_NE(kept->find(R"("big":12345678901234567890,"f":1.0)"), std::string::npos) << *kept;
  EXPECT_NE(kept->find(R"("extra_top":{"k":"<v&>"})"), std::string::npos) << *kept;
  EXPECT_NE(kept->find(R"("vendor":true)"), std::string::npos) << *kept;
  EXPECT_NE(kept->find(R"("attempts":3)"), std::string::npos) << *kept;
}

TEST(KafkaBinding, KFK10_BodyUntouchedWhenEqualAbsentOrUndecodable) {
  EXPECT_FALSE(bb::kafka_reconcile_body(order_created(), 0).has_value());
  EXPECT_FALSE(bb::kafka_reconcile_body(order_created(), std::nullopt).has_value());
  for (const std::string& body : undecodable_bodies) {
    EXPECT_FALSE(bb::kafka_reconcile_body(body, 2).has_value()) << body;
  }
  // A body without `attempts` decodes as 0: a header "0" leaves it alone, "1" rewrites it.
  EXPECT_FALSE(bb::kafka_reconcile_body(R"({"job":"urn:x"})", 0).has_value());
  const std::optional<std::string> raised = bb::kafka_reconcile_body(R"({"job":"urn:x"})", 1);
  ASSERT_TRUE(raised.has_value());
  EXPECT_EQ(babelqueue::decode(*raised).attempts(), 1);
}

TEST(KafkaBinding, KFK10_HeaderParseEdgeCases) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const std::pair<std::string_view, std::optional<std::int64_t>> cases[] = {
      {"0", 0},
      {"2", 2},
      {"007", 7},
      {" 3 ", 3},
      {"\t4\n", 4},
      {"\v\f5\r", 5},
      {"+3", 3},
      {" +3 ", 3},
      {"9223372036854775807", kMax},
      {"-1", std::nullopt},
      {"-0", std::nullopt},
      {"x", std::nullopt},
      {"1x", std::nullopt},
      {"1 2", std::nullopt},
      {"1.0", std::nullopt},
      {"1e2", std::nullopt},
      {"0x1", std::nullopt},
      {"++1", std::nullopt},
      {"+", std::nullopt},
      {"", std::nullopt},
      {" \t", std::nullopt},
      {"9223372036854775808", std::nullopt},
      {"99999999999999999999", std::nullopt},
      {"\xC2\xA0"
       "1",
       std::nullopt},  // NBSP is not ASCII whitespace
      {"1\xE3\x80\x80", std::nullopt},
  };
  for (const auto& [text, expected] : cases) {
    EXPECT_EQ(bb::parse_attempts_header(text), expected) << '"' << text << '"';
  }
}

// ---------------------------------------------------------------------------------------------
// Artemis (05 ART-4, ART-5, ART-6)
// ---------------------------------------------------------------------------------------------

TEST(ArtemisBinding, ART4_OrderCreatedProjection) {
  const bb::ArtemisProjection p = bb::artemis_projection(order_created());
  EXPECT_EQ(bb::ARTEMIS_JMS_TYPE_ANNOTATION, "x-opt-jms-type");
  EXPECT_EQ(p.jms_type, std::string(kUrn));
  EXPECT_EQ(p.correlation_id, std::string(kTrace));
  EXPECT_EQ(p.creation_time, kCreatedAt);
  const std::map<std::string, std::string> expected{{"bq_schema_version", "1"},
                                                    {"bq_source_lang", "php"},
                                                    {"bq_attempts", "0"},
                                                    {"bq_app_id", "babelqueue"}};
  EXPECT_EQ(p.properties, expected);
  EXPECT_TRUE(p.text_body);
}

TEST(ArtemisBinding, ART4_UndecodableBodyOnly) {
  for (const std::string& body : undecodable_bodies) {
    const bb::ArtemisProjection p = bb::artemis_projection(body);
    EXPECT_FALSE(p.jms_type.has_value()) << body;
    EXPECT_FALSE(p.correlation_id.has_value());
    EXPECT_FALSE(p.creation_time.has_value());
    EXPECT_TRUE(p.properties.empty()) << body;
  }
  EXPECT_TRUE(bb::artemis_projection("not json").text_body);
  EXPECT_FALSE(bb::artemis_projection(std::string("\xFF\xFE\x41")).text_body);
  EXPECT_FALSE(bb::artemis_projection(std::string("\xED\xA0\x80")).text_body);  // surrogate
}

TEST(ArtemisBinding, ART4_OmissionsAndRiders) {
  const bb::ArtemisProjection p = bb::artemis_projection(
      R"({"job":"urn:x","meta":{"schema_version":0}})",
      {{"bq_attempts", "5"}, {"bq-attempts", "5"}, {"traceparent", "tp"}, {"", "x"}});
  const std::map<std::string, std::string> expected{{"bq_attempts", "0"},
                                                    {"bq_app_id", "babelqueue"},
                                                    {"bq-attempts", "5"},
                                                    {"traceparent", "tp"}};
  EXPECT_EQ(p.properties, expected);  // no bq_schema_version (0), no bq_source_lang (empty)
  EXPECT_FALSE(p.correlation_id.has_value());
  EXPECT_FALSE(p.creation_time.has_value());
  EXPECT_EQ(p.jms_type, "urn:x");
}

TEST(ArtemisBinding, ART5_DeliveryCountVectors) {
  const std::int64_t cases[][3] = {{0, 0, 0}, {0, 2, 2}, {2, 5, 5},
                                   {5, 1, 5}, {4, 0, 4}, {3, 3, 3}};
  for (const auto& v : cases) {
    EXPECT_EQ(
        bb::reconcile_attempts(v[0], bb::artemis_delivery_count(static_cast<std::uint32_t>(v[1]))),
        v[2])
        << v[0] << "," << v[1];
  }
}

TEST(ArtemisBinding, ART6_TypedGate) {
  EXPECT_FALSE(bb::artemis_schema_version_gate(AmqpValue{}).reject);
  EXPECT_FALSE(bb::artemis_schema_version_gate(av<std::string>("1")).reject);
  EXPECT_FALSE(bb::artemis_schema_version_gate(av<std::string>("")).reject);
  const bb::GateDecision int_one = bb::artemis_schema_version_gate(av<std::int32_t>(1));
  EXPECT_TRUE(int_one.reject);
  EXPECT_EQ(int_one.route, route("1"));
  EXPECT_TRUE(bb::artemis_schema_version_gate(av<std::string>("2")).reject);
}

// ---------------------------------------------------------------------------------------------
// Attempts floor (RT-39)
// ---------------------------------------------------------------------------------------------

TEST(Reconciliation, RT39_FloorRule) {
  EXPECT_EQ(bb::reconcile_attempts(3, 0), 3);   // not tracked
  EXPECT_EQ(bb::reconcile_attempts(3, -2), 3);  // nonsense count ignored
  EXPECT_EQ(bb::reconcile_attempts(0, 1), 0);
  EXPECT_EQ(bb::reconcile_attempts(0, 4), 3);
  EXPECT_EQ(bb::reconcile_attempts(7, 4), 7);  // never lowered
  EXPECT_EQ(bb::reconcile_attempts(2, 3), 2);
}

// ---------------------------------------------------------------------------------------------
// Schema-version gate and reserved route (RT-40, OB-6)
// ---------------------------------------------------------------------------------------------

struct GateVector {
  std::optional<std::string_view> value;
  bool reject;
};

// The manifest's 18 string vectors (identical for sqs, asb, pulsar, kafka, artemis).
const GateVector gate_vectors[] = {
    {"1", false},
    {"", false},
    {" \t", false},
    {" ", false},
    {"\n\v\f\r", false},
    {std::nullopt, false},
    {"2", true},
    {"01", true},
    {"x", true},
    {" 1", true},
    {"1 ", true},
    {"\t1\n", true},
    {"\xC2\xA0", true},      // U+00A0
    {"\xC2\x85", true},      // U+0085
    {"\xE3\x80\x80", true},  // U+3000
    {"\xEF\xBB\xBF", true},  // U+FEFF
    {"\xC2\xA0"
     "1",
     true},
    {"1\xE3\x80\x80", true},
};

TEST(SchemaVersionGate, RT40_StringVectors) {
  ASSERT_EQ(std::size(gate_vectors), 18U);
  for (const GateVector& v : gate_vectors) {
    const bb::GateDecision d = bb::schema_version_gate(v.value);
    EXPECT_EQ(d.reject, v.reject) << '"' << v.value.value_or("<absent>") << '"';
    if (v.reject) {
      EXPECT_EQ(d.version, *v.value);
      EXPECT_EQ(d.route, bb::unsupported_route(*v.value));
      EXPECT_TRUE(bb::is_unsupported_route(d.route));
    } else {
      EXPECT_EQ(d, bb::GateDecision{});
    }
    // The typed gates treat strings exactly the same way.
    const AmqpValue typed = v.value ? av<std::string>(std::string(*v.value)) : AmqpValue{};
    EXPECT_EQ(bb::asb_schema_version_gate(typed).reject, v.reject);
    EXPECT_EQ(bb::artemis_schema_version_gate(typed).reject, v.reject);
  }
}

TEST(SchemaVersionGate, RT40_BlankIsAsciiOnly) {
  EXPECT_TRUE(bb::is_ascii_blank(""));
  EXPECT_TRUE(bb::is_ascii_blank(" \t\n\v\f\r"));
  EXPECT_FALSE(bb::is_ascii_blank("\xC2\xA0"));
  EXPECT_FALSE(bb::is_ascii_blank("\xEF\xBB\xBF"));
  EXPECT_FALSE(bb::is_ascii_blank(std::string_view("\0", 1)));
  EXPECT_FALSE(bb::is_ascii_blank(" x "));
}

TEST(SchemaVersionGate, RT40_ManifestVectorsForEveryBroker) {
  for (const char* broker : {"sqs", "asb", "pulsar", "kafka", "artemis"}) {
    const Json* block = manifest().find(broker);
    ASSERT_NE(block, nullptr) << broker;
    const Json* gate = block->find("schema_version_gate");
    ASSERT_NE(gate, nullptr) << broker;
    const Json* cases = gate->find("cases");
    ASSERT_NE(cases, nullptr) << broker;
    std::size_t string_cases = 0;
    for (const Json& c : cases->as_array()) {
      const bool expect_reject = c.find("expect")->as_string() == "reject";
      const Json* value = c.find("value");
      if (value == nullptr || value->is_string()) {
        ++string_cases;
        const std::optional<std::string_view> v =
            value == nullptr ? std::nullopt : std::optional<std::string_view>(value->as_string());
        EXPECT_EQ(bb::schema_version_gate(v).reject, expect_reject) << broker;
        continue;
      }
      ASSERT_STREQ(broker, "asb") << "typed gate vectors are ASB only";
      ASSERT_TRUE(value->is_number());
      if (const std::optional<std::int64_t> n = value->as_int64()) {
        // JSON numbers carry no width: exercise int32 and int64 (and the other integral types).
        EXPECT_EQ(
            bb::asb_schema_version_gate(av<std::int32_t>(static_cast<std::int32_t>(*n))).reject,
            expect_reject)
            << *n;
        EXPECT_EQ(bb::asb_schema_version_gate(av<std::int64_t>(*n)).reject, expect_reject) << *n;
        EXPECT_EQ(
            bb::asb_schema_version_gate(av<std::uint8_t>(static_cast<std::uint8_t>(*n))).reject,
            expect_reject)
            << *n;
      } else {
        EXPECT_EQ(bb::asb_schema_version_gate(av<double>(value->as_number().as_double())).reject,
                  expect_reject);
      }
    }
    EXPECT_EQ(string_cases, 18U) << broker;
  }
}

TEST(ReservedRoute, RT40_EscapingExamples) {
  EXPECT_EQ(bb::UNSUPPORTED_ROUTE_PREFIX, "babelqueue:unsupported-schema-version:");
  EXPECT_EQ(bb::unsupported_route("2"), "babelqueue:unsupported-schema-version:2");
  EXPECT_EQ(bb::unsupported_route(" 1"), route("+1"));
  EXPECT_EQ(bb::unsupported_route("\xC3\xBC"), route("%C3%BC"));  // ü
  EXPECT_EQ(bb::unsupported_route(std::string(100, 'x')), route(std::string(64, 'x') + "..."));
  EXPECT_EQ(bb::unsupported_route(std::string(64, 'x')), route(std::string(64, 'x')));
  EXPECT_EQ(bb::unsupported_route(std::string(65, 'x')), route(std::string(64, 'x') + "..."));
  EXPECT_EQ(bb::unsupported_route(""), route(""));
  EXPECT_EQ(bb::unsupported_route("\t1\n"), route("%091%0A"));
  EXPECT_EQ(bb::unsupported_route("\xEF\xBB\xBF"), route("%EF%BB%BF"));
  // The cut counts escaped characters: 30 x 'ü' escape to 180 characters.
  std::string many_u;
  for (int i = 0; i < 30; ++i)
    many_u += "\xC3\xBC";
  const std::string cut = bb::unsupported_route(many_u);
  EXPECT_EQ(cut.size(), bb::UNSUPPORTED_ROUTE_PREFIX.size() + 64 + 3);
  EXPECT_EQ(cut.substr(bb::UNSUPPORTED_ROUTE_PREFIX.size(), 7), "%C3%BC%");
}

TEST(ReservedRoute, RT40_QueryEscapeSemantics) {
  EXPECT_EQ(bb::query_escape("AZaz09-_.~"), "AZaz09-_.~");
  EXPECT_EQ(bb::query_escape("a b"), "a+b");
  EXPECT_EQ(bb::query_escape("a/b?c=d&e+f%"), "a%2Fb%3Fc%3Dd%26e%2Bf%25");
  EXPECT_EQ(bb::query_escape(std::string_view("\x00\x7F\xFF", 3)), "%00%7F%FF");
  EXPECT_EQ(bb::query_escape(":*!'()"), "%3A%2A%21%27%28%29");
}

TEST(ReservedRoute, RT30_IsUnsupportedRoute) {
  EXPECT_TRUE(bb::is_unsupported_route("babelqueue:unsupported-schema-version:"));
  EXPECT_TRUE(bb::is_unsupported_route("babelqueue:unsupported-schema-version:2"));
  EXPECT_TRUE(bb::is_unsupported_route(bb::unsupported_route(std::string(100, 'x'))));
  EXPECT_FALSE(bb::is_unsupported_route(""));
  EXPECT_FALSE(bb::is_unsupported_route("babelqueue:unsupported-schema-version"));
  EXPECT_FALSE(bb::is_unsupported_route("BABELQUEUE:unsupported-schema-version:2"));
  EXPECT_FALSE(bb::is_unsupported_route(" babelqueue:unsupported-schema-version:2"));
  EXPECT_FALSE(bb::is_unsupported_route("urn:babel:orders:created"));
}

// ---------------------------------------------------------------------------------------------
// OB-4 header text of AMQP 1.0 values
// ---------------------------------------------------------------------------------------------

TEST(AmqpHeaderText, OB4_ValuesRenderedAsText) {
  EXPECT_EQ(bb::header_text(av<std::string>("abc")), "abc");
  EXPECT_EQ(bb::header_text(av<std::string>("")), "");
  EXPECT_EQ(bb::header_text(av<std::int64_t>(kCreatedAt)), "1749132727000");
  EXPECT_EQ(bb::header_text(av<std::int8_t>(-3)), "-3");
  EXPECT_EQ(bb::header_text(av<std::uint8_t>(200)), "200");
  EXPECT_EQ(bb::header_text(av<std::uint64_t>(std::numeric_limits<std::uint64_t>::max())),
            "18446744073709551615");
  EXPECT_EQ(bb::header_text(av<bool>(true)), "true");
  EXPECT_EQ(bb::header_text(av<bool>(false)), "false");
  EXPECT_EQ(bb::header_text(av<double>(1.5)), "1.5");
  EXPECT_EQ(bb::header_text(av<double>(0.1)), "0.1");
  EXPECT_EQ(bb::header_text(av<float>(0.1F)), "0.1");
  EXPECT_EQ(bb::header_text(AmqpValue{}), std::nullopt);
  EXPECT_EQ(bb::header_text(av<bb::AmqpBinary>(bb::AmqpBinary{"x"})), std::nullopt);
  EXPECT_EQ(bb::header_text(av<bb::AmqpOther>(bb::AmqpOther{"list"})), std::nullopt);
}

// ---------------------------------------------------------------------------------------------
// The manifest tables, read in place (cross-check of the hard-coded expectations above)
// ---------------------------------------------------------------------------------------------

const Json& block(std::string_view broker, std::string_view section) {
  const Json* b = manifest().find(broker);
  if (b == nullptr || b->find(section) == nullptr) {
    ADD_FAILURE() << "manifest has no " << broker << "." << section;
    static const Json empty = Json::object();
    return empty;
  }
  return *b->find(section);
}

TEST(BindingManifest, AMQP30_RabbitmqTableMatches) {
  const Json& table = block("rabbitmq", "property_projection");
  const bb::RabbitmqProjection p = bb::rabbitmq_projection(order_created());
  const std::map<std::string, std::optional<std::string>> props{
      {"type", p.properties.type},
      {"correlation_id", p.properties.correlation_id},
      {"message_id", p.properties.message_id},
      {"app_id", p.properties.app_id},
      {"content_type", p.properties.content_type}};
  ASSERT_NE(table.find("properties"), nullptr);
  for (const auto& [name, value] : table.find("properties")->as_object()) {
    ASSERT_EQ(props.count(name), 1U) << name;
    EXPECT_EQ(props.at(name), value.as_string()) << name;
  }
  ASSERT_NE(table.find("headers"), nullptr);
  const auto& headers = table.find("headers")->as_object();
  EXPECT_EQ(p.headers.size(), headers.size());
  for (const auto& [name, value] : headers) {
    ASSERT_EQ(p.headers.count(name), 1U) << name;
    const bb::RabbitmqFieldValue& got = p.headers.at(name);
    if (value.is_number()) {
      ASSERT_TRUE(std::holds_alternative<std::int32_t>(got)) << name;  // integers stay integers
      EXPECT_EQ(std::get<std::int32_t>(got), value.as_int64()) << name;
    } else {
      ASSERT_TRUE(std::holds_alternative<std::string>(got)) << name;
      EXPECT_EQ(std::get<std::string>(got), value.as_string()) << name;
    }
  }
}

TEST(BindingManifest, SQS6_SqsTableMatches) {
  const Json& table = block("sqs", "attribute_projection");
  const bb::SqsProjection p = bb::sqs_projection(order_created());
  ASSERT_NE(table.find("message_attributes"), nullptr);
  const auto& attrs = table.find("message_attributes")->as_object();
  ASSERT_EQ(p.attributes.size(), attrs.size());
  for (const auto& [name, value] : attrs) {
    const bb::SqsAttribute expected{name, value.find("DataType")->as_string(),
                                    value.find("StringValue")->as_string()};
    bool found = false;
    for (const bb::SqsAttribute& a : p.attributes) {
      if (a.name == name) {
        found = true;
        EXPECT_EQ(a, expected);
      }
    }
    EXPECT_TRUE(found) << name;
  }
}

TEST(BindingManifest, ASB4_AsbTableMatches) {
  const Json& table = block("asb", "property_projection");
  const bb::AsbProjection p = bb::asb_projection(order_created());
  const Json* message = table.find("message");
  ASSERT_NE(message, nullptr);
  EXPECT_EQ(p.subject, message->find("subject")->as_string());
  EXPECT_EQ(p.correlation_id, message->find("correlation_id")->as_string());
  EXPECT_EQ(p.message_id, message->find("message_id")->as_string());
  EXPECT_EQ(p.content_type, message->find("content_type")->as_string());
  const auto& props = table.find("application_properties")->as_object();
  ASSERT_EQ(p.application_properties.size(), props.size());
  for (const auto& [name, value] : props) {
    ASSERT_EQ(p.application_properties.count(name), 1U) << name;
    const AmqpValue expected = value.is_number() ? av<std::int64_t>(*value.as_int64())
                                                 : av<std::string>(value.as_string());
    EXPECT_EQ(p.application_properties.at(name), expected) << name;
  }
}

std::map<std::string, std::string> string_table(const Json& object) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : object.as_object())
    out.emplace(name, value.as_string());
  return out;
}

TEST(BindingManifest, PLS5_PulsarTableMatches) {
  const Json& table = block("pulsar", "property_projection");
  ASSERT_NE(table.find("properties"), nullptr);
  EXPECT_EQ(bb::pulsar_properties(order_created()), string_table(*table.find("properties")));
}

TEST(BindingManifest, KFK5_KafkaTableMatches) {
  const Json& table = block("kafka", "property_projection");
  ASSERT_NE(table.find("headers"), nullptr);
  const bb::KafkaProjection p = bb::kafka_projection(order_created());
  const std::map<std::string, std::string> got(p.headers.begin(), p.headers.end());
  EXPECT_EQ(got.size(), p.headers.size());  // no duplicate keys
  EXPECT_EQ(got, string_table(*table.find("headers")));
}

TEST(BindingManifest, ART4_ArtemisTableMatches) {
  const Json& table = block("artemis", "property_projection");
  const bb::ArtemisProjection p = bb::artemis_projection(order_created());
  EXPECT_EQ(table.find("jms_type_annotation")->as_string(), bb::ARTEMIS_JMS_TYPE_ANNOTATION);
  EXPECT_EQ(p.jms_type, table.find("jms_type")->as_string());
  EXPECT_EQ(p.correlation_id, table.find("correlation_id")->as_string());
  EXPECT_EQ(p.properties, string_table(*table.find("properties")));
}

}  // namespace
