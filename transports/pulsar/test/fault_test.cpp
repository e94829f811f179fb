// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// PulsarTransport and the App under faults on a real broker, counting every meta.id whose
// publish returned ok (after its SEND_RECEIPT, D-9): a `babelqueue work` process killed with
// SIGKILL while it holds a full window of flow permits (its unacknowledged messages go to the
// subscription's next consumer); the broker killed with SIGKILL and restarted mid-run
// (publishing and consuming resume through the client's reconnect, D-3). Duplicates are allowed
// (at least once); a lost id fails.

#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/testing/fault_kit.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "transport_test.hpp"

#ifdef BABELQUEUE_CLI
#include "cli_process.hpp"
#endif

namespace babelqueue::pulsar::test {
namespace {

using namespace std::chrono_literals;
using babelqueue::testing::describe_missing;
using babelqueue::testing::eventually;
using babelqueue::testing::HandledIds;

constexpr char kUrn[] = "urn:babel:orders:created";
// A broker restart (6-22 s here) plus the reconnect backoff, on a loaded machine.
constexpr auto kRecover = 120s;

// The kit's worker on a transport of its own (two handlers).
class Worker : public babelqueue::testing::ConsumingWorker {
 public:
  Worker(std::shared_ptr<PulsarTransport> transport, std::string queue, HandledIds& handled)
      : ConsumingWorker(std::move(transport), std::move(queue), kUrn, handled) {}
};

class PulsarFaultTest : public SharedBrokerTest {
 protected:
  void kill_a_worker_holding_its_window(std::uint32_t partitions);
};

// A `babelqueue work --prefetch 10` process handles two messages, then its handler hangs on the
// third while the client holds the rest of its permit window; it is killed with SIGKILL. The
// subscription's next consumer gets every message the dead one did not ack: each published id
// is handled by one of the two.
TEST_F(PulsarFaultTest, AWorkerKilledHoldingAFullPermitWindowLosesNothing) {
  kill_a_worker_holding_its_window(0);
}

// The same on a topic of 3 partitions: the worker holds a window on each (issue 13).
TEST_F(PulsarFaultTest, AWorkerKilledHoldingItsWindowsOnThreePartitionsLosesNothing) {
  kill_a_worker_holding_its_window(3);
}

void PulsarFaultTest::kill_a_worker_holding_its_window(std::uint32_t partitions) {
#ifndef BABELQUEUE_CLI
  static_cast<void>(partitions);
  GTEST_SKIP() << "the babelqueue tool is not built (BABELQUEUE_BUILD_TOOLS=OFF)";
#else
  if (partitions > 0) {
    ASSERT_EQ(admin_put(server(), "/admin/v2/persistent/public/default/" + queue() + "/partitions",
                        std::to_string(partitions)),
              204);
  }
  constexpr int kMessages = 50;
  std::set<std::string> published;
  {
    PulsarTransport t(url());
    std::vector<std::string> bodies;
    for (int i = 0; i < kMessages; ++i) {
      Envelope env = make(kUrn, Json::object({{"i", i}}));
      published.insert(std::string(env.meta().id));
      bodies.push_back(encode(env));
    }
    ASSERT_TRUE(t.publish_batch(queue(), std::move(bodies)).ok());
  }
  const std::string mark = ::testing::TempDir() + "pulsar-fault-" + queue();
  // Each body becomes one line of `mark`; the third handler never returns.
  const std::string exec = "cat >> '" + mark + "'; echo >> '" + mark + "'; [ $(wc -l < '" + mark +
                           "') -lt 3 ] || exec sleep 600";
  cli::test::CliProcess worker(
      {"work", "--url", url(), "--queue", queue(), "--prefetch", "10", "--exec", exec}, true);
  const auto lines = [&] { return cli::test::lines_of(cli::test::read_file(mark)); };
  ASSERT_TRUE(eventually([&] { return lines().size() >= 3; }, kRecover))
      << "the worker never reached its third message; its stderr:\n"
      << worker.err();
  worker.kill_group();
  const std::vector<std::string> killed = lines();
  ASSERT_EQ(killed.size(), 3U);
  const std::string held = std::string(decode(killed.back()).meta().id);

  HandledIds handled;
  for (const std::string& body : killed)
    handled.add(std::string(decode(body).meta().id));
  HandledIds next;
  {
    Worker w(transport(), queue(), next);
    EXPECT_TRUE(eventually([&] { return next.contains(held); }, kRecover))
        << "the held message was not redelivered";
    EXPECT_TRUE(eventually(
        [&] {
          for (const std::string& id : published)
            if (!handled.contains(id) && !next.contains(id)) return false;
          return true;
        },
        kRecover));
    EXPECT_TRUE(w.stop().ok());
  }
  for (const std::string& id : published) {
    if (next.contains(id)) handled.add(id);
  }
  const auto missing = handled.missing(published);
  EXPECT_TRUE(missing.empty()) << describe_missing(missing);
  EXPECT_TRUE(nothing_left(queue()));
  std::remove(mark.c_str());
#endif
}

// D-3: the broker killed with SIGKILL and restarted while a publisher keeps publishing and two
// workers keep consuming; publishing resumes and every id whose publish returned ok is handled.
// A backlog published (pipelined batch) before the crash and consumed only after it is complete.
TEST(PulsarBrokerFault, ABrokerKilledAndRestartedMidRunLosesNoMessage) {
  BABELQUEUE_REQUIRE_PULSAR();
  PulsarServer server;
  const std::string url = url_of(server, "timeout=5000");
  babelqueue::testing::expect_broker_restart_loses_nothing(
      server, [&url] { return std::make_shared<PulsarTransport>(url); }, kUrn, kRecover);
}

}  // namespace
}  // namespace babelqueue::pulsar::test
