// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Azure Service Bus binding rules: 05 ASB-4, ASB-6, ASB-9.

#include <babelqueue/binding/azureservicebus.hpp>

#include <gtest/gtest.h>

#include "fixtures.hpp"

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <variant>

namespace {

using namespace binding_test;  // NOLINT(google-build-using-namespace)
namespace asb = babelqueue::binding::azureservicebus;

// ---------------------------------------------------------------------------------------------
// Azure Service Bus (05 ASB-4, ASB-6, ASB-9)
// ---------------------------------------------------------------------------------------------

TEST(AsbBinding, ASB4_OrderCreatedProjection) {
  const asb::Projection p = asb::projection(order_created());
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
    const asb::Projection p = asb::projection(body);
    EXPECT_EQ(p.content_type, "application/json");
    EXPECT_FALSE(p.subject.has_value());
    EXPECT_FALSE(p.correlation_id.has_value());
    EXPECT_FALSE(p.message_id.has_value());
    EXPECT_TRUE(p.application_properties.empty()) << body;
  }
}

TEST(AsbBinding, OB3_RidersAreStringPropertiesContractWins) {
  const asb::Projection p = asb::projection(
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
  EXPECT_EQ(asb::delivery_count(0), 1);
  const std::int64_t wire[][3] = {{0, 0, 0}, {0, 2, 2}, {2, 4, 4}, {5, 1, 5}, {4, 0, 4}};
  for (const auto& v : wire) {
    EXPECT_EQ(bb::reconcile_attempts(v[0], asb::delivery_count(static_cast<std::uint32_t>(v[1]))),
              v[2])
        << v[0] << "," << v[1];
  }
  EXPECT_EQ(asb::delivery_count(std::numeric_limits<std::uint32_t>::max()), 4294967296);
}

TEST(AsbBinding, ASB9_TypedGateIntegralOneDecodes) {
  const AmqpValue ones[] = {av<std::int8_t>(1),   av<std::uint8_t>(1),  av<std::int16_t>(1),
                            av<std::uint16_t>(1), av<std::int32_t>(1),  av<std::uint32_t>(1),
                            av<std::int64_t>(1),  av<std::uint64_t>(1), AmqpValue{}};
  for (const AmqpValue& v : ones) {
    EXPECT_FALSE(asb::schema_version_gate(v).reject) << v.index();
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
      {av<bb::amqp10::Binary>(bb::amqp10::Binary{"1"}), "31"},
      {av<bb::amqp10::Other>(bb::amqp10::Other{"symbol"}), "<symbol>"},
  };
  for (const auto& [value, text] : rejects) {
    const bb::GateDecision d = asb::schema_version_gate(value);
    EXPECT_TRUE(d.reject) << text;
    EXPECT_EQ(d.version, text);
    EXPECT_EQ(d.route, bb::unsupported_route(text));
  }
  EXPECT_EQ(asb::schema_version_gate(av<std::int64_t>(2)).route, route("2"));
  EXPECT_EQ(asb::schema_version_gate(av<bb::amqp10::Other>(bb::amqp10::Other{"symbol"})).route,
            route("%3Csymbol%3E"));
}

TEST(AsbBinding, ASB9_TypedGateStringsFollowStringRules) {
  EXPECT_FALSE(asb::schema_version_gate(av<std::string>("1")).reject);
  EXPECT_FALSE(asb::schema_version_gate(av<std::string>(" \t")).reject);
  EXPECT_TRUE(asb::schema_version_gate(av<std::string>("01")).reject);
  const bb::GateDecision padded = asb::schema_version_gate(av<std::string>(" 1"));
  EXPECT_TRUE(padded.reject);
  EXPECT_EQ(padded.route, route("+1"));
}

TEST(BindingManifest, ASB4_AsbTableMatches) {
  const Json& table = manifest_block("asb", "property_projection");
  const asb::Projection p = asb::projection(order_created());
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

}  // namespace
