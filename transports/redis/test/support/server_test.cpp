// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "server_test.hpp"

#include <babelqueue/errors.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

namespace babelqueue::redis::test {

RedisServer& shared_redis_server() {
  // A function-local static: started on first use, so a binary none of whose tests needs it
  // starts no server, and destroyed at exit, which kills the server and removes its directory.
  // A start that throws leaves it unset, and the next test tries again.
  static RedisServer server = [] {
    // Only the main thread's id equals the process id.
    if (::syscall(SYS_gettid) != ::getpid()) {
      throw std::logic_error("the shared redis-server must be started from the main thread");
    }
    return RedisServer();
  }();
  return server;
}

void SharedRedisServerTest::SetUp() {
  BABELQUEUE_REQUIRE_REDIS_SERVER();
  raw_ = std::make_unique<RawClient>(server().port());
  flush_all();
}

void SharedRedisServerTest::flush_all() {
  ASSERT_EQ(raw().command({"FLUSHALL"}).str, "OK");
}

void expect_transient_transport_error(const std::function<void()>& call, std::string_view what) {
  SCOPED_TRACE(std::string(what));
  try {
    call();
    ADD_FAILURE() << "returned although the server is down";
  } catch (const TransportError& e) {
    EXPECT_TRUE(e.is_transient()) << e.what();
  } catch (const Error& e) {
    ADD_FAILURE() << "expected a babelqueue::TransportError, got a babelqueue::Error of code "
                  << static_cast<int>(e.code()) << ", transient " << e.is_transient() << ": "
                  << e.what();
  }
}

}  // namespace babelqueue::redis::test
