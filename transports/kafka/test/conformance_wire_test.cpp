// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The conformance `kafka` block through real records on the shared broker: what KafkaTransport
// produces, read back raw (KFK-5, KFK-T1: the exact header list in order, timestamp =
// meta.created_at, the value byte for byte, a null key; riders after the contract headers,
// OB-3), and records produced raw with chosen headers and keys, read through `pop`: the
// attempts authority (KFK-10, KFK-T2), the schema-version gate (KFK-9, KFK-T3), and keys kept
// null / empty / byte for byte by republish and restore (KFK-8, KFK-13, KFK-15). The expected
// values come from the manifest, read in place (binding/fixtures.hpp of the core tests).

#include <babelqueue/binding/common.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/testing/publish_paths.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "binding/fixtures.hpp"
#include "shared_broker_test.hpp"

namespace babelqueue::kafka::test {
namespace {

using babelqueue::testing::publish_paths;
using babelqueue::testing::PublishPath;
using babelqueue::testing::PublishPathName;

using babelqueue::testing::body_attempts;
using babelqueue::testing::kBriefly;
using babelqueue::testing::kWithin;
using babelqueue::testing::pop_message;

// KFK-5: the order the projection writes the manifest's headers in.
constexpr std::string_view kHeaderOrder[] = {
    "bq-job", "bq-trace-id", "bq-message-id", "bq-schema-version", "bq-source-lang", "bq-attempts"};

// The manifest's projection headers as a record list in KFK-5 order.
RawHeaders manifest_headers() {
  const Json& block = binding_test::manifest_block("kafka", "property_projection");
  const Json* headers = block.find("headers");
  RawHeaders out;
  if (headers == nullptr) {
    ADD_FAILURE() << "kafka.property_projection has no headers";
    return out;
  }
  EXPECT_EQ(headers->as_object().size(), std::size(kHeaderOrder));
  for (const std::string_view name : kHeaderOrder) {
    const Json* value = headers->find(name);
    if (value == nullptr) {
      ADD_FAILURE() << "the manifest has no header " << name;
      continue;
    }
    out.emplace_back(std::string(name), value->as_string());
  }
  return out;
}

class ConformanceWire : public SharedBrokerTest,
                        public ::testing::WithParamInterface<PublishPath> {};

TEST_P(ConformanceWire, KFK_T1_TheProjectionIsOnTheRecord) {
  const std::string body = binding_test::order_created();
  ASSERT_FALSE(body.empty());
  auto t = transport();
  ASSERT_TRUE(GetParam().publish(*t, queue(), body).ok());
  const auto got = records(queue(), 1);
  ASSERT_EQ(got.size(), 1U);
  const RawRecord& r = got[0];
  EXPECT_EQ(r.value, body) << "the value was re-encoded";
  EXPECT_EQ(r.key, std::nullopt) << "a key was invented (KFK-5)";
  EXPECT_EQ(r.timestamp_ms, binding_test::kCreatedAt);
  EXPECT_EQ(r.headers, manifest_headers());
}

INSTANTIATE_TEST_SUITE_P(EveryPublishPath, ConformanceWire, ::testing::ValuesIn(publish_paths()),
                         PublishPathName());

class KafkaWire : public SharedBrokerTest {};

// OB-3: riders follow the contract headers in key order; a rider named like a contract header
// and a blank rider are not written.
TEST_F(KafkaWire, OB3_RidersFollowTheContractHeaders) {
  auto t = transport();
  const std::string tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  ASSERT_TRUE(
      t->publish_with_headers(
           queue(), binding_test::order_created(),
           {{"traceparent", tp}, {"bq-job", "urn:someone:else"}, {"x-blank", ""}, {"a-rider", "1"}})
          .ok());
  const auto got = records(queue(), 1);
  ASSERT_EQ(got.size(), 1U);
  RawHeaders expected = manifest_headers();
  expected.emplace_back("a-rider", "1");
  expected.emplace_back("traceparent", tp);
  EXPECT_EQ(got[0].headers, expected);
}

// KFK-5: an undecodable body goes out with no headers and the client's timestamp.
TEST_F(KafkaWire, KFK_T1_AnUndecodableBodyHasNoHeadersAndTheClientTimestamp) {
  auto t = transport();
  const auto now_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  const std::int64_t before = now_ms();
  ASSERT_TRUE(t->publish(queue(), "not json").ok());
  const std::int64_t after = now_ms();
  const auto got = records(queue(), 1);
  ASSERT_EQ(got.size(), 1U);
  EXPECT_EQ(got[0].value, "not json");
  EXPECT_TRUE(got[0].headers.empty()) << header_names(got[0]).size() << " headers";
  EXPECT_GE(got[0].timestamp_ms, before - 1000);
  EXPECT_LE(got[0].timestamp_ms, after + 1000);
}

struct AttemptsCase {
  std::string name;
  std::int64_t body_attempts;
  RawHeaders headers;
  std::int64_t expected;
};

// KFK-10, KFK-T2: the manifest's vectors and the header syntax, on records written raw and
// read through pop; the body bytes are untouched when the header agrees with them (ENV-37).
TEST_F(KafkaWire, KFK_T2_TheAttemptsHeaderIsAuthoritative) {
  std::vector<AttemptsCase> cases;
  const Json* manifest_cases =
      binding_test::manifest_block("kafka", "attempts_reconciliation").find("cases");
  ASSERT_NE(manifest_cases, nullptr);
  for (const Json& c : manifest_cases->as_array()) {
    AttemptsCase row{c.find("name")->as_string(),
                     *c.find("body_attempts")->as_int64(),
                     {},
                     *c.find("expected_attempts")->as_int64()};
    if (const auto header = c.find("header_attempts")->as_int64()) {
      row.headers.emplace_back("bq-attempts", std::to_string(*header));
    }
    cases.push_back(std::move(row));
  }
  ASSERT_EQ(cases.size(), 5U);
  cases.push_back({"whitespace", 0, {{"bq-attempts", " 2\t"}}, 2});
  cases.push_back({"plus sign", 0, {{"bq-attempts", "+3"}}, 3});
  cases.push_back({"negative", 4, {{"bq-attempts", "-1"}}, 4});
  cases.push_back({"not a number", 4, {{"bq-attempts", "x"}}, 4});
  cases.push_back({"overflow", 4, {{"bq-attempts", "99999999999999999999"}}, 4});
  cases.push_back({"duplicate", 0, {{"bq-attempts", "4"}, {"bq-attempts", "7"}}, 4});
  cases.push_back({"null value", 6, {{"bq-attempts", std::nullopt}}, 6});

  raw().create_topic(queue(), 1);
  for (const AttemptsCase& c : cases) {
    raw().produce(queue(), std::nullopt, binding_test::order_created_with_attempts(c.body_attempts),
                  c.headers);
  }
  auto t = transport();
  for (const AttemptsCase& c : cases) {
    SCOPED_TRACE(c.name);
    const auto m = pop_message(*t, queue(), kWithin);
    ASSERT_TRUE(m.has_value()) << "the record never came";
    EXPECT_EQ(body_attempts(m->body), c.expected);
    EXPECT_TRUE(m->route.empty()) << m->route;
    if (c.expected == c.body_attempts) {
      EXPECT_EQ(m->body, binding_test::order_created_with_attempts(c.body_attempts))
          << "the body was re-encoded";
    }
    EXPECT_TRUE(t->ack(*m).ok());
  }
  EXPECT_FALSE(pop_message(*t, queue(), kBriefly).has_value());
}

// KFK-9, KFK-T3: the manifest's gate vectors through the bq-schema-version header (a null value
// counts as absent); a rejected record carries the unsupported route and its bytes.
TEST_F(KafkaWire, KFK_T3_TheSchemaVersionGateReadsTheHeader) {
  const Json& block = binding_test::manifest_block("kafka", "schema_version_gate");
  const Json* cases = block.find("cases");
  ASSERT_NE(cases, nullptr);
  struct Row {
    std::optional<std::string> value;
    bool present;
    bool reject;
  };
  std::vector<Row> rows;
  for (const Json& c : cases->as_array()) {
    const bool absent = c.find("absent") != nullptr;
    rows.push_back(
        {absent ? std::nullopt : std::optional<std::string>(c.find("value")->as_string()), !absent,
         c.find("expect")->as_string() == "reject"});
  }
  ASSERT_EQ(rows.size(), 18U);
  rows.push_back({std::nullopt, true, false});  // a header with a null value

  const std::string body = binding_test::order_created();
  raw().create_topic(queue(), 1);
  for (const Row& row : rows) {
    RawHeaders headers;
    if (row.present) headers.emplace_back("bq-schema-version", row.value);
    raw().produce(queue(), std::nullopt, body, headers);
  }
  auto t = transport();
  for (const Row& row : rows) {
    SCOPED_TRACE(row.present ? (row.value ? "value \"" + *row.value + "\"" : "null value")
                             : "absent");
    const auto m = pop_message(*t, queue(), kWithin);
    ASSERT_TRUE(m.has_value()) << "the record never came";
    EXPECT_EQ(m->body, body);
    if (row.reject) {
      EXPECT_EQ(m->route, binding::unsupported_route(*row.value));
    } else {
      EXPECT_TRUE(m->route.empty()) << m->route;
    }
    EXPECT_TRUE(t->ack(*m).ok());
  }
}

// KFK-8, KFK-13, KFK-15: null, empty and binary keys reach the received message as they are,
// a republish keeps the source key, and a restore writes value, header list (null values and
// duplicates included) and key back verbatim to the queue it was read from.
TEST_F(KafkaWire, KFK13_KFK15_KeysAndHeadersSurviveRepublishAndRestore) {
  const std::vector<std::optional<std::string>> keys = {std::nullopt, std::string(),
                                                        std::string("k\0\xff\x01", 4)};
  const RawHeaders headers = {{"bq-attempts", "0"},
                              {"x-null", std::nullopt},
                              {"x-dup", "first"},
                              {"x-dup", "second"},
                              {"x-bytes", std::string("\0\xfe", 2)}};
  raw().create_topic(queue(), 1);
  const std::string copies = queue() + "-copies";
  raw().create_topic(copies, 1);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    raw().produce(queue(), keys[i], babelqueue::testing::contract_body(static_cast<int>(i)),
                  headers);
  }
  auto t = transport();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    SCOPED_TRACE("key " + std::to_string(i));
    const auto m = pop_message(*t, queue(), kWithin);
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->key, keys[i]);
    EXPECT_EQ(m->headers.at("x-dup"), "first") << "OB-4: the first occurrence wins";
    EXPECT_FALSE(m->headers.contains("x-null")) << "OB-4: null values are skipped";
    ASSERT_TRUE(t->republish(copies, m->body, *m).ok());
    ASSERT_TRUE(t->restore(*m).ok());
    EXPECT_TRUE(t->ack(*m).ok());
  }
  const auto copied = records(copies, keys.size());
  ASSERT_EQ(copied.size(), keys.size());
  const auto all = records(queue(), 2 * keys.size());
  ASSERT_EQ(all.size(), 2 * keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    SCOPED_TRACE("key " + std::to_string(i));
    EXPECT_EQ(copied[i].key, keys[i]) << "republish (KFK-13)";
    const RawRecord& restored = all[keys.size() + i];
    EXPECT_EQ(restored.key, keys[i]) << "restore (KFK-15)";
    EXPECT_EQ(restored.value, all[i].value);
    EXPECT_EQ(restored.headers, headers) << "the header list was not kept verbatim";
  }
}

}  // namespace
}  // namespace babelqueue::kafka::test
