// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// What the transport's integration tests on the shared Pulsar broker share: the broker's
// pulsar:// URL, a fresh queue per test, and an independent view of a topic (RawPulsar, the
// blocking test client on the codec).

#include <babelqueue/pulsar/transport.hpp>
#include <babelqueue/testing/contract.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pulsar_server.hpp"
#include "raw_pulsar.hpp"

namespace babelqueue::pulsar::test {

// pulsar://127.0.0.1:PORT of `server`, `query` appended ("prefetch=5").
inline std::string url_of(const PulsarServer& server, std::string_view query = {}) {
  std::string url = server.service_url();
  if (!query.empty()) {
    url += '?';
    url += query;
  }
  return url;
}

// The topic of `queue` with the transport's defaults (public/default, no prefix).
inline std::string topic_for(std::string_view queue) {
  return topic_of(Options{}, queue);
}

// A fixture on the shared broker: a fresh queue name.
class SharedBrokerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BABELQUEUE_REQUIRE_PULSAR();
    queue_ = babelqueue::testing::unique_queue_name();
  }

  static PulsarServer& server() { return shared_pulsar_server(); }
  static std::string url(std::string_view query = {}) { return url_of(server(), query); }
  static std::shared_ptr<PulsarTransport> transport(std::string_view query = {}) {
    return std::make_shared<PulsarTransport>(url(query));
  }
  const std::string& queue() const { return queue_; }

 public:
  // Up to `n` messages of `queue` read through a subscription of their own (from the earliest
  // message) by RawPulsar; fewer when the broker has no more within `wait`. With `more`, any
  // further ones that come within `more` of each other after the first `n`.
  static std::vector<RawMessage> read_all(
      const std::string& queue, std::size_t n,
      std::chrono::milliseconds wait = std::chrono::seconds(5),
      std::chrono::milliseconds more = std::chrono::milliseconds::zero()) {
    return read_topic(topic_for(queue), n, wait, more);
  }
  // The same of a topic by its full name (e.g. one partition of a queue's topic).
  static std::vector<RawMessage> read_topic(
      const std::string& topic, std::size_t n, std::chrono::milliseconds wait,
      std::chrono::milliseconds more = std::chrono::milliseconds::zero()) {
    std::vector<RawMessage> out;
    if (n == 0) return out;
    RawPulsar raw(server().port(), wait);
    raw.subscribe(topic, "check-" + babelqueue::testing::unique_queue_name(),
                  proto::CommandSubscribe::Exclusive, 1000);
    for (;;) {
      if (out.size() == n) {
        if (more <= std::chrono::milliseconds::zero()) break;
        raw.set_timeout(more);
      }
      try {
        out.push_back(raw.receive());
      } catch (const std::exception&) {
        break;
      }
    }
    return out;
  }

  // True when the transport's subscription of `queue` has nothing left to deliver: a new
  // transport's pop finds nothing within `quiet`.
  static bool nothing_left(const std::string& queue,
                           std::chrono::milliseconds quiet = std::chrono::milliseconds(1'500)) {
    PulsarTransport t(url());
    auto got = t.pop(queue, quiet);
    return got.has_value() && !got->has_value();
  }

 private:
  std::string queue_;
};

}  // namespace babelqueue::pulsar::test
