// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Records in and out: the KFK-5 projection as a header list, OB-4 consume headers, the KFK-9
// gate (null header included) and the KFK-10 attempts authority through a record.

#include "client.hpp"
#include "records.hpp"

#include <babelqueue/binding/common.hpp>
#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

#include "binding/fixtures.hpp"

namespace babelqueue::kafka::detail {
namespace {

using binding_test::order_created;

TEST(KafkaRecords, OutgoingCarriesTheProjection) {  // KFK-5, OB-3
  const OutgoingRecord r =
      outgoing("t", order_created(), {{"traceparent", "00-x"}, {"bq-job", "no"}});
  EXPECT_EQ(r.topic, "t");
  EXPECT_EQ(r.value, order_created());
  EXPECT_FALSE(r.key.has_value());
  EXPECT_EQ(r.timestamp_ms, binding_test::kCreatedAt);
  const RecordHeaders expected{
      {"bq-job", std::string(binding_test::kUrn)},
      {"bq-trace-id", std::string(binding_test::kTrace)},
      {"bq-message-id", std::string(binding_test::kId)},
      {"bq-schema-version", "1"},
      {"bq-source-lang", "php"},
      {"bq-attempts", "0"},
      {"traceparent", "00-x"},
  };
  EXPECT_EQ(r.headers, expected);
  const OutgoingRecord raw = outgoing("t", "not json");
  EXPECT_TRUE(raw.headers.empty());
  EXPECT_EQ(raw.timestamp_ms, 0);
}

// `headers` as librdkafka hands a consumed record's list over (order, duplicates, nulls kept).
WireHeaders wire_list(const RecordHeaders& headers) {
  rd_kafka_headers_t* list = rd_kafka_headers_new(headers.size());
  for (const RecordHeader& h : headers) {
    rd_kafka_header_add(list, h.name.data(), static_cast<ssize_t>(h.name.size()),
                        h.value ? h.value->data() : nullptr,
                        h.value ? static_cast<ssize_t>(h.value->size()) : 0);
  }
  return WireHeaders(list);
}

// The OB-4 headers of a consumed record with `headers`.
Headers text_headers_of(const RecordHeaders& headers) {
  return text_headers(wire_list(headers).views());
}

TEST(KafkaRecords, ConsumeHeadersFirstWinsNullSkipped) {  // OB-4
  const RecordHeaders record{{"a", "1"}, {"a", "2"}, {"n", std::nullopt}, {"b", ""}};
  const Headers h = text_headers_of(record);
  EXPECT_EQ(h.size(), 2U);
  EXPECT_EQ(h.at("a"), "1");
  EXPECT_EQ(h.at("b"), "");
  EXPECT_FALSE(h.contains("n"));
  const WireHeaders wire = wire_list(record);
  EXPECT_EQ(wire.first("a"), "1");
  EXPECT_EQ(wire.first("n"), std::nullopt);
  EXPECT_EQ(wire.first("zz"), std::nullopt);
}

TEST(KafkaRecords, WireHeadersFindTheFirstOccurrenceInTheClientsList) {  // KFK-9, KFK-10, OB-4
  const RecordHeaders record{
      {"bq-attempts", "4"}, {"bq-schema-version", std::nullopt}, {"bq-attempts", "0"}, {"e", ""}};
  const WireHeaders wire = wire_list(record);
  EXPECT_EQ(wire.first("bq-attempts"), "4") << "the first of equal names";
  EXPECT_EQ(wire.first("bq-schema-version"), std::nullopt) << "a null value is absent";
  EXPECT_EQ(wire.first("e"), "") << "an empty value is present";
  EXPECT_EQ(wire.first("bq-job"), std::nullopt);
  const std::vector<HeaderView> all = wire.views();
  ASSERT_EQ(all.size(), 4U);
  EXPECT_EQ(all[1].name, "bq-schema-version");
  EXPECT_FALSE(all[1].value.has_value());
  EXPECT_EQ(all[2].value, "0");
  EXPECT_EQ(copy(all), record) << "restore writes the list back as it came";
  const JudgedHeaders judged = wire.judged();
  EXPECT_EQ(judged.attempts, "4");
  EXPECT_EQ(judged.schema_version, std::nullopt);
  EXPECT_TRUE(WireHeaders().views().empty());
  EXPECT_EQ(WireHeaders().first("bq-attempts"), std::nullopt);
}

// A record's consume side: the message incoming() fills and what it leaves beside it, judged
// by the headers the consumer reads (WireHeaders::judged).
struct Consumed {
  ReceivedMessage msg;
  Incoming in;
};
Consumed consumed(std::string value, const RecordHeaders& headers) {
  Consumed c;
  c.in = incoming(c.msg, std::move(value), wire_list(headers).judged());
  return c;
}

TEST(KafkaRecords, GateRejectsBeforeAttempts) {  // KFK-9, OB-6
  const Consumed c = consumed(order_created(), {{"bq-schema-version", "2"}, {"bq-attempts", "5"}});
  EXPECT_EQ(c.msg.route, binding::unsupported_route("2"));
  EXPECT_EQ(c.in.rejected_version, "2");
  EXPECT_EQ(c.msg.body, order_created()) << "a rejected record is not rewritten";
  EXPECT_FALSE(c.in.original_value.has_value());
  EXPECT_FALSE(c.msg.decoded.has_value());
  EXPECT_EQ(text_headers_of({{"bq-schema-version", "2"}, {"bq-attempts", "5"}}).at("bq-attempts"),
            "5")
      << "OB-4: the headers are delivered too";
}

TEST(KafkaRecords, IncomingLeavesTheTextHeadersToTheCaller) {  // OB-4, DeferredHeadersPop
  const RecordHeaders headers{{"bq-schema-version", "2"}, {"bq-attempts", "5"}};
  ReceivedMessage msg;
  const Incoming in = incoming(msg, order_created(), wire_list(headers).judged());
  EXPECT_TRUE(msg.headers.empty()) << "built on first use, from the handle's list";
  EXPECT_EQ(msg.route, binding::unsupported_route("2")) << "the gate still reads the list";
  EXPECT_EQ(in.rejected_version, "2");
}

TEST(KafkaRecords, GateUsesTheFirstOccurrenceAndANullIsAbsent) {  // KFK-9
  EXPECT_TRUE(consumed(order_created(), {{"bq-schema-version", "1"}, {"bq-schema-version", "9"}})
                  .msg.route.empty());
  EXPECT_FALSE(consumed(order_created(), {{"bq-schema-version", "9"}, {"bq-schema-version", "1"}})
                   .msg.route.empty());
  EXPECT_TRUE(consumed(order_created(), {{"bq-schema-version", std::nullopt}}).msg.route.empty());
  EXPECT_TRUE(consumed(order_created(), {{"bq-schema-version", " "}}).msg.route.empty());
  EXPECT_FALSE(consumed(order_created(), {{"bq-schema-version", " 1"}}).msg.route.empty());
}

TEST(KafkaRecords, AttemptsHeaderIsAuthoritative) {  // KFK-10
  const Consumed same = consumed(order_created(), {{"bq-attempts", "0"}});
  EXPECT_EQ(same.msg.body, order_created()) << "equal: bytes untouched (ENV-37)";
  EXPECT_FALSE(same.in.original_value.has_value());
  ASSERT_TRUE(same.msg.decoded.has_value()) << "decoded to decide: handed to the App (decode once)";
  EXPECT_EQ(encode(*same.msg.decoded), encode(decode(same.msg.body)));
  EXPECT_EQ(text_headers_of({{"bq-attempts", "0"}}).at("bq-attempts"), "0");

  const Consumed two = consumed(order_created(), {{"bq-attempts", " +2 "}});
  ASSERT_TRUE(two.in.original_value.has_value());
  EXPECT_EQ(*two.in.original_value, order_created());
  EXPECT_FALSE(two.msg.decoded.has_value());
  const auto contract = binding::contract_of(two.msg.body);
  ASSERT_TRUE(contract.has_value());
  EXPECT_EQ(contract->attempts, 2);
  EXPECT_EQ(contract->urn, binding_test::kUrn);

  for (const char* absent : {"-1", "x", "99999999999999999999"}) {
    EXPECT_EQ(consumed(order_created(), {{"bq-attempts", absent}}).msg.body, order_created())
        << absent;
  }
  EXPECT_EQ(consumed(order_created(), {{"bq-attempts", std::nullopt}}).msg.body, order_created());
  const Consumed first = consumed(order_created(), {{"bq-attempts", "4"}, {"bq-attempts", "0"}});
  EXPECT_EQ(binding::contract_of(first.msg.body)->attempts, 4);
  EXPECT_EQ(consumed("not json", {{"bq-attempts", "3"}}).msg.body, "not json");
}

}  // namespace
}  // namespace babelqueue::kafka::detail
