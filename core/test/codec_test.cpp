// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The envelope codec against the worked examples EX-1..EX-9 of spec/01-envelope.md.

#include <gtest/gtest.h>
#include <babelqueue/codec.hpp>

#include <atomic>
#include <cmath>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

namespace bq = babelqueue;

namespace {

const std::string kEx1 =
    R"({"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"order_id":1042},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"cpp","schema_version":1,"created_at":1749132727000},"attempts":0})";

const std::string kOrderCreatedPretty = R"({
  "job": "urn:babel:orders:created",
  "trace_id": "7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b",
  "data": {
    "order_id": 1042
  },
  "meta": {
    "id": "f1e2d3c4-b5a6-4789-90ab-cdef01234567",
    "queue": "orders",
    "lang": "php",
    "schema_version": 1,
    "created_at": 1749132727000
  },
  "attempts": 0
}
)";

std::string retry(std::string_view body) {
  bq::Envelope e = bq::decode(body);
  e.set_attempts(e.attempts() + 1);
  return bq::encode(e);
}

}  // namespace

TEST(Make, EX1_ProducesCanonicalFrameWithFreshIdentity) {
  const bq::Envelope e = bq::make("urn:babel:orders:created",
                                  bq::Json::object({{"order_id", 1042}}), {.queue = "orders"});
  const std::string body = bq::encode(e);
  static const std::regex shape(
      R"re(\{"job":"urn:babel:orders:created","trace_id":"([0-9a-f-]{36})","data":\{"order_id":1042\},"meta":\{"id":"([0-9a-f-]{36})","queue":"orders","lang":"cpp","schema_version":1,"created_at":([0-9]+)\},"attempts":0\})re");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(body, m, shape)) << body;
  static const std::regex v4(
      "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
  EXPECT_TRUE(std::regex_match(m[1].str(), v4));  // ENV-4
  EXPECT_TRUE(std::regex_match(m[2].str(), v4));
  EXPECT_NE(m[1].str(), m[2].str());
  const auto created = std::stoll(m[3].str());
  EXPECT_LE(created, bq::now_ms());
  EXPECT_GT(created, bq::now_ms() - 60'000);  // ENV-7: milliseconds, not seconds
  EXPECT_TRUE(bq::accepts(e));
}

TEST(Make, EX1_ExactBytesRoundTrip) {
  EXPECT_EQ(bq::encode(bq::decode(kEx1)), kEx1);
}

TEST(Make, ENV4_UuidsAreDistinctVersion4) {
  std::set<std::string> seen;
  for (int i = 0; i < 2000; ++i) {
    const std::string u = bq::uuid_v4();
    ASSERT_EQ(u.size(), 36U);
    EXPECT_EQ(u[14], '4');
    EXPECT_NE(std::string("89ab").find(u[19]), std::string::npos);
    EXPECT_TRUE(seen.insert(u).second);
  }
}

TEST(Make, ENV6_ContinuesTrimmedTraceAndMintsForBlank) {
  const auto cont = bq::make("urn:x", {}, {.trace_id = " \t trace-123\u3000"});
  EXPECT_EQ(cont.trace_id(), "trace-123");
  const auto fresh = bq::make("urn:x", {}, {.trace_id = " \u00a0 "});
  EXPECT_EQ(fresh.trace_id().size(), 36U);
}

TEST(Make, ENV10_BlankUrnIsAnError) {
  try {
    (void)bq::make(" \u2003\n", {});
    FAIL() << "expected EmptyUrn";
  } catch (const bq::Error& e) {
    EXPECT_EQ(e.code(), bq::ErrorCode::EmptyUrn);
  }
}

TEST(Make, ENV10_DefaultsQueueAndTrimsUrn) {
  const auto e = bq::make("  urn:x  ", {}, {.queue = "  "});
  EXPECT_EQ(e.urn(), "urn:x");
  EXPECT_EQ(e.meta().queue, "default");
  EXPECT_EQ(e.meta().lang, "cpp");
  EXPECT_EQ(e.meta().schema_version, 1);
  EXPECT_EQ(e.attempts(), 0);
  EXPECT_FALSE(e.dead_letter().has_value());
  EXPECT_EQ(bq::encode(e).find("\"data\":{}"), bq::encode(e).find("\"data\":"));
}

TEST(Make, DataMustBeAnObject) {
  EXPECT_THROW((void)bq::make("urn:x", bq::Json::array({1})), bq::Error);
}

TEST(Decode, EX2_RetryOfPrettyFixtureIsCompactAndKeepsLang) {
  EXPECT_EQ(
      retry(kOrderCreatedPretty),
      R"({"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"order_id":1042},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"php","schema_version":1,"created_at":1749132727000},"attempts":1})");
}

TEST(Decode, EX3_UrnAliasResolvesAndIsNotReemitted) {
  const std::string body =
      R"({"urn":"urn:babel:orders:created","trace_id":"t","data":{},"meta":{"schema_version":1},"attempts":0})";
  const auto e = bq::decode(body);
  EXPECT_EQ(e.urn(), "urn:babel:orders:created");
  const std::string out = bq::encode(e);
  EXPECT_EQ(out.rfind(R"({"job":"urn:babel:orders:created",)", 0), 0U);
  EXPECT_EQ(out.find("\"urn\""), std::string::npos);
}

TEST(Decode, ENV23_JobWinsOverAliasAndBlankJobFallsBack) {
  EXPECT_EQ(bq::decode(R"({"urn":"urn:b","job":"urn:a"})").urn(), "urn:a");
  EXPECT_EQ(bq::decode(R"({"job":"  ","urn":" urn:b "})").urn(), "urn:b");
  EXPECT_EQ(bq::decode(R"({"job":null,"urn":"urn:b"})").urn(), "urn:b");
  EXPECT_EQ(bq::decode(R"({"urn":7,"job":"urn:x"})").urn(), "urn:x");  // EX-9
  EXPECT_EQ(bq::decode(R"({"urn":7})").urn(), "");
}

TEST(Annotate, EX4_ExactBytes) {
  const auto e = bq::decode(kEx1);
  bq::Envelope failed = e;
  failed.set_attempts(3);
  const auto dl =
      bq::annotate(failed, bq::reason::failed, "orders", 3,
                   bq::cause_of(std::runtime_error("Payment gateway timeout")), 1749132730000);
  EXPECT_EQ(
      bq::encode(dl),
      R"({"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"order_id":1042},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"cpp","schema_version":1,"created_at":1749132727000},"attempts":3,"dead_letter":{"reason":"failed","error":"Payment gateway timeout","exception":"std::runtime_error","failed_at":1749132730000,"original_queue":"orders","attempts":3,"lang":"cpp"}})");
  EXPECT_FALSE(failed.dead_letter().has_value());  // ENV-39: the input is not mutated
}

TEST(Annotate, ENV39_NoCauseWritesNulls) {
  const auto dl = bq::annotate(bq::decode(kEx1), bq::reason::unknown_urn, "orders", 0);
  const std::string out = bq::encode(dl);
  EXPECT_NE(out.find(R"("dead_letter":{"reason":"unknown_urn","error":null,"exception":null,)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(R"("lang":"cpp"}})"), std::string::npos);
}

TEST(Annotate, RT12_NonStdExceptionCause) {
  const auto cause = bq::cause_of(std::make_exception_ptr(42));
  EXPECT_EQ(cause.message, "unknown exception");
  EXPECT_EQ(cause.type, "unknown");
  const auto std_cause = bq::cause_of(std::make_exception_ptr(std::logic_error("x")));
  EXPECT_EQ(std_cause.type, "std::logic_error");
  EXPECT_EQ(std_cause.message, "x");
}

TEST(Decode, EX5_UnknownMembersKeptForbiddenDroppedWithWarnings) {
  const std::string in =
      R"({"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"order_id":1042},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"php","schema_version":1,"created_at":1749132727000,"vendor_flag":true,"vendor_ctx":{"region":"eu-west-1","hops":[1,2]},"ts":5},"attempts":0,"extra_top":{"k":"<v&>"},"timestamp":1})";
  std::vector<std::string> warnings;
  const auto e = bq::decode(in, &warnings);
  ASSERT_EQ(warnings.size(), 2U);
  EXPECT_NE(warnings[0].find("/timestamp"), std::string::npos);
  EXPECT_NE(warnings[1].find("/meta/ts"), std::string::npos);
  EXPECT_EQ(
      bq::encode(e),
      R"({"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"order_id":1042},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"php","schema_version":1,"created_at":1749132727000,"vendor_ctx":{"region":"eu-west-1","hops":[1,2]},"vendor_flag":true},"attempts":0,"extra_top":{"k":"<v&>"}})");
}

TEST(Decode, ENV28_RepeatedForbiddenNameWarnsOnce) {
  std::vector<std::string> warnings;
  (void)bq::decode(
      R"({"timestamp":1,"timestamp":2,"meta":{"source":"x","attempts":1,"max_retries":3}})",
      &warnings);
  ASSERT_EQ(warnings.size(), 4U);
  EXPECT_NE(warnings[0].find("/timestamp"), std::string::npos);
}

TEST(Decode, ENV27_UnknownValuesAreCompactedRawText) {
  const auto e =
      bq::decode(R"({"x" : { "a" : [ 1 , 2.50 , "s p\u00e9" ] } , "meta":{"v" : null}})");
  ASSERT_EQ(e.unknown().size(), 1U);
  EXPECT_EQ(e.unknown()[0].second, R"({"a":[1,2.50,"s p\u00e9"]})");
  ASSERT_EQ(e.meta_unknown().size(), 1U);
  EXPECT_EQ(e.meta_unknown()[0].second, "null");
}

TEST(Decode, ENV26_UnknownDeadLetterMembersSurvive) {
  const std::string in =
      R"({"job":"urn:x","dead_letter":{"reason":"failed","zz":1,"aa":[true]},"attempts":2})";
  const auto out = bq::encode(bq::decode(in));
  EXPECT_NE(out.find(R"("lang":"","aa":[true],"zz":1})"), std::string::npos) << out;
}

TEST(Encode, EX6_Escaping) {
  const auto e = bq::make(
      "urn:x",
      bq::Json::object(
          {{"t", "Café — naïve ☕"}, {"p", "a/b"}, {"h", "A & B <tag>"}, {"c", "\x01\n\t"}}));
  const std::string out = bq::encode(e);
  EXPECT_NE(
      out.find(R"("data":{"t":"Café — naïve ☕","p":"a/b","h":"A & B <tag>","c":"\u0001\n\t"})"),
      std::string::npos)
      << out;
}

TEST(Encode, ENV13_EscapeTable) {
  std::string out;
  bq::append_json_string(out, std::string("\"\\\b\f\n\r\t\x1f\x7f/\u2028", 13));
  EXPECT_EQ(out, "\"\\\"\\\\\\b\\f\\n\\r\\t\\u001f\x7f/\u2028\"");
}

TEST(Encode, ENV14_InvalidUtf8AndNaNAreErrors) {
  auto e = bq::make("urn:x", bq::Json::object({{"s", std::string("\xC3\x28")}}));
  EXPECT_THROW((void)bq::encode(e), bq::EncodeError);
  auto n = bq::make("urn:x", bq::Json::object({{"n", std::nan("")}}));
  EXPECT_THROW((void)bq::encode(n), bq::EncodeError);
  std::string out = "keep";
  EXPECT_THROW(bq::encode_to(n, out), bq::EncodeError);
  EXPECT_EQ(out, "keep");  // nothing half-written
}

TEST(Decode, EX7_NumberLexemesSurviveByteForByte) {
  const std::string in =
      R"({"job":"urn:x","trace_id":"t","data":{"big":12345678901234567890,"f":1.0,"e":1E+3},"meta":{"schema_version":1},"attempts":0})";
  EXPECT_NE(retry(in).find(R"("data":{"big":12345678901234567890,"f":1.0,"e":1E+3})"),
            std::string::npos);
}

TEST(Decode, ENV35_DataStringsAreReescaped) {
  const std::string in =
      R"({"job":"urn:x","data":{"a":"\u00e9\/","b":"\ud800x","c":"\ud83d\ude00"}})";
  EXPECT_NE(retry(in).find("\"data\":{\"a\":\"é/\",\"b\":\"\xEF\xBF\xBDx\",\"c\":\"😀\"}"),
            std::string::npos)
      << retry(in);
}

TEST(Decode, EX9_NotPoison) {
  EXPECT_EQ(bq::decode("{}").urn(), "");
  const auto upper = bq::decode(R"({"JOB":"urn:x","data":{}})");
  EXPECT_EQ(upper.urn(), "");
  ASSERT_EQ(upper.unknown().size(), 1U);
  EXPECT_EQ(upper.unknown()[0].first, "JOB");
  const auto dup = bq::decode(R"({"job":"urn:x","data":{},"data":{"a":1}})");
  EXPECT_EQ(dup.data(), bq::Json::object({{"a", 1}}));
  EXPECT_EQ(bq::decode(R"({"urn":7,"job":"urn:x"})").urn(), "urn:x");
}

TEST(Decode, ENV19_LastWinsAndOnlyTheWinnerIsTypeChecked) {
  EXPECT_EQ(bq::decode(R"({"job":5,"job":"urn:x"})").urn(), "urn:x");
  EXPECT_FALSE(bq::try_decode(R"({"job":"urn:x","job":5})").has_value());
  const auto e = bq::decode(R"({"data":{"b":1,"a":2,"b":3}})");
  EXPECT_EQ(e.data().dump(), R"({"b":3,"a":2})");  // first position, last value
  EXPECT_EQ(bq::decode(R"({"meta":"x","meta":{"queue":"q"}})").meta().queue, "q");
}

TEST(Decode, ENV20_MemberTypesArePoison) {
  const char* poison[] = {
      R"({"job":5})",
      R"({"job":{}})",
      R"({"trace_id":123})",
      R"({"data":"x"})",
      R"({"data":[1]})",
      R"({"data":[]})",
      R"({"data":true})",
      R"({"meta":"x"})",
      R"({"meta":[]})",
      R"({"meta":{"lang":1}})",
      R"({"meta":{"schema_version":"1"}})",
      R"({"meta":{"schema_version":1.0}})",
      R"({"meta":{"schema_version":1e0}})",
      R"({"meta":{"created_at":1.5}})",
      R"({"attempts":1.5})",
      R"({"attempts":1.0})",
      R"({"attempts":"1"})",
      R"({"attempts":true})",
      R"({"attempts":99999999999999999999})",
      R"({"dead_letter":"x"})",
      R"({"dead_letter":{"error":5}})",
      R"({"dead_letter":{"failed_at":"x"}})",
  };
  for (const char* body : poison) {
    const auto r = bq::try_decode(body);
    EXPECT_FALSE(r.has_value()) << body;
    if (!r.has_value()) {
      EXPECT_EQ(r.error().code(), bq::ErrorCode::Decode);
      EXPECT_FALSE(std::string(r.error().what()).empty());
    }
  }
}

TEST(Decode, ENV20_NullIsAbsentAndMinusZeroIsZero) {
  const auto e = bq::decode(
      R"({"job":null,"trace_id":null,"data":null,"meta":null,"attempts":-0,"dead_letter":null})");
  EXPECT_FALSE(e.has_data());
  EXPECT_FALSE(e.has_meta());
  EXPECT_EQ(e.attempts(), 0);
  EXPECT_TRUE(e.has_attempts());
  EXPECT_FALSE(e.dead_letter().has_value());
}

TEST(Decode, ENV22_AbsentDeadLetterErrorStaysNull) {
  const auto e = bq::decode(R"({"dead_letter":{"reason":"failed","exception":"E"}})");
  ASSERT_TRUE(e.dead_letter().has_value());
  EXPECT_FALSE(e.dead_letter()->error.has_value());
  ASSERT_TRUE(e.dead_letter()->exception.has_value());
  EXPECT_NE(bq::encode(e).find(R"("error":null,"exception":"E")"), std::string::npos);
}

TEST(Encode, ENV36_AbsentMetaAndDataReemitZeroValues) {
  EXPECT_EQ(
      bq::encode(bq::decode(R"({"attempts":4})")),
      R"({"job":"","trace_id":"","data":{},"meta":{"id":"","queue":"","lang":"","schema_version":0,"created_at":0},"attempts":4})");
}

TEST(Accepts, ENV29_Rules) {
  EXPECT_TRUE(bq::accepts(bq::decode(kEx1)));
  EXPECT_TRUE(bq::accepts(bq::decode(kOrderCreatedPretty)));
  const char* rejected[] = {
      R"({"trace_id":"t","data":{},"meta":{"schema_version":1},"attempts":0})",  // (a)
      R"({"job":"urn:x","trace_id":"t","data":{},"attempts":0})",                // (b)
      R"({"job":"urn:x","trace_id":"t","data":{},"meta":{"schema_version":2},"attempts":0})",
      R"({"job":"urn:x","trace_id":"t","meta":{"schema_version":1},"attempts":0})",  // (c)
      R"({"job":"urn:x","trace_id":" \u3000","data":{},"meta":{"schema_version":1},"attempts":0})",
      R"({"job":"urn:x","trace_id":"t","data":{},"meta":{"schema_version":1}})",  // (e)
  };
  for (const char* body : rejected)
    EXPECT_FALSE(bq::accepts(bq::decode(body))) << body;
  EXPECT_TRUE(bq::accepts(bq::decode(
      R"({"job":"urn:x","trace_id":"t","data":{},"meta":{"schema_version":1,"lang":"cobol"},"attempts":-1})")));
}

TEST(TrimW, ENV10_UnicodeWhitespaceSet) {
  EXPECT_EQ(bq::trim_w("\t\n\v\f\r \u0085\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000x"
                       "\u3000 "),
            "x");
  EXPECT_EQ(bq::trim_w("\ufeffx"), "\ufeffx");  // U+FEFF is not in W
  EXPECT_EQ(bq::trim_w("\u200bx"), "\u200bx");  // nor U+200B
  EXPECT_EQ(bq::trim_w("   "), "");
  EXPECT_EQ(bq::trim_w(""), "");
}

TEST(Envelope, IsARegularValueType) {
  const auto a = bq::decode(kEx1);
  bq::Envelope b = a;
  EXPECT_EQ(a, b);
  b.set_attempts(1);
  EXPECT_FALSE(a == b);
  bq::Envelope c = std::move(b);
  EXPECT_EQ(c.attempts(), 1);
  EXPECT_EQ(c.urn(), "urn:babel:orders:created");
}

TEST(Encode, ENV35_LazyDataIsReemittedCanonicallyWithoutBeingRead) {
  // Never call data() before encode: the raw-text path must give the canonical form too.
  const std::pair<const char*, const char*> cases[] = {
      {R"({"data":{"a":1,"b":[true,null,"x"]}})", R"({"a":1,"b":[true,null,"x"]})"},
      {R"({"data":{ "a" : 1 }})", R"({"a":1})"},
      {R"({"data":{"a":1,"a":2}})", R"({"a":2})"},
      {R"({"data":{"s":"\/\u00e9\u001F\n"}})", "{\"s\":\"/é\\u001f\\n\"}"},
      {R"({"data":{"s":"\u0008"}})", R"({"s":"\b"})"},
      {R"({"data":{"s":"\"\\\u0001"}})", R"({"s":"\"\\\u0001"})"},
      {R"({"data":{"o":{"k":1},"p":{"k":2}}})", R"({"o":{"k":1},"p":{"k":2}})"},
      {R"({"data":{"n":1.50E+3}})", R"({"n":1.50E+3})"},
  };
  for (const auto& [in, data] : cases) {
    const std::string out = bq::encode(bq::decode(in));
    EXPECT_NE(out.find(std::string("\"data\":") + data + ",\"meta\""), std::string::npos)
        << in << " -> " << out;
  }
}

TEST(Envelope, LazyDataIsParsedOnceAcrossThreadsAndCopies) {
  const auto e = bq::decode(R"({"job":"urn:x","data":{"k":[1,2,3],"s":"v"}})");
  bq::Envelope copy = e;  // copied before the first parse
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      if (e.data().find("s")->as_string() == "v" && e.data().size() == 2) ++ok;
    });
  }
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(ok.load(), 4);
  EXPECT_EQ(copy.data(), e.data());
  bq::Envelope moved = std::move(copy);
  EXPECT_EQ(moved.data().find("k")->size(), 3U);
  EXPECT_EQ(copy.urn(), "");  // NOLINT(bugprone-use-after-move): moved-from is empty and valid
}

TEST(Decode, ENV28_WarningsFollowTheWinningMeta) {
  std::vector<std::string> warnings;
  (void)bq::decode(R"({"job":"u","meta":{"ts":1},"meta":{"schema_version":1}})", &warnings);
  EXPECT_TRUE(warnings.empty());
  (void)bq::decode(R"({"job":"u","meta":{"schema_version":1},"meta":{"ts":1}})", &warnings);
  EXPECT_EQ(warnings.size(), 1U);
}

TEST(Decode, ENV20_IntegerCountersParseExactlyAtEveryLength) {
  const char* values[] = {"0",
                          "7",
                          "-7",
                          "12345678",
                          "87654321",
                          "123456789",
                          "-1234567890",
                          "1749132727000",
                          "999999999999999999",
                          "-999999999999999999",
                          "9223372036854775807",
                          "-9223372036854775808"};
  for (const char* v : values) {
    const auto e =
        bq::decode(std::string("{\"attempts\":") + v + ",\"meta\":{\"created_at\":" + v + "}}");
    EXPECT_EQ(e.attempts(), std::stoll(v)) << v;
    EXPECT_EQ(e.meta().created_at, std::stoll(v)) << v;
  }
  EXPECT_FALSE(bq::try_decode(R"({"attempts":12345678.5})").has_value());
  EXPECT_FALSE(bq::try_decode(R"({"attempts":1234567890e1})").has_value());
  EXPECT_FALSE(bq::try_decode(R"({"attempts":9223372036854775808})").has_value());
  EXPECT_FALSE(bq::try_decode(R"({"attempts":012345678})").has_value());
}
