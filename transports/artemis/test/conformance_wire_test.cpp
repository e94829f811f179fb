// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The conformance `artemis` block through real messages on the shared broker: what
// ArtemisTransport sends, read back raw with RawAmqp10 (ART-4, ART-T1: the x-opt-jms-type
// annotation with a symbol key, a string correlation-id, the creation-time, exactly the four
// string bq_ properties of the manifest, an AMQP string body, durable; an undecodable body with
// nothing beside it), and messages sent raw, read through `pop` (ART-5, ART-T2: string value,
// binary value and data bodies give the same bytes; the delivery-count from rewinds; ART-6,
// ART-T3: the manifest's gate cases as string properties, a long rejects) and their settlement
// (ART-7, ART-8, ART-T4). The expected values come from the manifest, read in place
// (binding/fixtures.hpp).

#include <babelqueue/binding/artemis.hpp>
#include <babelqueue/binding/common.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/testing/publish_paths.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "binding/fixtures.hpp"
#include "shared_broker_test.hpp"

namespace babelqueue::artemis::test {
namespace {

using babelqueue::testing::ack_and_settle;
using babelqueue::testing::kBriefly;
using babelqueue::testing::kWithin;
using babelqueue::testing::pop_message;
using babelqueue::testing::publish_paths;
using babelqueue::testing::PublishPath;
using babelqueue::testing::PublishPathName;

const Json& projection_block() {
  return binding_test::manifest_block("artemis", "property_projection");
}

std::string manifest_string(const char* key) {
  const Json* v = projection_block().find(key);
  if (v == nullptr) {
    ADD_FAILURE() << "artemis.property_projection has no " << key;
    return {};
  }
  return v->as_string();
}

// The one message of `queue` as a raw client reads it (a test failure when none came).
RawMessage the_message(RawAmqp10& raw, const std::string& queue) {
  std::vector<RawMessage> got = raw.receive(queue, 1, kWithin);
  if (got.size() != 1) {
    ADD_FAILURE() << "expected one message on " << queue << ", got " << got.size();
    return {};
  }
  return got[0];
}

class ConformanceWire : public SharedBrokerTest,
                        public ::testing::WithParamInterface<PublishPath> {};

TEST_P(ConformanceWire, ART_T1_TheProjectionIsOnTheMessage) {
  const std::string body = binding_test::order_created();
  ASSERT_FALSE(body.empty());
  auto t = transport();
  ASSERT_TRUE(GetParam().publish(*t, queue(), body).ok());
  const RawMessage m = the_message(raw(), queue());
  EXPECT_EQ(m.body, body) << "the body was re-encoded";
  EXPECT_EQ(m.body_section, "string") << "a valid UTF-8 body is a JMS TextMessage";
  EXPECT_TRUE(m.durable) << "Q4: durable by default";
  const std::string annotation = manifest_string("jms_type_annotation");
  EXPECT_EQ(m.annotations,
            (std::map<std::string, std::string>{{annotation, manifest_string("jms_type")}}))
      << "(the raw client reads annotation keys as symbols only)";
  EXPECT_EQ(m.annotation_types.at(annotation), "string");
  EXPECT_EQ(m.correlation_id, manifest_string("correlation_id"));
  EXPECT_EQ(m.correlation_id_type, "string") << "never uuid-typed";
  EXPECT_EQ(m.creation_time_ms, binding_test::kCreatedAt);
  const Json* properties = projection_block().find("properties");
  ASSERT_NE(properties, nullptr);
  EXPECT_EQ(m.properties, binding_test::string_table(*properties));
  t->close();
}

TEST_P(ConformanceWire, ART_T1_AnUndecodableBodyTravelsAlone) {
  auto t = transport();
  for (const std::string& body : binding_test::undecodable_bodies) {
    ASSERT_TRUE(GetParam().publish(*t, queue(), body).ok());
    const RawMessage m = the_message(raw(), queue());
    EXPECT_EQ(m.body, body);
    EXPECT_TRUE(m.annotations.empty()) << body;
    EXPECT_TRUE(m.properties.empty()) << body;
    EXPECT_EQ(m.correlation_id, std::nullopt) << body;
    EXPECT_EQ(m.creation_time_ms, std::nullopt) << body;
  }
  t->close();
}

INSTANTIATE_TEST_SUITE_P(Paths, ConformanceWire, ::testing::ValuesIn(publish_paths()),
                         PublishPathName());

using ConformanceReceive = SharedBrokerTest;

// ART-4: a body that is not valid UTF-8 goes out as one Data section, byte for byte.
TEST_F(ConformanceReceive, ART4_AnInvalidUtf8BodyIsOneDataSection) {
  const std::string body("\xFF\xFE{\"job\":\"urn:x\"}\x80", 18);
  auto t = transport();
  ASSERT_TRUE(t->publish(queue(), body).ok());
  const RawMessage m = the_message(raw(), queue());
  EXPECT_EQ(m.body, body);
  EXPECT_EQ(m.body_section, "data");
}

// ART-5, ART-T2: an AMQP string value, an AMQP binary value and a Data section give the same
// `body`; the application properties are the headers (OB-4).
TEST_F(ConformanceReceive, ART_T2_EveryBodySectionGivesTheSameBody) {
  const std::string body = binding_test::order_created();
  for (const char* section : {"string", "binary", "data"}) {
    RawMessage out;
    out.body = body;
    out.body_section = section;
    out.properties = {{"x-tenant", "acme"}};
    raw().send(queue(), out);
  }
  auto t = transport();
  for (const char* section : {"string", "binary", "data"}) {
    auto m = pop_message(*t, queue(), kWithin);
    ASSERT_TRUE(m.has_value()) << section;
    EXPECT_EQ(m->body, body) << section;
    EXPECT_EQ(m->headers, (Headers{{"x-tenant", "acme"}})) << section;
    EXPECT_EQ(m->delivery_count, 1) << "header delivery-count 0 + 1 (RT-3)";
    EXPECT_TRUE(m->route.empty());
    EXPECT_TRUE(t->ack(*m).ok());
  }
}

// ART-5, ART-8, ART-T2: each rewind (modified{delivery-failed}) makes Artemis raise the header
// delivery-count, which `delivery_count` reports + 1.
TEST_F(ConformanceReceive, ART_T2_TheDeliveryCountFollowsTheRewinds) {
  auto t = transport();
  ASSERT_TRUE(t->publish(queue(), binding_test::order_created()).ok());
  for (std::int64_t expected = 1; expected <= 3; ++expected) {
    auto m = pop_message(*t, queue(), kWithin);
    ASSERT_TRUE(m.has_value()) << "delivery " << expected << " never came";
    EXPECT_EQ(m->delivery_count, expected);
    ASSERT_TRUE(t->rewind(*m).ok());
    EXPECT_TRUE(t->ack(*m).is(ErrorCode::StaleDelivery)) << "settled twice";
  }
  auto last = pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->delivery_count, 4);
  ASSERT_TRUE(t->ack(*last).ok());
  EXPECT_FALSE(pop_message(*t, queue(), kBriefly).has_value()) << "ack is accepted (ART-7)";
  t->close();
  EXPECT_EQ(count_becomes(queue(), 0), 0);
}

// ART-6, ART-T3: every gate case of the manifest as a string application property.
TEST_F(ConformanceReceive, ART_T3_TheManifestsGateCases) {
  const Json& gate = binding_test::manifest_block("artemis", "schema_version_gate");
  const Json* cases = gate.find("cases");
  ASSERT_NE(cases, nullptr);
  const std::string body = binding_test::order_created();
  std::vector<std::optional<std::string>> values;
  std::vector<bool> rejects;
  for (const Json& c : cases->as_array()) {
    RawMessage out;
    out.body = body;
    const Json* absent = c.find("absent");
    if (absent == nullptr || !absent->as_bool()) {
      values.emplace_back(c.find("value")->as_string());
      out.properties = {{"bq_schema_version", *values.back()}};
    } else {
      values.emplace_back(std::nullopt);
    }
    rejects.push_back(c.find("expect")->as_string() == "reject");
    raw().send(queue(), out);
  }
  ASSERT_EQ(values.size(), 18U);
  std::vector<std::string> rejected_versions;
  Options o = parse_url(url());
  o.on_schema_version_rejected = [&](std::string_view version, std::string_view q) {
    EXPECT_EQ(q, queue());
    rejected_versions.emplace_back(version);
  };
  ArtemisTransport t(o);
  std::vector<std::string> expected_versions;
  for (std::size_t i = 0; i < values.size(); ++i) {
    auto m = pop_message(t, queue(), kWithin);
    ASSERT_TRUE(m.has_value()) << "case " << i;
    if (rejects[i]) {
      EXPECT_EQ(m->route, binding::schema_version_gate(*values[i]).route) << "case " << i;
      EXPECT_FALSE(m->route.empty()) << "case " << i;
      expected_versions.push_back(*values[i]);
    } else {
      EXPECT_TRUE(m->route.empty()) << "case " << i << ": " << m->route;
    }
    EXPECT_EQ(m->body, body);
    ASSERT_TRUE(t.ack(*m).ok());
  }
  EXPECT_EQ(rejected_versions, expected_versions) << "OB-6 hook once per reject";
}

// ART-6, ART-T3: a bq_schema_version of any AMQP type but string (here the long 1) rejects.
TEST_F(ConformanceReceive, ART_T3_ANonStringVersionRejects) {
  RawMessage out;
  out.body = binding_test::order_created();
  out.long_properties = {{"bq_schema_version", 1}};
  raw().send(queue(), out);
  auto t = transport();
  auto m = pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->route,
            binding::artemis::schema_version_gate(binding::amqp10::Value(std::int64_t{1})).route);
  EXPECT_FALSE(m->route.empty()) << "an int 1 was accepted";
  EXPECT_EQ(m->headers.at("bq_schema_version"), "1") << "OB-4: integers as decimal text";
  EXPECT_TRUE(t->ack(*m).ok());
}

}  // namespace
}  // namespace babelqueue::artemis::test
