// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Requests per message (issue 11 "Must hold", D-11), counted by the HTTP seam around the real
// libcurl client (Options::client) on 10,000 messages against the shared emulator:
// publish_batch makes at most 0.11 requests per message (SendMessageBatch of 10), and an App
// with one worker consuming and acking all of them at most 0.25 (ReceiveMessage of 10,
// DeleteMessageBatch of 10; the Go reference makes 2.0). The consume figure counts every request
// from the App's start until every message is deleted, less only the empty polls after the last
// message (the App goes on polling while the test waits for the deletes). The figures are
// printed (with how long each phase took, never asserted) and recorded as test properties.

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/json.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "shared_emulator_test.hpp"

namespace babelqueue::sqs::test {
namespace {

using babelqueue::testing::describe_missing;
using babelqueue::testing::HandledIds;

constexpr std::size_t kMessages = 10'000;
constexpr std::string_view kUrn = "urn:babel:orders:created";
// 10,000 messages through a loaded shared machine.
constexpr auto kLong = std::chrono::seconds(180);

using Clock = std::chrono::steady_clock;

// Seconds with one decimal, for the printed figures (never asserted).
std::string seconds_of(Clock::duration d) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << std::chrono::duration<double>(d).count();
  return out.str();
}

std::string per_message(std::uint64_t requests) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(4)
      << static_cast<double>(requests) / static_cast<double>(kMessages);
  return out.str();
}

// Counts, on the ReceiveMessage answers a seam sees, those that came back empty since the last
// one that carried a message.
class TrailingEmptyPolls {
 public:
  void observe(const HttpRequest& request, const HttpResponse& response) {
    if (request.action != "ReceiveMessage") return;
    std::lock_guard lock(mu_);
    if (response.status == 200 && response.body.find("\"ReceiptHandle\"") != std::string::npos) {
      empty_ = 0;
    } else {
      ++empty_;
    }
  }
  [[nodiscard]] std::uint64_t count() const {
    std::lock_guard lock(mu_);
    return empty_;
  }

 private:
  mutable std::mutex mu_;
  std::uint64_t empty_ = 0;
};

class SqsRequests : public SharedEmulatorTest {};

TEST_F(SqsRequests, D11_RequestsPerMessageOnTenThousandMessages) {
  create_queue();
  std::set<std::string> published;
  {
    std::vector<std::string> bodies;
    bodies.reserve(kMessages);
    for (std::size_t i = 0; i < kMessages; ++i) {
      Envelope env = make(kUrn, Json::object({{"order_id", static_cast<long long>(i)}}));
      published.insert(std::string(env.meta().id));
      bodies.push_back(encode(env));
    }
    auto seam = std::make_shared<SeamClient>();
    auto t = transport(options(seam));
    const auto started = Clock::now();
    ASSERT_TRUE(t->publish_batch(queue(), std::move(bodies)).ok());
    const auto took = Clock::now() - started;
    t->close();
    const std::uint64_t requests = seam->total();
    std::cout << "[ sqs ] publish_batch of " << kMessages << ": " << requests << " requests ("
              << describe_counts(seam->counts()) << "), " << per_message(requests)
              << " per message, in " << seconds_of(took) << " s\n";
    RecordProperty("publish_requests_per_message", per_message(requests));
    EXPECT_LE(requests, kMessages * 11 / 100) << describe_counts(seam->counts());
  }
  ASSERT_EQ(raw().visible(queue()), static_cast<std::int64_t>(kMessages));

  auto seam = std::make_shared<SeamClient>();
  TrailingEmptyPolls trailing;
  seam->set_rewrite([&](const HttpRequest& request, HttpResponse& response) {
    trailing.observe(request, response);
  });
  auto t = transport(options(seam));
  HandledIds handled;
  std::atomic<std::size_t> runs{0};
  {
    const auto started = Clock::now();
    Worker worker(t, queue(), {.concurrency = 1}, [&](Context&, const Envelope& env) {
      handled.add(std::string(env.meta().id));
      ++runs;
      return Status();
    });
    ASSERT_TRUE(eventually([&] { return handled.distinct() == kMessages; }, kLong))
        << describe_missing(handled.missing(published));
    ASSERT_TRUE(eventually([&] { return raw().empty(queue()); }, kLong))
        << "the acks were not all deleted";
    const auto took = Clock::now() - started;
    const std::uint64_t total = seam->total();
    const std::uint64_t empty_polls = trailing.count();
    const auto counts = seam->counts();
    EXPECT_TRUE(worker.stop().ok());
    const std::uint64_t steady = total - empty_polls;
    std::cout << "[ sqs ] App consume + ack of " << kMessages << " (1 worker): " << total
              << " requests (" << describe_counts(counts) << "), of which " << empty_polls
              << " empty polls after the last message; " << per_message(steady) << " per message ("
              << per_message(total) << " with them), in " << seconds_of(took) << " s\n";
    RecordProperty("consume_requests_per_message", per_message(steady));
    RecordProperty("consume_requests_per_message_with_final_polls", per_message(total));
    EXPECT_LE(steady, kMessages / 4) << describe_counts(counts);
  }
  EXPECT_TRUE(handled.missing(published).empty());
  EXPECT_EQ(runs.load(), kMessages) << "redeliveries: the visibility lapsed behind the App's back";
}

}  // namespace
}  // namespace babelqueue::sqs::test
