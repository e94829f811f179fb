// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The queue commands of the `babelqueue` binary over redis://, run as a child process against the
// redis-server the tests share, emptied before each test; keys are inspected with a raw client,
// independent of the transport.
#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/json.hpp>

#include "raw_client.hpp"
#include "redis_server.hpp"
#include "server_test.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli_process.hpp"

namespace {

using babelqueue::Json;
using babelqueue::cli::test::CliProcess;
using babelqueue::cli::test::CliRun;
using babelqueue::cli::test::kCommandLimit;
using babelqueue::cli::test::lines_of;
using babelqueue::cli::test::run_cli;
using babelqueue::cli::test::TempFile;
using std::chrono::milliseconds;

constexpr const char* kUrn = babelqueue::cli::test::kCliUrn;

// Polls `condition` until it holds or `limit` passes; returns its last value.
template <class F>
bool eventually(F condition, milliseconds limit = milliseconds(30'000)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

// A port on 127.0.0.1 that nothing listens on: bound to get a free number, then released.
int unused_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw std::runtime_error("cannot find a free port");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Every command runs against an empty server; none needs a server of its own.
class RedisCliTest : public babelqueue::redis::test::SharedRedisServerTest {
 protected:
  [[nodiscard]] std::string url() const { return server().url(); }

  std::string publish(const std::string& queue, const std::vector<std::string>& extra = {},
                      const std::string& data = R"({"order_id":1042})") {
    return babelqueue::cli::test::publish_via_cli(url(), queue, extra, data);
  }
  Json stats(const std::string& queue, const std::vector<std::string>& extra = {}) {
    return babelqueue::cli::test::stats_via_cli(url(), queue, extra);
  }
  static long long count(const Json& stats, std::string_view name) {
    return babelqueue::cli::test::count_of(stats, name);
  }
  std::string dead_lettered(const std::string& queue) {
    return babelqueue::cli::test::dead_lettered_via_cli(url(), queue);
  }
};

TEST_F(RedisCliTest, PublishPrintsTheIdAndQueueStatsCountsItReady) {
  const std::string id = publish("orders");

  const std::vector<std::string> stored = raw().lrange("orders");
  ASSERT_EQ(stored.size(), 1U);
  const babelqueue::Envelope env = babelqueue::decode(stored[0]);
  EXPECT_EQ(env.meta().id, id);
  EXPECT_EQ(env.urn(), kUrn);
  EXPECT_EQ(env.meta().queue, "orders");
  EXPECT_EQ(env.data(), Json::object({{"order_id", 1042}}));

  // Through the Inspector capability: the default layout has no delayed set (null).
  const Json s = stats("orders");
  EXPECT_EQ(s.find("queue")->as_string(), "orders");
  EXPECT_EQ(s.find("dead_letter_queue")->as_string(), "orders.dlq");
  EXPECT_EQ(count(s, "ready"), 1);
  EXPECT_EQ(count(s, "in_flight"), 0);
  EXPECT_TRUE(s.find("delayed")->is_null()) << s.dump();
  EXPECT_EQ(count(s, "dead_letter"), 0);

  const CliRun table = run_cli({"queue", "stats", "--url", url(), "--queue", "orders"});
  EXPECT_EQ(table.exit_code, 0) << table;
  EXPECT_EQ(table.out.rfind("queue orders (dead-letter queue orders.dlq)\n", 0), 0U) << table;
  EXPECT_TRUE(std::regex_search(table.out, std::regex("\n  ready +1\n"))) << table;
  EXPECT_TRUE(std::regex_search(table.out, std::regex("\n  delayed +n/a\n"))) << table;
  EXPECT_TRUE(std::regex_search(table.out, std::regex("\n  dead-letter +0\n"))) << table;
}

TEST_F(RedisCliTest, PublishWithHeadersInTheDefaultLayoutStoresAFrame) {
  const std::string id =
      publish("orders", {"--header", "traceparent=00-abc-01", "--header", "tenant=acme"});

  const std::vector<std::string> stored = raw().lrange("orders");
  ASSERT_EQ(stored.size(), 1U);
  EXPECT_EQ(
      stored[0].rfind(
          R"({"__bq_frame":1,"headers":{"tenant":"acme","traceparent":"00-abc-01"},"body":")", 0),
      0U)
      << stored[0];
  const Json frame = Json::parse(stored[0]);
  EXPECT_EQ(babelqueue::decode(frame.find("body")->as_string()).meta().id, id);
}

TEST_F(RedisCliTest, LaravelPublishWithDelayIsCountedDelayed) {
  const std::vector<std::string> laravel = {"--layout", "laravel", "--prefix",
                                            "laravel_database_queues:"};
  std::vector<std::string> delayed = laravel;
  delayed.insert(delayed.end(), {"--delay", "60"});
  const std::string id = publish("orders", delayed);

  const auto members = raw().zrange_withscores("laravel_database_queues:orders:delayed");
  ASSERT_EQ(members.size(), 1U);
  EXPECT_EQ(babelqueue::decode(members[0].first).meta().id, id);
  EXPECT_FALSE(raw().exists("laravel_database_queues:orders"));

  const Json s = stats("orders", laravel);
  EXPECT_EQ(count(s, "delayed"), 1);
  EXPECT_EQ(count(s, "ready"), 0);
}

TEST_F(RedisCliTest, DelayInTheDefaultLayoutFailsWithDelayUnsupported) {
  const CliRun r = run_cli({"publish", "--url", url(), "--queue", "orders", "--delay", "5", kUrn});
  EXPECT_EQ(r.exit_code, 1) << r;
  EXPECT_NE(r.err.find("no delayed set"), std::string::npos) << r;
  EXPECT_TRUE(r.out.empty()) << r;
  EXPECT_EQ(raw().command({"DBSIZE"}).as_integer(), 0);
}

TEST_F(RedisCliTest, PublishRejectsBadArgumentsAsUsageErrors) {
  const std::vector<std::vector<std::string>> cases = {
      {"publish", "--url", url(), "--queue", "orders", kUrn, "[1]"},
      {"publish", "--url", url(), "--queue", "orders", kUrn, "{\"order_id\":"},
      {"publish", "--url", url(), "--queue", "orders", "--header", "=v", kUrn},
      {"publish", "--url", "memory://", "--queue", "orders", "--layout", "laravel", kUrn},
      {"publish", "--url", url(), "--queue", "orders", "--layout", "zigzag", kUrn},
      {"publish", "--url", url(), "--queue", "orders", " "},
      {"publish", "--url", url(), kUrn},
  };
  for (const auto& args : cases) {
    const CliRun r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << r;
    EXPECT_FALSE(r.err.empty()) << r;
  }
  const CliRun not_object = run_cli(cases[0]);
  EXPECT_NE(not_object.err.find("DATA_JSON must be a JSON object"), std::string::npos)
      << not_object;
  EXPECT_EQ(raw().command({"DBSIZE"}).as_integer(), 0);
}

TEST_F(RedisCliTest, WorkDrainPrintsEveryEnvelopeAndEmptiesTheQueue) {
  const std::string first = publish("orders");
  const std::string second = publish("orders", {}, R"({"order_id":7})");

  const CliRun r = run_cli({"work", "--url", url(), "--queue", "orders", "--drain", "--print"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 2U) << r;
  const babelqueue::Envelope a = babelqueue::decode(lines[0]);
  const babelqueue::Envelope b = babelqueue::decode(lines[1]);
  EXPECT_EQ(a.meta().id, first);
  EXPECT_EQ(b.meta().id, second);
  EXPECT_EQ(b.data(), Json::object({{"order_id", 7}}));
  EXPECT_EQ(lines[0], babelqueue::encode(a));  // the canonical encoding
  EXPECT_NE(r.err.find("2 handled, 0 failed, 0 dead-lettered"), std::string::npos) << r;
  EXPECT_NE(r.err.find("queue drained"), std::string::npos) << r;

  const Json s = stats("orders");
  EXPECT_EQ(count(s, "ready"), 0);
  EXPECT_EQ(count(s, "in_flight"), 0);
  EXPECT_EQ(raw().command({"DBSIZE"}).as_integer(), 0);
}

TEST_F(RedisCliTest, WorkExecGetsTheBodyOnStdin) {
  publish("orders");
  const std::string stored = raw().lrange("orders").at(0);
  TempFile seen;

  const CliRun r = run_cli({"work", "--url", url(), "--queue", "orders", "--drain", "--exec",
                            "cat > '" + seen.path() + "'"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(seen.contents(), stored);
  EXPECT_NE(r.err.find("1 handled, 0 failed"), std::string::npos) << r;
  EXPECT_EQ(raw().command({"DBSIZE"}).as_integer(), 0);
}

TEST_F(RedisCliTest, WorkExecFailureIsRetriedThenDeadLetteredAndDlqListShowsIt) {
  const std::string id = dead_lettered("orders");

  const Json s = stats("orders");
  EXPECT_EQ(count(s, "ready"), 0);
  EXPECT_EQ(count(s, "in_flight"), 0);
  EXPECT_EQ(count(s, "dead_letter"), 1);

  const CliRun list = run_cli({"dlq", "list", "--url", url(), "--queue", "orders"});
  ASSERT_EQ(list.exit_code, 0) << list;
  EXPECT_EQ(list.out, id + "\tfailed\t--exec command exited with status 3\n");

  const CliRun json = run_cli({"dlq", "list", "--url", url(), "--dlq", "orders.dlq", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json;
  ASSERT_EQ(lines_of(json.out).size(), 1U) << json;
  const babelqueue::Envelope record = babelqueue::decode(lines_of(json.out)[0]);
  ASSERT_TRUE(record.dead_letter().has_value());
  EXPECT_EQ(record.dead_letter()->reason, "failed");
  EXPECT_EQ(record.dead_letter()->attempts, 2);
  EXPECT_EQ(record.dead_letter()->original_queue, "orders");

  // Listing never takes anything off the dead-letter queue.
  EXPECT_EQ(raw().lrange("orders.dlq"), std::vector<std::string>{lines_of(json.out)[0]});
}

TEST_F(RedisCliTest, DlqListShowsPoisonRecords) {
  raw().command({"RPUSH", "orders", "not json at all"});
  const CliRun work = run_cli({"work", "--url", url(), "--queue", "orders", "--drain", "--print"});
  ASSERT_EQ(work.exit_code, 0) << work;
  EXPECT_TRUE(work.out.empty()) << work;

  const CliRun list = run_cli({"dlq", "list", "--url", url(), "--queue", "orders"});
  ASSERT_EQ(list.exit_code, 0) << list;
  EXPECT_EQ(list.out.rfind("(poison record)\tpoison\t", 0), 0U) << list;
  EXPECT_EQ(lines_of(list.out).size(), 1U) << list;
}

TEST_F(RedisCliTest, DlqRedriveMovesTheMessageBack) {
  const std::string id = dead_lettered("orders");

  const CliRun dry = run_cli({"dlq", "redrive", "--url", url(), "--queue", "orders", "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry;
  EXPECT_EQ(dry.out, "would redrive " + id + " " + kUrn +
                         " orders.dlq -> orders\ndry run: 0 redriven, 1 kept in orders.dlq\n");
  EXPECT_EQ(count(stats("orders"), "dead_letter"), 1);

  const CliRun r = run_cli({"dlq", "redrive", "--url", url(), "--queue", "orders"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "redriven " + id + " " + kUrn +
                       " orders.dlq -> orders\n1 redriven, 0 kept in orders.dlq\n");
  const Json s = stats("orders");
  EXPECT_EQ(count(s, "ready"), 1);
  EXPECT_EQ(count(s, "dead_letter"), 0);
  EXPECT_EQ(count(s, "in_flight"), 0);

  const babelqueue::Envelope back = babelqueue::decode(raw().lrange("orders").at(0));
  EXPECT_EQ(back.meta().id, id);
  EXPECT_FALSE(back.dead_letter().has_value());
  EXPECT_EQ(back.attempts(), 0);
}

TEST_F(RedisCliTest, WorkConsumesUntilSigtermThenExitsZero) {
  CliProcess worker({"work", "--url", url(), "--queue", "orders", "--print"});
  const std::string id = publish("orders");

  ASSERT_TRUE(eventually([&] { return worker.out().find('\n') != std::string::npos; }))
      << worker.err();
  ASSERT_EQ(::kill(worker.pid(), SIGTERM), 0);
  const std::optional<int> code = worker.wait(kCommandLimit);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0) << worker.err();
  EXPECT_EQ(babelqueue::decode(lines_of(worker.out()).at(0)).meta().id, id);
  EXPECT_NE(worker.err().find("1 handled, 0 failed, 0 dead-lettered to orders.dlq; stopped by "
                              "SIGTERM"),
            std::string::npos)
      << worker.err();
  EXPECT_EQ(raw().command({"DBSIZE"}).as_integer(), 0);
}

TEST_F(RedisCliTest, BenchTransportPrintsJsonAndLeavesNothingBehind) {
  const CliRun r = run_cli(
      {"bench", "transport", "--url", url(), "--messages", "2000", "--workers", "3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const Json out = Json::parse(r.out);
  EXPECT_EQ(out.size(), 12U) << r.out;
  EXPECT_EQ(out.find("transport")->as_string(), "redis");
  EXPECT_EQ(out.find("messages")->as_int64(), 2000);
  EXPECT_EQ(out.find("workers")->as_int64(), 3);
  EXPECT_EQ(out.find("cpu_work")->as_int64(), 0) << "no-op handler";
  for (const char* key : {"publish_msgs_per_s", "publish_batch_msgs_per_s", "consume_msgs_per_s",
                          "consume_workers_msgs_per_s"}) {
    const Json* v = out.find(key);
    ASSERT_NE(v, nullptr) << key;
    ASSERT_TRUE(v->as_int64().has_value()) << key;
    EXPECT_GT(*v->as_int64(), 0) << key;
  }
  // The consume rounds' CPU time and blocking waits per message (every thread of the process).
  for (const char* key : {"consume_cpu_ns_per_msg", "consume_workers_cpu_ns_per_msg"}) {
    const Json* v = out.find(key);
    ASSERT_NE(v, nullptr) << key;
    ASSERT_TRUE(v->is_number()) << key;
    EXPECT_GT(v->as_number().as_double(), 0) << key;
  }
  for (const char* key : {"consume_waits_per_msg", "consume_workers_waits_per_msg"}) {
    const Json* v = out.find(key);
    ASSERT_NE(v, nullptr) << key;
    ASSERT_TRUE(v->is_number()) << key;
    EXPECT_GE(v->as_number().as_double(), 0) << key;
  }
  EXPECT_EQ(raw().command({"DBSIZE"}).as_integer(), 0);
}

TEST_F(RedisCliTest, BenchTransportInTheLaravelLayoutLeavesNothingBehind) {
  // --layout joins the URL's own query options.
  const CliRun r = run_cli({"bench", "transport", "--url", url() + "?prefetch=4", "--layout",
                            "laravel", "--messages", "500"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(r.out.find("?prefetch=4&layout=laravel (redis), 500 messages"), std::string::npos) << r;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\n  consume, 4 workers +[0-9]+ msg/s\n"))) << r;
  EXPECT_EQ(raw().command({"DBSIZE"}).as_integer(), 0);
}

TEST_F(RedisCliTest, WorkExecSeesTheDeliveryHeadersAsEnvironmentVariables) {
  const std::string traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  publish("orders", {"--header", "traceparent=" + traceparent, "--header", "x-tenant.id=acme"});
  TempFile seen;
  // A header variable the worker inherits is not passed on; every other variable is.
  ASSERT_EQ(::setenv("BABELQUEUE_HEADER_STALE", "from the worker", 1), 0);
  ASSERT_EQ(::setenv("BABELQUEUE_CLI_TEST_KEPT", "kept", 1), 0);
  const CliRun r = run_cli(
      {"work", "--url", url(), "--queue", "orders", "--drain", "--exec",
       "printf '%s|%s|%s|%s' \"$BABELQUEUE_HEADER_TRACEPARENT\" \"$BABELQUEUE_HEADER_X_TENANT_ID\" "
       "\"${BABELQUEUE_HEADER_STALE-unset}\" \"$BABELQUEUE_CLI_TEST_KEPT\" > '" +
           seen.path() + "'"});
  ::unsetenv("BABELQUEUE_HEADER_STALE");
  ::unsetenv("BABELQUEUE_CLI_TEST_KEPT");
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(seen.contents(), traceparent + "|acme|unset|kept");
  EXPECT_NE(r.err.find("1 handled, 0 failed"), std::string::npos) << r;
}

TEST_F(RedisCliTest, WorkPrintHeadersPrintsTheHeadersBesideTheEnvelope) {
  const std::string id = publish("orders", {"--header", "traceparent=00-abc-01"});
  publish("orders");

  const CliRun r = run_cli(
      {"work", "--url", url(), "--queue", "orders", "--drain", "--print", "--print-headers"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 2U) << r;
  const Json first = Json::parse(lines[0]);
  const babelqueue::Envelope env = babelqueue::decode(first.find("envelope")->dump());
  EXPECT_EQ(env.meta().id, id);
  EXPECT_EQ(lines[0], R"({"headers":{"traceparent":"00-abc-01"},"envelope":)" +
                          babelqueue::encode(env) + "}");
  EXPECT_EQ(lines[1].rfind(R"({"headers":{},"envelope":{"job":")", 0), 0U) << lines[1];
}

TEST(RedisCliErrorsTest, AnUnparsableUrlIsAUsageError) {
  for (const char* url : {"http://127.0.0.1:6379", "redis://127.0.0.1:notaport"}) {
    const CliRun r = run_cli({"queue", "stats", "--url", url, "--queue", "orders"});
    EXPECT_EQ(r.exit_code, 2) << r;
    EXPECT_EQ(r.err.rfind("babelqueue: ", 0), 0U) << r;
  }
}

TEST(RedisCliErrorsTest, NothingListeningFailsFastWithExitOne) {
  const std::string url = "redis://127.0.0.1:" + std::to_string(unused_port());
  const std::vector<std::vector<std::string>> cases = {
      {"publish", "--url", url, "--queue", "orders", kUrn},
      {"queue", "stats", "--url", url, "--queue", "orders"},
      {"work", "--url", url, "--queue", "orders", "--print"},  // consume mode: no hang
      {"dlq", "list", "--url", url, "--queue", "orders"},
  };
  for (const auto& args : cases) {
    const CliRun r = run_cli(args);
    EXPECT_EQ(r.exit_code, 1) << r;
    EXPECT_NE(r.err.find("cannot connect"), std::string::npos) << r;
  }
}

TEST(RedisCliErrorsTest, AFlagOfAnotherTransportIsAUsageError) {
  const CliRun r =
      run_cli({"queue", "stats", "--url", "memory://", "--layout", "laravel", "--queue", "orders"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_NE(r.err.find("--layout is an option of the redis transport, not of memory"),
            std::string::npos)
      << r;
}

TEST(RedisCliErrorsTest, WorkNeedsExactlyOneHandler) {
  const CliRun none = run_cli({"work", "--url", "redis://127.0.0.1", "--queue", "orders"});
  EXPECT_EQ(none.exit_code, 2) << none;
  EXPECT_NE(none.err.find("--print or --exec"), std::string::npos) << none;
  const CliRun both = run_cli(
      {"work", "--url", "redis://127.0.0.1", "--queue", "orders", "--print", "--exec", "true"});
  EXPECT_EQ(both.exit_code, 2) << both;
}

TEST(RedisCliErrorsTest, EveryCommandHasHelp) {
  const std::vector<std::vector<std::string>> commands = {
      {"publish"},     {"work"},           {"queue", "stats"},
      {"dlq", "list"}, {"dlq", "redrive"}, {"bench", "transport"}};
  for (std::vector<std::string> args : commands) {
    args.emplace_back("--help");
    const CliRun r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_NE(r.out.find("--url"), std::string::npos) << r;
  }
}

}  // namespace
