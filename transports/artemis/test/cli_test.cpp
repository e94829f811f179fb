// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The queue commands of the `babelqueue` binary over artemis:// (issue 12: publish, work with
// its --prefetch flag, dead-lettering), run as a child process against the shared broker; every
// test uses a fresh queue, and RawAmqp10 checks what the broker holds. No queue stats / dlq list:
// the transport has no Inspector yet.

#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_process.hpp"
#include "shared_broker_test.hpp"

namespace babelqueue::artemis::test {
namespace {

using babelqueue::testing::kWithin;
using cli::test::CliRun;
using cli::test::lines_of;
using cli::test::run_cli;

using ArtemisCliTest = SharedBrokerTest;

// publish writes one message with the ART-4 projection and the --header rider.
TEST_F(ArtemisCliTest, PublishWritesTheProjectedMessage) {
  const std::string id = cli::test::publish_via_cli(
      url(), queue(), {"--header", "traceparent=00-4bf92f3577b34da6a3ce929d0e0e4736-01"});
  const std::vector<RawMessage> got = raw().receive(queue(), 1, kWithin);
  ASSERT_EQ(got.size(), 1U);
  EXPECT_EQ(decode(got[0].body).meta().id, id);
  EXPECT_EQ(got[0].annotations.at("x-opt-jms-type"), cli::test::kCliUrn);
  EXPECT_EQ(got[0].properties.at("bq_app_id"), "babelqueue");
  EXPECT_EQ(got[0].properties.at("traceparent"), "00-4bf92f3577b34da6a3ce929d0e0e4736-01");
}

// work --drain --print (with the transport's --prefetch flag) consumes and accepts what it
// printed.
TEST_F(ArtemisCliTest, WorkDrainPrintsAndAccepts) {
  const std::string id = cli::test::publish_via_cli(url(), queue());
  const CliRun r = run_cli(
      {"work", "--url", url(), "--queue", queue(), "--drain", "--print", "--prefetch", "5"});
  ASSERT_EQ(r.exit_code, 0) << r;
  ASSERT_EQ(lines_of(r.out).size(), 1U) << r;
  EXPECT_EQ(decode(lines_of(r.out)[0]).meta().id, id);
  EXPECT_NE(r.err.find("1 handled, 0 failed"), std::string::npos) << r;
  EXPECT_EQ(count_becomes(queue(), 0), 0);
}

// work --dead-letter retries through the queue, then writes QUEUE.dlq.
TEST_F(ArtemisCliTest, WorkDeadLettersToTheDlq) {
  const std::string id = cli::test::publish_via_cli(url(), queue());
  const CliRun r = run_cli({"work", "--url", url(), "--queue", queue(), "--drain", "--exec",
                            "exit 3", "--max-attempts", "2", "--dead-letter"});
  ASSERT_EQ(r.exit_code, 0) << r;
  // No dead-letter count in the summary: it comes from an Inspector, which this transport lacks.
  EXPECT_NE(r.err.find("0 handled, 2 failed; queue drained"), std::string::npos) << r;
  EXPECT_EQ(count_becomes(queue(), 0), 0);
  const std::vector<RawMessage> dead = raw().receive(queue() + ".dlq", 1, kWithin);
  ASSERT_EQ(dead.size(), 1U);
  const Envelope record = decode(dead[0].body);
  EXPECT_EQ(record.meta().id, id);
  ASSERT_TRUE(record.dead_letter().has_value());
  EXPECT_EQ(record.dead_letter()->original_queue, queue());
}

// A bad option in the URL is a usage error (exit 2) naming it, never the password.
TEST_F(ArtemisCliTest, ABadUrlOptionExitsTwoNamingIt) {
  const CliRun r = run_cli(
      {"publish", "--url", url("prefetch=0"), "--queue", queue(), cli::test::kCliUrn, "{}"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_NE(r.err.find("prefetch"), std::string::npos) << r;
  EXPECT_EQ(r.err.find(ArtemisServer::kPassword), std::string::npos) << r;
}

}  // namespace
}  // namespace babelqueue::artemis::test
