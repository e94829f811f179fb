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

// dlq redrive on <queue>.dlq (an ordinary entity): the record goes back to QUEUE as a fresh
// message and is completed in the dead-letter entity.
TEST_F(ServiceBusCliTest, DlqRedriveMovesTheRecordBack) {
  const std::string id = cli::test::dead_lettered_via_cli(peer().url(), queue());
  cli::test::redrive_one_via_cli(peer().url(), queue(), id);
  const std::string dlq = default_dead_letter_name(queue());
  EXPECT_EQ(count_becomes(dlq, "active", 0), 0);
  EXPECT_EQ(peer().count(dlq, "locked"), 0);
  auto t = transport();
  auto m = pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(m.has_value());
  cli::test::expect_redriven_copy(m->body, id);
  ASSERT_TRUE(t->ack(*m).ok());
}

// dlq redrive on the native <queue>/$DeadLetterQueue (what hand_to_broker in dead_letter mode
// and MaxDeliveryCount fill; it takes no sends): an envelope is redriven to its meta.queue, a
// poison record is kept by abandoning it in place (not sent back, not completed).
TEST_F(ServiceBusCliTest, DlqRedriveOfTheNativeDeadLetterQueueKeepsWhatItCannotReplay) {
  auto t = transport("native_dead_letter=dead_letter");
  const Envelope env = make(cli::test::kCliUrn, Json::object({{"n", 1}}), {.queue = queue()});
  const std::string id(env.meta().id);
  ASSERT_TRUE(t->publish(queue(), encode(env)).ok());
  ASSERT_TRUE(t->publish(queue(), "not json").ok());
  for (int i = 0; i < 2; ++i) {
    auto m = pop_message(*t, queue(), kWithin);
    ASSERT_TRUE(m.has_value());
    ASSERT_TRUE(t->hand_to_broker(*m, "test").ok());
  }
  const std::string native = queue() + "/$DeadLetterQueue";
  ASSERT_EQ(count_becomes(native, "active", 2), 2);

  const CliRun r = run_cli({"dlq", "redrive", "--url", peer().url(), "--dlq", native});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "redriven " + id + " " + cli::test::kCliUrn + " " + native + " -> " + queue() +
                       "\nkept - (no dead_letter block) in " + native + "\n1 redriven, 1 kept in " +
                       native + "\n");
  EXPECT_EQ(r.err, "") << r;
  // The poison record is still there, unlocked, once (abandoned, not copied).
  EXPECT_EQ(count_becomes(native, "locked", 0), 0);
  EXPECT_EQ(peer().count(native, "active"), 1);
  const Json kept = stored(native);
  ASSERT_EQ(kept.size(), 1U) << kept.dump();
  const CliRun list = run_cli({"dlq", "list", "--url", peer().url(), "--dlq", native});
  ASSERT_EQ(list.exit_code, 0) << list;
  EXPECT_EQ(list.out.rfind("(undecodable record)\t", 0), 0U) << list;
  EXPECT_EQ(lines_of(list.out).size(), 1U) << list;
  // The envelope is back in the queue as a fresh message.
  auto m = pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(m.has_value());
  cli::test::expect_redriven_copy(m->body, id);
  ASSERT_TRUE(t->ack(*m).ok());
}

// A native dead-letter sub-queue is a queue for `queue stats` and `work` too: it has no
// `/$DeadLetterQueue` of its own to count.
TEST_F(ServiceBusCliTest, TheNativeDeadLetterQueueIsCountedAndWorked) {
  auto t = transport("native_dead_letter=dead_letter");
  const Envelope env = make(cli::test::kCliUrn, Json::object({{"n", 1}}), {.queue = queue()});
  ASSERT_TRUE(t->publish(queue(), encode(env)).ok());
  auto m = pop_message(*t, queue(), kWithin);
  ASSERT_TRUE(m.has_value());
  ASSERT_TRUE(t->hand_to_broker(*m, "test").ok());
  const std::string native = queue() + "/$DeadLetterQueue";
  ASSERT_EQ(count_becomes(native, "active", 1), 1);

  const CliRun stats = run_cli({"queue", "stats", "--url", peer().url(), "--queue", native});
  ASSERT_EQ(stats.exit_code, 0) << stats;
  EXPECT_EQ(stats.out.find("native dead-letter queue"), std::string::npos) << stats;
  const CliRun work =
      run_cli({"work", "--url", peer().url(), "--queue", native, "--drain", "--print"});
  ASSERT_EQ(work.exit_code, 0) << work;
  ASSERT_EQ(lines_of(work.out).size(), 1U) << work;
  EXPECT_EQ(decode(lines_of(work.out)[0]).meta().id, env.meta().id);
  EXPECT_EQ(count_becomes(native, "active", 0), 0);
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
