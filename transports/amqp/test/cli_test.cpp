// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The queue commands of the `babelqueue` binary over amqp:// (spec/04-rabbitmq.md AMQP-1,
// AMQP-10, AMQP-25, AMQP-26; issue 9), run as a child process against the node the tests share;
// every test uses fresh queues, and a raw rabbitmq-c client checks what the broker holds.

#include <babelqueue/amqp/transport.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/testing/contract.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "cli_process.hpp"
#include "rabbit_server.hpp"
#include "raw_client.hpp"

namespace bq = babelqueue;
namespace am = babelqueue::amqp;
using namespace std::chrono_literals;
using bq::cli::test::CliRun;
using bq::cli::test::lines_of;
using bq::cli::test::run_cli;
using bq::testing::kWithin;
using bq::testing::unique_queue_name;

namespace {

constexpr const char* kUrn = bq::cli::test::kCliUrn;

class AmqpCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BABELQUEUE_REQUIRE_RABBITMQ();
    am::test::RawClient::Endpoint endpoint;
    endpoint.port = server().port();
    raw_ = std::make_unique<am::test::RawClient>(endpoint);
  }

  static am::test::RabbitServer& server() { return am::test::shared_rabbit_server(); }
  static std::string url() { return server().url(); }
  am::test::RawClient& raw() { return *raw_; }

  static std::string publish(const std::string& queue, const std::vector<std::string>& extra = {}) {
    return bq::cli::test::publish_via_cli(url(), queue, extra);
  }
  // The count `name` of `queue stats --json` (-1 when absent).
  static long long stat(const std::string& queue, std::string_view name) {
    return bq::cli::test::count_of(bq::cli::test::stats_via_cli(url(), queue), name);
  }
  static std::string dead_lettered(const std::string& queue) {
    return bq::cli::test::dead_lettered_via_cli(url(), queue);
  }

 private:
  std::unique_ptr<am::test::RawClient> raw_;
};

TEST_F(AmqpCliTest, AMQP1_PublishThenQueueStatsCountsItReady) {
  const std::string queue = unique_queue_name();
  const std::string id = publish(queue);
  EXPECT_EQ(raw().message_count(queue), std::optional<std::uint32_t>(1));
  EXPECT_EQ(stat(queue, "ready"), 1);
  EXPECT_EQ(stat(queue, "dead_letter"), 0);

  const CliRun table = run_cli({"queue", "stats", "--url", url(), "--queue", queue});
  EXPECT_EQ(table.exit_code, 0) << table;
  EXPECT_TRUE(std::regex_search(table.out, std::regex("\n  ready +1\n"))) << table;
  // Reading the stats took nothing off the queue.
  const auto got = raw().get(queue);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(bq::decode(got->body).meta().id, id);
}

// publish --delay goes through the TTL holding queue QUEUE.delay.300 and reaches QUEUE no
// earlier than the delay.
TEST_F(AmqpCliTest, AMQP1_PublishWithDelayArrivesAfterTheDelay) {
  const std::string queue = unique_queue_name();
  am::AmqpTransport t(url());
  const auto start = std::chrono::steady_clock::now();
  const std::string id = publish(queue, {"--delay", "0.3"});
  const auto got = t.pop(queue, kWithin);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(got) << got.error().what();
  ASSERT_TRUE(got.value().has_value()) << "the delayed message never arrived";
  EXPECT_EQ(bq::decode(got.value()->body).meta().id, id);
  EXPECT_GE(elapsed, 300ms);
  EXPECT_TRUE(t.ack(*got.value()).ok());
  EXPECT_TRUE(t.flush().ok());
  EXPECT_EQ(raw().message_count(queue + ".delay.300"), std::optional<std::uint32_t>(0));
}

TEST_F(AmqpCliTest, AMQP26_WorkDeadLettersAFailingMessageAndDlqListLeavesItThere) {
  const std::string queue = unique_queue_name();
  const std::string id = dead_lettered(queue);
  EXPECT_EQ(stat(queue, "ready"), 0);
  EXPECT_EQ(stat(queue, "dead_letter"), 1);

  const CliRun list = run_cli({"dlq", "list", "--url", url(), "--queue", queue});
  ASSERT_EQ(list.exit_code, 0) << list;
  EXPECT_EQ(list.out, id + "\tfailed\t--exec command exited with status 3\n");

  const CliRun json = run_cli({"dlq", "list", "--url", url(), "--dlq", queue + ".dlq", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json;
  ASSERT_EQ(lines_of(json.out).size(), 1U) << json;
  const bq::Envelope record = bq::decode(lines_of(json.out)[0]);
  ASSERT_TRUE(record.dead_letter().has_value());
  EXPECT_EQ(record.dead_letter()->reason, "failed");
  EXPECT_EQ(record.dead_letter()->original_queue, queue);

  // Listing (a peek) takes nothing off the dead-letter queue.
  EXPECT_EQ(stat(queue, "dead_letter"), 1);
  EXPECT_EQ(raw().message_count(queue + ".dlq"), std::optional<std::uint32_t>(1));
}

TEST_F(AmqpCliTest, AMQP26_DlqRedriveMovesTheMessageBack) {
  const std::string queue = unique_queue_name();
  const std::string id = dead_lettered(queue);

  const CliRun r = run_cli({"dlq", "redrive", "--url", url(), "--queue", queue});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "redriven " + id + " " + kUrn + " " + queue + ".dlq -> " + queue + "\n" +
                       "1 redriven, 0 kept in " + queue + ".dlq\n");
  EXPECT_EQ(stat(queue, "ready"), 1);
  EXPECT_EQ(stat(queue, "dead_letter"), 0);
  const auto back = raw().get(queue);
  ASSERT_TRUE(back.has_value());
  const bq::Envelope env = bq::decode(back->body);
  EXPECT_EQ(env.meta().id, id);
  EXPECT_FALSE(env.dead_letter().has_value());
  EXPECT_EQ(env.attempts(), 0);
}

// The RabbitMQ flags join the URL's query: publish without confirms, consume by basic.get.
TEST_F(AmqpCliTest, AMQP18_ConsumeModeGetAndConfirmsFalseAreAccepted) {
  const std::string queue = unique_queue_name();
  const std::string id = publish(queue, {"--confirms", "false"});
  const CliRun r = run_cli(
      {"work", "--url", url(), "--queue", queue, "--drain", "--print", "--consume-mode", "get"});
  ASSERT_EQ(r.exit_code, 0) << r;
  ASSERT_EQ(lines_of(r.out).size(), 1U) << r;
  EXPECT_EQ(bq::decode(lines_of(r.out)[0]).meta().id, id);
  EXPECT_NE(r.err.find("1 handled, 0 failed"), std::string::npos) << r;
  EXPECT_EQ(raw().message_count(queue), std::optional<std::uint32_t>(0));
}

// A bad option value, in the URL or as a flag, is a usage error (exit 2) that names it.
TEST_F(AmqpCliTest, AMQP1_ABadOptionExitsTwoNamingIt) {
  const std::string queue = unique_queue_name();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"queue", "stats", "--url", url() + "?prefetch=0", "--queue",
                                 queue},
        std::vector<std::string>{"work", "--url", url(), "--prefetch", "0", "--queue", queue,
                                 "--drain", "--print"}}) {
    const CliRun r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << r;
    EXPECT_NE(r.err.find("prefetch"), std::string::npos) << r;
  }
}

// Refused credentials: a configuration error (exit 2) that names the user and never the
// password.
TEST_F(AmqpCliTest, AMQP1_ARefusedPasswordNamesTheUserNotThePassword) {
  const std::string secret = "Wr0ngSecret";
  const std::string bad =
      "amqp://guest:" + secret + "@127.0.0.1:" + std::to_string(server().port()) + "/";
  const CliRun r = run_cli({"publish", "--url", bad, "--queue", unique_queue_name(), kUrn});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_NE(r.err.find("\"guest\""), std::string::npos) << r;
  EXPECT_EQ(r.err.find(secret), std::string::npos) << r;
  EXPECT_EQ(r.out.find(secret), std::string::npos) << r;
}

}  // namespace
