// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// KafkaTransport and the App under faults on a real broker, counting every meta.id whose publish
// returned ok (KFK-4: after its delivery report): a `babelqueue work` process killed with SIGKILL
// before it committed (its records are redelivered to the group's next member, KFK-6); a second
// member joining and leaving a group of four workers mid-run (two rebalances, KFK-11: none
// committed past an unhandled record, so nothing is lost); the broker killed with SIGKILL and
// restarted mid-run (publishing and consuming resume, KFK-19: transient errors). Duplicates are
// allowed (at least once); a lost id fails.

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>

#include <babelqueue/testing/fault_kit.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "shared_broker_test.hpp"

#ifdef BABELQUEUE_CLI
#include "cli_process.hpp"
#endif

namespace babelqueue::kafka::test {
namespace {

using babelqueue::testing::kWithin;
using namespace std::chrono_literals;

constexpr char kUrn[] = "urn:babel:orders:created";
// A broker restart (a few seconds) plus the clients' reconnect backoff, on a loaded machine.
constexpr auto kRecover = 90s;
// A dead member leaves the group after its session timeout (the broker's minimum is 6 s).
constexpr std::string_view kQuickGroup =
    "&consumer.session.timeout.ms=6000&consumer.heartbeat.interval.ms=500";

using Handled = babelqueue::testing::HandledIds;
using babelqueue::testing::describe_missing;

// The kit's publisher on a transport of its own, its waits bounded by kRecover.
class Producer : public babelqueue::testing::ContinuousPublisher {
 public:
  Producer(const std::string& url, std::string queue)
      : ContinuousPublisher(std::make_shared<KafkaTransport>(url), std::move(queue), kUrn) {}
  bool wait_for_more(std::size_t n) { return ContinuousPublisher::wait_for_more(n, kRecover); }
};

// App::consume on a thread of its own, recording every meta.id it handles, until stop().
class Worker {
 public:
  Worker(std::shared_ptr<KafkaTransport> transport, std::string queue, Handled& handled,
         int concurrency)
      : transport_(std::move(transport)),
        app_(transport_, {.poll_timeout = 200ms, .concurrency = concurrency}) {
    app_.handle(kUrn, [this, &handled](Context&, const Envelope& env) {
      handled.add(std::string(env.meta().id));
      ++count_;
      return Status();
    });
    thread_ = std::thread([this, q = std::move(queue)] { status_ = app_.consume(q); });
  }
  ~Worker() { (void)stop(); }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  [[nodiscard]] std::size_t count() const { return count_.load(); }
  // Stops consuming and closes the transport (leaving the group); the consume loop's status.
  Status stop() {
    if (thread_.joinable()) {
      app_.stop();
      thread_.join();
      transport_->close();
    }
    return status_;
  }

 private:
  std::shared_ptr<KafkaTransport> transport_;
  App app_;
  std::atomic<std::size_t> count_{0};
  Status status_;
  std::thread thread_;
};

class KafkaFaultTest : public SharedBrokerTest {
 protected:
  // Every partition of `topic` committed up to its end.
  void expect_committed_to_the_end(const std::string& topic, int partitions) {
    for (int p = 0; p < partitions; ++p) {
      SCOPED_TRACE("partition " + std::to_string(p));
      const auto pid = static_cast<std::int32_t>(p);
      EXPECT_TRUE(eventually([&] {
        return raw().committed(group(), topic, pid) == raw().end_offset(topic, pid);
      })) << "committed "
          << raw().committed(group(), topic, pid) << ", end " << raw().end_offset(topic, pid);
    }
  }
};

// KFK-6 across processes: a `babelqueue work` process handles nine records, then its handler
// hangs on the tenth and the process is killed with SIGKILL before any commit of it; the next
// member of the group gets the held record and every record not committed, so every id is
// handled by one of the two.
TEST_F(KafkaFaultTest, KFK6_AWorkerKilledBeforeItsCommitHasItsRecordsRedelivered) {
#ifndef BABELQUEUE_CLI
  GTEST_SKIP() << "the babelqueue tool is not built (BABELQUEUE_BUILD_TOOLS=OFF)";
#else
  constexpr int kRecords = 40;
  const std::string worker_url = url(kQuickGroup);
  std::set<std::string> published;
  {
    KafkaTransport t(worker_url);
    std::vector<std::string> bodies;
    for (int i = 0; i < kRecords; ++i) {
      Envelope env = make(kUrn, Json::object({{"i", i}}));
      published.insert(std::string(env.meta().id));
      bodies.push_back(encode(env));
    }
    ASSERT_TRUE(t.publish_batch(queue(), std::move(bodies)).ok());
  }
  const std::string mark = ::testing::TempDir() + "kafka-fault-" + queue();
  // Each body becomes one line of `mark`; the tenth handler never returns.
  const std::string exec = "cat >> '" + mark + "'; echo >> '" + mark + "'; [ $(wc -l < '" + mark +
                           "') -lt 10 ] || exec sleep 600";
  cli::test::CliProcess worker({"work", "--url", worker_url, "--queue", queue(), "--exec", exec},
                               true);
  const auto lines = [&] { return cli::test::lines_of(cli::test::read_file(mark)); };
  ASSERT_TRUE(eventually([&] { return lines().size() >= 10; }))
      << "the worker never reached its tenth record; its stderr:\n"
      << worker.err();
  worker.kill_group();
  const std::vector<std::string> killed = lines();
  ASSERT_EQ(killed.size(), 10U);
  const std::string held = std::string(decode(killed.back()).meta().id);
  EXPECT_LE(raw().committed(group(), queue(), 0), 9) << "committed the held record";

  Handled handled;
  for (const std::string& body : killed) {
    handled.add(std::string(decode(body).meta().id));
  }
  Handled next;
  {
    Worker w(transport(kQuickGroup), queue(), next, 1);
    EXPECT_TRUE(eventually([&] { return next.contains(held); }, kRecover))
        << "the held record was not redelivered";
    EXPECT_TRUE(
        eventually([&] { return raw().committed(group(), queue(), 0) == kRecords; }, kRecover));
    EXPECT_TRUE(w.stop().ok());
  }
  for (const std::string& id : published) {
    if (next.contains(id)) handled.add(id);
  }
  const auto missing = handled.missing(published);
  EXPECT_TRUE(missing.empty()) << describe_missing(missing);
  std::remove(mark.c_str());
#endif
}

// KFK-11 under rebalances: four workers consume a four-partition topic while a producer keeps
// publishing; a second member joins (the partitions are split) and leaves (they move back).
// Every published id is handled and every partition ends committed to its end: nothing was
// committed past a record no handler finished.
TEST_F(KafkaFaultTest, KFK11_AMemberJoiningAndLeavingMidRunLosesNothing) {
  constexpr int kPartitions = 4;
  const std::string extra = std::string(kQuickGroup) + "&commit_batch=10";
  Producer producer(url(extra, kPartitions), queue());
  Handled handled;
  Worker first(transport(extra, kPartitions), queue(), handled, 4);
  ASSERT_TRUE(eventually([&] { return handled.distinct() >= 50; }, kRecover))
      << handled.distinct() << " handled, " << producer.confirmed() << " published";
  {
    Worker second(transport(extra, kPartitions), queue(), handled, 1);
    EXPECT_TRUE(eventually([&] { return second.count() >= 20; }, kRecover))
        << "the second member never got a partition";
    EXPECT_TRUE(second.stop().ok());
  }
  const std::size_t before = first.count();
  EXPECT_TRUE(eventually([&] { return first.count() >= before + 50; }, kRecover))
      << "the first member did not take the partitions back";
  const std::set<std::string> published = producer.stop();
  EXPECT_TRUE(eventually([&] { return handled.missing(published).empty(); }, kRecover))
      << describe_missing(handled.missing(published));
  expect_committed_to_the_end(queue(), kPartitions);
  EXPECT_TRUE(first.stop().ok());
}

// KFK-19: a broker killed with SIGKILL and restarted mid-run: publishes fail or wait while it is
// down and resume after; the consumer rejoins and every published id is handled.
TEST_F(KafkaFaultTest, KFK19_BrokerKilledAndRestartedMidRunLosesNothing) {
  KafkaServer own;
  const std::string own_url = own.url("group_id=" + group() + "&partitions=1&publish_timeout=5000" +
                                      std::string(kQuickGroup));
  Producer producer(own_url, queue());
  Handled handled;
  Worker worker(std::make_shared<KafkaTransport>(own_url), queue(), handled, 2);
  ASSERT_TRUE(eventually([&] { return handled.distinct() >= 30; }, kRecover))
      << handled.distinct() << " handled; broker log:\n"
      << own.log_tail();
  own.kill();
  own.restart();
  EXPECT_TRUE(producer.wait_for_more(30)) << "publishing did not resume; broker log:\n"
                                          << own.log_tail();
  const std::set<std::string> published = producer.stop();
  EXPECT_TRUE(eventually([&] { return handled.missing(published).empty(); }, kRecover))
      << describe_missing(handled.missing(published)) << "; broker log:\n"
      << own.log_tail();
  EXPECT_TRUE(worker.stop().ok());
}

}  // namespace
}  // namespace babelqueue::kafka::test
