// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Apache Kafka binding rules: 05 KFK-5, KFK-10.

#include <babelqueue/binding/kafka.hpp>
#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

#include "fixtures.hpp"

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using namespace binding_test;  // NOLINT(google-build-using-namespace)

// ---------------------------------------------------------------------------------------------
// Kafka (05 KFK-5, KFK-10)
// ---------------------------------------------------------------------------------------------

TEST(KafkaBinding, KFK5_OrderCreatedHeadersAndTimestamp) {
  const bb::kafka::Projection p = bb::kafka::projection(order_created());
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
    const bb::kafka::Projection p = bb::kafka::projection(body);
    EXPECT_TRUE(p.headers.empty()) << body;
    EXPECT_EQ(p.timestamp_ms, 0);
  }
}

TEST(KafkaBinding, KFK5_RidersAppendedSkippingPresentKeys) {
  const bb::kafka::Projection p = bb::kafka::projection(
      order_created(),
      {{"traceparent", "tp"}, {"bq-attempts", "9"}, {"a", "1"}, {"", "x"}, {"b", ""}});
  ASSERT_EQ(p.headers.size(), 8U);
  EXPECT_EQ(p.headers[5], (std::pair<std::string, std::string>{"bq-attempts", "0"}));
  EXPECT_EQ(p.headers[6], (std::pair<std::string, std::string>{"a", "1"}));
  EXPECT_EQ(p.headers[7], (std::pair<std::string, std::string>{"traceparent", "tp"}));
}

TEST(KafkaBinding, KFK5_OmissionRulesAndUrnAlias) {
  const bb::kafka::Projection p =
      bb::kafka::projection(R"({"urn":"urn:a:b","trace_id":"","meta":{"created_at":0}})");
  const std::vector<std::pair<std::string, std::string>> expected{{"bq-job", "urn:a:b"},
                                                                  {"bq-attempts", "0"}};
  EXPECT_EQ(p.headers, expected);
  EXPECT_EQ(p.timestamp_ms, 0);

  const bb::kafka::Projection alias =
      bb::kafka::projection(read_conformance("fixtures/urn-alias.json"));
  ASSERT_FALSE(alias.headers.empty());
  EXPECT_EQ(alias.headers[0], (std::pair<std::string, std::string>{"bq-job", std::string(kUrn)}));

  EXPECT_EQ(bb::kafka::projection(R"({"job":"urn:x","meta":{"created_at":-5}})").timestamp_ms, 0);
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
    EXPECT_EQ(bb::kafka::attempts(c.body, header), c.expected) << c.body;

    const std::string body =
        envelope("urn:x", R"({"id":"m","queue":"q","lang":"go","schema_version":1,"created_at":1})",
                 std::to_string(c.body));
    const std::optional<std::string> rewritten = bb::kafka::reconcile_body(body, header);
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
  const std::optional<std::string> rewritten = bb::kafka::reconcile_body(order_created(), 1);
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
  const std::optional<std::string> kept = bb::kafka::reconcile_body(extras, 3);
  ASSERT_TRUE(kept.has_value());
  EXPECT_NE(kept->find(R"("big":12345678901234567890,"f":1.0)"), std::string::npos) << *kept;
  EXPECT_NE(kept->find(R"("extra_top":{"k":"<v&>"})"), std::string::npos) << *kept;
  EXPECT_NE(kept->find(R"("vendor":true)"), std::string::npos) << *kept;
  EXPECT_NE(kept->find(R"("attempts":3)"), std::string::npos) << *kept;
}

TEST(KafkaBinding, KFK10_ReconcileHandsBackTheDecodedOriginal) {  // decode once
  std::optional<babelqueue::Envelope> decoded;
  EXPECT_FALSE(bb::kafka::reconcile(order_created(), 0, decoded).has_value());
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->meta().id, babelqueue::decode(order_created()).meta().id);
  EXPECT_EQ(encode(*decoded), encode(babelqueue::decode(order_created())));

  EXPECT_EQ(bb::kafka::reconcile(order_created(), 2, decoded),
            bb::kafka::reconcile_body(order_created(), 2));
  EXPECT_FALSE(decoded.has_value()) << "the envelope of the old bytes is not handed on";
  decoded = babelqueue::decode(order_created());
  EXPECT_FALSE(bb::kafka::reconcile(order_created(), std::nullopt, decoded).has_value());
  EXPECT_FALSE(decoded.has_value()) << "a previous value is not left behind";
  EXPECT_FALSE(bb::kafka::reconcile("not json", 0, decoded).has_value());
  EXPECT_FALSE(decoded.has_value());
}

TEST(KafkaBinding, KFK10_BodyUntouchedWhenEqualAbsentOrUndecodable) {
  EXPECT_FALSE(bb::kafka::reconcile_body(order_created(), 0).has_value());
  EXPECT_FALSE(bb::kafka::reconcile_body(order_created(), std::nullopt).has_value());
  for (const std::string& body : undecodable_bodies) {
    EXPECT_FALSE(bb::kafka::reconcile_body(body, 2).has_value()) << body;
  }
  // A body without `attempts` decodes as 0: a header "0" leaves it alone, "1" rewrites it.
  EXPECT_FALSE(bb::kafka::reconcile_body(R"({"job":"urn:x"})", 0).has_value());
  const std::optional<std::string> raised = bb::kafka::reconcile_body(R"({"job":"urn:x"})", 1);
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

TEST(BindingManifest, KFK5_KafkaTableMatches) {
  const Json& table = manifest_block("kafka", "property_projection");
  ASSERT_NE(table.find("headers"), nullptr);
  const bb::kafka::Projection p = bb::kafka::projection(order_created());
  const std::map<std::string, std::string> got(p.headers.begin(), p.headers.end());
  EXPECT_EQ(got.size(), p.headers.size());  // no duplicate keys
  EXPECT_EQ(got, string_table(*table.find("headers")));
}

}  // namespace
