// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The conformance `sqs` block through real SendMessage / ReceiveMessage calls on the shared
// emulator: what SqsTransport sends, read back with the raw client (SQS-6, SQS-T1: the
// attribute names, DataTypes and values of the manifest, the body byte for byte, on every
// publish path; no attributes for an undecodable body; riders after the contract attributes up
// to SQS's 10, OB-3), and messages sent raw, read through the transport's pop: the receive-count
// vectors (SQS-10, SQS-T2, OB-5: delivery_count from ApproximateReceiveCount, the App's floor,
// the body untouched) and the schema-version gate on the `bq-schema-version` attribute whatever
// its DataType (SQS-11, SQS-T3, OB-6). The expected values come from the manifest, read in place
// (binding/fixtures.hpp of the core tests).

#include <babelqueue/app.hpp>
#include <babelqueue/binding/common.hpp>
#include <babelqueue/binding/sqs.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/testing/publish_paths.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "binding/fixtures.hpp"
#include "shared_emulator_test.hpp"

namespace babelqueue::sqs::test {
namespace {

using babelqueue::testing::publish_paths;
using babelqueue::testing::PublishPath;
using babelqueue::testing::PublishPathName;

using babelqueue::testing::kBriefly;
using babelqueue::testing::kWithin;
using babelqueue::testing::pop_message;

// What a received message carries per attribute: DataType and StringValue.
using WireAttributes = std::map<std::string, std::pair<std::string, std::string>>;

WireAttributes wire_attributes(const Json& message) {
  WireAttributes out;
  const Json* attributes = message.find("MessageAttributes");
  if (attributes == nullptr) return out;
  for (const auto& [name, a] : attributes->as_object()) {
    const Json* value = a.find("StringValue");
    out[name] = {a.find("DataType")->as_string(), value == nullptr ? "" : value->as_string()};
  }
  return out;
}

// The manifest's sqs.attribute_projection.message_attributes.
WireAttributes manifest_attributes() {
  const Json& block = binding_test::manifest_block("sqs", "attribute_projection");
  const Json* attributes = block.find("message_attributes");
  WireAttributes out;
  if (attributes == nullptr) {
    ADD_FAILURE() << "sqs.attribute_projection has no message_attributes";
    return out;
  }
  for (const auto& [name, a] : attributes->as_object()) {
    out[name] = {a.find("DataType")->as_string(), a.find("StringValue")->as_string()};
  }
  EXPECT_EQ(out.size(), 6U);
  return out;
}

class ConformanceWire : public SharedEmulatorTest,
                        public ::testing::WithParamInterface<PublishPath> {};

// SQS-6, SQS-T1: exactly the manifest's six attributes, the body as it was sent.
TEST_P(ConformanceWire, SQST1_TheProjectionIsOnTheMessage) {
  create_queue();
  const std::string body = binding_test::order_created();
  ASSERT_FALSE(body.empty());
  auto t = transport();
  ASSERT_TRUE(GetParam().publish(*t, queue(), body).ok());
  const JsonArray got = raw().receive_at_least(queue(), 1);
  ASSERT_EQ(got.size(), 1U);
  EXPECT_EQ(got[0].find("Body")->as_string(), body) << "the body was re-encoded (OB-1)";
  EXPECT_EQ(wire_attributes(got[0]), manifest_attributes());
}

INSTANTIATE_TEST_SUITE_P(EveryPublishPath, ConformanceWire, ::testing::ValuesIn(publish_paths()),
                         PublishPathName());

class SqsWire : public SharedEmulatorTest {
 protected:
  // A transport whose ReceiveMessage answers carry `count` as ApproximateReceiveCount (nullopt:
  // none), rewritten by the seam on the emulator's real response: SQS sends only integers.
  static std::shared_ptr<SqsTransport> with_receive_count(std::optional<std::string> count) {
    auto seam = std::make_shared<SeamClient>();
    seam->set_rewrite([count = std::move(count)](const HttpRequest& request, HttpResponse& r) {
      if (request.action != "ReceiveMessage" || r.status != 200) return;
      Json body = Json::parse(r.body);
      Json* messages = body.find("Messages");
      if (messages == nullptr) return;
      for (Json& m : messages->as_array()) {
        JsonObject& attributes = m["Attributes"].as_object();
        std::erase_if(attributes,
                      [](const auto& a) { return a.first == "ApproximateReceiveCount"; });
        if (count) attributes.emplace_back("ApproximateReceiveCount", *count);
      }
      r.body = body.dump();
    });
    return transport(options(seam));
  }
};

// OB-2, SQS-6: an undecodable body is sent with no attributes, its bytes as they were.
TEST_F(SqsWire, SQST1_AnUndecodableBodyHasNoAttributes) {
  create_queue();
  auto t = transport();
  const std::string body = "not an envelope \xC3\xA9";
  ASSERT_TRUE(t->publish(queue(), body).ok());
  const JsonArray got = raw().receive_at_least(queue(), 1);
  ASSERT_EQ(got.size(), 1U);
  EXPECT_EQ(got[0].find("Body")->as_string(), body);
  EXPECT_TRUE(wire_attributes(got[0]).empty());
}

// OB-3, SQS-6, SQS-T1: riders are String attributes after the contract ones in key order; a
// rider named like a contract attribute and a blank one are not written; with 8 riders the cap
// of 10 keeps the 6 contract attributes and the first 4 riders.
TEST_F(SqsWire, SQST1_RidersFollowUpToTenAttributes) {
  create_queue();
  auto t = transport();
  const std::string tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  Headers riders{{"traceparent", tp}, {"bq-job", "urn:someone:else"}, {"x-blank", ""}};
  for (char c = 'a'; c <= 'g'; ++c) {
    riders[std::string("r-") + c] = std::string(1, c);
  }
  ASSERT_TRUE(t->publish_with_headers(queue(), binding_test::order_created(), riders).ok());
  const JsonArray got = raw().receive_at_least(queue(), 1);
  ASSERT_EQ(got.size(), 1U);
  WireAttributes expected = manifest_attributes();
  for (char c = 'a'; c <= 'd'; ++c) {
    expected[std::string("r-") + c] = {"String", std::string(1, c)};
  }
  EXPECT_EQ(wire_attributes(got[0]), expected);

  // Under the cap every rider is kept, the contract attributes still win.
  ASSERT_TRUE(t->publish_with_headers(queue(), binding_test::order_created(),
                                      {{"traceparent", tp}, {"bq-job", "urn:someone:else"}})
                  .ok());
  const JsonArray second = raw().receive_at_least(queue(), 1);
  ASSERT_EQ(second.size(), 1U);
  expected = manifest_attributes();
  expected["traceparent"] = {"String", tp};
  EXPECT_EQ(wire_attributes(second[0]), expected);
}

// SQS-10, SQS-T2, OB-5: the manifest's receive-count vectors through pop: delivery_count is the
// ApproximateReceiveCount (a real count: the message was received count - 1 times before), the
// body is untouched, and the App's floor gives the expected attempts. A count that is garbage
// or absent (only the seam can make those) is delivery_count 0.
TEST_F(SqsWire, SQST2_AttemptsFromApproximateReceiveCount) {
  create_queue();
  const Json* cases = binding_test::manifest_block("sqs", "attempts_reconciliation").find("cases");
  ASSERT_NE(cases, nullptr);
  ASSERT_EQ(cases->size(), 6U);
  auto real = transport();
  for (const Json& c : cases->as_array()) {
    const std::string name = c.find("name")->as_string();
    SCOPED_TRACE(name);
    const std::int64_t body_attempts = *c.find("body_attempts")->as_int64();
    const Json& count = *c.find("approximate_receive_count");
    const std::string body = binding_test::order_created_with_attempts(body_attempts);
    raw().send(queue(), body);

    std::shared_ptr<SqsTransport> t = real;
    std::int64_t expected_count = 0;
    const std::optional<std::int64_t> real_count =
        count.is_null() ? std::nullopt : binding::parse_attempts_header(count.as_string());
    if (real_count) {
      for (std::int64_t i = 1; i < *real_count; ++i) {
        ASSERT_EQ(raw().receive(queue(), 1, 1, 0).size(), 1U) << "receive " << i;
      }
      expected_count = *real_count;
    } else {
      t = with_receive_count(count.is_null() ? std::nullopt
                                             : std::optional<std::string>(count.as_string()));
    }
    const auto m = pop_message(*t, queue(), kWithin);
    ASSERT_TRUE(m.has_value()) << "the message never came";
    EXPECT_EQ(m->delivery_count, expected_count);
    EXPECT_EQ(m->body, body) << "the body was rewritten (OB-5, ENV-37)";
    EXPECT_TRUE(m->route.empty()) << m->route;

    std::optional<std::int64_t> seen;
    App app(t);
    app.handle_any([&](Context&, const Envelope& env) {
      seen = env.attempts();
      return Status();
    });
    app.dispatch(*m);
    EXPECT_EQ(seen, c.find("expected_attempts")->as_int64());
    ASSERT_TRUE(t->flush().ok());
    ASSERT_TRUE(eventually([&] { return raw().empty(queue()); })) << "the handled message stayed";
    if (t != real) t->close();
  }
}

// One message for the gate: its bq-schema-version attribute (or none) and the verdict.
struct GateRow {
  std::string label;
  std::optional<Json> attribute;  // a MessageAttributeValue object
  std::optional<std::string> rejected_version;
};

Json string_value(std::string_view type, std::string_view value) {
  return Json::object({{"DataType", type}, {"StringValue", value}});
}

// Whether SQS takes `value` as an attribute value (SQS-8): not empty, and only XML-legal
// characters: below U+0020 only TAB, LF and CR (the vectors hold no U+FFFE, U+FFFF or
// surrogates, the other illegal ones).
bool sqs_accepts_value(std::string_view value) {
  return !value.empty() && std::none_of(value.begin(), value.end(), [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return b < 0x20 && b != '\t' && b != '\n' && b != '\r';
  });
}

// The StringValue standing in for the vector `i` on the wire when SQS refuses the vector itself.
std::string stand_in(std::size_t i) {
  return "stand-in-" + std::to_string(i);
}

// SQS-11, SQS-T3, OB-6: the manifest's 18 gate vectors as String attributes, and the value
// whatever the DataType: Number "1" decodes and "01" is rejected, a custom Number.int "1"
// decodes, a Binary attribute's bytes are the value (C++ decision). A rejected message carries
// the unsupported route and its bytes, and calls on_schema_version_rejected once with the
// version and the queue; the headers carry every String and Number attribute (OB-4). The two
// vectors SQS refuses as attribute values (the empty string, and "\n\v\f\r" with its control
// characters, SQS-8) travel as a stand-in value that the seam turns back into the vector in the
// emulator's ReceiveMessage answer.
TEST_F(SqsWire, SQST3_TheSchemaVersionGateReadsTheAttribute) {
  create_queue();
  const Json& block = binding_test::manifest_block("sqs", "schema_version_gate");
  ASSERT_EQ(block.find("property")->as_string(), "bq-schema-version");
  std::vector<GateRow> rows;
  for (const Json& c : block.find("cases")->as_array()) {
    const bool reject = c.find("expect")->as_string() == "reject";
    if (c.find("absent") != nullptr) {
      rows.push_back({"absent", std::nullopt, std::nullopt});
      continue;
    }
    const std::string value = c.find("value")->as_string();
    rows.push_back({"String \"" + value + "\"", string_value("String", value),
                    reject ? std::optional<std::string>(value) : std::nullopt});
  }
  ASSERT_EQ(rows.size(), 18U);
  rows.push_back({"Number 1", string_value("Number", "1"), std::nullopt});
  rows.push_back({"Number 01", string_value("Number", "01"), "01"});
  rows.push_back({"Number.int 1", string_value("Number.int", "1"), std::nullopt});
  rows.push_back(
      {"Binary 1", Json::object({{"DataType", "Binary"}, {"BinaryValue", "MQ=="}}), std::nullopt});
  rows.push_back(
      {"Binary 2", Json::object({{"DataType", "Binary"}, {"BinaryValue", "Mg=="}}), "2"});

  // The vectors SQS refuses, by their stand-in.
  std::map<std::string, std::string> refused;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Json* value = rows[i].attribute ? rows[i].attribute->find("StringValue") : nullptr;
    if (value != nullptr && !sqs_accepts_value(value->as_string())) {
      refused[stand_in(i)] = value->as_string();
    }
  }
  ASSERT_EQ(refused.size(), 2U);
  auto seam = std::make_shared<SeamClient>();
  seam->set_rewrite([refused](const HttpRequest& request, HttpResponse& r) {
    if (request.action != "ReceiveMessage" || r.status != 200) return;
    Json body = Json::parse(r.body);
    Json* messages = body.find("Messages");
    if (messages == nullptr) return;
    for (Json& m : messages->as_array()) {
      Json* attribute = m["MessageAttributes"].find("bq-schema-version");
      Json* value = attribute == nullptr ? nullptr : attribute->find("StringValue");
      if (value == nullptr) continue;
      if (const auto it = refused.find(value->as_string()); it != refused.end())
        *value = it->second;
    }
    r.body = body.dump();
  });

  std::mutex mu;
  std::vector<std::pair<std::string, std::string>> hook_calls;
  Options o = options(seam);
  o.on_schema_version_rejected = [&](std::string_view version, std::string_view q) {
    std::lock_guard lock(mu);
    hook_calls.emplace_back(version, q);
  };
  auto t = transport(std::move(o));
  const std::string body = binding_test::order_created();
  std::vector<std::pair<std::string, std::string>> expected_calls;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const GateRow& row = rows[i];
    SCOPED_TRACE(row.label);
    Json attributes = Json::object();
    if (row.attribute) {
      attributes["bq-schema-version"] = *row.attribute;
      if (refused.contains(stand_in(i))) {
        attributes["bq-schema-version"] = string_value("String", stand_in(i));
      }
    }
    raw().send(queue(), body, attributes);
    const auto m = pop_message(*t, queue(), kWithin);
    ASSERT_TRUE(m.has_value()) << "the message never came";
    EXPECT_EQ(m->body, body);
    if (row.rejected_version) {
      EXPECT_EQ(m->route, binding::unsupported_route(*row.rejected_version));
      expected_calls.emplace_back(*row.rejected_version, queue());
    } else {
      EXPECT_TRUE(m->route.empty()) << m->route;
    }
    if (const Json* value = row.attribute ? row.attribute->find("StringValue") : nullptr) {
      EXPECT_EQ(m->headers.at("bq-schema-version"), value->as_string());
    }
    EXPECT_TRUE(t->ack(*m).ok());
  }
  ASSERT_TRUE(t->flush().ok());
  std::lock_guard lock(mu);
  EXPECT_EQ(hook_calls, expected_calls);
  EXPECT_FALSE(pop_message(*t, queue(), kBriefly).has_value());
}

}  // namespace
}  // namespace babelqueue::sqs::test
