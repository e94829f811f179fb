// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Nothing is lost (TRANSPORTS.md; ART-11, ASB-14): on a broker of its own, killed with SIGKILL
// and restarted while a publisher keeps publishing and a worker keeps consuming, every meta.id
// whose publish returned ok (the broker's settled `accepted`, D-9) reaches a handler at least
// once: durable messages survive the crash, the layer reconnects and re-opens its links, and a
// delivery of the dead connection is never settled on the new one (the broker redelivers it).
// A backlog published (pipelined batch) before the crash and consumed only after it is complete.

#include <babelqueue/artemis/transport.hpp>
#include <babelqueue/testing/fault_kit.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <iostream>
#include <memory>
#include <set>
#include <string>

#include "shared_broker_test.hpp"

namespace babelqueue::artemis::test {
namespace {

using namespace std::chrono_literals;
using babelqueue::testing::ConsumingWorker;
using babelqueue::testing::describe_missing;
using babelqueue::testing::HandledIds;

constexpr char kUrn[] = "urn:babel:orders:created";
// A broker restart (a few seconds) plus the reconnect backoff, on a loaded machine.
constexpr auto kRecover = 90s;

TEST(ArtemisFault, ART11_ABrokerKilledAndRestartedMidRunLosesNoMessage) {
  BABELQUEUE_REQUIRE_ARTEMIS();
  ArtemisServer server;
  // Sends in flight when the broker dies fail after `timeout` at the latest (outcome unknown:
  // the publisher does not count them).
  const std::string url = url_of(server, "timeout=5000");
  babelqueue::testing::expect_broker_restart_loses_nothing(
      server, [&url] { return std::make_shared<ArtemisTransport>(url); }, kUrn, kRecover);
}

// ART-11: the broker closes every client connection (its management operation
// closeConnectionsForAddress of 127.0.0.1) three times while a publisher and a two-worker
// consumer run on the shared broker: both reconnect, the settles of the dead connections are
// dropped (the broker redelivers those messages), and every meta.id whose publish returned ok is
// handled; the queue ends empty.
// How many connections the broker's log says management closed (AMQ229005).
std::size_t closed_by_management(const ArtemisServer& server) {
  const std::string log = server.log_tail(100'000);
  std::size_t n = 0;
  for (std::size_t at = log.find("AMQ229005"); at != std::string::npos;
       at = log.find("AMQ229005", at + 1))
    ++n;
  return n;
}

TEST(ArtemisFault, ART11_ConnectionsClosedByTheBrokerUnderLoadLoseNothing) {
  BABELQUEUE_REQUIRE_ARTEMIS();
  ArtemisServer& server = amqp10::test::shared_artemis_server();
  const std::string url = url_of(server, "timeout=5000");
  const std::string queue = babelqueue::testing::unique_queue_name();
  const RawAmqp10 raw = raw_of(server);
  HandledIds handled;
  babelqueue::testing::ContinuousPublisher publisher(std::make_shared<ArtemisTransport>(url), queue,
                                                     kUrn);
  ConsumingWorker worker(std::make_shared<ArtemisTransport>(url), queue, kUrn, handled);
  ASSERT_TRUE(publisher.wait_for_more(50, kRecover)) << server.log_tail();
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::size_t before = handled.distinct();
    const std::size_t cuts = closed_by_management(server);
    // Closes this request's own connection too: its end counts as done.
    (void)raw.management("broker", "closeConnectionsForAddress", R"(["127.0.0.1"])", true);
    // The broker logs each connection it closed (ours among them).
    ASSERT_TRUE(babelqueue::testing::eventually(
        [&] { return closed_by_management(server) >= cuts + 2; }, kRecover))
        << server.log_tail();
    // Both clients reconnect and work on before the next cut.
    ASSERT_TRUE(publisher.wait_for_more(50, kRecover)) << server.log_tail();
    ASSERT_TRUE(
        babelqueue::testing::eventually([&] { return handled.distinct() > before; }, kRecover));
  }
  const std::set<std::string> published = publisher.stop();
  const bool all =
      babelqueue::testing::eventually([&] { return handled.missing(published).empty(); }, kRecover);
  EXPECT_TRUE(all) << describe_missing(handled.missing(published));
  EXPECT_TRUE(worker.stop().ok());
  EXPECT_TRUE(publisher.permanent_failures().empty())
      << "a publish failed for good: " << publisher.permanent_failures().front();
  // Nothing stays behind: every redelivered message was settled on a live connection.
  EXPECT_TRUE(
      babelqueue::testing::eventually([&] { return raw.message_count(queue) == 0; }, kRecover));
  std::cout << "[ figure ] " << published.size() << " ids published, " << publisher.failures()
            << " publishes failed at the cuts, " << handled.distinct() << " distinct ids handled\n";
}

}  // namespace
}  // namespace babelqueue::artemis::test
