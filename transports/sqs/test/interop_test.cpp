// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Interop on the shared emulator with boto3 (PyPI, pinned by support/boto3_peer.sh, whose venv
// is made once in the build tree), the AWS SDK most SQS users have (issue 11): a message boto3
// sends with MessageAttributes reaches the App with its payload byte for byte and its String and
// Number attributes as headers (OB-1, OB-4; a Binary attribute is no header); what SqsTransport
// publishes reaches boto3 with the body identical and the SQS-6 attributes with their DataTypes
// beside the rider (OB-3). Never skipped under CI (BABELQUEUE_REQUIRE_BROKER).

#include <babelqueue/app.hpp>
#include <babelqueue/binding/sqs.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/testing/broker_process.hpp>
#include <babelqueue/testing/command.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shared_emulator_test.hpp"

namespace babelqueue::sqs::test {
namespace {

using babelqueue::testing::CommandResult;
using babelqueue::testing::from_hex;
using babelqueue::testing::kWithin;
using babelqueue::testing::run_command;
using babelqueue::testing::tagged_lines;
using babelqueue::testing::to_hex;

constexpr std::string_view kTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
constexpr std::string_view kUrn = "urn:babel:orders:created";

struct Boto3Peer {
  std::string python;
  std::optional<std::string> unavailable;
};

// boto3_peer.sh, run once per test binary: it makes the venv on the first run in the build
// tree and afterwards only checks its stamp.
const Boto3Peer& boto3_peer() {
  static const Boto3Peer peer = [] {
    const CommandResult r =
        run_command({"/bin/bash", BABELQUEUE_SQS_BOTO3_PEER_ENV, BABELQUEUE_SQS_BOTO3_PEER_VENV});
    Boto3Peer p;
    const auto python = tagged_lines(r.output, "/");
    if (r.exit_code == 0 && !python.empty()) {
      p.python = "/" + python.back();
    } else {
      p.unavailable = "the boto3 peer cannot run here (boto3_peer.sh exit " +
                      std::to_string(r.exit_code) + "): " + r.output;
    }
    return p;
  }();
  return peer;
}

// Name -> (DataType, StringValue or the hex of BinaryValue) of a boto3_peer message.
using PeerAttributes = std::map<std::string, std::pair<std::string, std::string>>;

PeerAttributes peer_attributes(const Json& message) {
  PeerAttributes out;
  for (const auto& [name, a] : message.find("attributes")->as_object()) {
    const Json* value = a.find("StringValue");
    if (value == nullptr) value = a.find("BinaryValue");
    out[name] = {a.find("DataType")->as_string(), value->as_string()};
  }
  return out;
}

class SqsInteropTest : public SharedEmulatorTest {
 protected:
  void SetUp() override {
    SharedEmulatorTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    BABELQUEUE_REQUIRE_BROKER(boto3_peer().unavailable);
    create_queue();
  }
  // boto3_peer.py with `args` after ENDPOINT QUEUE_URL; the lines it tagged `tag`, after
  // expecting exit 0.
  std::vector<std::string> boto3(const std::string& command, const std::vector<std::string>& args,
                                 std::string_view tag) {
    std::vector<std::string> argv = {boto3_peer().python, BABELQUEUE_SQS_BOTO3_PEER, command,
                                     emulator().endpoint(), raw().url(queue())};
    argv.insert(argv.end(), args.begin(), args.end());
    const CommandResult r =
        run_command(argv, {{"AWS_ACCESS_KEY_ID", std::string(kAccessKeyId)},
                           {"AWS_SECRET_ACCESS_KEY", std::string(kSecretAccessKey)},
                           {"AWS_DEFAULT_REGION", std::string(kRegion)},
                           {"AWS_CONFIG_FILE", "/dev/null"},
                           {"AWS_SHARED_CREDENTIALS_FILE", "/dev/null"}});
    EXPECT_EQ(r.exit_code, 0) << "boto3_peer.py " << command << ": " << r;
    return tagged_lines(r.output, tag);
  }
};

// OB-1, OB-4: boto3 sends an envelope (non-ASCII data included) with String, Number and Binary
// attributes; the App's handler gets the body byte for byte and the String and Number values as
// headers, the Binary one skipped; receive count 1.
TEST_F(SqsInteropTest, Boto3SentMessageReachesTheAppWithItsAttributesAsHeaders) {
  const Envelope sent = make(kUrn, Json::object({{"city", "Zürich ✓"}, {"n", 42}}));
  const std::string body = encode(sent);
  const Json message = Json::object(
      {{"body", to_hex(body)},
       {"attributes",
        Json::object(
            {{"traceparent", Json::object({{"DataType", "String"}, {"StringValue", kTraceparent}})},
             {"x-priority", Json::object({{"DataType", "Number"}, {"StringValue", "7"}})},
             {"x-blob", Json::object({{"DataType", "Binary"}, {"BinaryValue", "00ff"}})}})}});
  ASSERT_EQ(boto3("send", {message.dump()}, "SENT ").size(), 1U);

  App app(transport(), {.poll_timeout = kWithin});
  std::optional<ReceivedMessage> got;
  app.handle(kUrn, [&](Context& ctx, const Envelope& env) {
    EXPECT_EQ(env.meta().id, sent.meta().id);
    got = ctx.message();
    return Status();
  });
  ASSERT_TRUE(app.drain(queue(), 1).status.ok());
  ASSERT_TRUE(got.has_value()) << "the handler never ran";
  EXPECT_EQ(got->body, body);
  EXPECT_EQ(got->headers,
            (Headers{{"traceparent", std::string(kTraceparent)}, {"x-priority", "7"}}));
  EXPECT_EQ(got->delivery_count, 1);
}

// OB-1, OB-3, SQS-6: boto3 receives what the transport published: the body identical, the
// six bq-* attributes with their DataTypes and values, then the rider as a String.
TEST_F(SqsInteropTest, Boto3ReceivesATransportMessageExactly) {
  const std::string body =
      encode(make(kUrn, Json::object({{"city", "Zürich ✓"}}), {.queue = queue()}));
  auto t = transport();
  const Headers riders{{"traceparent", std::string(kTraceparent)}};
  ASSERT_TRUE(t->publish_with_headers(queue(), body, riders).ok());
  const auto lines = boto3("receive", {"1", "30"}, "MESSAGE ");
  ASSERT_EQ(lines.size(), 1U);
  const Json message = Json::parse(lines[0]);
  EXPECT_EQ(from_hex(message.find("body")->as_string()), body);
  PeerAttributes expected;
  for (const binding::sqs::Attribute& a : binding::sqs::projection(body, riders).attributes) {
    expected[a.name] = {a.data_type, a.string_value};
  }
  EXPECT_EQ(expected.size(), 7U);
  EXPECT_EQ(peer_attributes(message), expected);
  EXPECT_EQ(message.find("receive_count")->as_string(), "1");
  EXPECT_TRUE(raw().empty(queue())) << "boto3 deleted it";
}

}  // namespace
}  // namespace babelqueue::sqs::test
