// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// try_decode's fast path for the compact canonical body (ENV-12 layout) against the general
// decoder: what the fast path accepts it must read exactly as the general decoder does, and
// every other body must fall back to the general decoder with the same result.

#include <gtest/gtest.h>
#include <babelqueue/codec.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "decode_internal.hpp"

namespace bq = babelqueue;
namespace detail = babelqueue::detail;

namespace {

const std::string kCanonical =
    R"({"job":"urn:babel:bench:job","trace_id":"7d02530c-7f1a-4c45-b7a9-520e6697b7b3","data":{"order_id":1042},"meta":{"id":"7050b876-4bee-4473-a795-02b698691386","queue":"bench-queue-123","lang":"cpp","schema_version":1,"created_at":1796568413263},"attempts":0})";

// kCanonical with the first `from` replaced by `to`.
std::string with(std::string_view from, std::string_view to) {
  std::string body = kCanonical;
  const auto at = body.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) body.replace(at, from.size(), to);
  return body;
}

void expect_fast(const std::string& body) {
  EXPECT_TRUE(detail::try_decode_canonical(body).has_value()) << body;
  EXPECT_EQ(detail::decode_paths_difference(body), "") << body;
}

void expect_fallback(const std::string& body) {
  EXPECT_FALSE(detail::try_decode_canonical(body).has_value()) << body;
  EXPECT_EQ(detail::decode_paths_difference(body), "") << body;
}

TEST(DecodePaths, TheCanonicalBodyTakesTheFastPathAndReadsAsTheGeneralDecoderDoes) {
  const auto fast = detail::try_decode_canonical(kCanonical);
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(fast->urn(), "urn:babel:bench:job");
  EXPECT_EQ(fast->trace_id(), "7d02530c-7f1a-4c45-b7a9-520e6697b7b3");
  EXPECT_EQ(fast->meta().id, "7050b876-4bee-4473-a795-02b698691386");
  EXPECT_EQ(fast->meta().queue, "bench-queue-123");
  EXPECT_EQ(fast->meta().lang, "cpp");
  EXPECT_EQ(fast->meta().schema_version, 1);
  EXPECT_EQ(fast->meta().created_at, 1796568413263);
  EXPECT_EQ(fast->attempts(), 0);
  EXPECT_TRUE(fast->has_data() && fast->has_meta() && fast->has_schema_version() &&
              fast->has_attempts());
  EXPECT_EQ(bq::encode(*fast), kCanonical);  // the raw data is re-emitted as it is
  EXPECT_EQ(detail::decode_paths_difference(kCanonical), "");
}

TEST(DecodePaths, TheComparisonSeesADifference) {
  // Fresh decodes each time: a comparison reads data(), which drops the raw text.
  const auto canonical = [] { return bq::try_decode(kCanonical); };
  EXPECT_EQ(detail::decode_difference(canonical(), {}, canonical(), {}), "");
  EXPECT_EQ(detail::decode_difference(
                canonical(), {}, bq::try_decode(with(R"("attempts":0)", R"("attempts":1)")), {}),
            "attempts");
  EXPECT_EQ(detail::decode_difference(canonical(), {}, canonical(), {"w"}), "warnings");
  EXPECT_EQ(detail::decode_difference(
                canonical(), {},
                bq::try_decode(with(R"({"order_id":1042})", R"({"order_id": 1042})")), {}),
            "canonical raw data");
  const auto bad = bq::try_decode("[]");
  EXPECT_NE(detail::decode_difference(canonical(), {}, bad, {}), "");
  EXPECT_EQ(detail::decode_difference(bad, {}, bad, {}), "");
  EXPECT_EQ(detail::decode_difference(bad, {}, bq::try_decode("[1"), {}), "error text");
}

TEST(DecodePaths, OtherValuesOfTheCanonicalLayoutTakeTheFastPath) {
  expect_fast(with(R"("7d02530c-7f1a-4c45-b7a9-520e6697b7b3")", "null"));  // trace_id null
  expect_fast(with(R"("7d02530c-7f1a-4c45-b7a9-520e6697b7b3")", R"("")"));
  expect_fast(with(R"("urn:babel:bench:job")", R"("  urn:babel:bench:job ")"));  // trimmed
  expect_fast(with(R"("urn:babel:bench:job")", R"("")"));
  expect_fast(with(R"("bench-queue-123")", "\"caf\xC3\xA9-\xE2\x82\xAC\""));  // UTF-8
  expect_fast(with(R"("schema_version":1)", R"("schema_version":-7)"));
  expect_fast(with(R"("attempts":0)", R"("attempts":-0)"));
  expect_fast(with(R"("attempts":0)", R"("attempts":999999999999999999)"));  // 18 digits
  expect_fast(with(R"("created_at":1796568413263)", R"("created_at":12345678)"));
  expect_fast(with(R"("created_at":1796568413263)", R"("created_at":0)"));
  expect_fast(with(R"("created_at":1796568413263)", R"("created_at":-5)"));
  expect_fast(with(R"("attempts":0)", R"("attempts":-3)"));
  expect_fast(with(R"("attempts":0)", R"("attempts":12)"));
  // data: the flat reader, and the general data scanner for everything else.
  for (const char* data :
       {R"({})", R"({"a":"x","b":true,"c":false,"d":null,"e":-12,"f":"\u00e9\n"})",
        R"({"a":{"b":[1,2.5,{"c":null}]}})", R"({"a":1.5e3})", R"({"a":-0.5E-3,"b":0})",
        R"({"a": 1})", R"({"a":1,"a":2})", R"({"a":"\u00E9"})", R"({"a":1234567890123456789012})",
        R"({"\u0061":1})", "{\"k\xC3\xA9\":\"v\xC3\xA9\"}"}) {
    expect_fast(with(R"({"order_id":1042})", data));
  }
  std::string many = "{";  // past the 64 keys the canonical check follows
  for (int i = 0; i < 70; ++i)
    many += (i == 0 ? "\"k" : ",\"k") + std::to_string(i) + "\":" + std::to_string(i);
  expect_fast(with(R"({"order_id":1042})", many + "}"));
}

TEST(DecodePaths, EveryDeviationFallsBackToTheGeneralDecoder) {
  const std::vector<std::string> bodies = {
      // whitespace
      " " + kCanonical, kCanonical + "\n", with(R"("job":)", R"("job": )"),
      with(R"(,"meta")", R"(, "meta")"),
      // escapes in the strings
      with("urn:babel:bench:job", R"(urn:babel:bench\/job)"),
      with("7d02530c-7f1a", R"(7d02530c-7f1a\u0041)"), with("7050b876", R"(\"7050b876)"),
      with("bench-queue-123", R"(bench\tqueue)"), with(R"("cpp")", R"("c\\pp")"),
      // bytes the strings may not hold
      with("bench-queue-123", "bench\x01queue"), with("bench-queue-123", "bench\xFFqueue"),
      with("bench-queue-123", "bench\xC3queue"), with(R"("cpp")", "\"c\xED\xA0\x80p\""),
      // members: absent, reordered, duplicated, unknown, aliased, forbidden, dead_letter
      with(R"("trace_id":"7d02530c-7f1a-4c45-b7a9-520e6697b7b3",)", ""),
      with(R"(,"data":{"order_id":1042})", ""), with(R"(,"attempts":0)", ""),
      with(R"("queue":"bench-queue-123",)", ""),
      with(R"("job":"urn:babel:bench:job","trace_id":"7d02530c-7f1a-4c45-b7a9-520e6697b7b3")",
           R"("trace_id":"7d02530c-7f1a-4c45-b7a9-520e6697b7b3","job":"urn:babel:bench:job")"),
      with(R"("attempts":0)", R"("attempts":0,"attempts":2)"),
      with(R"("attempts":0)", R"("attempts":0,"zz":[1])"),
      with(R"("created_at":1796568413263)", R"("created_at":1796568413263,"region":"eu")"),
      with(R"("job":"urn:babel:bench:job")", R"("job":"","urn":"urn:babel:bench:job")"),
      with(R"("job":"urn:babel:bench:job")", R"("urn":"urn:babel:bench:job")"),
      with(R"("attempts":0)", R"("attempts":0,"timestamp":1)"),
      with(R"("created_at":1796568413263)", R"("created_at":1796568413263,"max_retries":3)"),
      with(
          R"("attempts":0)",
          R"("attempts":3,"dead_letter":{"reason":"failed","error":null,"exception":null,"failed_at":1,"original_queue":"q","attempts":3,"lang":"cpp"})"),
      // types
      with(R"("7d02530c-7f1a-4c45-b7a9-520e6697b7b3")", "7"),
      with(R"("urn:babel:bench:job")", "null"), with(R"("urn:babel:bench:job")", "[]"),
      with(R"({"order_id":1042})", "null"), with(R"({"order_id":1042})", "[1]"),
      with(R"({"order_id":1042})", R"("x")"), with(R"("bench-queue-123")", "null"),
      with(R"("cpp")", "3"), with(R"("meta":{"id")", R"("meta":null,"m":{"id")"),
      with(R"("schema_version":1)", R"("schema_version":"1")"),
      with(R"("schema_version":1)", R"("schema_version":1.0)"),
      with(R"("schema_version":1)", R"("schema_version":1e0)"),
      with(R"("schema_version":1)", R"("schema_version":01)"),
      with(R"("schema_version":1)", R"("schema_version":null)"),
      with(R"("attempts":0)", R"("attempts":1234567890123456789)"),  // 19 digits
      with(R"("created_at":1796568413263)", R"("created_at":99999999999999999999)"),
      with(R"("created_at":1796568413263)", R"("created_at":-)"),
      with(R"("attempts":0)", R"("attempts":true)"),
      // syntax
      with(R"({"order_id":1042})", R"({"order_id":})"), with(R"({"order_id":1042})", "{"),
      with(R"({"order_id":1042})", R"({"order_id":1042,})"),
      with(R"({"order_id":1042})", R"({"order_id":tru})"),
      with(R"({"order_id":1042})", R"({"order_id":-})"),
      with(R"({"order_id":1042})", R"({"order_id":1.})"),
      with(R"({"order_id":1042})", R"({"order_id":01})"),
      with(R"({"order_id":1042})", R"({"order_id":+1})"),
      with(R"({"order_id":1042})", R"({"order_id":1e})"),
      with(R"("trace_id":"7d02530c-7f1a-4c45-b7a9-520e6697b7b3")", R"("trace_id":nul)"),
      kCanonical + "}", kCanonical + "x", kCanonical.substr(0, kCanonical.size() - 1),
      // short bodies that end as the layout does
      "}", "3}", ":3}", R"("attempts":3})", R"(},"attempts":3})",
      R"({"created_at":1},"attempts":3})"};
  for (const auto& body : bodies)
    expect_fallback(body);
}

// Every prefix of the canonical body, and every byte of it replaced by bytes that matter to a
// JSON scanner: whatever the fast path accepts or refuses, try_decode agrees with the general
// decoder.
TEST(DecodePaths, EveryPrefixAndByteChangeAgreesWithTheGeneralDecoder) {
  for (std::size_t n = 0; n < kCanonical.size(); ++n)
    expect_fallback(kCanonical.substr(0, n));
  int accepted = 0;
  for (std::size_t i = 0; i < kCanonical.size(); ++i) {
    for (const char ch :
         {' ', '"', '\\', ',', ':', '}', '{', '0', '9', '-', '.', 'e', 'x', '\x80', '\x1F', 'n'}) {
      std::string body = kCanonical;
      body[i] = ch;
      if (detail::try_decode_canonical(body)) ++accepted;
      EXPECT_EQ(detail::decode_paths_difference(body), "") << body;
    }
  }
  EXPECT_GT(accepted, 100);  // changes inside the strings and numbers keep the layout
}

}  // namespace
