// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string_view>

#include "raw_client.hpp"
#include "redis_server.hpp"

namespace babelqueue::redis::test {

// The redis-server that every SharedRedisServerTest of this test process uses, started by the
// first call and stopped at exit. One server per process instead of one per test keeps the
// suites fast; the FLUSHALL before each test gives it the empty server it would otherwise get.
//
// Call it from the main thread only, where gtest runs SetUp() and the test bodies: the server dies
// with the thread that started it (PR_SET_PDEATHSIG, see RedisServer), so that thread must live as
// long as the process. The first call throws std::logic_error on any other thread.
RedisServer& shared_redis_server();

// A fixture base for tests that need an empty redis-server but not one of their own: they share
// shared_redis_server(), and each test starts after FLUSHALL with a fresh RawClient to it. Tests
// that stop, kill or configure their server (appendonly, requirepass, ...) start a RedisServer
// of their own instead.
//
// SetUp() skips the test (locally) or fails it (under CI) as BABELQUEUE_REQUIRE_REDIS_SERVER()
// does. A parameterized fixture also derives from ::testing::WithParamInterface<T>.
class SharedRedisServerTest : public ::testing::Test {
 protected:
  void SetUp() override;

  static RedisServer& server() { return shared_redis_server(); }
  RawClient& raw() { return *raw_; }
  // Empties every database of the server.
  void flush_all();

 private:
  std::unique_ptr<RawClient> raw_;
};

// Expects `call` to throw a transient babelqueue::TransportError: what the transport and the
// idempotency store throw while the server is down, because the caller may retry (README D-3:
// errors are returned to the caller, never swallowed). `what` names the call in failure messages.
void expect_transient_transport_error(const std::function<void()>& call, std::string_view what);

}  // namespace babelqueue::redis::test
