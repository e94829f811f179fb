// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// ActiveMQ Artemis binding rules: 05 ART-4, ART-5, ART-6.

#include <babelqueue/binding/artemis.hpp>

#include <gtest/gtest.h>

#include "fixtures.hpp"

#include <cstdint>
#include <map>
#include <string>

namespace {

using namespace binding_test;  // NOLINT(google-build-using-namespace)

// ---------------------------------------------------------------------------------------------
// Artemis (05 ART-4, ART-5, ART-6)
// ---------------------------------------------------------------------------------------------

TEST(ArtemisBinding, ART4_OrderCreatedProjection) {
  const bb::artemis::Projection p = bb::artemis::projection(order_created());
  EXPECT_EQ(bb::artemis::JMS_TYPE_ANNOTATION, "x-opt-jms-type");
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
    const bb::artemis::Projection p = bb::artemis::projection(body);
    EXPECT_FALSE(p.jms_type.has_value()) << body;
    EXPECT_FALSE(p.correlation_id.has_value());
    EXPECT_FALSE(p.creation_time.has_value());
    EXPECT_TRUE(p.properties.empty()) << body;
  }
  EXPECT_TRUE(bb::artemis::projection("not json").text_body);
  EXPECT_FALSE(bb::artemis::projection(std::string("\xFF\xFE\x41")).text_body);
  EXPECT_FALSE(bb::artemis::projection(std::string("\xED\xA0\x80")).text_body);  // surrogate
}

TEST(ArtemisBinding, ART4_OmissionsAndRiders) {
  const bb::artemis::Projection p = bb::artemis::projection(
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
        bb::reconcile_attempts(v[0], bb::artemis::delivery_count(static_cast<std::uint32_t>(v[1]))),
        v[2])
        << v[0] << "," << v[1];
  }
}

TEST(ArtemisBinding, ART6_TypedGate) {
  EXPECT_FALSE(bb::artemis::schema_version_gate(AmqpValue{}).reject);
  EXPECT_FALSE(bb::artemis::schema_version_gate(av<std::string>("1")).reject);
  EXPECT_FALSE(bb::artemis::schema_version_gate(av<std::string>("")).reject);
  const bb::GateDecision int_one = bb::artemis::schema_version_gate(av<std::int32_t>(1));
  EXPECT_TRUE(int_one.reject);
  EXPECT_EQ(int_one.route, route("1"));
  EXPECT_TRUE(bb::artemis::schema_version_gate(av<std::string>("2")).reject);
}

TEST(BindingManifest, ART4_ArtemisTableMatches) {
  const Json& table = manifest_block("artemis", "property_projection");
  const bb::artemis::Projection p = bb::artemis::projection(order_created());
  EXPECT_EQ(table.find("jms_type_annotation")->as_string(), bb::artemis::JMS_TYPE_ANNOTATION);
  EXPECT_EQ(p.jms_type, table.find("jms_type")->as_string());
  EXPECT_EQ(p.correlation_id, table.find("correlation_id")->as_string());
  EXPECT_EQ(p.properties, string_table(*table.find("properties")));
}

}  // namespace
