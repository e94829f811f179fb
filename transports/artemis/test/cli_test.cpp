// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The queue commands of the `babelqueue` binary over artemis:// (issue 12: publish, work with
// its --prefetch flag, dead-lettering, queue stats, dlq list and dlq redrive through the
// Inspector), run as a child process against the shared broker; every test uses a fresh queue,
// and RawAmqp10 checks what the broker holds (its count through the management address on a
// connection of its own).

#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cli_process.hpp"
#include "shared_broker_test.hpp"

namespace babelqueue::artemis::test {
namespace {

using babelqueue::testing::kWithin;
using cli::test::CliRun;
using cli::test::count_of;
using cli::test::lines_of;
using cli::test::run_cli;
using cli::test::stats_via_cli;

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

// work --dead-letter retries through the queue, then writes QUEUE.dlq (the summary counts it
// through the Inspector).
TEST_F(ArtemisCliTest, WorkDeadLettersToTheDlq) {
  const std::string id = cli::test::dead_lettered_via_cli(url(), queue());
  EXPECT_EQ(count_becomes(queue(), 0), 0);
  const std::vector<RawMessage> dead = raw().receive(queue() + ".dlq", 1, kWithin);
  ASSERT_EQ(dead.size(), 1U);
  const Envelope record = decode(dead[0].body);
  EXPECT_EQ(record.meta().id, id);
  ASSERT_TRUE(record.dead_letter().has_value());
  EXPECT_EQ(record.dead_letter()->original_queue, queue());
}

// queue stats reads Artemis's counts through its management address: ready, in flight (a
// worker's prefetch), consumers, the dead-letter queue; reading them takes nothing.
TEST_F(ArtemisCliTest, QueueStatsCountsReadyAndDeadLetters) {
  const std::string id = cli::test::publish_via_cli(url(), queue());
  (void)cli::test::publish_via_cli(url(), queue());
  raw().send(queue() + ".dlq", RawMessage{.body = "dead"});
  const Json stats = stats_via_cli(url(), queue());
  EXPECT_EQ(count_of(stats, "ready"), 2) << stats.dump();
  EXPECT_EQ(count_of(stats, "in_flight"), 0) << stats.dump();
  EXPECT_EQ(count_of(stats, "consumers"), 0) << stats.dump();
  EXPECT_EQ(count_of(stats, "dead_letter"), 1) << stats.dump();

  const CliRun table = run_cli({"queue", "stats", "--url", url(), "--queue", queue()});
  EXPECT_EQ(table.exit_code, 0) << table;
  EXPECT_TRUE(std::regex_search(table.out, std::regex("\n  ready +2\n"))) << table;
  EXPECT_EQ(raw().message_count(queue()), 2);
  const std::vector<RawMessage> got = raw().receive(queue(), 2, kWithin);
  ASSERT_EQ(got.size(), 2U);
  EXPECT_EQ(decode(got[0].body).meta().id, id);
}

// A queue Artemis does not have counts as empty.
TEST_F(ArtemisCliTest, QueueStatsOfAnUnknownQueueIsZero) {
  const Json stats = stats_via_cli(url(), queue());
  EXPECT_EQ(count_of(stats, "ready"), 0) << stats.dump();
  EXPECT_EQ(count_of(stats, "dead_letter"), 0) << stats.dump();
}

// dlq list browses QUEUE.dlq (a copy-mode receiver): the record is printed and stays.
TEST_F(ArtemisCliTest, DlqListShowsTheRecordAndLeavesIt) {
  const std::string id = cli::test::dead_lettered_via_cli(url(), queue());
  cli::test::expect_dlq_lists_the_record(url(), queue(), id);
  // Listing took nothing: the broker still holds the record, undelivered.
  EXPECT_EQ(count_of(stats_via_cli(url(), queue()), "dead_letter"), 1);
  EXPECT_EQ(raw().message_count(queue() + ".dlq"), 1);
  const std::vector<RawMessage> dead = raw().receive(queue() + ".dlq", 1, kWithin);
  ASSERT_EQ(dead.size(), 1U);
  EXPECT_EQ(dead[0].delivery_count, 0U) << "the browse counted as a delivery";
}

// dlq redrive moves the record back to QUEUE as a fresh message.
TEST_F(ArtemisCliTest, DlqRedriveMovesTheRecordBack) {
  const std::string id = cli::test::dead_lettered_via_cli(url(), queue());
  cli::test::redrive_one_via_cli(url(), queue(), id);
  EXPECT_EQ(count_becomes(queue() + ".dlq", 0), 0);
  const std::vector<RawMessage> back = raw().receive(queue(), 1, kWithin);
  ASSERT_EQ(back.size(), 1U);
  cli::test::expect_redriven_copy(back[0].body, id);
}

// At-least-once across processes (ART-11): a `babelqueue work` process whose handler never
// returns holds its full credit window when it is killed with SIGKILL (prefetch 100: Artemis
// counts at least 100 deliveries in flight, 100 buffered plus the one in the handler when its
// credit came back before the window filled); the broker puts them back and a new consumer gets
// every published meta.id.
TEST_F(ArtemisCliTest, ART11_AWorkerKilledHoldingAFullCreditWindowLosesNothing) {
  constexpr long kMessages = 300;
  constexpr std::int64_t kPrefetch = 100;  // the transport's default
  const auto t = transport();
  std::set<std::string> published;
  {
    std::vector<std::string> bodies;
    for (long i = 0; i < kMessages; ++i) {
      Envelope env = make(cli::test::kCliUrn, Json::object({{"i", i}}), {.queue = queue()});
      published.insert(std::string(env.meta().id));
      bodies.push_back(encode(env));
    }
    ASSERT_TRUE(t->publish_batch(queue(), std::move(bodies)).ok());
  }
  const auto stats = [&] {
    auto s = t->stats(queue(), {});
    return s.has_value() ? *s : QueueStats{};
  };

  // `exec sleep` keeps the handler busy for good; the worker leads its own process group, so
  // the SIGKILL ends the shell too.
  cli::test::CliProcess worker(
      {"work", "--url", url(), "--queue", queue(), "--exec", "exec sleep 600"}, true);
  ASSERT_TRUE(babelqueue::testing::eventually(
      [&] { return stats().in_flight.value_or(0) >= kPrefetch; }, kWithin))
      << "the worker never held " << kPrefetch << " deliveries; its stderr:\n"
      << worker.err();
  worker.kill_group();
  ASSERT_TRUE(babelqueue::testing::eventually(
      [&] {
        const QueueStats s = stats();
        return s.in_flight == 0 && s.ready == kMessages;
      },
      kWithin))
      << "the broker did not take back the dead worker's deliveries";

  std::set<std::string> received;
  while (received.size() < published.size()) {
    const auto got = t->pop(queue(), kWithin);
    ASSERT_TRUE(got.has_value()) << got.error().what();
    ASSERT_TRUE(got->has_value()) << "nothing more within " << kWithin.count() << " ms; got "
                                  << received.size();
    received.insert(std::string(decode((*got)->body).meta().id));
    ASSERT_TRUE(t->ack(**got).ok());
  }
  EXPECT_EQ(received, published);
  EXPECT_TRUE(t->flush().ok());
  EXPECT_EQ(count_becomes(queue(), 0), 0);
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
