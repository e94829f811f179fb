// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The queue commands of the `babelqueue` binary over sqs:// (issue 11: publish, work, queue
// stats, dlq list, dlq redrive), run as a child process against the shared emulator; every test
// creates its queue and its SQS-14 dead-letter queue `<q>-dlq` first (SQS never creates queues,
// SQS-5), and the raw client checks what is in them. Errors: a bad option is a usage error
// (exit 2) naming it; a missing queue names the queue; neither prints the secret key.

#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "cli_process.hpp"
#include "shared_emulator_test.hpp"

namespace babelqueue::sqs::test {
namespace {

using cli::test::CliRun;
using cli::test::lines_of;
using cli::test::run_cli;

constexpr const char* kUrn = cli::test::kCliUrn;

// The secret key as the tests give it and the start of it percent-encoded, as in their URLs.
constexpr std::string_view kSecretForms[] = {kSecretAccessKey, "babelqueue%2Ftest",
                                             "babelqueue%2ftest"};

// Success when `run` printed neither form of the secret key nor a signature.
::testing::AssertionResult no_secret_in(const CliRun& run) {
  for (const std::string_view secret : kSecretForms) {
    if (run.out.find(secret) != std::string::npos || run.err.find(secret) != std::string::npos) {
      return ::testing::AssertionFailure() << "the secret key was printed: " << run;
    }
  }
  if (run.err.find("Signature=") != std::string::npos) {
    return ::testing::AssertionFailure() << "a signature was printed: " << run;
  }
  return ::testing::AssertionSuccess();
}

class SqsCliTest : public SharedEmulatorTest {
 protected:
  void SetUp() override {
    SharedEmulatorTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    create_queue({{"VisibilityTimeout", "2"}});
    raw().create(dlq());
  }
  static std::string url(std::string_view query = {}) { return emulator().url(query); }
  std::string publish(const std::vector<std::string>& extra = {}) {
    return cli::test::publish_via_cli(url(), queue(), extra);
  }
  // The count `name` of `queue stats --json` (-1 when absent).
  long long stat(std::string_view name) {
    return cli::test::count_of(cli::test::stats_via_cli(url(), queue()), name);
  }
  std::string dead_lettered() { return cli::test::dead_lettered_via_cli(url(), queue(), dlq()); }
};

// publish sends one message with the SQS-6 attributes and the --header rider; queue stats
// counts it ready, as a table and as JSON, and reading the stats receives nothing.
TEST_F(SqsCliTest, PublishThenQueueStatsCountsItReady) {
  const std::string tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const std::string id = publish({"--header", "traceparent=" + tp});
  EXPECT_EQ(stat("ready"), 1);
  EXPECT_EQ(stat("in_flight"), 0);
  EXPECT_EQ(stat("dead_letter"), 0);
  const CliRun table = run_cli({"queue", "stats", "--url", url(), "--queue", queue()});
  EXPECT_EQ(table.exit_code, 0) << table;
  EXPECT_TRUE(std::regex_search(table.out, std::regex("\n  ready +1\n"))) << table;

  const JsonArray got = raw().receive(queue());
  ASSERT_EQ(got.size(), 1U);
  EXPECT_EQ(decode(got[0].find("Body")->as_string()).meta().id, id);
  EXPECT_EQ(string_attribute(got[0], "bq-message-id"), std::optional<std::string>(id));
  EXPECT_EQ(string_attribute(got[0], "traceparent"), std::optional<std::string>(tp));
  EXPECT_EQ(system_attribute(got[0], "ApproximateReceiveCount"), std::optional<std::string>("1"))
      << "queue stats received the message";
}

// work --drain --print consumes, prints and deletes.
TEST_F(SqsCliTest, WorkDrainPrintsAndDeletes) {
  const std::string id = publish();
  const CliRun r = run_cli({"work", "--url", url(), "--queue", queue(), "--drain", "--print"});
  ASSERT_EQ(r.exit_code, 0) << r;
  ASSERT_EQ(lines_of(r.out).size(), 1U) << r;
  EXPECT_EQ(decode(lines_of(r.out)[0]).meta().id, id);
  EXPECT_NE(r.err.find("1 handled, 0 failed"), std::string::npos) << r;
  EXPECT_TRUE(raw().empty(queue()));
  EXPECT_EQ(stat("ready"), 0);
}

// work --dead-letter retries in place and writes the record to `<q>-dlq` (SQS-14); dlq list
// shows it and leaves it there.
TEST_F(SqsCliTest, WorkDeadLettersToTheDashDlqAndDlqListLeavesItThere) {
  const std::string id = dead_lettered();
  EXPECT_TRUE(raw().empty(queue()));
  EXPECT_EQ(stat("ready"), 0);
  EXPECT_EQ(stat("dead_letter"), 1);

  const CliRun list = run_cli({"dlq", "list", "--url", url(), "--queue", queue()});
  ASSERT_EQ(list.exit_code, 0) << list;
  EXPECT_EQ(list.out, id + "\tfailed\t--exec command exited with status 3\n");

  const CliRun json = run_cli({"dlq", "list", "--url", url(), "--dlq", dlq(), "--json"});
  ASSERT_EQ(json.exit_code, 0) << json;
  ASSERT_EQ(lines_of(json.out).size(), 1U) << json;
  const Envelope record = decode(lines_of(json.out)[0]);
  ASSERT_TRUE(record.dead_letter().has_value());
  EXPECT_EQ(record.dead_letter()->original_queue, queue());
  EXPECT_TRUE(eventually([&] { return raw().visible(dlq()) == 1; })) << "dlq list consumed";
}

// dlq redrive re-publishes the record to its queue (attempts 0, no dead_letter block) and
// deletes it from the dead-letter queue.
TEST_F(SqsCliTest, DlqRedriveMovesTheRecordBack) {
  const std::string id = dead_lettered();
  const CliRun r = run_cli({"dlq", "redrive", "--url", url(), "--queue", queue()});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "redriven " + id + " " + kUrn + " " + dlq() + " -> " + queue() + "\n" +
                       "1 redriven, 0 kept in " + dlq() + "\n");
  EXPECT_TRUE(eventually([&] { return raw().empty(dlq()); })) << "the record stayed in the DLQ";
  const JsonArray back = raw().receive_at_least(queue(), 1);
  ASSERT_EQ(back.size(), 1U);
  const Envelope env = decode(back[0].find("Body")->as_string());
  EXPECT_EQ(env.meta().id, id);
  EXPECT_FALSE(env.dead_letter().has_value());
  EXPECT_EQ(env.attempts(), 0);
}

// A bad option in the URL is a usage error (exit 2) naming it, without the secret key.
TEST_F(SqsCliTest, ABadUrlOptionExitsTwoNamingItWithoutTheSecret) {
  for (const char* query : {"prefetch=0", "no_such_option=1"}) {
    SCOPED_TRACE(query);
    const std::string option = std::string(query).substr(0, std::string(query).find('='));
    const CliRun r = run_cli({"queue", "stats", "--url", url(query), "--queue", queue()});
    EXPECT_EQ(r.exit_code, 2) << r;
    EXPECT_NE(r.err.find(option), std::string::npos) << r;
    EXPECT_TRUE(no_secret_in(r));
  }
}

// SQS-5, SQS-17: a queue that does not exist is a configuration error naming the queue; neither
// the secret key nor a signature is printed.
TEST_F(SqsCliTest, AMissingQueueIsAnErrorNamingItWithoutTheSecret) {
  const std::string missing = queue() + "-missing";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"queue", "stats", "--url", url(), "--queue", missing},
        std::vector<std::string>{"publish", "--url", url(), "--queue", missing, kUrn, "{}"},
        std::vector<std::string>{"work", "--url", url(), "--queue", missing, "--drain",
                                 "--print"}}) {
    SCOPED_TRACE(args[0]);
    const CliRun r = run_cli(args);
    EXPECT_NE(r.exit_code, 0) << r;
    EXPECT_NE(r.err.find(missing), std::string::npos) << r;
    EXPECT_TRUE(no_secret_in(r));
  }
}

}  // namespace
}  // namespace babelqueue::sqs::test
