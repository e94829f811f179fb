// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The queue commands of the `babelqueue` binary over pulsar:// (issue 13: publish, work with the
// transport's --prefetch and --subscription flags, dead-lettering), run as a child process
// against the shared broker; every test uses a fresh queue, and RawPulsar checks what the broker
// holds. queue stats, dlq list and dlq redrive run with admin_url (the Inspector on the broker's
// admin REST API).

#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_process.hpp"
#include "transport_test.hpp"

namespace babelqueue::pulsar::test {
namespace {

using babelqueue::testing::kWithin;
using cli::test::CliRun;
using cli::test::lines_of;
using cli::test::run_cli;

using PulsarCliTest = SharedBrokerTest;

// publish writes one message with the PLS-5 properties and the --header rider.
TEST_F(PulsarCliTest, PublishWritesTheProjectedMessage) {
  const std::string id = cli::test::publish_via_cli(
      url(), queue(), {"--header", "traceparent=00-4bf92f3577b34da6a3ce929d0e0e4736-01"});
  const std::vector<RawMessage> got = read_all(queue(), 1, kWithin);
  ASSERT_EQ(got.size(), 1U);
  EXPECT_EQ(decode(got[0].message.payload).meta().id, id);
  std::map<std::string, std::string> props;
  for (const auto& p : got[0].message.metadata.properties())
    props.emplace(p.key(), p.value());
  EXPECT_EQ(props.at("bq-job"), cli::test::kCliUrn);
  EXPECT_EQ(props.at("bq-message-id"), id);
  EXPECT_EQ(props.at("traceparent"), "00-4bf92f3577b34da6a3ce929d0e0e4736-01");
}

// work --drain --print (with the transport's flags) consumes and acks what it printed.
TEST_F(PulsarCliTest, WorkDrainPrintsAndAcks) {
  const std::string id = cli::test::publish_via_cli(url(), queue());
  const CliRun r = run_cli({"work", "--url", url(), "--queue", queue(), "--drain", "--print",
                            "--prefetch", "5", "--subscription", "cli"});
  ASSERT_EQ(r.exit_code, 0) << r;
  ASSERT_EQ(lines_of(r.out).size(), 1U) << r;
  EXPECT_EQ(decode(lines_of(r.out)[0]).meta().id, id);
  EXPECT_NE(r.err.find("1 handled, 0 failed"), std::string::npos) << r;
  PulsarTransport t(url("subscription=cli"));
  const auto left = t.pop(queue(), std::chrono::milliseconds(1'500));
  ASSERT_TRUE(left.has_value());
  EXPECT_FALSE(left->has_value()) << "the message was not acked";
}

// work --dead-letter retries through the queue, then writes QUEUE.dlq.
TEST_F(PulsarCliTest, WorkDeadLettersToTheDlq) {
  const std::string id = cli::test::publish_via_cli(url(), queue());
  const CliRun r = run_cli({"work", "--url", url(), "--queue", queue(), "--drain", "--exec",
                            "exit 3", "--max-attempts", "2", "--dead-letter"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(r.err.find("0 handled, 2 failed; queue drained"), std::string::npos) << r;
  EXPECT_TRUE(nothing_left(queue()));
  const std::vector<RawMessage> dead = read_all(queue() + ".dlq", 1, kWithin);
  ASSERT_EQ(dead.size(), 1U);
  const Envelope record = decode(dead[0].message.payload);
  EXPECT_EQ(record.meta().id, id);
  ASSERT_TRUE(record.dead_letter().has_value());
  EXPECT_EQ(record.dead_letter()->original_queue, queue());
}

class PulsarAdminCliTest : public SharedBrokerTest {
 protected:
  static std::string admin() { return url("admin_url=" + server().admin_url()); }
  long long stat(std::string_view name) {
    return cli::test::count_of(cli::test::stats_via_cli(admin(), queue()), name);
  }
};

// publish before any consumer: the publish made the subscription, so queue stats counts it
// ready (reading the stats receives nothing); work acks it and the count drops.
TEST_F(PulsarAdminCliTest, PublishThenQueueStatsCountsItReady) {
  static_cast<void>(cli::test::publish_via_cli(admin(), queue()));
  EXPECT_EQ(stat("ready"), 1);
  EXPECT_EQ(stat("in_flight"), 0);
  EXPECT_EQ(stat("dead_letter"), 0);
  const CliRun r = run_cli({"work", "--url", admin(), "--queue", queue(), "--drain", "--print"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(r.err.find("1 handled, 0 failed"), std::string::npos) << r;
  EXPECT_EQ(stat("ready"), 0);
}

// work --dead-letter moves it to QUEUE.dlq, which stats count (and the work summary); dlq list
// shows the record and leaves it there.
TEST_F(PulsarAdminCliTest, DeadLetteredThenDlqListLeavesItThere) {
  const std::string id = cli::test::dead_lettered_via_cli(admin(), queue());
  EXPECT_EQ(stat("ready"), 0);
  EXPECT_EQ(stat("dead_letter"), 1);
  const CliRun list = run_cli({"dlq", "list", "--url", admin(), "--queue", queue()});
  ASSERT_EQ(list.exit_code, 0) << list;
  EXPECT_EQ(list.out, id + "\tfailed\t--exec command exited with status 3\n");
  EXPECT_EQ(stat("dead_letter"), 1) << "dlq list consumed";
}

// dlq redrive re-publishes the record to its queue (attempts 0, no dead_letter block) and acks
// it in the dead-letter queue.
TEST_F(PulsarAdminCliTest, DlqRedriveMovesTheRecordBack) {
  const std::string id = cli::test::dead_lettered_via_cli(admin(), queue());
  const CliRun r = run_cli({"dlq", "redrive", "--url", admin(), "--queue", queue()});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(r.out.find("1 redriven, 0 kept in " + queue() + ".dlq"), std::string::npos) << r;
  EXPECT_EQ(stat("dead_letter"), 0);
  EXPECT_EQ(stat("ready"), 1);
  PulsarTransport t(url());
  const auto back = t.pop(queue(), kWithin);
  ASSERT_TRUE(back.has_value() && back->has_value());
  const Envelope env = decode((*back)->body);
  EXPECT_EQ(env.meta().id, id);
  EXPECT_FALSE(env.dead_letter().has_value());
  EXPECT_EQ(env.attempts(), 0);
  ASSERT_TRUE(t.ack(**back).ok());
}

// A bad option in the URL is a usage error (exit 2) naming it, never the token.
TEST_F(PulsarCliTest, ABadUrlOptionExitsTwoNamingIt) {
  std::string bad = "pulsar://:tok-s3cret@";
  bad += server().service_url().substr(std::string("pulsar://").size());
  bad += "?prefetch=0";
  const CliRun r = run_cli({"publish", "--url", bad, "--queue", queue(), cli::test::kCliUrn, "{}"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_NE(r.err.find("prefetch"), std::string::npos) << r;
  EXPECT_EQ(r.err.find("tok-s3cret"), std::string::npos) << r;
}

}  // namespace
}  // namespace babelqueue::pulsar::test
