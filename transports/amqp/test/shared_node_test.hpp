// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// What the integration tests on the shared RabbitMQ node share: a fixture with a RawClient and a
// fresh queue, transports on the node's URL, and waits that bound what must happen by kWithin.

#include <babelqueue/amqp/transport.hpp>
#include <babelqueue/testing/contract.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "rabbit_server.hpp"
#include "raw_client.hpp"

namespace babelqueue::amqp::test {

// The value of header `key` of `m`, nullptr when it has none.
inline const RawField* raw_header(const RawMessage& m, std::string_view key) {
  if (!m.properties.headers) return nullptr;
  for (const RawEntry& e : *m.properties.headers) {
    if (e.key == key) return &e.value;
  }
  return nullptr;
}

// A fixture on the shared node: a RawClient (publishes confirmed) and a fresh queue name.
class SharedNodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BABELQUEUE_REQUIRE_RABBITMQ();
    raw_ = std::make_unique<RawClient>(endpoint());
    queue_ = babelqueue::testing::unique_queue_name();
  }

  static RabbitServer& server() { return shared_rabbit_server(); }
  static RawClient::Endpoint endpoint() {
    RawClient::Endpoint e;
    e.port = server().port();
    e.confirms = true;
    return e;
  }
  // A transport on the shared node; `query` is appended to its URL ("?consume=get").
  static std::shared_ptr<AmqpTransport> transport(std::string_view query = {}) {
    return std::make_shared<AmqpTransport>(server().url() + std::string(query));
  }

  RawClient& raw() { return *raw_; }
  // Closes the RawClient's connection; reconnect_raw() opens a new one.
  void drop_raw() { raw_.reset(); }
  void reconnect_raw() { raw_ = std::make_unique<RawClient>(endpoint()); }
  const std::string& queue() const { return queue_; }

  // The next message of `queue` by basic.get, waiting up to kWithin for it to exist and hold
  // one (the App writes from its own threads); nullopt when none came.
  std::optional<RawMessage> raw_get(std::string_view queue, RawAck ack = RawAck::Auto) {
    const auto until = std::chrono::steady_clock::now() + babelqueue::testing::kWithin;
    for (;;) {
      if (raw_->message_count(queue).value_or(0) > 0) return raw_->get(queue, ack);
      if (std::chrono::steady_clock::now() >= until) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  // Waits up to kWithin until the node lists `count` client connections.
  static bool connections_become(std::size_t count) {
    const auto until = std::chrono::steady_clock::now() + babelqueue::testing::kWithin;
    while (server().list_connections() != count) {
      if (std::chrono::steady_clock::now() >= until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }

 private:
  std::unique_ptr<RawClient> raw_;
  std::string queue_;
};

// What handlers saw, for tests that wait on another thread's dispatches.
//
// Thread-safety: safe from any thread.
template <class T>
class Seen {
 public:
  void add(T value) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      values_.push_back(std::move(value));
    }
    cv_.notify_all();
  }
  // Every value once there are at least `n`, or what there is after kWithin.
  std::vector<T> wait_for(std::size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, babelqueue::testing::kWithin, [&] { return values_.size() >= n; });
    return values_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<T> values_;
};

}  // namespace babelqueue::amqp::test
