// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The ADR-0035 poison record (ENV-42..44), byte for byte against EX-8.

#include <gtest/gtest.h>
#include <babelqueue/codec.hpp>

#include <string>
#include <string_view>

namespace bq = babelqueue;

namespace {

constexpr std::int64_t kAt = 1749132730000;

std::string pb(const std::string& error) {
  return R"("dead_letter":{"reason":"poison","error":")" + error +
         R"(","failed_at":1749132730000,"original_queue":"orders","lang":"cpp"})";
}

std::string record_for(std::string_view body) {
  const auto r = bq::try_decode(body);
  EXPECT_FALSE(r.has_value()) << body;
  return bq::poison_record(body, r.has_value() ? "" : r.error().what(), "orders", kAt);
}

}  // namespace

TEST(PoisonRecord, EX8_SpliceKeepsEveryByte) {
  EXPECT_EQ(record_for(R"({"job":"urn:x","data":[1]})"),
            R"({"job":"urn:x","data":[1],)" + pb("data: expected object, got array") + "}");
  EXPECT_EQ(record_for("{ \"job\": 5 }\n"),
            "{ \"job\": 5 ," + pb("job: expected string, got number") + "}\n");
}

TEST(PoisonRecord, EX8_NotJsonIsWrapped) {
  const std::string rec = record_for("not json");
  EXPECT_EQ(
      rec.rfind(
          R"({"raw":"not json","dead_letter":{"reason":"poison","error":"invalid JSON at offset 0)",
          0),
      0U)
      << rec;
}

TEST(PoisonRecord, EX8_InvalidUtf8IsBase64) {
  EXPECT_EQ(record_for("\xFF\xFE\x41"),
            R"({"raw":"//5B","raw_encoding":"base64",)" + pb("body is not valid UTF-8") + "}");
  // Padding variants.
  EXPECT_EQ(bq::poison_record("\xFF", "e", "orders", kAt).substr(0, 14), R"({"raw":"/w==",)");
  EXPECT_EQ(bq::poison_record("\xFF\xFE", "e", "orders", kAt).substr(0, 14), R"({"raw":"//4=",)");
}

TEST(PoisonRecord, EX8_NonObjectsAndTrailingDataAreWrapped) {
  auto wrapped = [](const std::string& body, const std::string& raw_json) {
    const std::string rec = bq::poison_record(body, "E", "orders", kAt);
    EXPECT_EQ(rec, "{\"raw\":" + raw_json + "," + pb("E") + "}") << body;
  };
  wrapped("[1,2]", R"("[1,2]")");
  wrapped("", R"("")");
  wrapped("{\"job\":\"urn:x\"} x", R"("{\"job\":\"urn:x\"} x")");
  wrapped(R"({"job":"urn:x","data":"s","dead_letter":{"reason":"failed"}})",
          R"("{\"job\":\"urn:x\",\"data\":\"s\",\"dead_letter\":{\"reason\":\"failed\"}}")");
  wrapped("\xEF\xBB\xBF{}", "\"\xEF\xBB\xBF{}\"");  // a BOM is not a strict JSON object
  wrapped("\"x\"", R"("\"x\"")");
}

TEST(PoisonRecord, ENV42_EscapedDeadLetterNameCountsAsDeadLetter) {
  const std::string body = R"({"dead\u005fletter":1})";
  const std::string rec = bq::poison_record(body, "E", "orders", kAt);
  EXPECT_EQ(rec.rfind("{\"raw\":", 0), 0U) << rec;
  // A nested dead_letter member does not count.
  const std::string nested = R"({"x":{"dead_letter":1}})";
  EXPECT_EQ(bq::poison_record(nested, "E", "orders", kAt),
            R"({"x":{"dead_letter":1},)" + pb("E") + "}");
}

TEST(PoisonRecord, ENV42_EmptyObjectGetsNoComma) {
  EXPECT_EQ(bq::poison_record(" { \n } ", "E", "orders", kAt), " { \n " + pb("E") + "} ");
  EXPECT_EQ(bq::poison_record("{}", "E", "orders", kAt),
            std::string("{").append(pb("E")).append("}"));
}

TEST(PoisonRecord, ENV42_DuplicatesAndOddCasingStay) {
  const std::string body = R"({"JOB":"x","job":1,"job":2})";
  EXPECT_EQ(bq::poison_record(body, "E", "orders", kAt),
            body.substr(0, body.size() - 1) + "," + pb("E") + "}");
}

TEST(PoisonRecord, ENV43_ErrorTextIsEscapedAndNeverEmpty) {
  const std::string rec = bq::poison_record("x", "say \"hi\"\n", "q\"", kAt);
  const bq::Json j = bq::Json::parse(rec);
  EXPECT_EQ(j.find("dead_letter")->find("error")->as_string(), "say \"hi\"\n");
  EXPECT_EQ(j.find("dead_letter")->find("original_queue")->as_string(), "q\"");
  const bq::Json empty_error = bq::Json::parse(bq::poison_record("x", "", "q", kAt));
  EXPECT_FALSE(empty_error.find("dead_letter")->find("error")->as_string().empty());
  // Invalid UTF-8 in the metadata never breaks the record.
  EXPECT_TRUE(bq::Json::try_parse(bq::poison_record("x", "\xFF", "\xC3", kAt)).has_value());
}

TEST(PoisonRecord, ENV45_SplicedRecordDecodesAsPoisonAgainOrIdentityless) {
  const std::string rec = record_for(R"({"job":"urn:x","data":[1]})");
  EXPECT_FALSE(bq::try_decode(rec).has_value());
  const auto wrapped = bq::decode(bq::poison_record("not json", "E", "orders", kAt));
  EXPECT_EQ(wrapped.urn(), "");
  ASSERT_TRUE(wrapped.dead_letter().has_value());
  EXPECT_EQ(wrapped.dead_letter()->reason, "poison");
}

TEST(PoisonRecord, ENV43_OnlyInvalidSequencesOfTheErrorTextAreReplaced) {
  const bq::Json j = bq::Json::parse(bq::poison_record("x", "caf\xC3\xA9\xFF!", "q", kAt));
  EXPECT_EQ(j.find("dead_letter")->find("error")->as_string(), "caf\xC3\xA9\xEF\xBF\xBD!");
}

// Every JSON whitespace byte (RFC 8259: space, tab, line feed, carriage return) is kept where it
// was, around and inside the spliced object, and the record stays valid JSON: the splice's own
// whitespace skip must know all four, or `{<ws>}` gets a comma before the block.
TEST(PoisonRecord, ENV42_EveryJsonWhitespaceByteAroundAndInsideTheSpliceIsKept) {
  struct Case {
    std::string body;
    // No member: the block goes in without a comma.
    bool empty_object;
  };
  for (const char ws : {' ', '\t', '\n', '\r'}) {
    const std::string w(1, ws);
    const std::string members = "{" + w + R"("job")" + w + ":" + w + R"("urn:x")" + w + "," + w +
                                R"("data")" + w + ":" + w + "[" + w + "1" + w + "]" + w + "}";
    const Case cases[] = {
        {"{" + w + "}", true},                              // an empty object of whitespace only
        {"{" + w + w + "}", true},                          // more than one
        {w + "{}" + w, true},                               // before and after the braces
        {w + "{" + w + "}" + w, true},                      // all three
        {members, false},                                   // between members, around colons
        {w + members + w, false},                           // and around the braces
        {"{" + w + R"("a":{)" + w + "}" + w + "}", false},  // inside a nested object
    };
    for (const Case& c : cases) {
      SCOPED_TRACE(testing::Message() << "whitespace byte " << static_cast<int>(ws) << ", body "
                                      << testing::PrintToString(c.body));
      const std::string rec = bq::poison_record(c.body, "E", "orders", kAt);
      const std::size_t close = c.body.rfind('}');
      EXPECT_EQ(rec, c.body.substr(0, close) + (c.empty_object ? "" : ",") + pb("E") +
                         c.body.substr(close));
      const auto parsed = bq::Json::try_parse(rec);
      ASSERT_TRUE(parsed.has_value()) << testing::PrintToString(rec);
      EXPECT_EQ(parsed->find("dead_letter")->find("reason")->as_string(), "poison");
    }
  }
  // All four mixed in one empty object.
  EXPECT_EQ(bq::poison_record("{ \t\n\r}", "E", "orders", kAt), "{ \t\n\r" + pb("E") + "}");
}
