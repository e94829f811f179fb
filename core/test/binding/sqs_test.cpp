// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Amazon SQS binding rules: 05 SQS-6, SQS-10.

#include <babelqueue/binding/sqs.hpp>

#include <gtest/gtest.h>

#include "fixtures.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace binding_test;  // NOLINT(google-build-using-namespace)

// ---------------------------------------------------------------------------------------------
// SQS (05 SQS-6, SQS-10)
// ---------------------------------------------------------------------------------------------

TEST(SqsBinding, SQS6_OrderCreatedAttributes) {
  const bb::sqs::Projection p = bb::sqs::projection(order_created());
  const std::vector<bb::sqs::Attribute> expected{
      {"bq-job", "String", std::string(kUrn)},       {"bq-trace-id", "String", std::string(kTrace)},
      {"bq-message-id", "String", std::string(kId)}, {"bq-schema-version", "Number", "1"},
      {"bq-source-lang", "String", "php"},           {"bq-created-at", "Number", "1749132727000"},
  };
  EXPECT_EQ(p.attributes, expected);
  EXPECT_TRUE(p.dropped_riders.empty());
}

TEST(SqsBinding, SQS6_UndecodableHasNoAttributes) {
  for (const std::string& body : undecodable_bodies) {
    EXPECT_TRUE(bb::sqs::projection(body).attributes.empty()) << body;
  }
}

TEST(SqsBinding, SQS6_OmissionRules) {
  const bb::sqs::Projection p = bb::sqs::projection(R"({"job":"urn:x","data":{},"attempts":4})");
  const std::vector<bb::sqs::Attribute> expected{{"bq-job", "String", "urn:x"}};
  EXPECT_EQ(p.attributes, expected);
}

TEST(SqsBinding, SQST1_RidersSortedSkipExistingAndCapTen) {
  const bb::Riders riders{{"r8", "8"},         {"r1", "1"}, {"r3", "3"},  {"r2", "2"},
                          {"r5", "5"},         {"r4", "4"}, {"r7", "7"},  {"r6", "6"},
                          {"bq-job", "spoof"}, {"", "x"},   {"blank", ""}};
  const bb::sqs::Projection p = bb::sqs::projection(order_created(), riders);
  ASSERT_EQ(p.attributes.size(), bb::sqs::MAX_ATTRIBUTES);
  EXPECT_EQ(p.attributes[0], (bb::sqs::Attribute{"bq-job", "String", std::string(kUrn)}));
  EXPECT_EQ(p.attributes[5].name, "bq-created-at");
  EXPECT_EQ(p.attributes[6], (bb::sqs::Attribute{"r1", "String", "1"}));
  EXPECT_EQ(p.attributes[7], (bb::sqs::Attribute{"r2", "String", "2"}));
  EXPECT_EQ(p.attributes[8], (bb::sqs::Attribute{"r3", "String", "3"}));
  EXPECT_EQ(p.attributes[9], (bb::sqs::Attribute{"r4", "String", "4"}));
  const std::vector<std::string> dropped{"r5", "r6", "r7", "r8"};
  EXPECT_EQ(p.dropped_riders, dropped);
}

TEST(SqsBinding, SQS6_RidersOnUndecodableBody) {
  const bb::sqs::Projection p = bb::sqs::projection("not json", {{"traceparent", "tp"}});
  const std::vector<bb::sqs::Attribute> expected{{"traceparent", "String", "tp"}};
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
    EXPECT_EQ(bb::reconcile_attempts(c.body, bb::sqs::delivery_count(c.count)), c.expected)
        << c.body << "," << c.count.value_or("<absent>");
  }
}

TEST(SqsBinding, SQS10_ReceiveCountParsing) {
  EXPECT_EQ(bb::sqs::delivery_count(std::nullopt), 0);
  EXPECT_EQ(bb::sqs::delivery_count("1"), 1);
  EXPECT_EQ(bb::sqs::delivery_count("42"), 42);
  EXPECT_EQ(bb::sqs::delivery_count("0"), 0);
  EXPECT_EQ(bb::sqs::delivery_count("-1"), 0);
  EXPECT_EQ(bb::sqs::delivery_count(""), 0);
  EXPECT_EQ(bb::sqs::delivery_count("2.5"), 0);
  EXPECT_EQ(bb::sqs::delivery_count("99999999999999999999"), 0);
}

TEST(BindingManifest, SQS6_SqsTableMatches) {
  const Json& table = manifest_block("sqs", "attribute_projection");
  const bb::sqs::Projection p = bb::sqs::projection(order_created());
  ASSERT_NE(table.find("message_attributes"), nullptr);
  const auto& attrs = table.find("message_attributes")->as_object();
  ASSERT_EQ(p.attributes.size(), attrs.size());
  for (const auto& [name, value] : attrs) {
    const bb::sqs::Attribute expected{name, value.find("DataType")->as_string(),
                                      value.find("StringValue")->as_string()};
    bool found = false;
    for (const bb::sqs::Attribute& a : p.attributes) {
      if (a.name == name) {
        found = true;
        EXPECT_EQ(a, expected);
      }
    }
    EXPECT_TRUE(found) << name;
  }
}

}  // namespace
