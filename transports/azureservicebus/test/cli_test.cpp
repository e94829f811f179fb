// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The queue commands of the `babelqueue` binary over sb:// (publish, work with its --prefetch
// flag, dead-lettering, queue stats and dlq list through the $management peek), run as a child
// process against the shared scripted peer; every test uses a fresh entity.

#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_process.hpp"
#include "peer_test.hpp"

namespace babelqueue::azureservicebus::test {
namespace {

using babelqueue::testing::kWithin;
using babelqueue::testing::pop_message;
using cli::test::CliRun;
using cli::test::lines_of;
using cli::test::run_cli;

using ServiceBusCliTest = PeerTest;

TEST_F(ServiceBusCliTest, PublishWritesTheProjectedMessage) {
  const std::string id = cli::test::publish_via_cli(peer().url(), queue());
  auto t = transport();
  auto m = pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(decode(m->body).meta().id, id);
  EXPECT_EQ(m->headers.at("bq-schema-version"), "1");
  ASSERT_TRUE(t->ack(*m).ok());
}

TEST_F(ServiceBusCliTest, WorkDrainPrintsAndCompletes) {
  const std::string id = cli::test::publish_via_cli(peer().url(), queue());
  const CliRun r = run_cli(
      {"work", "--url", peer().url(), "--queue", queue(), "--drain", "--print", "--prefetch", "5"});
  ASSERT_EQ(r.exit_code, 0) << r;
  ASSERT_EQ(lines_of(r.out).size(), 1U) << r;
  EXPECT_EQ(decode(lines_of(r.out)[0]).meta().id, id);
  EXPECT_EQ(count_becomes(queue(), "active", 0), 0);
}

TEST_F(ServiceBusCliTest, DeadLettersAreListedAndCounted) {
  const std::string id = cli::test::publish_via_cli(peer().url(), queue());
  const CliRun r = run_cli({"work", "--url", peer().url(), "--queue", queue(), "--drain", "--exec",
                            "exit 3", "--max-attempts", "2", "--dead-letter"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const CliRun list = run_cli({"dlq", "list", "--url", peer().url(), "--queue", queue()});
  ASSERT_EQ(list.exit_code, 0) << list;
  EXPECT_NE(list.out.find(id), std::string::npos) << list;
  const CliRun stats = run_cli({"queue", "stats", "--url", peer().url(), "--queue", queue()});
  ASSERT_EQ(stats.exit_code, 0) << stats;
  EXPECT_NE(stats.out.find("$management peek"), std::string::npos) << stats;
  EXPECT_EQ(peer().count(default_dead_letter_name(queue()), "locked"), 0) << "list locked it";
}

TEST_F(ServiceBusCliTest, ABadUrlOptionExitsTwoNamingItNeverTheKey) {
  const CliRun r = run_cli({"publish", "--url", "sb://k:secret-key-9@127.0.0.1?tls=0&prefetch=-1",
                            "--queue", queue(), cli::test::kCliUrn, "{}"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_NE(r.err.find("prefetch"), std::string::npos) << r;
  EXPECT_EQ(r.err.find("secret-key-9"), std::string::npos) << r;
}

}  // namespace
}  // namespace babelqueue::azureservicebus::test
