// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// What the integration tests on the shared Kafka broker share: a fixture with a RawKafka client,
// a fresh queue (topic) and a fresh consumer group, transports on the broker's URL for that
// group, and waits that bound what must happen by kWithin.

#include <babelqueue/kafka/transport.hpp>
#include <babelqueue/testing/contract.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <babelqueue/testing/fault_kit.hpp>

#include "kafka_server.hpp"
#include "raw_kafka.hpp"

namespace babelqueue::kafka::test {

using RawHeaders = decltype(RawRecord::headers);

// The kit's eventually, bounded by kWithin unless told otherwise.
template <class Pred>
bool eventually(Pred&& done,
                std::chrono::steady_clock::duration within = babelqueue::testing::kWithin) {
  return babelqueue::testing::eventually(std::forward<Pred>(done), within);
}

// A consumer group no other test uses.
inline std::string unique_group() {
  return "bq-group-" + babelqueue::testing::unique_queue_name();
}

// The value of the first header `key` of `r` (nullopt inside when its value is null); nullopt
// when it has none.
inline std::optional<std::optional<std::string>> raw_header(const RawRecord& r,
                                                            std::string_view key) {
  for (const auto& [name, value] : r.headers) {
    if (name == key) return value;
  }
  return std::nullopt;
}

// The names of `r`'s headers in record order.
inline std::vector<std::string> header_names(const RawRecord& r) {
  std::vector<std::string> out;
  for (const auto& entry : r.headers)
    out.push_back(entry.first);
  return out;
}

// A fixture on the shared broker: a RawKafka client, a fresh queue name (its topic) and a fresh
// consumer group.
class SharedBrokerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BABELQUEUE_REQUIRE_KAFKA();
    raw_ = std::make_unique<RawKafka>(server().bootstrap());
    queue_ = babelqueue::testing::unique_queue_name();
    group_ = unique_group();
  }

  static KafkaServer& server() { return shared_kafka_server(); }
  // The broker's URL for this test's group, creating topics with `partitions` partitions;
  // `extra` is appended to the query ("&max_wait=100").
  std::string url(std::string_view extra = {}, int partitions = 1) const {
    return server().url("group_id=" + group_ + "&partitions=" + std::to_string(partitions) +
                        std::string(extra));
  }
  std::shared_ptr<KafkaTransport> transport(std::string_view extra = {}, int partitions = 1) const {
    return std::make_shared<KafkaTransport>(url(extra, partitions));
  }

  RawKafka& raw() { return *raw_; }
  const std::string& queue() const { return queue_; }
  const std::string& group() const { return group_; }

  // The records of `topic` once there are at least `n`, or what there is after kWithin.
  std::vector<RawRecord> records(const std::string& topic, std::size_t n) {
    std::vector<RawRecord> got;
    eventually([&] {
      try {
        got = raw_->read_all(topic, std::chrono::seconds(5));
      } catch (const std::runtime_error&) {
        return false;  // the topic does not exist yet
      }
      return got.size() >= n;
    });
    return got;
  }

  // Waits up to kWithin until the group's committed offset of `topic` partition 0 is `offset`.
  bool committed_becomes(const std::string& topic, std::int64_t offset) {
    return eventually([&] { return raw_->committed(group_, topic, 0) == offset; });
  }

 private:
  std::unique_ptr<RawKafka> raw_;
  std::string queue_;
  std::string group_;
};

}  // namespace babelqueue::kafka::test
