// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// What the integration tests on the shared Artemis broker share: the broker's artemis:// URL, a
// fixture with a RawAmqp10 client (the independent view of the broker) and a fresh queue.

#include <babelqueue/artemis/transport.hpp>
#include <babelqueue/testing/contract.hpp>
#include <babelqueue/testing/fault_kit.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "artemis_server.hpp"
#include "raw_amqp10.hpp"

namespace babelqueue::artemis::test {

using amqp10::test::ArtemisServer;
using amqp10::test::RawAmqp10;
using amqp10::test::RawMessage;

// artemis://user:password@127.0.0.1:PORT of `server`, `query` appended ("prefetch=5").
inline std::string url_of(const ArtemisServer& server, std::string_view query = {}) {
  // Appended piece by piece: GCC 12 -O2 reports a bogus -Wrestrict for `"x" + std::string`.
  std::string url = "artemis://";
  url += ArtemisServer::kUser;
  url += ':';
  url += ArtemisServer::kPassword;
  url += '@';
  url += server.host_port();
  if (!query.empty()) {
    url += '?';
    url += query;
  }
  return url;
}

inline RawAmqp10 raw_of(const ArtemisServer& server) {
  return RawAmqp10(server.host_port(), std::string(ArtemisServer::kUser),
                   std::string(ArtemisServer::kPassword));
}

// Waits up to kWithin until the broker counts `n` messages in `queue`: it applies the
// dispositions of a closed connection a moment after the close (the count is read on another
// connection). The last count seen.
inline std::int64_t count_becomes(const RawAmqp10& raw, const std::string& queue, std::int64_t n) {
  std::int64_t count = -1;
  babelqueue::testing::eventually(
      [&] {
        count = raw.message_count(queue);
        return count == n;
      },
      babelqueue::testing::kWithin);
  return count;
}

// A fixture on the shared broker: a raw client and a fresh queue name.
class SharedBrokerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BABELQUEUE_REQUIRE_ARTEMIS();
    raw_ = std::make_unique<RawAmqp10>(raw_of(server()));
    queue_ = babelqueue::testing::unique_queue_name();
  }

  static ArtemisServer& server() { return amqp10::test::shared_artemis_server(); }
  static std::string url(std::string_view query = {}) { return url_of(server(), query); }
  static std::shared_ptr<ArtemisTransport> transport(std::string_view query = {}) {
    return std::make_shared<ArtemisTransport>(url(query));
  }

  RawAmqp10& raw() { return *raw_; }
  const std::string& queue() const { return queue_; }

  // count_becomes() of this fixture's raw client.
  std::int64_t count_becomes(const std::string& queue, std::int64_t n) {
    return test::count_becomes(*raw_, queue, n);
  }

 private:
  std::unique_ptr<RawAmqp10> raw_;
  std::string queue_;
};

}  // namespace babelqueue::artemis::test
