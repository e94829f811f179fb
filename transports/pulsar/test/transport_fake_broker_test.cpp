// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// PulsarTransport and the App on the scripted fake broker (testing/peers/pulsar): what the
// client's tests (fake_broker_test.cpp) show for the client, through the transport. Batches as
// the Java and Go clients write them, in each compression, arrive through `pop` as their
// envelopes with their properties and are acked to an empty backlog; the connections dropped
// three times mid-run (a network cut, no CLOSE) under a publisher and two workers lose no meta.id
// and leave nothing unacked (D-3).

#include <babelqueue/app.hpp>
#include <babelqueue/binding/pulsar.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/pulsar/transport.hpp>
#include <babelqueue/testing/command.hpp>
#include <babelqueue/testing/contract.hpp>
#include <babelqueue/testing/fault_kit.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "fake_broker.hpp"

namespace babelqueue::pulsar::test {
namespace {

using namespace std::chrono_literals;
using babelqueue::testing::describe_missing;
using babelqueue::testing::eventually;
using babelqueue::testing::HandledIds;
using babelqueue::testing::kWithin;
using babelqueue::testing::pop_message;
using Properties = std::map<std::string, std::string>;

constexpr char kUrn[] = "urn:babel:orders:created";

// The fake's stats field `field` of the transport's subscription ("babelqueue") of `queue`.
std::int64_t subscription_stat(const FakeBroker& fake, const std::string& queue,
                               std::string_view field) {
  return FakeBroker::number(fake.control("stats " + queue + " babelqueue"),
                            {"subscriptions", "babelqueue", field});
}

// ---- batches of other clients ----

// compression, writer ("java" or "go")
class PulsarTransportOnFakeBrokerBatch
    : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(PulsarTransportOnFakeBrokerBatch, ArrivesAsItsEnvelopesWithTheirProperties) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const auto& [compression, writer] = GetParam();
  const FakeBroker fake;
  const std::string queue = "batch-" + compression + "-" + writer;
  PulsarTransport t(fake.url());
  // The subscription first (the fake starts a new one at the latest message, as Pulsar does).
  ASSERT_TRUE(t.pop(queue, 1ms).has_value());
  std::map<std::string, std::string> sent;  // meta.id -> body
  Json messages = Json::array();
  for (int i = 0; i < 6; ++i) {
    // > 4 KiB in all, so the Java client would compress it too; non-ASCII bytes.
    const std::string body =
        encode(make(kUrn, Json::object({{"i", i}, {"pad", std::string(800, 'x') + "\xC3\xA9"}}),
                    {.queue = queue}));
    sent.emplace(std::string(decode(body).meta().id), body);
    Json properties = Json::object({});
    for (const auto& [key, value] : binding::pulsar::properties(body))
      properties[key] = value;
    messages.push_back(Json::object({{"payload_hex", babelqueue::testing::to_hex(body)},
                                     {"properties", properties},
                                     {"key", std::string("k").append(std::to_string(i))}}));
  }
  fake.enqueue(Json::object({{"topic", queue},
                             {"batch", true},
                             {"compression", compression},
                             {"writer", writer},
                             {"messages", messages}}));
  std::set<std::string> got;
  for (std::size_t i = 0; i < sent.size(); ++i) {
    const auto m = pop_message(t, queue, kWithin);
    ASSERT_TRUE(m.has_value()) << "after " << i << "\n" << fake.log_tail();
    const std::string id(decode(m->body).meta().id);
    ASSERT_TRUE(sent.contains(id));
    EXPECT_EQ(m->body, sent.at(id)) << "the bytes changed";
    EXPECT_EQ(Properties(m->headers.begin(), m->headers.end()),
              binding::pulsar::properties(m->body));
    EXPECT_EQ(m->delivery_count, 1);
    got.insert(id);
    ASSERT_TRUE(t.ack(*m).ok());
  }
  EXPECT_EQ(got.size(), sent.size());
  t.close();  // sends the batched acks
  EXPECT_EQ(subscription_stat(fake, queue, "backlog"), 0) << "the batch entry is not acked";
}

INSTANTIATE_TEST_SUITE_P(
    JavaAndGo, PulsarTransportOnFakeBrokerBatch,
    ::testing::Values(std::make_tuple("NONE", "java"), std::make_tuple("LZ4", "java"),
                      std::make_tuple("ZLIB", "java"), std::make_tuple("ZLIB", "go"),
                      std::make_tuple("ZSTD", "java"), std::make_tuple("SNAPPY", "go")),
    [](const auto& p) { return std::get<0>(p.param) + "_" + std::get<1>(p.param); });

// ---- faults ----

// D-3: every connection dropped three times while a publisher publishes and two workers consume
// (each on a transport of its own): every id whose publish returned ok is handled, and the
// subscription ends with nothing unacked (acks of a dead connection are redelivered and acked
// again).
TEST(PulsarTransportOnFakeBroker, ConnectionsDroppedMidRunLoseNothing) {
  BABELQUEUE_REQUIRE_FAKE_PULSAR();
  const FakeBroker fake;
  const std::string queue = "dropped";
  const std::string url = fake.url() + "?timeout=5000";
  HandledIds handled;
  babelqueue::testing::ConsumingWorker worker(std::make_shared<PulsarTransport>(url), queue, kUrn,
                                              handled);
  // The worker's subscription before the first publish (it starts at the latest message).
  ASSERT_TRUE(eventually(
      [&] {
        try {
          return subscription_stat(fake, queue, "backlog") == 0;
        } catch (const std::runtime_error&) {
          return false;  // no such topic or subscription yet
        }
      },
      kWithin));
  babelqueue::testing::ContinuousPublisher publisher(std::make_shared<PulsarTransport>(url), queue,
                                                     kUrn);
  std::int64_t dropped = 0;
  for (std::size_t round = 0; round < 3; ++round) {
    ASSERT_TRUE(publisher.wait_for_more(100, kWithin)) << fake.log_tail();
    ASSERT_TRUE(eventually([&] { return handled.distinct() >= 50 * (round + 1); }, kWithin));
    dropped += FakeBroker::number(fake.control("drop"), {"dropped"});
  }
  ASSERT_TRUE(publisher.wait_for_more(100, kWithin)) << "publishing did not resume";
  const std::set<std::string> published = publisher.stop();
  EXPECT_TRUE(publisher.permanent_failures().empty()) << publisher.permanent_failures().front();
  const bool all = eventually([&] { return handled.missing(published).empty(); }, kWithin);
  EXPECT_TRUE(all) << describe_missing(handled.missing(published));
  const bool acked = eventually(
      [&] {
        return subscription_stat(fake, queue, "backlog") == 0 &&
               subscription_stat(fake, queue, "pending") == 0;
      },
      kWithin);
  EXPECT_TRUE(acked) << fake.control("stats " + queue + " babelqueue").dump();
  EXPECT_TRUE(worker.stop().ok());
  EXPECT_GE(dropped, 6) << "each drop cuts the publisher's and the worker's connection";
  EXPECT_GE(FakeBroker::number(fake.control("connections"), {"connects", "primary"}), 8);
  std::cout << "[ figure   ] 3 drops: " << published.size() << " ids published, "
            << publisher.failures() << " publishes failed and retried, " << handled.distinct()
            << " distinct ids handled\n";
}

}  // namespace
}  // namespace babelqueue::pulsar::test
