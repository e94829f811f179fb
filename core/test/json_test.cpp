// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The Json value type: number lexemes (ENV-31, ENV-32), strict parse, semantic equality.

#include <gtest/gtest.h>
#include <babelqueue/json.hpp>

#include <cmath>
#include <limits>

namespace bq = babelqueue;

TEST(JsonNumber, ENV32_NativeDoublesUseEcmaScriptLayout) {
  EXPECT_EQ(bq::Json(3.0).dump(), "3");
  EXPECT_EQ(bq::Json(0.5).dump(), "0.5");
  EXPECT_EQ(bq::Json(0.1).dump(), "0.1");
  EXPECT_EQ(bq::Json(-2.5).dump(), "-2.5");
  EXPECT_EQ(bq::Json(1e21).dump(), "1e+21");
  EXPECT_EQ(bq::Json(1e20).dump(), "100000000000000000000");
  EXPECT_EQ(bq::Json(1e-7).dump(), "1e-7");
  EXPECT_EQ(bq::Json(1e-6).dump(), "0.000001");
  EXPECT_EQ(bq::Json(1.5e300).dump(), "1.5e+300");
  EXPECT_EQ(bq::Json(-0.0).dump(), "0");
  EXPECT_EQ(bq::Json(123456.789).dump(), "123456.789");
  EXPECT_EQ(bq::Json(5e-324).dump(), "5e-324");
}

TEST(JsonNumber, ENV32_IntegersArePlainDecimal) {
  EXPECT_EQ(bq::Json(std::numeric_limits<long long>::min()).dump(), "-9223372036854775808");
  EXPECT_EQ(bq::Json(std::numeric_limits<unsigned long long>::max()).dump(),
            "18446744073709551615");
  EXPECT_EQ(bq::Json(0).dump(), "0");
}

TEST(JsonNumber, ENV14_NonFiniteCannotBeEncoded) {
  EXPECT_THROW((void)bq::Json(std::numeric_limits<double>::infinity()).dump(), bq::EncodeError);
  EXPECT_THROW((void)bq::Json(std::nan("")).dump(), bq::EncodeError);
}

TEST(JsonNumber, ENV31_LexemeAccessors) {
  const bq::Json j =
      bq::Json::parse(R"([1.0,1E+3,-0,18446744073709551615,-9223372036854775809,2.5])");
  const auto& a = j.as_array();
  EXPECT_EQ(a[0].as_number().lexeme(), "1.0");
  EXPECT_FALSE(a[0].as_number().is_integer());
  EXPECT_FALSE(a[0].as_int64().has_value());  // decimals fail as_int64
  EXPECT_DOUBLE_EQ(a[1].as_number().as_double(), 1000.0);
  EXPECT_EQ(a[2].as_int64(), 0);
  EXPECT_EQ(a[3].as_uint64(), std::numeric_limits<std::uint64_t>::max());
  EXPECT_FALSE(a[3].as_int64().has_value());
  EXPECT_FALSE(a[4].as_int64().has_value());
  EXPECT_FALSE(a[4].as_uint64().has_value());
  EXPECT_DOUBLE_EQ(a[5].as_number().as_double(), 2.5);
  EXPECT_EQ(j.dump(), R"([1.0,1E+3,-0,18446744073709551615,-9223372036854775809,2.5])");
}

TEST(JsonNumber, HLP12_NumericEqualityIsExact) {
  auto n = [](const char* s) { return bq::Json::number(s); };
  EXPECT_EQ(n("1"), n("1.0"));
  EXPECT_EQ(n("1"), n("10e-1"));
  EXPECT_EQ(n("100"), n("1E+2"));
  EXPECT_EQ(n("0"), n("-0.0"));
  EXPECT_EQ(n("123456789012345678901"), n("1.23456789012345678901e20"));
  EXPECT_FALSE(n("123456789012345678901") == n("123456789012345678902"));
  EXPECT_FALSE(n("1") == n("-1"));
  EXPECT_FALSE(bq::Json(true) == bq::Json(1));
  EXPECT_LT(bq::compare(n("-2").as_number(), n("-1.5").as_number()), 0);
  EXPECT_GT(bq::compare(n("1e3").as_number(), n("999.9").as_number()), 0);
  EXPECT_LT(bq::compare(n("0.001").as_number(), n("1").as_number()), 0);
  EXPECT_THROW((void)bq::Json::number("01"), bq::EncodeError);
  EXPECT_THROW((void)bq::Json::number("1 "), bq::EncodeError);
}

TEST(Json, ObjectsKeepOrderAndCompareSemantically) {
  bq::Json a = bq::Json::object({{"b", 1}, {"a", bq::Json::array({1, "x", nullptr, false})}});
  EXPECT_EQ(a.dump(), R"({"b":1,"a":[1,"x",null,false]})");
  const bq::Json b = bq::Json::parse(R"({"a":[1,"x",null,false],"b":1.0})");
  EXPECT_EQ(a, b);
  a["c"] = "new";
  EXPECT_EQ(a.size(), 3U);
  EXPECT_FALSE(a == b);
  EXPECT_EQ(a.find("c")->as_string(), "new");
  EXPECT_EQ(a.find("zz"), nullptr);
  EXPECT_THROW((void)a.as_array(), bq::Error);
}

TEST(Json, ObjectFactoryDuplicateKeepsFirstPosition) {
  const bq::Json j = bq::Json::object({{"x", 1}, {"y", 2}, {"x", 3}});
  EXPECT_EQ(j.dump(), R"({"x":3,"y":2})");
}

TEST(Json, ParseReportsOffsets) {
  const auto r = bq::Json::try_parse("[1, 2, x]");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().offset(), 7U);
  EXPECT_THROW((void)bq::Json::parse("\xFF"), bq::DecodeError);
  EXPECT_EQ(bq::Json::parse(" \"s\" ").as_string(), "s");
  EXPECT_TRUE(bq::Json::parse("null").is_null());
}

TEST(Json, PushBackAndIndexTurnNullIntoContainers) {
  bq::Json arr;
  arr.push_back(1);
  arr.push_back("two");
  EXPECT_EQ(arr.dump(), R"([1,"two"])");
  bq::Json obj;
  obj["k"]["nested"] = true;
  EXPECT_EQ(obj.dump(), R"({"k":{"nested":true}})");
}

TEST(JsonNumber, HLP12_HugeExponentsCompareExactly) {
  EXPECT_FALSE(bq::Json::number("1e99999999999999999999") ==
               bq::Json::number("1e99999999999999999998"));
  EXPECT_EQ(bq::Json::number("10e99999999999999999998"),
            bq::Json::number("1e99999999999999999999"));
  EXPECT_GT(bq::compare(bq::Json::number("1e99999999999999999999").as_number(),
                        bq::Json::number("9e99999999999999999998").as_number()),
            0);
}
