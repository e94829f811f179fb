// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The binding rules every broker shares: contract values (OB-2), the RT-39 attempts floor, the
// RT-40 schema-version gate and the reserved route (OB-6).

#include <babelqueue/binding/artemis.hpp>
#include <babelqueue/binding/azureservicebus.hpp>
#include <babelqueue/binding/common.hpp>

#include <gtest/gtest.h>

#include "fixtures.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace {

using namespace binding_test;  // NOLINT(google-build-using-namespace)
namespace asb = babelqueue::binding::azureservicebus;

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
    EXPECT_EQ(asb::schema_version_gate(typed).reject, v.reject);
    EXPECT_EQ(bb::artemis::schema_version_gate(typed).reject, v.reject);
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
        EXPECT_EQ(asb::schema_version_gate(av<std::int32_t>(static_cast<std::int32_t>(*n))).reject,
                  expect_reject)
            << *n;
        EXPECT_EQ(asb::schema_version_gate(av<std::int64_t>(*n)).reject, expect_reject) << *n;
        EXPECT_EQ(asb::schema_version_gate(av<std::uint8_t>(static_cast<std::uint8_t>(*n))).reject,
                  expect_reject)
            << *n;
      } else {
        EXPECT_EQ(asb::schema_version_gate(av<double>(value->as_number().as_double())).reject,
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

}  // namespace
