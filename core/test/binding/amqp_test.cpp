// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// RabbitMQ (AMQP 0-9-1) binding rules: 04 AMQP-12..15, AMQP-30.

#include <babelqueue/binding/amqp.hpp>

#include <gtest/gtest.h>

#include "fixtures.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace {

using namespace binding_test;  // NOLINT(google-build-using-namespace)

// ---------------------------------------------------------------------------------------------
// RabbitMQ (04 AMQP-12..15, AMQP-30)
// ---------------------------------------------------------------------------------------------

TEST(RabbitmqBinding, AMQP30_OrderCreatedProjection) {
  const bb::amqp::Projection p = bb::amqp::projection(order_created());
  EXPECT_EQ(p.properties.type, std::string(kUrn));
  EXPECT_EQ(p.properties.correlation_id, std::string(kTrace));
  EXPECT_EQ(p.properties.message_id, std::string(kId));
  EXPECT_EQ(p.properties.app_id, "babelqueue");
  EXPECT_EQ(p.properties.content_type, "application/json");
  EXPECT_EQ(p.properties.content_encoding, "utf-8");
  EXPECT_EQ(p.properties.delivery_mode, 2);
  const std::map<std::string, bb::amqp::FieldValue> expected{
      {"x-schema-version", bb::amqp::FieldValue(std::in_place_type<std::int32_t>, 1)},
      {"x-source-lang", bb::amqp::FieldValue(std::in_place_type<std::string>, "php")},
      {"x-attempts", bb::amqp::FieldValue(std::in_place_type<std::int32_t>, 0)},
  };
  EXPECT_EQ(p.headers, expected);
  EXPECT_TRUE(p.omitted.empty());
}

TEST(RabbitmqBinding, AMQPT1_FieldTableTags) {
  const bb::amqp::Projection p = bb::amqp::projection(order_created());
  ASSERT_EQ(p.headers.count("x-attempts"), 1U);
  ASSERT_EQ(p.headers.count("x-schema-version"), 1U);
  ASSERT_EQ(p.headers.count("x-source-lang"), 1U);
  EXPECT_EQ(bb::amqp::field_tag(p.headers.at("x-attempts")), 'I');
  EXPECT_EQ(bb::amqp::field_tag(p.headers.at("x-schema-version")), 'I');
  EXPECT_EQ(bb::amqp::field_tag(p.headers.at("x-source-lang")), 'S');
}

TEST(RabbitmqBinding, AMQP13_Int64OutsideInt32AndOmissions) {
  const std::string body =
      envelope("urn:x", R"({"id":"","queue":"q","lang":"","schema_version":0,"created_at":0})",
               "3000000000");
  const bb::amqp::Projection p = bb::amqp::projection(body);
  ASSERT_EQ(p.headers.size(), 1U);  // no x-schema-version (0), no x-source-lang (empty)
  const bb::amqp::FieldValue& attempts = p.headers.at("x-attempts");
  EXPECT_EQ(bb::amqp::field_tag(attempts), 'l');
  EXPECT_EQ(std::get<std::int64_t>(attempts), 3000000000);
  EXPECT_FALSE(p.properties.message_id.has_value());  // empty meta.id omitted
  EXPECT_EQ(p.properties.correlation_id, "t-1");
  EXPECT_EQ(p.properties.type, "urn:x");

  const bb::amqp::Projection edge =
      bb::amqp::projection(envelope("urn:x", R"({"schema_version":3000000000})", "2147483647"));
  EXPECT_EQ(bb::amqp::field_tag(edge.headers.at("x-attempts")), 'I');
  EXPECT_EQ(std::get<std::int32_t>(edge.headers.at("x-attempts")), 2147483647);
  EXPECT_EQ(bb::amqp::field_tag(edge.headers.at("x-schema-version")), 'l');
  EXPECT_EQ(std::get<std::int64_t>(edge.headers.at("x-schema-version")), 3000000000);
  const bb::amqp::Projection over = bb::amqp::projection(envelope("urn:x", "{}", "2147483648"));
  EXPECT_EQ(bb::amqp::field_tag(over.headers.at("x-attempts")), 'l');
}

TEST(RabbitmqBinding, AMQP15_UndecodableCarriesConstantsOnly) {
  for (const std::string& body : undecodable_bodies) {
    const bb::amqp::Projection p = bb::amqp::projection(body);
    EXPECT_EQ(p.properties, bb::amqp::Properties{}) << body;
    EXPECT_EQ(p.properties.delivery_mode, 2);
    EXPECT_EQ(p.properties.app_id, "babelqueue");
    EXPECT_FALSE(p.properties.type.has_value());
    EXPECT_TRUE(p.headers.empty()) << body;
  }
  const bb::amqp::Projection with_riders =
      bb::amqp::projection("not json", {{"traceparent", "00-a-b-01"}});
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
  const bb::amqp::Projection p = bb::amqp::projection(order_created(), riders);
  EXPECT_EQ(p.headers.size(), 6U);
  EXPECT_EQ(std::get<std::string>(p.headers.at("traceparent")),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  EXPECT_EQ(bb::amqp::field_tag(p.headers.at("tracestate")), 'S');
  EXPECT_EQ(std::get<std::string>(p.headers.at("bq-replay-bypass")), "1");
  EXPECT_EQ(std::get<std::string>(p.headers.at("x-source-lang")), "php");
  EXPECT_EQ(std::get<std::int32_t>(p.headers.at("x-attempts")), 0);
  EXPECT_EQ(p.headers.count(""), 0U);
  EXPECT_EQ(p.headers.count("empty-value"), 0U);
  EXPECT_TRUE(p.omitted.empty());
}

TEST(RabbitmqBinding, AMQP14_EmptyRidersEqualPlainPublish) {
  const bb::amqp::Projection plain = bb::amqp::projection(order_created());
  const bb::amqp::Projection blank = bb::amqp::projection(order_created(), {{"", "x"}, {"k", ""}});
  EXPECT_EQ(plain.properties, blank.properties);
  EXPECT_EQ(plain.headers, blank.headers);
}

TEST(RabbitmqBinding, AMQP12_ShortStringLimitOmitsNeverTruncates) {
  const std::string urn256 = "urn:" + std::string(252, 'a');
  const std::string urn255 = "urn:" + std::string(251, 'a');
  ASSERT_EQ(urn256.size(), 256U);

  const bb::amqp::Projection longer = bb::amqp::projection(envelope(urn256, "{}", "0"));
  EXPECT_FALSE(longer.properties.type.has_value());
  EXPECT_EQ(longer.properties.correlation_id, "t-1");
  ASSERT_EQ(longer.omitted.size(), 1U);
  EXPECT_EQ(longer.omitted[0], (bb::amqp::Omitted{"type", 256}));
  EXPECT_EQ(longer.headers.count("x-attempts"), 1U);  // still published with its headers

  const bb::amqp::Projection exact = bb::amqp::projection(envelope(urn255, "{}", "0"));
  EXPECT_EQ(exact.properties.type, urn255);
  EXPECT_TRUE(exact.omitted.empty());

  const std::string key256(256, 'k');
  const std::string key255(255, 'k');
  const bb::amqp::Projection keys =
      bb::amqp::projection(order_created(), {{key256, "v"}, {key255, "v"}});
  EXPECT_EQ(keys.headers.count(key256), 0U);
  EXPECT_EQ(keys.headers.count(key255), 1U);
  ASSERT_EQ(keys.omitted.size(), 1U);
  EXPECT_EQ(keys.omitted[0], (bb::amqp::Omitted{key256, 256}));
}

TEST(BindingManifest, AMQP30_RabbitmqTableMatches) {
  const Json& table = manifest_block("rabbitmq", "property_projection");
  const bb::amqp::Projection p = bb::amqp::projection(order_created());
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
    const bb::amqp::FieldValue& got = p.headers.at(name);
    if (value.is_number()) {
      ASSERT_TRUE(std::holds_alternative<std::int32_t>(got)) << name;  // integers stay integers
      EXPECT_EQ(std::get<std::int32_t>(got), value.as_int64()) << name;
    } else {
      ASSERT_TRUE(std::holds_alternative<std::string>(got)) << name;
      EXPECT_EQ(std::get<std::string>(got), value.as_string()) << name;
    }
  }
}

// A publisher projects one body after another into the same Projection: whatever the previous
// projection left there (more or fewer headers, a header that changes type, absent properties,
// omissions), the result equals a fresh projection of the next body.
TEST(RabbitmqBinding, AMQP12_ProjectionIntoReusedStorageEqualsAFreshOne) {
  const bb::Riders riders{{"traceparent", "00-ab-01"},
                          {"x-source-lang", "rider"},
                          {"x-attempts", "rider"},
                          {std::string(256, 'k'), "v"},
                          {"empty", ""}};
  const std::string long_urn = "urn:" + std::string(300, 'u');
  const std::vector<std::pair<std::string, bb::Riders>> inputs = {
      {order_created(), riders},
      {order_created(), {}},
      {envelope("urn:x", R"({"schema_version":3000000000,"lang":"go"})", "2147483648"), riders},
      {envelope("urn:x", "{}", "7"), {}},
      {"not json", riders},
      {envelope(long_urn, R"({"id":"m-1"})", "0"), {{"a", "1"}}},
      {"not json", {}},
      {order_created(), riders},
      {envelope("urn:y", R"({"lang":"","schema_version":0})", "1"), {{"x-schema-version", "r"}}},
  };
  bb::amqp::Projection reused;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& [body, with] = inputs[i];
    bb::amqp::projection_into(body, with, reused);
    const bb::amqp::Projection fresh = bb::amqp::projection(body, with);
    EXPECT_EQ(reused.properties, fresh.properties) << i;
    EXPECT_EQ(reused.headers, fresh.headers) << i;
    EXPECT_EQ(reused.omitted, fresh.omitted) << i;
  }
  // The inputs exercise what they claim: a rider kept under a contract key of an undecodable
  // body, an int64 attempts after an int32 one, and omissions.
  bb::amqp::projection_into("not json", riders, reused);
  EXPECT_EQ(std::get<std::string>(reused.headers.at("x-attempts")), "rider");
  EXPECT_EQ(reused.omitted.size(), 1U);
  bb::amqp::projection_into(inputs[2].first, riders, reused);
  EXPECT_EQ(std::get<std::int64_t>(reused.headers.at("x-attempts")), 2147483648);
  EXPECT_EQ(std::get<std::string>(reused.headers.at("x-source-lang")), "go");
}

}  // namespace
