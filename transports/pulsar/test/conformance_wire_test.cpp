// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The conformance `pulsar` block through real frames on the shared broker: what
// PulsarTransport sends, read back by RawPulsar (PLS-5, PLS-T1: the payload is the body byte for
// byte, the properties are exactly the manifest's table; an undecodable body travels alone;
// riders beside), and messages sent raw, read through `pop` (PLS-7, PLS-T2: the manifest's
// attempts reconciliation from real redelivery counts made by rewinds; PLS-8, PLS-T3: the
// manifest's gate cases as real properties). The expected values come from the manifest, read
// in place (binding/fixtures.hpp).

#include <babelqueue/binding/common.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/testing/publish_paths.hpp>

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "binding/fixtures.hpp"
#include "transport_test.hpp"

namespace babelqueue::pulsar::test {
namespace {

using babelqueue::testing::kWithin;
using babelqueue::testing::pop_message;
using babelqueue::testing::publish_paths;
using babelqueue::testing::PublishPath;
using babelqueue::testing::PublishPathName;

std::map<std::string, std::string> properties_of(const RawMessage& m) {
  std::map<std::string, std::string> out;
  for (const auto& p : m.message.metadata.properties())
    out.emplace(p.key(), p.value());
  return out;
}

RawMessage the_message(const std::string& queue) {
  std::vector<RawMessage> got = SharedBrokerTest::read_all(queue, 1, kWithin);
  if (got.size() != 1) {
    ADD_FAILURE() << "expected one message on " << queue << ", got " << got.size();
    return {};
  }
  return got[0];
}

// Sends `body` with `properties` to `queue` as another client would.
void send_raw(const std::string& queue, const std::string& body,
              const std::map<std::string, std::string>& properties) {
  RawPulsar raw(shared_pulsar_server().port(), kWithin);
  raw.send(raw.create_producer(topic_for(queue)), body, properties);
}

class ConformanceWire : public SharedBrokerTest,
                        public ::testing::WithParamInterface<PublishPath> {};

TEST_P(ConformanceWire, PLS_T1_ThePropertiesAreOnTheMessage) {
  const std::string body = binding_test::order_created();
  ASSERT_FALSE(body.empty());
  auto t = transport();
  ASSERT_TRUE(GetParam().publish(*t, queue(), body).ok());
  const RawMessage m = the_message(queue());
  EXPECT_EQ(m.message.payload, body) << "the body was re-encoded";
  const Json& block = binding_test::manifest_block("pulsar", "property_projection");
  const Json* properties = block.find("properties");
  ASSERT_NE(properties, nullptr);
  EXPECT_EQ(properties_of(m), binding_test::string_table(*properties));
  EXPECT_FALSE(m.message.metadata.has_partition_key()) << "PLS-4: no key";
  EXPECT_FALSE(m.message.metadata.has_event_time()) << "PLS-4: no eventTime";
  t->close();
}

TEST_P(ConformanceWire, PLS_T1_AnUndecodableBodyTravelsAlone) {
  auto t = transport();
  for (const std::string& body : binding_test::undecodable_bodies) {
    ASSERT_TRUE(GetParam().publish(*t, queue(), body).ok());
  }
  const std::vector<RawMessage> got =
      read_all(queue(), binding_test::undecodable_bodies.size(), kWithin);
  ASSERT_EQ(got.size(), binding_test::undecodable_bodies.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].message.payload, binding_test::undecodable_bodies[i]);
    EXPECT_TRUE(properties_of(got[i]).empty()) << binding_test::undecodable_bodies[i];
  }
  t->close();
}

INSTANTIATE_TEST_SUITE_P(Paths, ConformanceWire, ::testing::ValuesIn(publish_paths()),
                         PublishPathName());

using ConformanceReceive = SharedBrokerTest;

// OB-3: riders are extra string properties; the contract entries win a collision.
TEST_F(ConformanceReceive, PLS5_RidersAreExtraProperties) {
  auto t = transport();
  const Headers riders = {{"traceparent", "00-abc-01"}, {"bq-job", "urn:rider:loses"}};
  ASSERT_TRUE(t->publish_with_headers(queue(), binding_test::order_created(), riders).ok());
  const auto props = properties_of(the_message(queue()));
  EXPECT_EQ(props.at("traceparent"), "00-abc-01");
  EXPECT_EQ(props.at("bq-job"), binding_test::kUrn);
}

// PLS-7, PLS-T2: attempts = max(body, redelivery_count), the count made real by negative acks
// (each one makes the broker redeliver with redelivery_count + 1).
TEST_F(ConformanceReceive, PLS_T2_AttemptsReconciliationFromRealRedeliveries) {
  const Json& block = binding_test::manifest_block("pulsar", "attempts_reconciliation");
  const Json* cases = block.find("cases");
  ASSERT_NE(cases, nullptr);
  auto t = transport();
  for (const Json& c : cases->as_array()) {
    const std::string name = c.find("name")->as_string();
    const std::int64_t body_attempts = c.find("body_attempts")->as_int64().value_or(-1);
    const std::int64_t redeliveries = c.find("redelivery_count")->as_int64().value_or(-1);
    const std::string q = queue() + "-" + name;
    send_raw(q, binding_test::order_created_with_attempts(body_attempts), {});
    std::optional<ReceivedMessage> m = pop_message(*t, q, kWithin);
    ASSERT_TRUE(m.has_value()) << name;
    for (std::int64_t r = 0; r < redeliveries; ++r) {
      ASSERT_TRUE(t->rewind(*m).ok()) << name;
      m = pop_message(*t, q, kWithin);
      ASSERT_TRUE(m.has_value()) << name << " after " << r + 1 << " rewinds";
    }
    EXPECT_EQ(m->delivery_count, redeliveries + 1) << name;
    const Envelope env = decode(m->body);
    EXPECT_EQ(binding::reconcile_attempts(env.attempts(), m->delivery_count),
              c.find("expected_attempts")->as_int64().value_or(-1))
        << name;
    ASSERT_TRUE(t->ack(*m).ok()) << name;
  }
  t->close();
}

// PLS-8, PLS-T3: the manifest's gate cases as real message properties.
TEST_F(ConformanceReceive, PLS_T3_TheSchemaVersionGate) {
  const Json& block = binding_test::manifest_block("pulsar", "schema_version_gate");
  const std::string property = block.find("property")->as_string();
  const Json* cases = block.find("cases");
  ASSERT_NE(cases, nullptr);
  std::vector<std::string> rejected_versions;
  Options o = parse_url(url());
  o.on_schema_version_rejected = [&](std::string_view version, std::string_view) {
    rejected_versions.emplace_back(version);
  };
  PulsarTransport t(o);
  int expected_rejects = 0;
  int index = 0;
  for (const Json& c : cases->as_array()) {
    std::map<std::string, std::string> properties;
    const Json* absent = c.find("absent");
    if (absent == nullptr || !absent->as_bool()) {
      properties.emplace(property, c.find("value")->as_string());
    }
    send_raw(queue(), binding_test::order_created(), properties);
    const std::optional<ReceivedMessage> m = pop_message(t, queue(), kWithin);
    ASSERT_TRUE(m.has_value()) << "case " << index;
    const bool reject = c.find("expect")->as_string() == "reject";
    EXPECT_EQ(!m->route.empty(), reject) << "case " << index;
    if (reject) ++expected_rejects;
    ASSERT_TRUE(t.ack(*m).ok());
    ++index;
  }
  EXPECT_EQ(static_cast<int>(rejected_versions.size()), expected_rejects);
  t.close();
}

}  // namespace
}  // namespace babelqueue::pulsar::test
