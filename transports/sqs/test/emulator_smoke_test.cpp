// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The SQS test support itself (issue 11): the private ElasticMQ emulator (SqsEmulator) and its
// raw client, and the emulator facts the transport and its tests rely on (SQS-9, SQS-10,
// SQS-13, SQS-15, SQS-17, D-11 batch calls), checked through raw signed calls only.

#include <babelqueue/json.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <future>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "raw_sqs.hpp"
#include "sqs_emulator.hpp"

namespace babelqueue::sqs::test {
namespace {

using babelqueue::testing::read_file;
using babelqueue::testing::report_figure;
using babelqueue::testing::rss_kib;

using babelqueue::Json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string numbered(const char* prefix, int i) {
  // Appended piece by piece: GCC 12 -O2 reports a bogus -Wrestrict for `"e" + std::string`.
  std::string text = prefix;
  text += std::to_string(i);
  return text;
}

// A queue name no other test of this process uses.
std::string fresh_queue(const char* stem) {
  static int counter = 0;
  std::string name = "smoke-";
  name += stem;
  name += '-';
  name += std::to_string(++counter);
  return name;
}

Json receive(SqsEmulator& sqs, const std::string& url, int max, int wait_seconds = 0) {
  return sqs.call("ReceiveMessage",
                  Json::object({{"QueueUrl", url},
                                {"MaxNumberOfMessages", max},
                                {"WaitTimeSeconds", wait_seconds},
                                {"MessageSystemAttributeNames", Json::array({"All"})},
                                {"MessageAttributeNames", Json::array({"All"})}}));
}

// The messages of a ReceiveMessage reply (none: an empty array).
JsonArray messages_of(const Json& reply) {
  const Json* messages = reply.find("Messages");
  return messages == nullptr ? JsonArray{} : messages->as_array();
}

std::string receive_count(const Json& message) {
  return message.find("Attributes")->find("ApproximateReceiveCount")->as_string();
}

void send_batch(SqsEmulator& sqs, const std::string& url, int first, int count) {
  Json entries = Json::array();
  for (int i = first; i < first + count; ++i) {
    entries.push_back(
        Json::object({{"Id", numbered("e", i)}, {"MessageBody", numbered("body-", i)}}));
  }
  const Json reply =
      sqs.call("SendMessageBatch", Json::object({{"QueueUrl", url}, {"Entries", entries}}));
  ASSERT_EQ(reply.find("Successful")->size(), static_cast<std::size_t>(count)) << reply.dump();
}

TEST(SqsEmulatorSmoke, SharedEmulatorIsTheJvmOnLoopback) {
  BABELQUEUE_REQUIRE_SQS_EMULATOR();
  const auto first_use = Clock::now();
  SqsEmulator& sqs = shared_sqs_emulator();
  report_figure("shared emulator first use (start if this test runs first)",
                std::chrono::duration_cast<milliseconds>(Clock::now() - first_use).count());
  report_figure("emulator JVM RSS", rss_kib(sqs.pid()) / 1024, "MiB");
  ASSERT_TRUE(sqs.running());
  EXPECT_TRUE(sqs.persistent());
  // The PID BrokerProcess signals is the JVM's: elasticmq_run.sh exec'd java.
  EXPECT_EQ(read_file("/proc/" + std::to_string(sqs.pid()) + "/comm"), "java\n");
  const std::string endpoint = "http://127.0.0.1:" + std::to_string(sqs.port());
  EXPECT_EQ(sqs.endpoint(), endpoint);
  // The secret's '/' and '+' are percent-encoded in the user info.
  EXPECT_EQ(sqs.url(),
            "sqs://AKIDBABELQUEUETEST:babelqueue%2Ftest%2Fsecret%2BKEY@us-east-1"
            "?endpoint=" +
                endpoint);
  EXPECT_EQ(sqs.url("prefetch=1"), sqs.url() + "&prefetch=1");
  const Options options = sqs.options();
  EXPECT_EQ(options.region, "us-east-1");
  EXPECT_EQ(options.endpoint, endpoint);
  EXPECT_EQ(options.credentials.access_key_id, kAccessKeyId);
  EXPECT_EQ(options.credentials.secret_access_key, kSecretAccessKey);
  // Queue URLs point at the emulator itself, so a client may send to them as they are.
  const std::string name = fresh_queue("url");
  EXPECT_EQ(sqs.create_queue(name), endpoint + "/000000000000/" + name);
  EXPECT_EQ(sqs.queue_arn(name), "arn:aws:sqs:us-east-1:000000000000:" + name);
}

TEST(SqsEmulatorSmoke, SendReceiveDeleteWithAttributesAndTheirDigests) {
  BABELQUEUE_REQUIRE_SQS_EMULATOR();
  SqsEmulator& sqs = shared_sqs_emulator();
  const std::string url = sqs.create_queue(fresh_queue("srd"), {{"VisibilityTimeout", "30"}});
  const Json attributes =
      Json::object({{"bq-id", Json::object({{"DataType", "String"}, {"StringValue", "id-1"}})},
                    {"bq-attempts", Json::object({{"DataType", "Number"}, {"StringValue", "0"}})}});
  const Json sent = sqs.call("SendMessage", Json::object({{"QueueUrl", url},
                                                          {"MessageBody", "{\"h\xc3\xa9llo\":1}"},
                                                          {"MessageAttributes", attributes}}));
  // MD5 of the UTF-8 body {"héllo":1}.
  EXPECT_EQ(sent.find("MD5OfMessageBody")->as_string(), "f03a73fd83d43928f9e834645c5fa23f");
  ASSERT_NE(sent.find("MD5OfMessageAttributes"), nullptr) << sent.dump();

  const JsonArray got = messages_of(receive(sqs, url, 10));
  ASSERT_EQ(got.size(), 1U);
  const Json& message = got[0];
  EXPECT_EQ(message.find("Body")->as_string(), "{\"h\xc3\xa9llo\":1}");
  EXPECT_EQ(message.find("MessageId")->as_string(), sent.find("MessageId")->as_string());
  EXPECT_EQ(*message.find("MessageAttributes"), attributes);
  EXPECT_EQ(message.find("MD5OfMessageAttributes")->as_string(),
            sent.find("MD5OfMessageAttributes")->as_string());
  EXPECT_EQ(receive_count(message), "1");
  // In flight: not visible to a second receive.
  EXPECT_TRUE(messages_of(receive(sqs, url, 10)).empty());

  sqs.call("DeleteMessage",
           Json::object(
               {{"QueueUrl", url}, {"ReceiptHandle", message.find("ReceiptHandle")->as_string()}}));
  const std::map<std::string, std::string> stats =
      sqs.queue_attributes(url.substr(url.rfind('/') + 1));
  EXPECT_EQ(stats.at("ApproximateNumberOfMessages"), "0");
  EXPECT_EQ(stats.at("ApproximateNumberOfMessagesNotVisible"), "0");
  EXPECT_EQ(stats.at("ApproximateNumberOfMessagesDelayed"), "0");
}

// SQS-10, SQS-13: a release (ChangeMessageVisibility 0) makes the message visible again at
// once, and the next receive counts one more.
TEST(SqsEmulatorSmoke, ReceiveCountGrowsAfterChangeMessageVisibilityZero) {
  BABELQUEUE_REQUIRE_SQS_EMULATOR();
  SqsEmulator& sqs = shared_sqs_emulator();
  const std::string url = sqs.create_queue(fresh_queue("cmv"), {{"VisibilityTimeout", "30"}});
  sqs.call("SendMessage", Json::object({{"QueueUrl", url}, {"MessageBody", "again"}}));
  for (int expected = 1; expected <= 3; ++expected) {
    const JsonArray got = messages_of(receive(sqs, url, 1));
    ASSERT_EQ(got.size(), 1U) << "receive " << expected;
    EXPECT_EQ(receive_count(got[0]), std::to_string(expected));
    sqs.call("ChangeMessageVisibility",
             Json::object({{"QueueUrl", url},
                           {"ReceiptHandle", got[0].find("ReceiptHandle")->as_string()},
                           {"VisibilityTimeout", 0}}));
  }
}

// SQS-15: with a RedrivePolicy, the receive after maxReceiveCount receives moves the message to
// the dead-letter queue instead of delivering it.
TEST(SqsEmulatorSmoke, RedrivePolicyMovesAfterMaxReceiveCount) {
  BABELQUEUE_REQUIRE_SQS_EMULATOR();
  SqsEmulator& sqs = shared_sqs_emulator();
  const std::string dlq_name = fresh_queue("redrive-dlq");
  sqs.create_queue(dlq_name);
  const std::string policy =
      R"({"deadLetterTargetArn":")" + sqs.queue_arn(dlq_name) + R"(","maxReceiveCount":"2"})";
  const std::string url = sqs.create_queue(
      fresh_queue("redrive"), {{"VisibilityTimeout", "30"}, {"RedrivePolicy", policy}});
  sqs.call("SendMessage", Json::object({{"QueueUrl", url}, {"MessageBody", "poison"}}));
  for (int i = 0; i < 2; ++i) {
    const JsonArray got = messages_of(receive(sqs, url, 1));
    ASSERT_EQ(got.size(), 1U) << "receive " << i + 1;
    sqs.call("ChangeMessageVisibility",
             Json::object({{"QueueUrl", url},
                           {"ReceiptHandle", got[0].find("ReceiptHandle")->as_string()},
                           {"VisibilityTimeout", 0}}));
  }
  EXPECT_TRUE(messages_of(receive(sqs, url, 10)).empty());
  EXPECT_EQ(sqs.approximate_depth(dlq_name), 1U);
  const JsonArray dead = messages_of(receive(sqs, sqs.create_queue(dlq_name), 10));
  ASSERT_EQ(dead.size(), 1U);
  EXPECT_EQ(dead[0].find("Body")->as_string(), "poison");
}

// SQS-9: a long poll on an empty queue returns as soon as a message arrives, well before its
// WaitTimeSeconds.
TEST(SqsEmulatorSmoke, LongPollReturnsWhenAMessageArrives) {
  BABELQUEUE_REQUIRE_SQS_EMULATOR();
  SqsEmulator& sqs = shared_sqs_emulator();
  const std::string url = sqs.create_queue(fresh_queue("poll"));
  // The poll runs on its own connection; the main thread sends once it is waiting.
  auto poll = std::async(std::launch::async, [&sqs, url] {
    RawSqs raw(sqs.endpoint(), kRegion, kAccessKeyId, kSecretAccessKey);
    const auto started = Clock::now();
    const Json reply = raw.call(
        "ReceiveMessage",
        Json::object({{"QueueUrl", url}, {"MaxNumberOfMessages", 10}, {"WaitTimeSeconds", 20}}));
    return std::make_pair(messages_of(reply).size(),
                          std::chrono::duration_cast<milliseconds>(Clock::now() - started));
  });
  // Not yet answered: the poll waits for a message (a plain receive would have returned).
  ASSERT_EQ(poll.wait_for(milliseconds{300}), std::future_status::timeout);
  sqs.call("SendMessage", Json::object({{"QueueUrl", url}, {"MessageBody", "wake"}}));
  const auto [count, took] = poll.get();
  EXPECT_EQ(count, 1U);
  EXPECT_LT(took, milliseconds{15'000});
  report_figure("long poll answered after the send, poll took", took.count());
}

// D-11, SQS-17: a batch call reports a failing entry in Failed (the others succeed); the
// error types a client classifies.
TEST(SqsEmulatorSmoke, BatchEntriesFailAloneAndErrorsHaveTheirTypes) {
  BABELQUEUE_REQUIRE_SQS_EMULATOR();
  SqsEmulator& sqs = shared_sqs_emulator();
  const std::string name = fresh_queue("batch");
  const std::string url = sqs.create_queue(name, {{"VisibilityTimeout", "30"}});
  const Json sent = sqs.call(
      "SendMessageBatch",
      Json::object(
          {{"QueueUrl", url},
           {"Entries",
            Json::array(
                {Json::object({{"Id", "ok"}, {"MessageBody", "a"}}),
                 Json::object({{"Id", "bad"}, {"MessageBody", "b"}, {"DelaySeconds", 1000}})})}}));
  ASSERT_EQ(sent.find("Successful")->size(), 1U) << sent.dump();
  ASSERT_EQ(sent.find("Failed")->size(), 1U) << sent.dump();
  EXPECT_EQ(sent.find("Failed")->as_array()[0].find("Id")->as_string(), "bad");

  const JsonArray got = messages_of(receive(sqs, url, 10));
  ASSERT_EQ(got.size(), 1U);
  const Json deleted = sqs.call(
      "DeleteMessageBatch",
      Json::object(
          {{"QueueUrl", url},
           {"Entries",
            Json::array(
                {Json::object({{"Id", "real"},
                               {"ReceiptHandle", got[0].find("ReceiptHandle")->as_string()}}),
                 Json::object({{"Id", "bogus"}, {"ReceiptHandle", "not-a-handle"}})})}}));
  ASSERT_EQ(deleted.find("Successful")->size(), 1U) << deleted.dump();
  ASSERT_EQ(deleted.find("Failed")->size(), 1U) << deleted.dump();
  EXPECT_EQ(deleted.find("Failed")->as_array()[0].find("Code")->as_string(),
            "ReceiptHandleIsInvalid");

  RawSqs raw(sqs.endpoint(), kRegion, kAccessKeyId, kSecretAccessKey);
  const RawSqs::Reply missing =
      raw.post("GetQueueUrl", Json::object({{"QueueName", "smoke-no-such-queue"}}).dump());
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(Json::parse(missing.body).find("__type")->as_string(),
            "com.amazonaws.sqs#QueueDoesNotExist");
  const RawSqs::Reply stale = raw.post(
      "DeleteMessage", Json::object({{"QueueUrl", url}, {"ReceiptHandle", "not-a-handle"}}).dump());
  EXPECT_EQ(stale.status, 400);
  EXPECT_EQ(Json::parse(stale.body).find("__type")->as_string(),
            "com.amazonaws.sqs#ReceiptHandleIsInvalid");
  const RawSqs::Reply bad_name =
      raw.post("CreateQueue", Json::object({{"QueueName", "bad name!"}}).dump());
  EXPECT_EQ(bad_name.status, 400) << bad_name.body;
  EXPECT_THROW(sqs.call("GetQueueUrl", Json::object({{"QueueName", "smoke-no-such-queue"}})),
               std::runtime_error);
}

TEST(SqsEmulatorSmoke, ApproximateDepthSeesEveryMessageAndLeavesThemVisible) {
  BABELQUEUE_REQUIRE_SQS_EMULATOR();
  SqsEmulator& sqs = shared_sqs_emulator();
  const std::string name = fresh_queue("depth");
  const std::string url = sqs.create_queue(name, {{"VisibilityTimeout", "30"}});
  send_batch(sqs, url, 0, 10);
  send_batch(sqs, url, 10, 10);
  send_batch(sqs, url, 20, 5);
  EXPECT_EQ(sqs.approximate_depth(name), 25U);
  EXPECT_EQ(sqs.approximate_depth(name), 25U);
  EXPECT_EQ(sqs.queue_attributes(name).at("ApproximateNumberOfMessages"), "25");
}

// The fault tests restart the emulator: queues and messages survive a kill -9 (persistent()),
// and a restart on a port another process took fails.
TEST(SqsEmulatorSmoke, QueuesAndMessagesSurviveKillAndRestart) {
  BABELQUEUE_REQUIRE_SQS_EMULATOR();
  const auto started = Clock::now();
  SqsEmulator sqs;
  report_figure("private emulator start-up",
                std::chrono::duration_cast<milliseconds>(Clock::now() - started).count());
  ASSERT_TRUE(sqs.persistent());
  const std::string name = "smoke-survivor";
  const std::string url = sqs.create_queue(name, {{"VisibilityTimeout", "30"}});
  for (int i = 0; i < 100; i += 10)
    send_batch(sqs, url, i, 10);
  const int port = sqs.port();
  const pid_t first_pid = sqs.pid();

  sqs.kill();  // right after the last send: nothing may be waiting to be written
  EXPECT_FALSE(sqs.running());
  const auto restarted = Clock::now();
  sqs.restart();
  report_figure("restart after kill -9",
                std::chrono::duration_cast<milliseconds>(Clock::now() - restarted).count());
  ASSERT_TRUE(sqs.running());
  EXPECT_NE(sqs.pid(), first_pid);
  EXPECT_EQ(sqs.port(), port);
  EXPECT_EQ(sqs.create_queue(name, {{"VisibilityTimeout", "30"}}), url);
  EXPECT_EQ(sqs.queue_attributes(name).at("VisibilityTimeout"), "30");
  std::set<std::string> bodies;
  for (JsonArray got; !(got = messages_of(receive(sqs, url, 10))).empty();) {
    for (const Json& m : got)
      bodies.insert(m.find("Body")->as_string());
  }
  EXPECT_EQ(bodies.size(), 100U);
  EXPECT_TRUE(bodies.contains("body-0"));
  EXPECT_TRUE(bodies.contains("body-99"));

  sqs.stop();
  EXPECT_FALSE(sqs.running());
  // ElasticMQ keeps running when its port is taken; the fixture notices it and the restart
  // fails saying so (not after the start timeout).
  const int taken = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(taken, 0);
  const int one = 1;
  ASSERT_EQ(::setsockopt(taken, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one), 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(taken, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(taken, 1), 0);
  try {
    sqs.restart();
    ADD_FAILURE() << "restarted on a taken port";
  } catch (const std::runtime_error& e) {
    // BrokerProcess's port-taken error, not its start timeout.
    EXPECT_NE(std::string(e.what()).find("was taken while it was stopped"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(sqs.running());
  ::close(taken);
}

}  // namespace
}  // namespace babelqueue::sqs::test
