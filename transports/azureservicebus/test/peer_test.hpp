// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// What the integration tests on the shared scripted peer share: a fixture with a fresh entity
// and the peer's independent view of it (inspect, counts, enqueue).

#include <babelqueue/azureservicebus/transport.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/testing/contract.hpp>
#include <babelqueue/testing/fault_kit.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "servicebus_peer.hpp"

namespace babelqueue::azureservicebus::test {

class PeerTest : public ::testing::Test {
 public:
  static ServiceBusPeer& peer() { return shared_peer(); }

 protected:
  void SetUp() override {
    BABELQUEUE_REQUIRE_SERVICEBUS_PEER();
    queue_ = babelqueue::testing::unique_queue_name();
  }

  static std::shared_ptr<ServiceBusTransport> transport(std::string_view query = {}) {
    return std::make_shared<ServiceBusTransport>(peer().url(query));
  }
  const std::string& queue() const { return queue_; }

  // The stored messages of `entity` as the peer sees them (inspect).
 public:
  static Json stored(const std::string& entity) {
    Json reply = peer().control("inspect " + entity);
    const Json* messages = reply.find("messages");
    return messages == nullptr ? Json::array() : *messages;
  }

 protected:
  // Waits until the peer counts `n` in `field` of `entity`; the last count.
  static std::int64_t count_becomes(const std::string& entity, const std::string& field,
                                    std::int64_t n) {
    std::int64_t count = -1;
    babelqueue::testing::eventually(
        [&] {
          count = peer().count(entity, field);
          return count == n;
        },
        babelqueue::testing::kWithin);
    return count;
  }

 private:
  std::string queue_;
};

}  // namespace babelqueue::azureservicebus::test
