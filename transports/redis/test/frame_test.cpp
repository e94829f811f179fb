// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The `__bq_frame` header frame: writing (RDS-12, RDS-14) and detection (RDS-15, RDS-16, RDS-T15).

#include <gtest/gtest.h>
#include <babelqueue/errors.hpp>
#include <babelqueue/json.hpp>

#include <string>

#include "frame.hpp"

namespace bq = babelqueue;
namespace detail = babelqueue::redis::detail;

namespace {

const std::string kTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(SanitizeHeaders, RDS12_DropsEmptyKeysAndValues) {
  const bq::Headers in = {{"", "v"}, {"empty", ""}, {"traceparent", kTraceparent}, {" ", "x"}};
  const bq::Headers out = detail::sanitize_headers(in);
  // A blank (whitespace) key is not empty: only empty strings are dropped.
  EXPECT_EQ(out, (bq::Headers{{" ", "x"}, {"traceparent", kTraceparent}}));
  EXPECT_TRUE(detail::sanitize_headers({{"", ""}, {"k", ""}}).empty());
}

TEST(EncodeFrame, RDS14_ExactCompactLayout) {
  EXPECT_EQ(detail::encode_frame(R"({"job":"u"})", {{"traceparent", kTraceparent}}),
            R"({"__bq_frame":1,"headers":{"traceparent":")" + kTraceparent +
                R"("},"body":"{\"job\":\"u\"}"})");
}

TEST(EncodeFrame, RDS14_HeaderKeysInByteOrder) {
  const bq::Headers h = {{"b", "2"}, {"a", "1"}, {"\xC3\xA9", "3"}, {"B", "4"}, {"a-b", "5"}};
  EXPECT_EQ(detail::encode_frame("x", h),
            "{\"__bq_frame\":1,\"headers\":{\"B\":\"4\",\"a\":\"1\",\"a-b\":\"5\",\"b\":\"2\","
            "\"\xC3\xA9\":\"3\"},\"body\":\"x\"}");
}

TEST(EncodeFrame, RDS14_EscapesLikeTheCoreEncoder) {
  const std::string body =
      "{\"job\":\"q\\\"uote\",\"s\":\"\xE2\x82\xAC\xF0\x9F\x98\x80 </>\"}\n\t\x01";
  std::string expected_body;
  bq::append_json_string(expected_body, body);
  EXPECT_EQ(detail::encode_frame(body, {}),
            "{\"__bq_frame\":1,\"headers\":{},\"body\":" + expected_body + "}");
}

TEST(EncodeFrame, RDS14_InvalidUtf8HeaderIsEncodeError) {
  EXPECT_THROW((void)detail::encode_frame("x", {{"k", "\xFF"}}), bq::EncodeError);
}

TEST(Unframe, RDST15_RoundTripWithTraceparent) {
  const std::string body =
      "{\"job\":\"urn:x\",\"data\":{\"q\":\"a \\\"quoted\\\" \xE2\x82\xAC\xF0\x9F\x98\x80\\n\"}}\n"
      "line two\r\n\t\"end\"";
  const bq::Headers headers = {{"traceparent", kTraceparent}, {"tracestate", "k=v"}};
  const std::string stored = detail::encode_frame(body, detail::sanitize_headers(headers));
  const auto u = detail::unframe(stored);
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->body, body);
  EXPECT_EQ(u->headers, headers);
}

TEST(Unframe, RDS15_AcceptsAnyMemberOrderAndWhitespaceInside) {
  const auto u =
      detail::unframe(R"({ "body" : "b", "headers": {"z":"1","a":"2"}, "__bq_frame": 1 })");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->body, "b");
  EXPECT_EQ(u->headers, (bq::Headers{{"a", "2"}, {"z", "1"}}));
}

TEST(Unframe, RDS15_HeadersAbsentOrNull) {
  const auto absent = detail::unframe(R"({"__bq_frame":1,"body":"x"})");
  ASSERT_TRUE(absent.has_value());
  EXPECT_EQ(absent->body, "x");
  EXPECT_TRUE(absent->headers.empty());
  const auto null = detail::unframe(R"({"__bq_frame":1,"headers":null,"body":"x"})");
  ASSERT_TRUE(null.has_value());
  EXPECT_TRUE(null->headers.empty());
}

TEST(Unframe, RDS15_AnyNonZeroIntegerSentinel) {
  EXPECT_TRUE(detail::unframe(R"({"__bq_frame":-3,"body":"x"})").has_value());
  EXPECT_TRUE(detail::unframe(R"({"__bq_frame":9223372036854775807,"body":"x"})").has_value());
  EXPECT_TRUE(detail::unframe(R"({"__bq_frame":2,"body":""})").has_value());
}

TEST(Unframe, RDS15_DuplicateNamesLastWins) {
  EXPECT_FALSE(detail::unframe(R"({"__bq_frame":1,"__bq_frame":0,"body":"x"})").has_value());
  const auto u = detail::unframe(R"({"__bq_frame":0,"__bq_frame":1,"body":1,"body":"y"})");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->body, "y");
}

TEST(Unframe, RDS16_HeadersAreSanitised) {
  const auto u =
      detail::unframe(R"({"__bq_frame":1,"headers":{"":"v","k":"","t":"1"},"body":"x"})");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->headers, (bq::Headers{{"t", "1"}}));
}

TEST(Unframe, RDS16_EscapedBodyIsDecoded) {
  const auto u = detail::unframe(R"({"__bq_frame":1,"body":"a\/b \u00e9 \ud83d\ude00 \"q\""})");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->body, "a/b \xC3\xA9 \xF0\x9F\x98\x80 \"q\"");
}

TEST(Unframe, RDST15_NegativesAreBare) {
  for (const std::string& stored : {
           std::string(R"({"headers":{},"body":"x"})"),
           std::string(R"({"__bq_frame":0,"body":"x"})"),
           std::string(R"({"__bq_frame":-0,"body":"x"})"),
           std::string(R"({"__bq_frame":1.0,"body":"x"})"),
           std::string(R"({"__bq_frame":1e0,"body":"x"})"),
           std::string(R"({"__bq_frame":true,"body":"x"})"),
           std::string(R"({"__bq_frame":"1","body":"x"})"),
           std::string(R"({"__bq_frame":null,"body":"x"})"),
           std::string(R"({"__bq_frame":9223372036854775808,"body":"x"})"),
           std::string(R"( {"__bq_frame":1,"body":"x"})"),
           std::string("\n{\"__bq_frame\":1,\"body\":\"x\"}"),
           std::string(R"({"__bq_frame":1,"headers":{"t":1},"body":"x"})"),
           std::string(R"({"__bq_frame":1,"headers":{"t":null},"body":"x"})"),
           std::string(R"({"__bq_frame":1,"headers":[],"body":"x"})"),
           std::string(R"({"__bq_frame":1,"headers":"t","body":"x"})"),
           std::string(R"({"__bq_frame":1,"body":{"job":"u"}})"),
           std::string(R"({"__bq_frame":1,"body":null})"),
           std::string(R"({"__bq_frame":1})"),
           std::string(R"([{"__bq_frame":1,"body":"x"}])"),
           std::string(R"({"__bq_frame":1,"body":"x"} trailing)"),
           std::string(R"({"__bq_frame":1,"body":"x")"),
           std::string("{\"__bq_frame\":1,\"body\":\"\xFF\"}"),
           std::string(R"({"data":{"__bq_frame":1,"body":"x"}})"),
           std::string(R"({"job":"u","attempts":0})"),
           std::string("not json"),
           std::string(),
       }) {
    EXPECT_FALSE(detail::unframe(stored).has_value()) << stored;
  }
}

}  // namespace
