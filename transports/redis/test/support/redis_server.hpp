// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/testing/broker_process.hpp>

#include <gtest/gtest.h>

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace babelqueue::redis::test {

// Why no redis-server can be started here (none at the configured path nor on PATH), or nullopt
// when one can.
std::optional<std::string> redis_server_unavailable();

// A private redis-server for one test, on the testing kit's BrokerProcess: 127.0.0.1 only, a free
// port, a fresh data directory, no RDB snapshots, the log in dir()/redis.log (printed when a test
// fails). The server is a child of the test process and only ever signalled by its PID.
//
// The child is SIGKILLed by the kernel when the thread that started it exits (PR_SET_PDEATHSIG),
// so a test process killed by a timeout does not leave servers behind. Construct and start() from
// a thread that outlives the server, normally the test's main thread.
class RedisServer {
 public:
  struct Config {
    // Append-only file with appendfsync always, so every acknowledged write survives kill().
    bool appendonly = false;
    // Appended after the built-in arguments, e.g. {"--databases", "4"}.
    std::vector<std::string> extra_args = {};
    // Empty = no password.
    std::string requirepass = {};
  };

  // Starts the server and waits until it answers PING. Throws std::runtime_error (with the tail
  // of the server log) when it does not come up within 10 s. (Two constructors instead of a
  // `= {}` default: GCC rejects a default argument of a nested struct with member initializers
  // inside the enclosing class.)
  RedisServer();
  explicit RedisServer(Config config);

  int port() const { return process_.port(); }
  // "redis://127.0.0.1:PORT/DB", with ":PASSWORD@" (percent-encoded) when requirepass is set.
  std::string url(int db = 0) const;
  // PID of the running server, -1 while stopped.
  pid_t pid() const { return process_.pid(); }
  bool running() const { return process_.running(); }
  const std::string& dir() const { return process_.dir(); }
  const std::string& password() const { return config_.requirepass; }

  // SIGTERM and wait (SIGKILL after 5 s). A clean shutdown: the AOF is flushed. No-op if stopped.
  void stop() { process_.stop(); }
  // SIGKILL and wait: a crash. No-op if stopped.
  void kill() { process_.kill(); }
  // Starts the stopped server again on the same port and directory (the AOF, if any, is
  // reloaded) and waits until it answers PING. Throws std::logic_error if it is running.
  void start() { process_.start(); }

  // The last `lines` lines of the server log (its stdout and stderr go there too).
  std::string log_tail(std::size_t lines = 20) const { return process_.log_tail(lines); }

 private:
  Config config_;
  // Destroyed (SIGKILL: its data is about to be deleted) with the server object.
  babelqueue::testing::BrokerProcess process_;
};

}  // namespace babelqueue::redis::test

// Skips the current test, saying why, when no redis-server is available; fails it instead when
// the environment variable CI is set, because tests are never skipped in CI. Use at the top of a
// test body or SetUp().
#define BABELQUEUE_REQUIRE_REDIS_SERVER() \
  BABELQUEUE_REQUIRE_BROKER(::babelqueue::redis::test::redis_server_unavailable())
