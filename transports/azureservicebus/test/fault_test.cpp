// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Nothing is lost (TRANSPORTS.md; ASB-13): the peer cuts every connection (control `drop`)
// while a publisher keeps publishing and a worker keeps consuming: every meta.id whose publish
// returned ok reaches a handler; the transport reconnects, puts its tokens again and re-opens its
// links. A handler slower than the lock keeps it (renew-lock, not redelivered). The App end to
// end with dead-lettering: a failing handler's message ends in `<queue>.dlq`, poison with
// dead-lettering off goes to the native DLQ (ADR-0037).

#include <babelqueue/app.hpp>
#include <babelqueue/azureservicebus/transport.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/testing/fault_kit.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "peer_test.hpp"

namespace babelqueue::azureservicebus::test {
namespace {

using namespace std::chrono_literals;
using babelqueue::testing::describe_missing;
using babelqueue::testing::HandledIds;
using babelqueue::testing::kWithin;
using babelqueue::testing::pop_message;

constexpr char kUrn[] = "urn:babel:orders:created";
constexpr auto kRecover = 60s;

using Fault = PeerTest;

TEST_F(Fault, ASB13_TheConnectionCutMidRunLosesNoMessage) {
  const std::string url = peer().url("timeout=5000");
  HandledIds handled;
  babelqueue::testing::ContinuousPublisher publisher(std::make_shared<ServiceBusTransport>(url),
                                                     queue(), kUrn);
  babelqueue::testing::ConsumingWorker worker(std::make_shared<ServiceBusTransport>(url), queue(),
                                              kUrn, handled);
  ASSERT_TRUE(publisher.wait_for_more(50, kRecover));
  ASSERT_TRUE(babelqueue::testing::eventually([&] { return handled.distinct() >= 20; }, kRecover));
  for (int cut = 0; cut < 3; ++cut) {
    const Json dropped = peer().control("drop");
    EXPECT_GE(dropped.find("dropped")->as_int64().value_or(0), 2) << "publisher and worker";
    ASSERT_TRUE(publisher.wait_for_more(50, kRecover)) << "publishing did not resume";
  }
  const std::set<std::string> published = publisher.stop();
  const bool all =
      babelqueue::testing::eventually([&] { return handled.missing(published).empty(); }, kRecover);
  EXPECT_TRUE(all) << describe_missing(handled.missing(published));
  EXPECT_TRUE(worker.stop().ok());
  EXPECT_TRUE(publisher.permanent_failures().empty());
  std::cout << "[ figure ] " << published.size() << " ids published, " << publisher.failures()
            << " publishes failed across 3 cuts, " << handled.distinct()
            << " distinct ids handled\n";
}

// Beyond ASB-5: the lock of a message whose handler outlives it is renewed (com.microsoft:
// renew-lock on $management), so the peer never expires it and never redelivers it.
TEST(ServiceBusLocks, AHandlerSlowerThanTheLockKeepsIt) {
  BABELQUEUE_REQUIRE_SERVICEBUS_PEER();
  ServiceBusPeer peer({"--lock-duration-ms", "1000"});
  const std::string queue = babelqueue::testing::unique_queue_name();
  auto t = std::make_shared<ServiceBusTransport>(peer.url());
  ASSERT_TRUE(t->publish(queue, "slow").ok());
  auto m = pop_message(*t, queue, kWithin);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->delivery_count, 1);
  // Three lock durations; the lock expiring would return it to the queue (active 1).
  const auto until = std::chrono::steady_clock::now() + 3500ms;
  while (std::chrono::steady_clock::now() < until) {
    ASSERT_EQ(peer.count(queue, "locked"), 1) << "the lock expired";
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(t->ack(*m).ok());
  EXPECT_TRUE(babelqueue::testing::eventually(
      [&] { return peer.count(queue, "locked") == 0 && peer.count(queue, "active") == 0; },
      kWithin));
  t->close();  // its receiver's credit would take the redelivery below

  // Without renewal the lock expires and the message comes back with DeliveryCount 2.
  auto plain = std::make_shared<ServiceBusTransport>(peer.url("lock_renewal=0"));
  ASSERT_TRUE(plain->publish(queue, "slow").ok());
  auto first = pop_message(*plain, queue, kWithin);
  ASSERT_TRUE(first.has_value());
  auto again = pop_message(*plain, queue, kWithin);
  ASSERT_TRUE(again.has_value()) << "the lock did not expire";
  EXPECT_EQ(again->delivery_count, 2);
  ASSERT_TRUE(plain->ack(*again).ok());
}

// The App end to end: a handler that keeps failing ends in <queue>.dlq (OB-7, ASB-11) after its
// attempts (retries republish); poison with dead-lettering off is handed to the broker (native
// dead-letter, ADR-0037, ASB-10); a good message is handled once. With no prefetch (ASB-5, the
// default) and with the prefetch option.
class AppEndToEnd : public PeerTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(AppEndToEnd, WithDeadLetters) {
  auto t = transport(std::string("native_dead_letter=dead_letter&prefetch=") + GetParam());
  App producer(t);
  const std::string good = producer.publish(kUrn, Json::object({{"ok", true}}), {.queue = queue()});
  const std::string bad =
      producer.publish("urn:babel:orders:failing", Json::object(), {.queue = queue()});
  HandledIds handled;
  {
    App app(t, {.max_attempts = 2, .dead_letter = true, .poll_timeout = 200ms});
    app.handle(kUrn, [&handled](Context&, const Envelope& env) {
      handled.add(std::string(env.meta().id));
      return Status();
    });
    app.handle("urn:babel:orders:failing", [](Context&, const Envelope&) {
      return Status(TransportError("handler failed", false));
    });
    const auto report = app.drain(queue(), 10);
    EXPECT_TRUE(report.status.ok()) << report.status.error().what();
  }
  EXPECT_EQ(handled.runs(good), 1);
  const std::string dlq = default_dead_letter_name(queue());
  auto dead = pop_message(*t, dlq, kWithin);
  ASSERT_TRUE(dead.has_value());
  const Envelope record = decode(dead->body);
  EXPECT_EQ(record.meta().id, bad);
  ASSERT_TRUE(record.dead_letter().has_value());
  EXPECT_EQ(record.dead_letter()->original_queue, queue());
  ASSERT_TRUE(t->ack(*dead).ok());

  // Poison with dead-lettering off: the native dead-letter queue.
  ASSERT_TRUE(t->publish(queue(), "not an envelope").ok());
  {
    App app(t, {.dead_letter = false, .poll_timeout = 200ms});
    EXPECT_TRUE(app.drain(queue(), 1).status.ok());
  }
  EXPECT_EQ(count_becomes(queue(), "dead_lettered", 1), 1);
  EXPECT_EQ(peer().count(queue(), "active"), 0);
}

INSTANTIATE_TEST_SUITE_P(Prefetch, AppEndToEnd, ::testing::Values("0", "10"));

}  // namespace
}  // namespace babelqueue::azureservicebus::test
