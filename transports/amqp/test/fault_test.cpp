// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// AmqpTransport and the App under faults on a real RabbitMQ node (spec/04-rabbitmq.md AMQP-3,
// AMQP-5, AMQP-8, AMQP-T9, AMQP-T10, AMQP-T13; README D-3): beam killed with SIGKILL and
// restarted mid-run, every connection closed by the broker under load, a channel exception
// beside normal work, a worker process killed while it holds a full prefetch window, and a
// handler that outlasts the heartbeat interval. The invariant: every meta.id whose publish
// returned ok (confirmed, D-9) reaches a handler at least once; duplicates are allowed.
//
// Waits poll under generous bounds and assert nothing about speed.

#include <babelqueue/amqp/transport.hpp>
#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/errors.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/testing/contract.hpp>

#include <babelqueue/testing/fault_kit.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "rabbit_server.hpp"
#include "raw_client.hpp"

#ifdef BABELQUEUE_CLI
#include "cli_process.hpp"
#endif

namespace bq = babelqueue;
namespace am = babelqueue::amqp;
using namespace std::chrono_literals;
using am::test::RabbitServer;
using am::test::RawClient;
using bq::testing::kWithin;
using bq::testing::unique_queue_name;
using Clock = std::chrono::steady_clock;

namespace {

constexpr char kUrn[] = "urn:babel:orders:created";
// A restart of the node (~4-8 s) plus the App's reconnect backoff (up to 5 s), on a loaded
// machine.
constexpr auto kRecover = 60s;

// The kit's eventually, with this file's default bound.
template <class Pred>
bool eventually(Pred&& done, Clock::duration within = kWithin) {
  return bq::testing::eventually(std::forward<Pred>(done), within);
}

using Seen = bq::testing::HandledIds;
using bq::testing::describe_missing;

// The kit's publisher on a transport of its own (or a given one), its waits bounded by kRecover.
class Producer : public bq::testing::ContinuousPublisher {
 public:
  Producer(std::shared_ptr<am::AmqpTransport> transport, std::string queue)
      : ContinuousPublisher(std::move(transport), std::move(queue), kUrn) {}
  Producer(const std::string& url, std::string queue)
      : Producer(std::make_shared<am::AmqpTransport>(url), std::move(queue)) {}
  bool wait_for_more(std::size_t n) { return ContinuousPublisher::wait_for_more(n, kRecover); }
};

// An App (default options) consuming `queue` in a thread of its own until stop(); every
// handler run is recorded in seen(), every transient pop error it rode out is counted.
class Consumer {
 public:
  Consumer(const std::string& url, const std::string& queue,
           std::function<void(const bq::Envelope&)> handler = {})
      : transport_(std::make_shared<am::AmqpTransport>(url)),
        app_(transport_, options()),
        handler_(std::move(handler)) {
    app_.handle(kUrn, [this](bq::Context&, const bq::Envelope& env) {
      seen_.add(std::string(env.meta().id));
      if (handler_) handler_(env);
      return bq::Status{};
    });
    thread_ = std::thread([this, queue] { status_ = app_.consume(queue); });
  }
  ~Consumer() { static_cast<void>(stop()); }
  Consumer(const Consumer&) = delete;
  Consumer& operator=(const Consumer&) = delete;

  [[nodiscard]] const Seen& seen() const { return seen_; }
  // The App's transport, for other calls beside the consumer's.
  [[nodiscard]] const std::shared_ptr<am::AmqpTransport>& transport() const { return transport_; }
  [[nodiscard]] int consume_errors() const { return consume_errors_.load(); }
  [[nodiscard]] int ack_errors() const { return ack_errors_.load(); }
  // Stops the App; what consume returned.
  bq::Status stop() {
    app_.stop();
    if (thread_.joinable()) thread_.join();
    return status_;
  }

 private:
  bq::AppOptions options() {
    bq::AppOptions o;
    o.on_consume_error = [this](const bq::Error&, std::chrono::milliseconds) { ++consume_errors_; };
    o.on_ack_error = [this](const bq::ReceivedMessage&, const bq::Error&) { ++ack_errors_; };
    return o;
  }

  std::atomic<int> consume_errors_{0};
  std::atomic<int> ack_errors_{0};
  std::shared_ptr<am::AmqpTransport> transport_;
  bq::App app_;
  std::function<void(const bq::Envelope&)> handler_;
  Seen seen_;
  bq::Status status_;
  std::thread thread_;
};

// The broker's counts for `queue` (rabbitmqctl list_queues), nullopt when it is not listed.
std::optional<am::test::QueueInfo> queue_info(const RabbitServer& server,
                                              const std::string& queue) {
  for (am::test::QueueInfo& q : server.list_queues()) {
    if (q.name == queue) return q;
  }
  return std::nullopt;
}

// The producer keeps publishing while the consumer works through the queue; `fault` runs in
// the middle (on the test's thread), then both go on until 200 more publishes were confirmed;
// every confirmed id must then be handled.
void expect_nothing_lost(RabbitServer& server,
                         const std::function<void(Producer&, Consumer&)>& fault) {
  const std::string queue = unique_queue_name();
  Consumer consumer(server.url(), queue);
  Producer producer(server.url(), queue);
  ASSERT_TRUE(producer.wait_for_more(200)) << "no confirmed publishes before the fault";
  ASSERT_TRUE(eventually([&] { return consumer.seen().distinct() > 0; }))
      << "nothing handled before the fault";

  fault(producer, consumer);

  ASSERT_TRUE(producer.wait_for_more(200))
      << "the producer did not recover: " << producer.failures() << " failed publishes";
  const std::set<std::string> confirmed = producer.stop();
  const bool all = eventually([&] { return consumer.seen().missing(confirmed).empty(); }, kRecover);
  EXPECT_TRUE(all) << describe_missing(consumer.seen().missing(confirmed));
  const bq::Status st = consumer.stop();
  EXPECT_TRUE(st.ok()) << "consume ended with an error: " << st.error().what();
  // The fault reached the consumer: it rode out at least one transient error (D-3) or saw its
  // deliveries go stale.
  EXPECT_GT(consumer.consume_errors() + consumer.ack_errors(), 0);
}

// AMQP-3, D-3: beam killed with SIGKILL and restarted on its data; the producer's failed
// publishes are not counted, every confirmed one survives (durable queue, persistent messages)
// and is handled after the App reconnected.
TEST(AmqpFaultTest, AMQP3_BrokerKilledAndRestartedMidRunLosesNoConfirmedMessage) {
  BABELQUEUE_REQUIRE_RABBITMQ();
  RabbitServer server;
  expect_nothing_lost(server, [&](Producer& producer, Consumer&) {
    // The queue's declaration on disk first: RabbitMQ 3.10 may roll back a declare made in the
    // last ~2 s before a crash, with its messages (see RabbitServer::kill); that window is the
    // broker's, not what this test is about.
    server.sync_mnesia();
    server.kill();
    server.start();
    EXPECT_GT(producer.failures(), 0U) << "no publish failed while the node was down";
  });
}

// AMQP-3, AMQP-T9: the broker closes every connection three times under load.
TEST(AmqpFaultTest, AMQP3_ConnectionsClosedByTheBrokerUnderLoadLoseNothing) {
  BABELQUEUE_REQUIRE_RABBITMQ();
  RabbitServer& server = am::test::shared_rabbit_server();
  expect_nothing_lost(server, [&](Producer& producer, Consumer& consumer) {
    for (int round = 0; round < 3; ++round) {
      const std::size_t handled = consumer.seen().distinct();
      server.close_all_connections("babelqueue fault test, round " + std::to_string(round));
      // Both clients reconnect and work on before the next close.
      ASSERT_TRUE(producer.wait_for_more(100)) << "round " << round;
      ASSERT_TRUE(eventually([&] { return consumer.seen().distinct() > handled; }, kRecover))
          << "round " << round;
    }
  });
}

void expect_406(const bq::Status& st, const char* what) {
  ASSERT_FALSE(st.ok()) << what;
  EXPECT_EQ(st.error().code(), bq::ErrorCode::Transport) << what;
  EXPECT_FALSE(st.error().is_transient()) << what << ": " << st.error().what();
  EXPECT_NE(std::string(st.error().what()).find("406"), std::string::npos)
      << what << ": " << st.error().what();
}

// AMQP-8, AMQP-T13: a declare that conflicts with the existing queue's arguments is a 406
// channel exception, not transient, on the publish channel and on the consume channel; an App
// consuming another queue through the same transport rides out the loss of its channel and
// goes on handling, and publishes to other queues go on working, each time.
TEST(AmqpFaultTest, AMQPT13_ChannelErrorLeavesOtherQueuesWorking) {
  BABELQUEUE_REQUIRE_RABBITMQ();
  const RabbitServer& server = am::test::shared_rabbit_server();
  const std::string bad = unique_queue_name();
  const std::string good = unique_queue_name();
  RawClient::Endpoint endpoint;
  endpoint.port = server.port();
  RawClient raw(endpoint);
  raw.declare(bad, true, {{"x-max-length", am::test::RawField::int64(10)}});
  Consumer consumer(server.url(), good);
  am::AmqpTransport& t = *consumer.transport();
  Producer producer(consumer.transport(), good);

  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ASSERT_TRUE(producer.wait_for_more(20));
    expect_406(t.publish(bad, bq::encode(bq::make(kUrn))), "publish to the bad queue");
    const auto popped = t.pop(bad, 0ms);
    expect_406(popped ? bq::Status{} : bq::Status(popped.error()), "pop of the bad queue");
  }
  ASSERT_TRUE(producer.wait_for_more(20));
  const std::set<std::string> confirmed = producer.stop();
  EXPECT_TRUE(eventually([&] { return consumer.seen().missing(confirmed).empty(); }))
      << describe_missing(consumer.seen().missing(confirmed));
  const bq::Status st = consumer.stop();
  EXPECT_TRUE(st.ok()) << "the consumer of the good queue ended: " << st.error().what();
  // The good queue's publishes may fail while their channel is replaced, transiently only.
  EXPECT_EQ(producer.permanent_failures(), std::vector<std::string>{});
  EXPECT_EQ(raw.message_count(good), std::optional<std::uint32_t>(0));
  EXPECT_EQ(raw.message_count(bad), std::optional<std::uint32_t>(0));
}

// AMQP-23, at-least-once across processes: a `babelqueue work` process whose handler never
// returns holds a full prefetch window (100 unacked deliveries) when it is killed with SIGKILL;
// the broker requeues them and a new consumer gets every published message.
TEST(AmqpFaultTest, AMQP23_WorkerKilledWithAFullPrefetchWindowLosesNothing) {
  BABELQUEUE_REQUIRE_RABBITMQ();
#ifndef BABELQUEUE_CLI
  GTEST_SKIP() << "the babelqueue tool is not built (BABELQUEUE_BUILD_TOOLS=OFF)";
#else
  RabbitServer& server = am::test::shared_rabbit_server();
  const std::string queue = unique_queue_name();
  constexpr long kMessages = 300;
  constexpr long kPrefetch = 100;  // the transport's default
  am::AmqpTransport t(server.url());
  std::set<std::string> published;
  {
    std::vector<std::string> bodies;
    for (long i = 0; i < kMessages; ++i) {
      bq::Envelope env = bq::make(kUrn, bq::Json::object({{"i", i}}));
      published.insert(std::string(env.meta().id));
      bodies.push_back(bq::encode(env));
    }
    ASSERT_TRUE(t.publish_batch(queue, std::move(bodies)).ok());
  }

  // `exec sleep` keeps the handler busy for good; the worker leads its own process group, so
  // the SIGKILL ends the shell too.
  bq::cli::test::CliProcess worker(
      {"work", "--url", server.url(), "--queue", queue, "--exec", "exec sleep 600"}, true);
  ASSERT_TRUE(eventually([&] {
    const auto q = queue_info(server, queue);
    return q && q->messages_unacknowledged == kPrefetch;
  })) << "the worker never held "
      << kPrefetch << " unacked deliveries; its stderr:\n"
      << worker.err();
  worker.kill_group();

  ASSERT_TRUE(eventually([&] {
    const auto q = queue_info(server, queue);
    return q && q->messages_unacknowledged == 0 && q->messages_ready == kMessages;
  })) << "the broker did not requeue the dead worker's deliveries";

  std::set<std::string> received;
  while (received.size() < static_cast<std::size_t>(kMessages)) {
    const auto got = t.pop(queue, kWithin);
    ASSERT_TRUE(got) << got.error().what();
    ASSERT_TRUE(got.value().has_value())
        << "nothing more within " << kWithin.count() << " ms; got " << received.size();
    received.insert(std::string(bq::decode(got.value()->body).meta().id));
    ASSERT_TRUE(t.ack(*got.value()).ok());
  }
  EXPECT_EQ(received, published);
  EXPECT_TRUE(t.flush().ok());
  EXPECT_TRUE(eventually([&] {
    const auto q = queue_info(server, queue);
    return q && q->messages_unacknowledged == 0 && q->messages_ready == 0;
  }));
#endif
}

// The broker side of our connection with a 1 s heartbeat: its client port ("peer_port"), or
// nullopt unless exactly one such connection is open.
std::optional<std::string> heartbeat_connection(const RabbitServer& server) {
  const auto listed =
      server.ctl({"list_connections", "-q", "--no-table-headers", "timeout", "peer_port"});
  if (listed.exit_code != 0) return std::nullopt;
  std::optional<std::string> port;
  std::istringstream in(listed.output);
  std::string timeout;
  std::string peer_port;
  int found = 0;
  while (in >> timeout >> peer_port) {
    if (timeout == "1") {
      ++found;
      port = peer_port;
    }
  }
  return found == 1 ? port : std::nullopt;
}

// AMQP-5, AMQP-T10: with a 1 s heartbeat, a handler that runs 3 s (3 intervals) keeps the
// connection, because the I/O thread services heartbeats meanwhile: its ack succeeds, the
// message is not redelivered, and the broker still has the same connection.
TEST(AmqpFaultTest, AMQPT10_HandlerOutlastingTheHeartbeatKeepsTheConnection) {
  BABELQUEUE_REQUIRE_RABBITMQ();
  RabbitServer& server = am::test::shared_rabbit_server();
  const std::string queue = unique_queue_name();
  std::atomic<bool> in_handler{false};
  Consumer consumer(server.url() + "?heartbeat=1", queue, [&](const bq::Envelope&) {
    in_handler = true;
    std::this_thread::sleep_for(3s);
  });
  std::optional<std::string> before;
  ASSERT_TRUE(eventually([&] { return (before = heartbeat_connection(server)).has_value(); }))
      << "no connection with a 1 s heartbeat";

  am::AmqpTransport producer(server.url());
  const bq::Envelope env = bq::make(kUrn);
  ASSERT_TRUE(producer.publish(queue, bq::encode(env)).ok());
  ASSERT_TRUE(eventually([&] { return in_handler.load(); }));
  ASSERT_TRUE(eventually([&] {
    const auto q = queue_info(server, queue);
    return q && q->messages_ready == 0 && q->messages_unacknowledged == 0;
  })) << "the message was not acked";

  EXPECT_EQ(heartbeat_connection(server), before) << "the connection was replaced";
  const bq::Status st = consumer.stop();
  EXPECT_TRUE(st.ok()) << st.error().what();
  EXPECT_EQ(consumer.seen().runs(std::string(env.meta().id)), 1);
  EXPECT_EQ(consumer.ack_errors(), 0);
  EXPECT_EQ(consumer.consume_errors(), 0);
}

}  // namespace
