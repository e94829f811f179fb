// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/codec.hpp>
#include <babelqueue/schema.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using babelqueue::ConfigError;
using babelqueue::Error;
using babelqueue::ErrorCode;
using babelqueue::Json;
using babelqueue::schema::DirProvider;
using babelqueue::schema::InvalidPayload;
using babelqueue::schema::MapProvider;
using babelqueue::schema::Schema;

std::string join(const std::vector<std::string>& list) {
  std::string out;
  for (const auto& item : list) {
    if (!out.empty()) out += " | ";
    out += item;
  }
  return out;
}

// Validates and cross-checks `is_valid` against `validate`.
std::vector<std::string> run(std::string_view schema, std::string_view data) {
  const Schema s = Schema::parse(schema);
  const Json value = Json::parse(data);
  std::vector<std::string> violations = s.validate(value);
  EXPECT_EQ(s.is_valid(value), violations.empty()) << schema << " / " << data;
  return violations;
}

::testing::AssertionResult schema_accepts(std::string_view schema, std::string_view data) {
  const auto violations = run(schema, data);
  if (violations.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << schema << " rejected " << data << ": " << join(violations);
}

::testing::AssertionResult schema_rejects(std::string_view schema, std::string_view data) {
  const auto violations = run(schema, data);
  if (!violations.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << schema << " accepted " << data;
}

// ---- HLP-14: the conformance verdicts (manifest blocks payload_schema, payload_schema_unicode) --

constexpr std::string_view kOrderSchema = R"({
  "$schema": "http://json-schema.org/draft-07/schema#",
  "type": "object",
  "required": ["order_id"],
  "properties": {
    "order_id": {"type": "integer", "minimum": 1},
    "amount": {"type": "number", "minimum": 0},
    "currency": {"enum": ["USD", "EUR", "TRY"]}
  },
  "additionalProperties": false
})";

constexpr std::string_view kUnicodeSchema = R"({
  "$schema": "http://json-schema.org/draft-07/schema#",
  "type": "object",
  "properties": {
    "min3": {"type": "string", "minLength": 3},
    "min2": {"type": "string", "minLength": 2}
  },
  "additionalProperties": false
})";

struct Verdict {
  const char* name;
  const char* data;
  bool valid;
};

TEST(PayloadSchema, HLP14_ConformancePayloadSchemaVerdicts) {
  const Verdict cases[] = {
      {"valid-minimal", R"({"order_id":1042})", true},
      {"valid-full", R"({"order_id":1042,"amount":99.9,"currency":"USD"})", true},
      {"invalid-missing-required", R"({"amount":10})", false},
      {"invalid-wrong-type", R"({"order_id":"x"})", false},
      {"invalid-additional-property", R"({"order_id":1,"extra":true})", false},
      {"invalid-enum", R"({"order_id":1,"currency":"GBP"})", false},
      {"invalid-below-minimum", R"({"order_id":0})", false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(run(kOrderSchema, c.data).empty(), c.valid) << c.name;
  }
}

TEST(PayloadSchema, HLP14_ConformancePayloadSchemaUnicodeVerdicts) {
  const Verdict cases[] = {
      {"ascii-3cp-min3", R"({"min3":"abc"})", true},
      {"turkish-2cp-min3", "{\"min3\":\"\xC4\x9F\xC3\xBC\"}", false},                  // ğü
      {"turkish-3cp-min3-boundary", "{\"min3\":\"\xC4\x9F\xC3\xBC\xC5\x9F\"}", true},  // ğüş
      {"emoji-1cp-min2", "{\"min2\":\"\xF0\x9F\x98\x80\"}", false},                    // 😀
      {"emoji-plus-ascii-2cp-min3",
       "{\"min3\":\"\xF0\x9F\x98\x80"
       "a\"}",
       false},  // 😀a
      {"combining-2cp-min2", R"({"min2":"e\u0301"})", true},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(run(kUnicodeSchema, c.data).empty(), c.valid) << c.name;
  }
}

// ---- HLP-12: type semantics ----

TEST(PayloadSchema, HLP12_IntegerAcceptsOnePointZero) {
  EXPECT_TRUE(schema_accepts(R"({"type":"integer"})", "1.0"));
  EXPECT_TRUE(schema_accepts(R"({"type":"integer"})", "1"));
}

TEST(PayloadSchema, HLP12_IntegerRejectsOnePointFive) {
  EXPECT_TRUE(schema_rejects(R"({"type":"integer"})", "1.5"));
}

TEST(PayloadSchema, HLP12_IntegerIsDecidedExactlyFromTheLexeme) {
  constexpr std::string_view kInteger = R"({"type":"integer"})";
  for (const char* integral :
       {"1e400", "1E2", "1e+2", "12.50e1", "100e-2", "-0.0", "0e-999", "0.000", "-7",
        "123456789012345678901234567890", "1.000000000000000000000e0", "1e99999999999999999999",
        "0.0e-99999999999999999999", "123456789012345678901234567890e-1"}) {
    EXPECT_TRUE(schema_accepts(kInteger, integral)) << integral;
  }
  // Several of these round to an integral double; the verdict must not depend on that.
  for (const char* fractional :
       {"1.5e0", "15e-1", "150e-2", "10e-2", "1e-400", "-0.5", "1.0000000000000000000001",
        "9007199254740993.5", "1e-99999999999999999999", "123456789012345678901234567891e-1"}) {
    EXPECT_TRUE(schema_rejects(kInteger, fractional)) << fractional;
  }
}

TEST(PayloadSchema, HLP12_IntegerRejectsNonNumbers) {
  for (const char* other : {R"("1")", "true", "false", "null", "[1]", R"({"n":1})"}) {
    EXPECT_TRUE(schema_rejects(R"({"type":"integer"})", other)) << other;
  }
}

TEST(PayloadSchema, HLP12_NumberAcceptsAnyNumber) {
  for (const char* number :
       {"0", "-2.5", "1e400", "99.9", "1E-7", "123456789012345678901234567890"}) {
    EXPECT_TRUE(schema_accepts(R"({"type":"number"})", number)) << number;
  }
  for (const char* other : {R"("1")", "null", "[]", "{}"}) {
    EXPECT_TRUE(schema_rejects(R"({"type":"number"})", other)) << other;
  }
}

TEST(PayloadSchema, HLP12_BooleansAreNeverNumbers) {
  EXPECT_TRUE(schema_rejects(R"({"type":"number"})", "true"));
  EXPECT_TRUE(schema_rejects(R"({"type":"number"})", "false"));
  EXPECT_TRUE(schema_rejects(R"({"type":"integer"})", "true"));
  EXPECT_TRUE(schema_rejects(R"({"type":"boolean"})", "0"));
  EXPECT_TRUE(schema_rejects(R"({"type":"boolean"})", "1"));
  EXPECT_TRUE(schema_rejects(R"({"enum":[1]})", "true"));
  EXPECT_TRUE(schema_rejects(R"({"enum":[true]})", "1"));
  EXPECT_TRUE(schema_rejects(R"({"const":0})", "false"));
  EXPECT_TRUE(schema_accepts(R"({"type":"boolean"})", "false"));
  EXPECT_TRUE(schema_accepts(R"({"type":"boolean"})", "true"));
}

TEST(PayloadSchema, HLP12_EachTypeAcceptsOnlyItsKind) {
  struct Case {
    const char* type;
    const char* good;
    const char* bad;
  };
  const Case cases[] = {
      {"object", "{}", "[]"},          {"object", R"({"a":1})", "null"},
      {"array", "[]", "{}"},           {"array", "[1,\"x\"]", R"("[]")"},
      {"string", R"("")", "1"},        {"string", R"("x")", "null"},
      {"boolean", "true", "\"true\""}, {"null", "null", "0"},
      {"null", "null", "{}"},          {"number", "1", "\"1\""},
  };
  for (const auto& c : cases) {
    const std::string schema = std::string(R"({"type":")") + c.type + "\"}";
    EXPECT_TRUE(schema_accepts(schema, c.good));
    EXPECT_TRUE(schema_rejects(schema, c.bad));
  }
}

// ---- HLP-12: const and enum ----

TEST(PayloadSchema, HLP12_ConstComparesNumbersByValue) {
  constexpr std::string_view kConst = R"({"const":1})";
  EXPECT_TRUE(schema_accepts(kConst, "1"));
  EXPECT_TRUE(schema_accepts(kConst, "1.0"));
  EXPECT_TRUE(schema_accepts(kConst, "10e-1"));
  EXPECT_TRUE(schema_accepts(kConst, "1E0"));
  EXPECT_TRUE(schema_rejects(kConst, "2"));
  EXPECT_TRUE(schema_rejects(kConst, "1.0000000000000000000001"));
  EXPECT_TRUE(schema_rejects(kConst, R"("1")"));
  EXPECT_TRUE(schema_rejects(kConst, "true"));
}

TEST(PayloadSchema, HLP12_ConstIsDeepEquality) {
  constexpr std::string_view kConst = R"({"const":{"a":1,"b":[1,{"c":null}]}})";
  EXPECT_TRUE(schema_accepts(kConst, R"({"b":[1.0,{"c":null}],"a":1e0})"));  // member order is free
  EXPECT_TRUE(schema_rejects(kConst, R"({"a":1,"b":[{"c":null},1]})"));      // item order is not
  EXPECT_TRUE(schema_rejects(kConst, R"({"a":1,"b":[1,{"c":null}],"d":0})"));
  EXPECT_TRUE(schema_rejects(kConst, R"({"a":1,"b":[1,{}]})"));
  EXPECT_TRUE(schema_accepts(R"({"const":null})", "null"));
  EXPECT_TRUE(schema_rejects(R"({"const":null})", "0"));
}

TEST(PayloadSchema, HLP12_EnumIsDeepEqualityWithNumbersByValue) {
  constexpr std::string_view kEnum = R"({"enum":[1,"a",null,{"k":[2]}]})";
  for (const char* member : {"1", "1.0", "100e-2", R"("a")", "null", R"({"k":[2.0]})"}) {
    EXPECT_TRUE(schema_accepts(kEnum, member)) << member;
  }
  for (const char* other : {"2", R"("A")", "false", "true", R"({"k":[2,2]})", "[1]", "{}"}) {
    EXPECT_TRUE(schema_rejects(kEnum, other)) << other;
  }
}

TEST(PayloadSchema, HLP12_EmptyEnumRejectsEverything) {
  EXPECT_TRUE(schema_rejects(R"({"enum":[]})", "null"));
  EXPECT_TRUE(schema_rejects(R"({"enum":[]})", "1"));
}

TEST(PayloadSchema, HLP12_ConstAndEnumApplyWhateverTheType) {
  EXPECT_TRUE(schema_rejects(R"({"enum":["a"]})", R"("b")"));
  EXPECT_TRUE(schema_rejects(R"({"const":"a"})", R"("b")"));
  // Checked first and independently of the type check: both violations are reported.
  EXPECT_EQ(run(R"({"type":"string","enum":["a","bb"]})", "5").size(), 2U);
  // A value in the enum still has to pass the type's own keywords.
  EXPECT_EQ(run(R"({"type":"string","enum":["a","bb"],"minLength":2})", R"("a")").size(), 1U);
  EXPECT_TRUE(schema_accepts(R"({"type":"string","enum":["a","bb"],"minLength":2})", R"("bb")"));
}

// ---- HLP-12: keywords are inert without their type ----

TEST(PayloadSchema, HLP12_ObjectKeywordsAreInertWithoutObjectType) {
  constexpr std::string_view kSchema =
      R"({"properties":{"a":{"type":"string"}},"required":["b"],"additionalProperties":false})";
  EXPECT_TRUE(schema_accepts(kSchema, R"({"a":5})"));
  EXPECT_TRUE(schema_accepts(kSchema, "{}"));
  EXPECT_TRUE(schema_accepts(kSchema, "7"));
  // The same keywords under "type":"array" are inert as well.
  EXPECT_TRUE(schema_accepts(
      R"({"type":"array","required":["x"],"properties":{"0":{"type":"string"}}})", "[1]"));
}

TEST(PayloadSchema, HLP12_ItemsIsInertWithoutArrayType) {
  EXPECT_TRUE(schema_accepts(R"({"items":{"type":"string"}})", "[1,2]"));
  EXPECT_TRUE(schema_accepts(R"({"type":"object","items":{"type":"string"}})", R"({"0":1})"));
}

TEST(PayloadSchema, HLP12_MinLengthIsInertWithoutStringType) {
  EXPECT_TRUE(schema_accepts(R"({"minLength":3})", R"("a")"));
  EXPECT_TRUE(schema_accepts(R"({"type":"array","minLength":3})", "[]"));
}

TEST(PayloadSchema, HLP12_MinimumIsInertWithoutNumericType) {
  EXPECT_TRUE(schema_accepts(R"({"minimum":10})", "1"));
  EXPECT_TRUE(schema_accepts(R"({"type":"string","minimum":10})", R"("1")"));
}

// ---- HLP-12: object keywords ----

TEST(PayloadSchema, HLP12_RequiredCountsNullAsPresent) {
  constexpr std::string_view kSchema = R"({"type":"object","required":["a"]})";
  EXPECT_TRUE(schema_accepts(kSchema, R"({"a":null})"));
  EXPECT_TRUE(schema_rejects(kSchema, "{}"));
  EXPECT_TRUE(schema_rejects(kSchema, R"({"A":1})"));
}

TEST(PayloadSchema, HLP12_RequiredReportsEachMissingMember) {
  const auto violations = run(R"({"type":"object","required":["a","b","c"]})", R"({"b":0})");
  ASSERT_EQ(violations.size(), 2U) << join(violations);
  EXPECT_NE(violations[0].find("\"a\""), std::string::npos) << violations[0];
  EXPECT_NE(violations[1].find("\"c\""), std::string::npos) << violations[1];
}

TEST(PayloadSchema, HLP12_AdditionalPropertiesFalseRejectsUndeclaredMembers) {
  constexpr std::string_view kSchema =
      R"({"type":"object","properties":{"a":{}},"additionalProperties":false})";
  EXPECT_TRUE(schema_accepts(kSchema, R"({"a":1})"));
  EXPECT_TRUE(schema_accepts(kSchema, "{}"));
  const auto violations = run(kSchema, R"({"a":1,"b":2,"c":3})");
  ASSERT_EQ(violations.size(), 2U) << join(violations);
  EXPECT_EQ(violations[0].rfind("/b:", 0), 0U) << violations[0];
  EXPECT_EQ(violations[1].rfind("/c:", 0), 0U) << violations[1];
}

TEST(PayloadSchema, HLP12_AdditionalPropertiesAbsentOrTrueIsOpen) {
  EXPECT_TRUE(schema_accepts(R"({"type":"object","properties":{"a":{}}})", R"({"b":2})"));
  EXPECT_TRUE(schema_accepts(
      R"({"type":"object","properties":{"a":{}},"additionalProperties":true})", R"({"b":2})"));
}

TEST(PayloadSchema, HLP11_AdditionalPropertiesIsBooleanOnly) {
  // A schema-valued additionalProperties is outside the subset: ignored, so the object is open.
  EXPECT_TRUE(schema_accepts(R"({"type":"object","additionalProperties":{"type":"string"}})",
                             R"({"b":2})"));
}

TEST(PayloadSchema, HLP12_PropertiesValidateDeclaredMembers) {
  constexpr std::string_view kSchema =
      R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}}})";
  EXPECT_TRUE(schema_accepts(kSchema, R"({"a":1,"b":"x"})"));
  EXPECT_TRUE(schema_accepts(kSchema, "{}"));  // properties do not make members required
  const auto violations = run(kSchema, R"({"a":"1","b":2})");
  ASSERT_EQ(violations.size(), 2U) << join(violations);
  EXPECT_EQ(violations[0].rfind("/a:", 0), 0U) << violations[0];
  EXPECT_EQ(violations[1].rfind("/b:", 0), 0U) << violations[1];
}

// ---- HLP-12: arrays ----

TEST(PayloadSchema, HLP12_ItemsValidatesEveryElement) {
  constexpr std::string_view kSchema = R"({"type":"array","items":{"type":"integer","minimum":0}})";
  EXPECT_TRUE(schema_accepts(kSchema, "[]"));
  EXPECT_TRUE(schema_accepts(kSchema, "[0,1.0,2e3]"));
  const auto violations = run(kSchema, R"([1,"x",3,-1])");
  ASSERT_EQ(violations.size(), 2U) << join(violations);
  EXPECT_EQ(violations[0].rfind("/1:", 0), 0U) << violations[0];
  EXPECT_EQ(violations[1].rfind("/3:", 0), 0U) << violations[1];
}

TEST(PayloadSchema, HLP12_ArrayWithoutItemsAcceptsAnyElements) {
  EXPECT_TRUE(schema_accepts(R"({"type":"array"})", R"([1,"x",null,{}])"));
}

// ---- HLP-12: minimum ----

TEST(PayloadSchema, HLP12_MinimumIsInclusive) {
  EXPECT_TRUE(schema_accepts(R"({"type":"integer","minimum":1})", "1"));
  EXPECT_TRUE(schema_accepts(R"({"type":"integer","minimum":1})", "1.0"));
  EXPECT_TRUE(schema_rejects(R"({"type":"integer","minimum":1})", "0"));
  EXPECT_TRUE(schema_accepts(R"({"type":"number","minimum":0})", "0"));
  EXPECT_TRUE(schema_accepts(R"({"type":"number","minimum":0})", "-0.0"));
  EXPECT_TRUE(schema_rejects(R"({"type":"number","minimum":0})", "-0.001"));
  EXPECT_TRUE(schema_accepts(R"({"type":"number","minimum":-1.5})", "-1.5"));
  EXPECT_TRUE(schema_rejects(R"({"type":"number","minimum":-1.5})", "-1.6"));
}

TEST(PayloadSchema, HLP12_MinimumComparesExactly) {
  // Each pair compares equal as doubles; only an exact comparison gets these right.
  EXPECT_TRUE(
      schema_rejects(R"({"type":"integer","minimum":9007199254740993})", "9007199254740992"));
  EXPECT_TRUE(
      schema_accepts(R"({"type":"integer","minimum":9007199254740993})", "9007199254740993"));
  EXPECT_TRUE(schema_rejects(R"({"type":"number","minimum":0.1})", "0.09999999999999999999"));
  EXPECT_TRUE(schema_accepts(R"({"type":"number","minimum":0.1})", "0.1"));
  EXPECT_TRUE(schema_accepts(R"({"type":"number","minimum":0.1})", "1e-1"));
  EXPECT_TRUE(schema_rejects(R"({"type":"number","minimum":0})", "-1e-400"));
  EXPECT_TRUE(schema_accepts(R"({"type":"number","minimum":9e399})", "1e400"));
  EXPECT_TRUE(schema_rejects(R"({"type":"number","minimum":1e400})", "9e399"));
}

TEST(PayloadSchema, HLP12_MinimumViolationIsReportedOnlyOnceTypePasses) {
  const auto violations = run(R"({"type":"integer","minimum":5})", "1.5");
  ASSERT_EQ(violations.size(), 1U) << join(violations);
  EXPECT_NE(violations[0].find("integer"), std::string::npos) << violations[0];
}

// ---- HLP-12: minLength counts code points ----

TEST(PayloadSchema, HLP12_MinLengthCountsCodePointsNotBytes) {
  // U+011F U+00FC: 2 code points, 4 UTF-8 bytes, 2 UTF-16 units.
  EXPECT_TRUE(schema_rejects(R"({"type":"string","minLength":3})", "\"\xC4\x9F\xC3\xBC\""));
  EXPECT_TRUE(schema_accepts(R"({"type":"string","minLength":2})", "\"\xC4\x9F\xC3\xBC\""));
  // Two emoji: 2 code points, 8 bytes, 4 UTF-16 units.
  EXPECT_TRUE(
      schema_rejects(R"({"type":"string","minLength":3})", R"("\ud83d\ude00\ud83d\ude00")"));
  EXPECT_TRUE(
      schema_accepts(R"({"type":"string","minLength":2})", R"("\ud83d\ude00\ud83d\ude00")"));
  // Escaped and literal forms count alike.
  EXPECT_TRUE(schema_accepts(R"({"type":"string","minLength":3})", R"("\u011f\u00fc\u015f")"));
  EXPECT_TRUE(schema_rejects(R"({"type":"string","minLength":1})", R"("")"));
  EXPECT_TRUE(schema_accepts(R"({"type":"string","minLength":0})", R"("")"));
}

TEST(PayloadSchema, HLP12_MinLengthFractionalBoundTruncatesLikeGoAndPython) {
  EXPECT_TRUE(schema_accepts(R"({"type":"string","minLength":2.9})", R"("ab")"));
  EXPECT_TRUE(schema_rejects(R"({"type":"string","minLength":2.9})", R"("a")"));
  EXPECT_TRUE(schema_accepts(R"({"type":"string","minLength":-1})", R"("")"));
  EXPECT_TRUE(schema_accepts(R"({"type":"string","minLength":2e0})", R"("ab")"));
  EXPECT_TRUE(schema_rejects(R"({"type":"string","minLength":1e400})", R"("ab")"));
}

// ---- HLP-11: the keyword subset ----

TEST(PayloadSchema, HLP11_UnknownKeywordsAreIgnored) {
  constexpr std::string_view kSchema = R"({
    "type": "string", "maxLength": 1, "pattern": "^z$", "format": "email", "maximum": 0,
    "exclusiveMinimum": 100, "oneOf": [{"type": "integer"}], "$ref": "#/definitions/x",
    "patternProperties": {"x": false}, "not": {}, "allOf": [false], "x-vendor": 1})";
  EXPECT_TRUE(schema_accepts(kSchema, R"("abc")"));
  EXPECT_TRUE(schema_rejects(kSchema, "1"));  // the known keywords still apply
  EXPECT_TRUE(schema_accepts(R"({"type":"integer","maximum":1,"exclusiveMinimum":5})", "3"));
}

TEST(PayloadSchema, HLP11_TypeArraysAreIgnored) {
  EXPECT_TRUE(schema_accepts(R"({"type":["string","null"]})", "5"));
  EXPECT_TRUE(schema_accepts(R"({"type":["string"],"minLength":5})", R"("a")"));
}

TEST(PayloadSchema, HLP11_UnknownTypeNameConstrainsNothing) {
  EXPECT_TRUE(schema_accepts(R"({"type":"date"})", "5"));
  EXPECT_TRUE(schema_accepts(R"({"type":7})", R"("x")"));
}

TEST(PayloadSchema, HLP11_MalformedKeywordValuesAreIgnored) {
  EXPECT_TRUE(schema_accepts(R"({"type":"object","required":"a"})", "{}"));
  EXPECT_TRUE(schema_accepts(R"({"type":"object","required":[1,null]})", "{}"));
  EXPECT_TRUE(
      schema_accepts(R"({"type":"object","properties":[{"type":"string"}]})", R"({"0":1})"));
  EXPECT_TRUE(schema_accepts(R"({"type":"array","items":[{"type":"string"}]})", "[1]"));
  EXPECT_TRUE(schema_accepts(R"({"type":"array","items":true})", "[1]"));
  EXPECT_TRUE(schema_accepts(R"({"enum":"x"})", R"("y")"));
  EXPECT_TRUE(schema_accepts(R"({"type":"string","minLength":"3"})", R"("a")"));
  EXPECT_TRUE(schema_accepts(R"({"type":"string","minLength":true})", R"("")"));
  EXPECT_TRUE(schema_accepts(R"({"type":"integer","minimum":"5"})", "1"));
  EXPECT_TRUE(schema_accepts(R"({"type":"integer","minimum":true})", "0"));
  EXPECT_TRUE(schema_accepts(R"({"type":"object","additionalProperties":"no"})", R"({"a":1})"));
}

TEST(PayloadSchema, HLP11_NonObjectPropertySchemaCountsAsUndeclared) {
  // Go and Python drop a property whose schema is not an object, so it is "additional".
  constexpr std::string_view kSchema =
      R"({"type":"object","properties":{"a":true},"additionalProperties":false})";
  EXPECT_TRUE(schema_rejects(kSchema, R"({"a":1})"));
  EXPECT_TRUE(schema_accepts(R"({"type":"object","properties":{"a":true}})", R"({"a":1})"));
}

TEST(PayloadSchema, HLP50_GdprSensitiveMarkDoesNotAffectValidation) {
  for (const char* mark : {"true", "false", R"("email")", R"("")", "1"}) {
    const std::string schema =
        std::string(R"({"type":"object","properties":{"e":{"type":"string",)") +
        R"("x-gdpr-sensitive":)" + mark + R"(}},"x-gdpr-sensitive":)" + mark + "}";
    EXPECT_TRUE(schema_accepts(schema, R"({"e":"a@b.c"})")) << mark;
    EXPECT_TRUE(schema_rejects(schema, R"({"e":5})")) << mark;
  }
}

TEST(PayloadSchema, Schema_DocumentKeepsTheSourceIncludingMarks) {
  const Schema s =
      Schema::parse(R"({"type":"object","properties":{"e":{"x-gdpr-sensitive":"email"}}})");
  const Json* props = s.document().find("properties");
  ASSERT_NE(props, nullptr);
  const Json* e = props->find("e");
  ASSERT_NE(e, nullptr);
  const Json* mark = e->find("x-gdpr-sensitive");
  ASSERT_NE(mark, nullptr);
  EXPECT_EQ(*mark, Json("email"));
}

// ---- Schema construction and messages ----

TEST(PayloadSchema, Schema_ParseRejectsInvalidJsonAsConfigError) {
  EXPECT_THROW((void)Schema::parse("{\"type\":"), ConfigError);
  EXPECT_THROW((void)Schema::parse(""), ConfigError);
  try {
    (void)Schema::parse("{oops}");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Config);
  }
}

TEST(PayloadSchema, Schema_RootMustBeAnObject) {
  for (const char* root : {"true", "false", "[]", R"("object")", "null", "1"}) {
    EXPECT_THROW((void)Schema::parse(root), ConfigError) << root;
    EXPECT_THROW(Schema{Json::parse(root)}, ConfigError) << root;
  }
}

TEST(PayloadSchema, Schema_DefaultAcceptsEverything) {
  const Schema s;
  for (const char* value : {"null", "1", R"("x")", "[]", R"({"a":[1,{}]})", "false"}) {
    EXPECT_TRUE(s.validate(Json::parse(value)).empty()) << value;
  }
  EXPECT_TRUE(s.document().is_object());
  EXPECT_EQ(s.document().size(), 0U);
}

TEST(PayloadSchema, Schema_CopiesOutliveTheSourceDocument) {
  Schema copy;
  {
    Json doc =
        Json::parse(R"({"type":"object","required":["id"],"properties":{"id":{"const":7}}})");
    const Schema original(doc);
    doc = Json();  // the schema keeps its own copy
    copy = original;
  }
  EXPECT_TRUE(copy.validate(Json::parse(R"({"id":7.0})")).empty());
  EXPECT_EQ(copy.validate(Json::parse(R"({"id":8})")).size(), 1U);
  EXPECT_EQ(copy.validate(Json::parse("{}")).size(), 1U);
}

TEST(PayloadSchema, Schema_ViolationsCarryJsonPointers) {
  constexpr std::string_view kSchema = R"({"type":"object","properties":{
    "a":{"type":"object","properties":{"b/c":{"type":"string"},"t~x":{"type":"array",
    "items":{"type":"null"}}}}}})";
  const auto violations = run(kSchema, R"({"a":{"b/c":1,"t~x":[null,0]}})");
  ASSERT_EQ(violations.size(), 2U) << join(violations);
  EXPECT_EQ(violations[0].rfind("/a/b~1c: ", 0), 0U) << violations[0];
  EXPECT_EQ(violations[1].rfind("/a/t~0x/1: ", 0), 0U) << violations[1];
  const auto root = run(R"({"type":"object"})", "[]");
  ASSERT_EQ(root.size(), 1U);
  EXPECT_EQ(root[0].rfind("(root): ", 0), 0U) << root[0];
}

TEST(PayloadSchema, Schema_IsValidAgreesOnNestedFailures) {
  const Schema s = Schema::parse(kOrderSchema);
  EXPECT_FALSE(s.is_valid(Json::parse(R"({"order_id":1,"amount":-1})")));
  EXPECT_TRUE(s.is_valid(Json::parse(R"({"order_id":1,"amount":0})")));
}

// ---- HLP-10: MapProvider ----

TEST(PayloadSchemaProvider, HLP10_MapProviderFindsRegisteredUrnsOnly) {
  const MapProvider provider({{"urn:babel:orders:created", std::string(kOrderSchema)}});
  const auto found = provider.schema("urn:babel:orders:created");
  ASSERT_TRUE(found.has_value());
  EXPECT_TRUE(found->is_valid(Json::parse(R"({"order_id":1042})")));
  EXPECT_FALSE(found->is_valid(Json::parse(R"({"order_id":0})")));
  EXPECT_FALSE(provider.schema("urn:babel:orders:shipped").has_value());
  EXPECT_FALSE(provider.schema("").has_value());
  EXPECT_FALSE(MapProvider().schema("urn:babel:orders:created").has_value());
}

TEST(PayloadSchemaProvider, HLP10_MapProviderParseErrorAtConstruction) {
  try {
    const MapProvider provider({{"urn:ok", "{}"}, {"urn:broken", "{\"type\":"}});
    FAIL() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("urn:broken"), std::string::npos) << e.what();
    EXPECT_EQ(e.code(), ErrorCode::Config);
  }
  EXPECT_THROW(MapProvider(std::map<std::string, std::string>{{"urn:array", "[]"}}), ConfigError);
}

// ---- HLP-10: DirProvider ----

class DirProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("bq-schema-" + std::string(info->name()) + "-" +
                                        std::to_string(std::random_device{}()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "schemas");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void write(const fs::path& relative, std::string_view text) const {
    std::ofstream out(dir_ / relative, std::ios::binary | std::ios::trunc);
    out << text;
    ASSERT_TRUE(out.good());
  }
  [[nodiscard]] fs::path manifest() const { return dir_ / "registry.json"; }

  fs::path dir_;
};

TEST_F(DirProviderTest, HLP10_LoadsSchemaRelativeToTheManifestDirectory) {
  write("schemas/order-created.json", kOrderSchema);
  write("registry.json", R"({"schemas":[{"urn":"urn:babel:orders:created",
    "schema":"schemas/order-created.json","owner":"orders-team","status":"active"}],
    "version":3})");
  const DirProvider provider(manifest());
  const auto found = provider.schema("urn:babel:orders:created");
  ASSERT_TRUE(found.has_value());
  EXPECT_TRUE(found->is_valid(Json::parse(R"({"order_id":1042})")));
  EXPECT_FALSE(found->is_valid(Json::parse(R"({"order_id":1,"extra":true})")));
}

TEST_F(DirProviderTest, HLP10_UnknownUrnIsNotFound) {
  write("schemas/a.json", "{}");
  write("registry.json", R"({"schemas":[{"urn":"urn:a","schema":"schemas/a.json"}]})");
  const DirProvider provider(manifest());
  EXPECT_FALSE(provider.schema("urn:b").has_value());
  EXPECT_FALSE(provider.schema("").has_value());
  EXPECT_TRUE(provider.schema("urn:a").has_value());
}

TEST_F(DirProviderTest, HLP10_SkipsEntriesWithoutUrnOrSchema) {
  write("schemas/ok.json", R"({"type":"integer"})");
  write("schemas/a.json", "{}");
  write("registry.json", R"({"schemas":[
    {"schema":"schemas/a.json"},
    {"urn":"urn:no-schema"},
    {"urn":"","schema":"schemas/a.json"},
    {"urn":"urn:empty-schema","schema":""},
    {"urn":5,"schema":"schemas/a.json"},
    {"urn":"urn:numeric-schema","schema":7},
    "not an object", null, [],
    {"urn":"urn:ok","schema":"schemas/ok.json","owner":"x","status":"deprecated"}]})");
  const DirProvider provider(manifest());
  for (const char* urn : {"urn:no-schema", "urn:empty-schema", "urn:numeric-schema", "5"}) {
    EXPECT_FALSE(provider.schema(urn).has_value()) << urn;
  }
  const auto ok = provider.schema("urn:ok");
  ASSERT_TRUE(ok.has_value());
  EXPECT_FALSE(ok->is_valid(Json::parse("1.5")));
}

TEST_F(DirProviderTest, HLP10_LaterEntryForTheSameUrnWins) {
  write("schemas/first.json", R"({"type":"string"})");
  write("schemas/second.json", R"({"type":"integer"})");
  write("registry.json", R"({"schemas":[{"urn":"urn:x","schema":"schemas/first.json"},
    {"urn":"urn:x","schema":"schemas/second.json"}]})");
  const DirProvider provider(manifest());
  const auto s = provider.schema("urn:x");
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->is_valid(Json::parse("3")));
  EXPECT_FALSE(s->is_valid(Json::parse(R"("3")")));
}

TEST_F(DirProviderTest, HLP10_AbsoluteSchemaPathIsUsedAsIs) {
  write("schemas/abs.json", R"({"type":"null"})");
  const std::string absolute = (dir_ / "schemas" / "abs.json").string();
  std::string manifest_text = R"({"schemas":[{"urn":"urn:abs","schema":)";
  babelqueue::append_json_string(manifest_text, absolute);
  manifest_text += "}]}";
  fs::create_directories(dir_ / "nested");
  write("nested/registry.json", manifest_text);
  const DirProvider provider(dir_ / "nested" / "registry.json");
  const auto s = provider.schema("urn:abs");
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->is_valid(Json()));
  EXPECT_FALSE(s->is_valid(Json(0)));
}

TEST_F(DirProviderTest, HLP10_SchemaFilesAreReadLazily) {
  // A manifest entry whose file does not exist does not fail construction.
  write("registry.json", R"({"schemas":[{"urn":"urn:later","schema":"schemas/later.json"}]})");
  const DirProvider provider(manifest());
  write("schemas/later.json", R"({"type":"boolean"})");
  const auto s = provider.schema("urn:later");
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->is_valid(Json(true)));
}

TEST_F(DirProviderTest, HLP10_UnreadableSchemaFileIsAnErrorNotNotFound) {
  fs::create_directories(dir_ / "schemas" / "a-directory.json");
  write("registry.json", R"({"schemas":[{"urn":"urn:missing","schema":"schemas/missing.json"},
    {"urn":"urn:dir","schema":"schemas/a-directory.json"}]})");
  const DirProvider provider(manifest());
  try {
    (void)provider.schema("urn:missing");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Config);
    EXPECT_NE(std::string(e.what()).find("urn:missing"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)provider.schema("urn:dir"), Error);
  // The failure is not cached: once the file exists it is found.
  write("schemas/missing.json", "{}");
  EXPECT_TRUE(provider.schema("urn:missing").has_value());
}

TEST_F(DirProviderTest, HLP10_InvalidSchemaFileIsAnError) {
  write("schemas/bad.json", R"({"type":)");
  write("schemas/array.json", R"([{"type":"string"}])");
  write("registry.json", R"({"schemas":[{"urn":"urn:bad","schema":"schemas/bad.json"},
    {"urn":"urn:array","schema":"schemas/array.json"}]})");
  const DirProvider provider(manifest());
  EXPECT_THROW((void)provider.schema("urn:bad"), ConfigError);
  EXPECT_THROW((void)provider.schema("urn:array"), ConfigError);
}

TEST_F(DirProviderTest, HLP10_ParsedSchemasAreCached) {
  write("schemas/c.json", R"({"type":"string","minLength":2})");
  write("registry.json", R"({"schemas":[{"urn":"urn:c","schema":"schemas/c.json"}]})");
  const DirProvider provider(manifest());
  ASSERT_TRUE(provider.schema("urn:c").has_value());
  fs::remove(dir_ / "schemas" / "c.json");
  const auto again = provider.schema("urn:c");  // served from the cache, no read
  ASSERT_TRUE(again.has_value());
  EXPECT_FALSE(again->is_valid(Json("a")));
  EXPECT_TRUE(again->is_valid(Json("ab")));
}

TEST_F(DirProviderTest, HLP10_ManifestErrorsAreConfigErrors) {
  EXPECT_THROW(DirProvider(dir_ / "absent.json"), ConfigError);
  write("bad.json", "{\"schemas\":[");
  EXPECT_THROW(DirProvider(dir_ / "bad.json"), ConfigError);
  write("array.json", R"([{"urn":"urn:a","schema":"a.json"}])");
  EXPECT_THROW(DirProvider(dir_ / "array.json"), ConfigError);
  write("object.json", R"({"schemas":{"urn:a":"a.json"}})");
  EXPECT_THROW(DirProvider(dir_ / "object.json"), ConfigError);
}

TEST_F(DirProviderTest, HLP10_ManifestWithoutSchemasIsEmpty) {
  write("empty.json", R"({"name":"registry"})");
  EXPECT_FALSE(DirProvider(dir_ / "empty.json").schema("urn:a").has_value());
  write("null.json", R"({"schemas":null})");
  EXPECT_FALSE(DirProvider(dir_ / "null.json").schema("urn:a").has_value());
}

TEST_F(DirProviderTest, HLP10_ConcurrentLookupsAreSafe) {
  write("schemas/i.json", R"({"type":"integer"})");
  write("schemas/s.json", R"({"type":"string"})");
  write("registry.json", R"({"schemas":[{"urn":"urn:i","schema":"schemas/i.json"},
    {"urn":"urn:s","schema":"schemas/s.json"}]})");
  const DirProvider provider(manifest());
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  threads.reserve(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&provider, &wrong] {
      for (int i = 0; i < 200; ++i) {
        const auto si = provider.schema("urn:i");
        const auto ss = provider.schema("urn:s");
        const auto none = provider.schema("urn:none");
        if (!si || !ss || none || !si->is_valid(Json(1)) || ss->is_valid(Json(1))) ++wrong;
      }
    });
  }
  for (auto& th : threads)
    th.join();
  EXPECT_EQ(wrong.load(), 0);
}

// ---- HLP-13: check / validate ----

const MapProvider& orders_provider() {
  static const MapProvider provider({{"urn:babel:orders:created", std::string(kOrderSchema)}});
  return provider;
}

TEST(PayloadSchemaCheck, HLP13_NoRegisteredSchemaPasses) {
  namespace schema = babelqueue::schema;
  EXPECT_NO_THROW(schema::check(orders_provider(), "urn:babel:other", Json::parse("[1,2]")));
  EXPECT_FALSE(schema::try_check(orders_provider(), "urn:babel:other", Json(5)).has_value());
  EXPECT_TRUE(schema::violations(orders_provider(), "urn:babel:other", Json(5)).empty());
}

TEST(PayloadSchemaCheck, HLP13_ValidPayloadPasses) {
  namespace schema = babelqueue::schema;
  const Json data = Json::parse(R"({"order_id":1042,"amount":99.9,"currency":"USD"})");
  EXPECT_NO_THROW(schema::check(orders_provider(), "urn:babel:orders:created", data));
  EXPECT_FALSE(schema::try_check(orders_provider(), "urn:babel:orders:created", data).has_value());
}

TEST(PayloadSchemaCheck, HLP13_CheckThrowsInvalidPayload) {
  namespace schema = babelqueue::schema;
  const Json data = Json::parse(R"({"order_id":"x","extra":1})");
  try {
    schema::check(orders_provider(), "urn:babel:orders:created", data);
    FAIL() << "no exception";
  } catch (const InvalidPayload& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidPayload);
    EXPECT_FALSE(e.is_transient());
    EXPECT_EQ(e.urn(), "urn:babel:orders:created");
    ASSERT_EQ(e.violations().size(), 2U) << join(e.violations());
    EXPECT_NE(std::string(e.what()).find("urn:babel:orders:created"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(e.violations()[0]), std::string::npos);
  }
  // Catchable as the root error type, like any handler error.
  EXPECT_THROW(schema::check(orders_provider(), "urn:babel:orders:created", Json(1)), Error);
}

TEST(PayloadSchemaCheck, HLP13_TryCheckReturnsTheVerdict) {
  namespace schema = babelqueue::schema;
  const auto verdict =
      schema::try_check(orders_provider(), "urn:babel:orders:created", Json::parse("{}"));
  ASSERT_TRUE(verdict.has_value());
  EXPECT_EQ(verdict->urn(), "urn:babel:orders:created");
  EXPECT_EQ(verdict->violations(),
            schema::violations(orders_provider(), "urn:babel:orders:created", Json::parse("{}")));
  EXPECT_EQ(verdict->violations().size(), 1U);
}

TEST_F(DirProviderTest, HLP13_ProviderFailureIsNotAVerdict) {
  namespace schema = babelqueue::schema;
  write("registry.json", R"({"schemas":[{"urn":"urn:gone","schema":"gone.json"}]})");
  const DirProvider provider(manifest());
  const Json data = Json::parse("{}");
  try {
    schema::check(provider, "urn:gone", data);
    FAIL() << "no exception";
  } catch (const InvalidPayload&) {
    FAIL() << "a provider failure must not look like an invalid payload";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Config);
  }
  EXPECT_THROW((void)schema::try_check(provider, "urn:gone", data), ConfigError);
  EXPECT_THROW((void)schema::violations(provider, "urn:gone", data), ConfigError);
}

TEST(PayloadSchemaCheck, HLP13_ValidateUsesTheEnvelopeUrnAndData) {
  namespace schema = babelqueue::schema;
  const auto good = babelqueue::decode(
      R"({"job":"urn:babel:orders:created","trace_id":"t","data":{"order_id":1042},)"
      R"("meta":{"id":"m","queue":"orders","lang":"go","schema_version":1,"created_at":1},)"
      R"("attempts":0})");
  EXPECT_NO_THROW(schema::validate(orders_provider(), good));
  EXPECT_FALSE(schema::try_validate(orders_provider(), good).has_value());

  const auto bad = babelqueue::decode(
      R"({"job":" urn:babel:orders:created ","trace_id":"t","data":{"order_id":0},)"
      R"("meta":{"id":"m","queue":"orders","lang":"go","schema_version":1,"created_at":1},)"
      R"("attempts":0})");
  EXPECT_THROW(schema::validate(orders_provider(), bad), InvalidPayload);
  const auto verdict = schema::try_validate(orders_provider(), bad);
  ASSERT_TRUE(verdict.has_value());
  EXPECT_EQ(verdict->urn(), "urn:babel:orders:created");

  // An envelope whose URN has no schema is not validated (opt-in per URN).
  const auto other = babelqueue::decode(R"({"job":"urn:x","data":{"order_id":0},"attempts":0})");
  EXPECT_NO_THROW(schema::validate(orders_provider(), other));
}

}  // namespace
