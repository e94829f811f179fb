// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Apache Pulsar binding rules: 05 PLS-5, PLS-7.

#include <babelqueue/binding/pulsar.hpp>

#include <gtest/gtest.h>

#include "fixtures.hpp"

#include <cstdint>
#include <limits>
#include <map>
#include <string>

namespace {

using namespace binding_test;  // NOLINT(google-build-using-namespace)

// ---------------------------------------------------------------------------------------------
// Pulsar (05 PLS-5, PLS-7)
// ---------------------------------------------------------------------------------------------

TEST(PulsarBinding, PLS5_OrderCreatedProperties) {
  const std::map<std::string, std::string> expected{
      {"bq-job", std::string(kUrn)},       {"bq-trace-id", std::string(kTrace)},
      {"bq-message-id", std::string(kId)}, {"bq-schema-version", "1"},
      {"bq-source-lang", "php"},           {"bq-attempts", "0"},
  };
  EXPECT_EQ(bb::pulsar::properties(order_created()), expected);
}

TEST(PulsarBinding, PLS5_UndecodableCarriesRidersOnly) {
  for (const std::string& body : undecodable_bodies) {
    EXPECT_TRUE(bb::pulsar::properties(body).empty()) << body;
  }
  const std::map<std::string, std::string> riders_only{{"traceparent", "tp"}};
  EXPECT_EQ(bb::pulsar::properties("not json", {{"traceparent", "tp"}, {"x", ""}}), riders_only);
}

TEST(PulsarBinding, OB3_RidersContractWins) {
  const auto props = bb::pulsar::properties(
      order_created(), {{"bq-attempts", "7"}, {"traceparent", "tp"}, {"", "x"}, {"e", ""}});
  EXPECT_EQ(props.size(), 7U);
  EXPECT_EQ(props.at("bq-attempts"), "0");
  EXPECT_EQ(props.at("traceparent"), "tp");
}

TEST(PulsarBinding, PLS7_RedeliveryCountVectors) {
  const std::int64_t cases[][3] = {{0, 0, 0}, {0, 2, 2}, {2, 5, 5},
                                   {5, 1, 5}, {4, 0, 4}, {3, 3, 3}};
  for (const auto& v : cases) {
    EXPECT_EQ(bb::reconcile_attempts(v[0], bb::pulsar::delivery_count(v[1])), v[2])
        << v[0] << "," << v[1];
  }
  EXPECT_EQ(bb::pulsar::delivery_count(std::nullopt), 1);
  EXPECT_EQ(bb::pulsar::delivery_count(-4), 1);
  EXPECT_EQ(bb::pulsar::delivery_count(std::numeric_limits<std::int64_t>::max()),
            std::numeric_limits<std::int64_t>::max());
}

TEST(BindingManifest, PLS5_PulsarTableMatches) {
  const Json& table = manifest_block("pulsar", "property_projection");
  ASSERT_NE(table.find("properties"), nullptr);
  EXPECT_EQ(bb::pulsar::properties(order_created()), string_table(*table.find("properties")));
}

}  // namespace
