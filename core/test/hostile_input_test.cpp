// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Hostile input (ENV-16): every case gives a clear error or, for valid JSON, a correct decode;
// and every poison body gives a record that keeps every byte.

#include <gtest/gtest.h>
#include <babelqueue/codec.hpp>

#include <cmath>
#include <string>

namespace bq = babelqueue;

namespace {

const std::string kValid =
    R"({"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"order_id":1042,"note":"Café ☕"},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"php","schema_version":1,"created_at":1749132727000},"attempts":0})";

std::string body_with_data(const std::string& data_json) {
  return R"({"job":"urn:x","trace_id":"t","data":)" + data_json +
         R"(,"meta":{"schema_version":1},"attempts":0})";
}

// Decodes standard base64 (test oracle, independent of the library's encoder).
std::string from_base64(std::string_view s) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  unsigned buf = 0;
  int bits = 0;
  for (char c : s) {
    const int v = val(c);
    if (v < 0) continue;
    buf = (buf << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buf >> bits) & 0xFF));
    }
  }
  return out;
}

// The original bytes a poison record carries (ENV-42): raw (base64 or text) or the splice.
std::string original_bytes(const std::string& record) {
  const bq::Json rec = bq::Json::parse(record);
  if (const bq::Json* raw = rec.find("raw")) {
    if (rec.find("raw_encoding") != nullptr) return from_base64(raw->as_string());
    return raw->as_string();
  }
  return {};
}

}  // namespace

TEST(Hostile, Nesting100000DeepIsAClearError) {
  const std::string deep =
      body_with_data("{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}");
  const auto r = bq::try_decode(deep);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(std::string(r.error().what()).find("nesting deeper than 10000"), std::string::npos)
      << r.error().what();
  const std::string record = bq::poison_record(deep, r.error().what(), "orders", 1);
  EXPECT_EQ(original_bytes(record), deep);

  const std::string top = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_FALSE(bq::try_decode(top).has_value());
  EXPECT_FALSE(bq::Json::try_parse(top).has_value());
}

TEST(Hostile, ENV16_DepthLimitIsExactly10000) {
  // top-level object (1) + data (1) + arrays: 9998 arrays reach depth 10000 exactly.
  const auto at_limit =
      body_with_data("{\"a\":" + std::string(9998, '[') + std::string(9998, ']') + "}");
  EXPECT_TRUE(bq::try_decode(at_limit).has_value());
  const auto over =
      body_with_data("{\"a\":" + std::string(9999, '[') + std::string(9999, ']') + "}");
  EXPECT_FALSE(bq::try_decode(over).has_value());
  EXPECT_TRUE(bq::Json::try_parse(std::string(10000, '[') + std::string(10000, ']')).has_value());
  EXPECT_FALSE(bq::Json::try_parse(std::string(10001, '[') + std::string(10001, ']')).has_value());
}

TEST(Hostile, TenMegabyteStringRoundTrips) {
  std::string big(10 * 1024 * 1024, 'x');
  big[12345] = '"';  // forces escaping on the way out
  const auto e = bq::make("urn:x", bq::Json::object({{"blob", big}}));
  const std::string body = bq::encode(e);
  const auto back = bq::decode(body);
  EXPECT_EQ(back.data().find("blob")->as_string(), big);
  EXPECT_EQ(bq::encode(back), body);
}

TEST(Hostile, InvalidUtf8InEveryPositionIsPoisonAndKeptExactly) {
  for (std::size_t i = 0; i < kValid.size(); ++i) {
    std::string body = kValid;
    body[i] = '\xFF';
    const auto r = bq::try_decode(body);
    ASSERT_FALSE(r.has_value()) << "position " << i;
    EXPECT_STREQ(r.error().what(), "body is not valid UTF-8");
    const std::string record = bq::poison_record(body, r.error().what(), "orders", 1);
    const bq::Json rec = bq::Json::parse(record);
    ASSERT_NE(rec.find("raw_encoding"), nullptr);
    EXPECT_EQ(original_bytes(record), body) << "position " << i;
  }
}

TEST(Hostile, OverlongSurrogateAndTruncatedSequencesAreInvalidUtf8) {
  const char* bad[] = {"\xC0\xAF",         "\xE0\x80\xAF", "\xED\xA0\x80",
                       "\xF4\x90\x80\x80", "\xE2\x82",     "\xF0\x9F\x98"};
  for (const char* seq : bad) {
    const std::string body = body_with_data(std::string("{\"s\":\"") + seq + "\"}");
    const auto r = bq::try_decode(body);
    ASSERT_FALSE(r.has_value()) << seq;
    EXPECT_STREQ(r.error().what(), "body is not valid UTF-8");
  }
}

TEST(Hostile, HugeExponentIsValidJsonAndKeepsItsLexeme) {
  const auto e = bq::decode(body_with_data(R"({"x":1e999999,"y":-1E-999999})"));
  EXPECT_EQ(e.data().find("x")->as_number().lexeme(), "1e999999");
  EXPECT_TRUE(std::isinf(e.data().find("x")->as_number().as_double()));
  EXPECT_EQ(e.data().find("y")->as_number().as_double(), -0.0);
  EXPECT_NE(bq::encode(e).find(R"({"x":1e999999,"y":-1E-999999})"), std::string::npos);
  // As a counter it is not an integer: poison with a reason.
  EXPECT_FALSE(bq::try_decode(R"({"attempts":1e999999})").has_value());
}

TEST(Hostile, ThreeHundredDigitIntegerSurvivesButIsNotACounter) {
  const std::string digits = std::string("9").append(299, '7');
  auto e = bq::decode(body_with_data("{\"n\":" + digits + "}"));
  EXPECT_EQ(e.data().find("n")->as_number().lexeme(), digits);
  EXPECT_FALSE(e.data().find("n")->as_int64().has_value());
  e.set_attempts(1);
  EXPECT_NE(bq::encode(e).find("{\"n\":" + digits + "}"), std::string::npos);
  const auto r = bq::try_decode("{\"attempts\":" + digits + "}");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(std::string(r.error().what()).find("attempts"), std::string::npos);
}

TEST(Hostile, ManyDuplicateKeysLastWins) {
  std::string obj = "{";
  for (int i = 0; i < 20000; ++i) {
    obj += "\"k" + std::to_string(i % 100) + "\":" + std::to_string(i) + ",";
  }
  obj += "\"k0\":\"end\"}";
  const auto e = bq::decode(body_with_data(obj));
  EXPECT_EQ(e.data().size(), 100U);
  EXPECT_EQ(e.data().find("k0")->as_string(), "end");
  EXPECT_EQ(e.data().find("k99")->as_int64(), 19999);
  EXPECT_EQ(e.data().as_object().front().first, "k0");
}

TEST(Hostile, WhitespaceOnlyBodyIsAClearError) {
  for (std::string body : {"", " ", " \t\r\n ", "\n\n\n"}) {
    const auto r = bq::try_decode(body);
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(std::string(r.error().what()).find("empty body"), std::string::npos);
    EXPECT_EQ(original_bytes(bq::poison_record(body, r.error().what(), "q", 1)), body);
  }
}

TEST(Hostile, ENV16_SyntaxRejections) {
  const std::string bad[] = {
      "\xEF\xBB\xBF{}",  // BOM
      "{} x",
      "{}}",
      "{\"a\":NaN}",
      "{\"a\":Infinity}",
      "{\"a\":+1}",
      "{\"a\":01}",
      "{\"a\":.5}",
      "{\"a\":5.}",
      "{\"a\":1e}",
      "{'a':1}",
      "{\"a\":1 /* c */}",
      "{\"a\":\"\x01\"}",
      "{\"a\":\"\\x\"}",
      "{\"a\":\"\\u12\"}",
      "{\"a\":[1,]}",
      "{\"a\":[1,,2]}",
      "{\"a\":1,}",
      "{\"a\" 1}",
      "{\"a\":tru}",
      "{\"a\":nul}",
      "{\"a\":\"unterminated}",
      "{\"a\":[1 2]}",
      "{\"a\":{\"b\":1 \"c\":2}}",
      "\v{}",
  };
  for (const auto& body : bad) {
    EXPECT_FALSE(bq::try_decode(body).has_value()) << body;
    EXPECT_FALSE(bq::Json::try_parse(body).has_value()) << body;
  }
}

TEST(Hostile, EveryTruncationOfAValidBodyFailsCleanly) {
  for (std::size_t n = 0; n < kValid.size(); ++n) {
    const std::string body = kValid.substr(0, n);
    const auto r = bq::try_decode(body);
    // A prefix can only decode if it happens to be complete JSON; none of these are.
    EXPECT_FALSE(r.has_value()) << n;
    const std::string record = bq::poison_record(body, "truncated", "orders", 1);
    EXPECT_TRUE(bq::Json::try_parse(record).has_value()) << n;
  }
}

TEST(Hostile, ControlAndSeparatorCharactersInStringsAreHandled) {
  const auto e = bq::decode(body_with_data(R"({"s":"\u0000\u001f\u2028\ud800"})"));
  const std::string& s = e.data().find("s")->as_string();
  EXPECT_EQ(s, std::string("\0\x1f\u2028\xEF\xBF\xBD", 8));
  EXPECT_NE(bq::encode(e).find(R"("s":"\u0000\u001f)"
                               "\u2028\xEF\xBF\xBD\""),
            std::string::npos);
}
