// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "server_test.hpp"

#include <babelqueue/errors.hpp>

#include <string>

namespace babelqueue::redis::test {

RedisServer& shared_redis_server() {
  return babelqueue::testing::shared_broker<RedisServer>("the shared redis-server");
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
