// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// increment_attempts: the byte-preserving `attempts` + 1 of a released body (RDS-57, RDS-T14).

#include <gtest/gtest.h>
#include <babelqueue/codec.hpp>
#include <babelqueue/spi/attempts.hpp>

#include <string>

namespace bq = babelqueue;

namespace {

std::string bumped(std::string_view body) {
  auto r = bq::spi::increment_attempts(body);
  EXPECT_TRUE(r.has_value()) << "body: " << body << " error: " << r.error().what();
  return r.has_value() ? *r : std::string();
}

bq::ErrorCode error_code(std::string_view body) {
  auto r = bq::spi::increment_attempts(body);
  EXPECT_FALSE(r.has_value()) << "body: " << body << " gave: " << *r;
  return r.has_value() ? bq::ErrorCode{} : r.error().code();
}

TEST(IncrementAttempts, RDST14_OnlyTheAttemptsLexemeChanges) {
  const std::string prefix =
      R"({"job":"u","data":{"id":123456789012345678901},"x_ext":{"a":[1,2.50,null]},"attempts":)";
  EXPECT_EQ(bumped(prefix + "4}"), prefix + "5}");
}

TEST(IncrementAttempts, RDS57_ResultDecodesWithTheNextCount) {
  const std::string head = R"({"job":"urn:x","trace_id":"t","data":{"big":18446744073709551615},)"
                           R"("meta":{"schema_version":1},"attempts":6})";
  const bq::Envelope env = bq::decode(bumped(head));
  EXPECT_EQ(env.attempts(), 7);
}

TEST(IncrementAttempts, RDS57_DuplicateNameLastWinsEarlierUntouched) {
  EXPECT_EQ(bumped(R"({"attempts":7,"job":"x","attempts":2})"),
            R"({"attempts":7,"job":"x","attempts":3})");
}

TEST(IncrementAttempts, ENV19_EarlierDuplicateIsNotTypeChecked) {
  EXPECT_EQ(bumped(R"({"attempts":"x","attempts":1})"), R"({"attempts":"x","attempts":2})");
  EXPECT_EQ(error_code(R"({"attempts":1,"attempts":"x"})"), bq::ErrorCode::Decode);
}

TEST(IncrementAttempts, ENV18_EscapedNameMatchesAfterUnescaping) {
  EXPECT_EQ(bumped(R"({"attempt\u0073":2})"), R"({"attempt\u0073":3})");
  // Case-sensitive: `Attempts` is an unknown member.
  EXPECT_EQ(bumped(R"({"Attempts":2})"), R"({"Attempts":2,"attempts":1})");
}

TEST(IncrementAttempts, RDS57_NestedAttemptsAreNotTopLevel) {
  EXPECT_EQ(bumped(R"({"data":{"attempts":9},"x":[{"attempts":8}],"attempts":1})"),
            R"({"data":{"attempts":9},"x":[{"attempts":8}],"attempts":2})");
  EXPECT_EQ(bumped(R"({"data":{"attempts":9}})"), R"({"data":{"attempts":9},"attempts":1})");
}

TEST(IncrementAttempts, RDS57_AbsentIsAppendedAsLastMember) {
  EXPECT_EQ(bumped(R"({"job":"u","data":{}})"), R"({"job":"u","data":{},"attempts":1})");
}

TEST(IncrementAttempts, RDS57_EmptyObject) {
  EXPECT_EQ(bumped("{}"), R"({"attempts":1})");
  EXPECT_EQ(bumped("{ \n }"), "{ \n \"attempts\":1}");
}

TEST(IncrementAttempts, RDS57_PrettyPrintedKeepsWhitespace) {
  const std::string pretty = "{\n  \"job\": \"u\",\n  \"attempts\": 0\n}\n";
  EXPECT_EQ(bumped(pretty), "{\n  \"job\": \"u\",\n  \"attempts\": 1\n}\n");
  EXPECT_EQ(bumped("{\n  \"job\": \"u\"\n}\n"), "{\n  \"job\": \"u\"\n,\"attempts\":1}\n");
  EXPECT_EQ(bumped(" \t\r\n{\"job\":\"u\"} \n"), " \t\r\n{\"job\":\"u\",\"attempts\":1} \n");
}

TEST(IncrementAttempts, RDST5_CjsonReorderedKeysAndEscapedSlashes) {
  const std::string cjson =
      R"({"attempts":2,"data":{"url":"http:\/\/x\/y","n":1.2345678901235e+17},"job":"urn:a\/b"})";
  EXPECT_EQ(
      bumped(cjson),
      R"({"attempts":3,"data":{"url":"http:\/\/x\/y","n":1.2345678901235e+17},"job":"urn:a\/b"})");
}

TEST(IncrementAttempts, ENV20_IntegerEdges) {
  EXPECT_EQ(bumped(R"({"attempts":-1})"), R"({"attempts":0})");
  EXPECT_EQ(bumped(R"({"attempts":-0})"), R"({"attempts":1})");
  EXPECT_EQ(bumped(R"({"attempts":9223372036854775806})"), R"({"attempts":9223372036854775807})");
  EXPECT_EQ(bumped(R"({"attempts":-9223372036854775808})"), R"({"attempts":-9223372036854775807})");
}

TEST(IncrementAttempts, RDS57_OverflowIsReleaseUnsupported) {
  auto r = bq::spi::increment_attempts(R"({"attempts":9223372036854775807})");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), bq::ErrorCode::ReleaseUnsupported);
  EXPECT_NE(std::string(r.error().what()).find("overflow"), std::string::npos);
}

TEST(IncrementAttempts, ENV20_NullCountsAsZero) {
  // decode treats null like absent (attempts 0), so the released body carries 1, in place.
  EXPECT_EQ(bumped(R"({"attempts":null,"job":"u"})"), R"({"attempts":1,"job":"u"})");
}

TEST(IncrementAttempts, ENV20_NonIntegerAttemptsIsDecodeError) {
  for (const char* body :
       {R"({"attempts":1.5})", R"({"attempts":1.0})", R"({"attempts":1e0})", R"({"attempts":"1"})",
        R"({"attempts":true})", R"({"attempts":false})", R"({"attempts":{}})",
        R"({"attempts":[1]})", R"({"attempts":99999999999999999999})"}) {
    EXPECT_EQ(error_code(body), bq::ErrorCode::Decode) << body;
  }
  auto r = bq::spi::increment_attempts(R"({"attempts":1.5})");
  ASSERT_FALSE(r.has_value());
  EXPECT_STREQ(r.error().what(), "attempts: expected integer, got 1.5");
}

TEST(IncrementAttempts, ENV16_NotAStrictJsonObjectIsDecodeError) {
  for (const std::string body :
       {"", "   ", "not json", "[1,2]", "[]", "\"x\"", "1", "null", "{} x", "{\"a\":1,}",
        "{\"a\":01}", "\xEF\xBB\xBF{}", "{\"a\":\"\xFF\"}", "{\"a\":\"\xC0\xAF\"}"}) {
    EXPECT_EQ(error_code(body), bq::ErrorCode::Decode) << body;
  }
  auto r = bq::spi::increment_attempts("[1]");
  ASSERT_FALSE(r.has_value());
  EXPECT_STREQ(r.error().what(), "expected a JSON object, got array");
}

TEST(IncrementAttempts, ENV16_DeepNestingIsScannedIteratively) {
  const std::string deep = "{\"d\":" + std::string(9000, '[') + std::string(9000, ']') + "}";
  EXPECT_EQ(bumped(deep), deep.substr(0, deep.size() - 1) + ",\"attempts\":1}");
  const std::string too_deep =
      "{\"d\":" + std::string(20000, '[') + std::string(20000, ']') + ",\"attempts\":1}";
  EXPECT_EQ(error_code(too_deep), bq::ErrorCode::Decode);
}

}  // namespace
