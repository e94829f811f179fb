// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The queue commands of the `babelqueue` binary over kafka:// (issue 10: publish, work,
// queue stats, dlq list, dlq redrive), run as a child process against the shared broker; every
// test uses a fresh topic and consumer group, and RawKafka checks the records and offsets.

#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "cli_process.hpp"
#include "shared_broker_test.hpp"

namespace babelqueue::kafka::test {
namespace {

using cli::test::CliRun;
using cli::test::lines_of;
using cli::test::run_cli;

class KafkaCliTest : public SharedBrokerTest {
 protected:
  std::string publish(const std::vector<std::string>& extra = {}) {
    return cli::test::publish_via_cli(url(), queue(), extra);
  }
  // The count `name` of `queue stats --json` (-1 when absent).
  long long stat(std::string_view name) {
    return cli::test::count_of(cli::test::stats_via_cli(url(), queue()), name);
  }
};

// publish writes one record (null key, the bq-* headers); queue stats counts it ready (the
// group's lag) and reading the stats commits nothing.
TEST_F(KafkaCliTest, PublishThenQueueStatsCountsItReady) {
  const std::string id = publish({"--header",
                                  "traceparent=00-4bf92f3577b34da6a3ce929d0e0e4736-"
                                  "00f067aa0ba902b7-01"});
  const auto got = records(queue(), 1);
  ASSERT_EQ(got.size(), 1U);
  EXPECT_EQ(decode(got[0].value).meta().id, id);
  EXPECT_EQ(got[0].key, std::nullopt);
  EXPECT_EQ(raw_header(got[0], "bq-message-id"), std::optional<std::string>(id));
  EXPECT_TRUE(raw_header(got[0], "traceparent").has_value());
  EXPECT_EQ(stat("ready"), 1);
  EXPECT_EQ(stat("dead_letter"), 0);

  const CliRun table = run_cli({"queue", "stats", "--url", url(), "--queue", queue()});
  EXPECT_EQ(table.exit_code, 0) << table;
  EXPECT_TRUE(std::regex_search(table.out, std::regex("\n  ready +1\n"))) << table;
  EXPECT_EQ(raw().committed(group(), queue(), 0), -1) << "queue stats committed";
}

// work --drain --print consumes and commits what it printed.
TEST_F(KafkaCliTest, WorkDrainPrintsAndCommits) {
  const std::string id = publish();
  const CliRun r = run_cli({"work", "--url", url(), "--queue", queue(), "--drain", "--print"});
  ASSERT_EQ(r.exit_code, 0) << r;
  ASSERT_EQ(lines_of(r.out).size(), 1U) << r;
  EXPECT_EQ(decode(lines_of(r.out)[0]).meta().id, id);
  EXPECT_NE(r.err.find("1 handled, 0 failed"), std::string::npos) << r;
  EXPECT_EQ(raw().committed(group(), queue(), 0), 1);
  EXPECT_EQ(stat("ready"), 0);
}

// work --dead-letter leaves the record on QUEUE.dlq (the retry went through the topic); dlq
// list shows it and consumes nothing.
TEST_F(KafkaCliTest, WorkDeadLettersAndDlqListLeavesItThere) {
  const std::string id = cli::test::dead_lettered_via_cli(url(), queue());
  EXPECT_EQ(stat("ready"), 0);
  EXPECT_EQ(stat("dead_letter"), 1);
  EXPECT_EQ(records(queue(), 2).size(), 2U) << "the original and its retry";

  cli::test::expect_dlq_lists_the_record(url(), queue(), id);
  EXPECT_EQ(raw().committed(group(), queue() + ".dlq", 0), -1) << "dlq list committed";
}

// dlq redrive re-publishes the record to its queue (attempts 0, no dead_letter block) and
// commits the dead-letter record.
TEST_F(KafkaCliTest, DlqRedriveMovesTheRecordBack) {
  const std::string id = cli::test::dead_lettered_via_cli(url(), queue());
  cli::test::redrive_one_via_cli(url(), queue(), id);
  EXPECT_EQ(raw().committed(group(), queue() + ".dlq", 0), 1);
  EXPECT_EQ(stat("ready"), 1);
  const auto back = records(queue(), 3);
  ASSERT_EQ(back.size(), 3U);
  cli::test::expect_redriven_copy(back[2].value, id);
}

// A bad option in the URL is a usage error (exit 2) naming it.
TEST_F(KafkaCliTest, ABadUrlOptionExitsTwoNamingIt) {
  const CliRun r = run_cli({"queue", "stats", "--url", url("&commit_batch=0"), "--queue", queue()});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_NE(r.err.find("commit_batch"), std::string::npos) << r;
}

}  // namespace
}  // namespace babelqueue::kafka::test
