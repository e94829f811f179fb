// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Interop on the shared broker with two independent clients (issue 10): kcat (/usr/bin/kcat,
// Debian's librdkafka) and Python's confluent-kafka (its own bundled librdkafka; the venv is made
// once in the build tree by support/python_peer.sh). Each writes a record with a key and headers
// that KafkaTransport consumes with that key, those headers (OB-4) and the payload (KFK-8); each
// reads what the transport published with the exact value bytes, a null key and the KFK-5
// header list (OB-3 riders after it).

#include <babelqueue/binding/kafka.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/testing/broker_process.hpp>
#include <babelqueue/testing/command.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shared_broker_test.hpp"

namespace babelqueue::kafka::test {
namespace {

using babelqueue::testing::CommandResult;
using babelqueue::testing::contract_body;
using babelqueue::testing::from_hex;
using babelqueue::testing::kWithin;
using babelqueue::testing::pop_message;
using babelqueue::testing::run_command;
using babelqueue::testing::tagged_lines;
using babelqueue::testing::to_hex;

constexpr std::string_view kTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

Json hex_or_null(const std::optional<std::string>& bytes) {
  return bytes ? Json(to_hex(*bytes)) : Json();
}

std::optional<std::string> bytes_of(const Json& hex) {
  if (hex.is_null()) return std::nullopt;
  return from_hex(hex.as_string());
}

// What the transport writes for `body` with `riders` (KFK-5, OB-3), as a record header list.
RawHeaders projected(std::string_view body, const Headers& riders = {}) {
  RawHeaders out;
  for (auto& [name, value] : binding::kafka::projection(body, riders).headers)
    out.emplace_back(std::move(name), std::move(value));
  return out;
}

struct PythonPeer {
  std::string python;
  std::optional<std::string> unavailable;
};

// python_peer.sh, run once per test binary: it makes the venv on the first run in the build
// tree and afterwards only checks its stamp.
const PythonPeer& python_peer() {
  static const PythonPeer peer = [] {
    const CommandResult r = run_command(
        {"/bin/bash", BABELQUEUE_KAFKA_PYTHON_PEER_ENV, BABELQUEUE_KAFKA_PYTHON_PEER_VENV});
    PythonPeer p;
    const auto python = tagged_lines(r.output, "/");
    if (r.exit_code == 0 && !python.empty()) {
      p.python = "/" + python.back();
    } else {
      p.unavailable = "the confluent-kafka peer cannot run here (python_peer.sh exit " +
                      std::to_string(r.exit_code) + "): " + r.output;
    }
    return p;
  }();
  return peer;
}

class KafkaInteropTest : public SharedBrokerTest {
 protected:
  static std::string kcat() {
    return babelqueue::testing::find_executable("kcat").value_or("/usr/bin/kcat");
  }
  // `kcat -C` from the start of `topic` to its end: one "key|headers|value" line per record
  // (a null key printed as NULL).
  std::vector<std::string> kcat_consume(const std::string& topic) {
    const CommandResult r =
        run_command({kcat(), "-b", server().bootstrap(), "-C", "-t", topic, "-o", "beginning", "-e",
                     "-q", "-Z", "-f", "REC|%k|%h|%s\n"});
    EXPECT_EQ(r.exit_code, 0) << r;
    return tagged_lines(r.output, "REC|");
  }
  // python_peer.py with `args`; the lines it tagged `tag`, after expecting exit 0.
  std::vector<std::string> python(const std::vector<std::string>& args, std::string_view tag) {
    std::vector<std::string> argv = {python_peer().python, BABELQUEUE_KAFKA_PYTHON_PEER};
    argv.insert(argv.end(), args.begin(), args.end());
    const CommandResult r = run_command(argv);
    EXPECT_EQ(r.exit_code, 0) << "python_peer.py " << args.front() << ": " << r;
    return tagged_lines(r.output, tag);
  }
};

// kcat -P with -k and -H: the transport pops the record with that key, those headers and the
// payload byte for byte.
TEST_F(KafkaInteropTest, KcatProducedRecordIsConsumedWithItsKeyHeadersAndPayload) {
  raw().create_topic(queue(), 1);
  const std::string body = contract_body(1);
  const CommandResult produced =
      run_command({kcat(), "-b", server().bootstrap(), "-P", "-t", queue(), "-k", "kcat-key", "-H",
                   "traceparent=" + std::string(kTraceparent), "-H", "x-tenant=acme"},
                  {}, body + "\n");
  ASSERT_EQ(produced.exit_code, 0) << produced;
  auto t = transport();
  const auto m = pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(m.has_value()) << "the kcat record never came";
  EXPECT_EQ(m->body, body);
  EXPECT_EQ(m->key, std::optional<std::string>("kcat-key"));
  EXPECT_EQ(m->headers,
            (Headers{{"traceparent", std::string(kTraceparent)}, {"x-tenant", "acme"}}));
  EXPECT_TRUE(t->ack(*m).ok());
}

// kcat -C reads what the transport published: a null key, the KFK-5 headers then the rider,
// and the value.
TEST_F(KafkaInteropTest, KcatReadsATransportRecordExactly) {
  auto t = transport();
  const std::string body = contract_body(2);
  const Headers riders{{"traceparent", std::string(kTraceparent)}};
  ASSERT_TRUE(t->publish_with_headers(queue(), body, riders).ok());
  std::string headers;
  for (const auto& [name, value] : projected(body, riders)) {
    headers += (headers.empty() ? "" : ",") + name + "=" + value.value_or("");
  }
  std::vector<std::string> lines;
  ASSERT_TRUE(eventually([&] {
    lines = kcat_consume(queue());
    return !lines.empty();
  })) << "kcat read nothing";
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_EQ(lines[0], "NULL|" + headers + "|" + body);
}

// confluent-kafka reads what the transport published: the value bytes, a null key and the
// header list in order.
TEST_F(KafkaInteropTest, ConfluentKafkaReadsATransportRecordExactly) {
  BABELQUEUE_REQUIRE_BROKER(python_peer().unavailable);
  auto t = transport();
  const std::string body = contract_body(3);
  const Headers riders{{"traceparent", std::string(kTraceparent)}};
  ASSERT_TRUE(t->publish_with_headers(queue(), body, riders).ok());
  const auto lines = python({"consume", server().bootstrap(), queue(), "1", "30"}, "RECORD ");
  ASSERT_EQ(lines.size(), 1U);
  const Json record = Json::parse(lines[0]);
  EXPECT_EQ(bytes_of(*record.find("value")), body);
  EXPECT_TRUE(record.find("key")->is_null()) << lines[0];
  RawHeaders headers;
  for (const Json& h : record.find("headers")->as_array()) {
    headers.emplace_back(h.as_array()[0].as_string(), bytes_of(h.as_array()[1]));
  }
  EXPECT_EQ(headers, projected(body, riders));
  const std::int64_t created_at = binding::kafka::projection(body).timestamp_ms;
  ASSERT_GT(created_at, 0);
  EXPECT_EQ(record.find("timestamp")->as_int64(), created_at);
}

// confluent-kafka produces a record with a binary key, a duplicate header and a null-valued
// one: the transport pops it with the key's bytes, the first occurrence of the duplicate and
// without the null one (OB-4, KFK-8).
TEST_F(KafkaInteropTest, ConfluentKafkaProducedRecordIsConsumedWithItsKeyAndHeaders) {
  BABELQUEUE_REQUIRE_BROKER(python_peer().unavailable);
  raw().create_topic(queue(), 1);
  const std::string body = contract_body(4);
  const std::string key("py\0\xff", 4);
  const Json record =
      Json::object({{"key", hex_or_null(key)},
                    {"value", to_hex(body)},
                    {"headers", Json(JsonArray{Json(JsonArray{"traceparent", to_hex(kTraceparent)}),
                                               Json(JsonArray{"x-dup", to_hex("first")}),
                                               Json(JsonArray{"x-dup", to_hex("second")}),
                                               Json(JsonArray{"x-null", Json()})})}});
  ASSERT_EQ(python({"produce", server().bootstrap(), queue(), record.dump()}, "DELIVERED ").size(),
            1U);
  auto t = transport();
  const auto m = pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(m.has_value()) << "the confluent-kafka record never came";
  EXPECT_EQ(m->body, body);
  EXPECT_EQ(m->key, key);
  EXPECT_EQ(m->headers, (Headers{{"traceparent", std::string(kTraceparent)}, {"x-dup", "first"}}));
  EXPECT_TRUE(t->ack(*m).ok());
}

}  // namespace
}  // namespace babelqueue::kafka::test
