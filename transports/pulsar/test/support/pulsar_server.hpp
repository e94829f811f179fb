// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/testing/broker_process.hpp>

#include <gtest/gtest.h>

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace babelqueue::pulsar::test {

// Why no Pulsar broker can be started here (no java, the broker's jars could not be fetched by
// pulsar_dist.sh), or nullopt when one can. The first call fetches the jars into the build tree
// (once per build tree; seconds from ~/.m2, longer from Maven Central: ~240 MB).
std::optional<std::string> pulsar_server_unavailable();

// The java executable and the broker's jars' directory (which holds the official Java client
// too, for peers); they throw std::runtime_error when pulsar_server_unavailable().
std::string pulsar_java();
std::string pulsar_jars();

// A private Apache Pulsar 4.2.4 standalone broker for tests (BROKERS.md "Apache Pulsar"), on the
// testing kit's BrokerProcess: `PulsarStandaloneStarter` with the broker's binary protocol and
// web service (admin REST) on 127.0.0.1 and free ports, advertised as 127.0.0.1, its metadata in
// RocksDB and one bookie in a fresh data directory, no functions worker and no stream storage.
// Its log (log4j2 at INFO, stdout) is the BrokerProcess log, printed when a test fails. The
// bookie listens on a port of its own choosing (BookKeeper's local cluster ignores
// --bookkeeper-port when the metadata is in RocksDB).
//
// The PID BrokerProcess holds is the JVM's: kill() is a real kill -9 of the broker, and the
// kernel kills it with the thread that started it (PR_SET_PDEATHSIG). Construct and restart() it
// from a thread that outlives it, normally the test's main thread.
//
// Ready means: a binary-protocol LOOKUP of a topic in public/default answers Connect (the
// standalone creates that namespace after its messaging service is up).
//
// Thread-safety: not thread-safe; use one object from one thread.
class PulsarServer : public babelqueue::testing::BrokerFixture {
 public:
  struct Config {
    // Lines appended to standalone.conf (a later key overrides an earlier one).
    std::vector<std::string> extra_properties = {};
  };

  // Starts the broker and waits until it is ready (up to 120 s). Throws std::runtime_error (with
  // the log tail) when it does not come up or pulsar_server_unavailable(). (Two constructors:
  // GCC rejects `= {}` for a nested struct with member initializers inside the enclosing class.)
  PulsarServer();
  explicit PulsarServer(Config config);

  // The binary protocol's port and the web service's (admin REST API).
  int port() const { return node().port(0); }
  int web_port() const { return node().port(1); }
  // "pulsar://127.0.0.1:PORT" and "http://127.0.0.1:WEB_PORT".
  std::string service_url() const;
  std::string admin_url() const;

  // pid(), kill(), stop(), restart() (same ports and data), log_tail(), started_in():
  // BrokerFixture's, of the JVM.

 private:
  Config config_;
};

// A plain HTTP/1.1 PUT of `body` to `path` of `server`'s admin REST API (e.g.
// /admin/v2/persistent/public/default/<topic>/partitions with body "3": a partitioned topic);
// the status code. Throws std::runtime_error when there is no HTTP answer.
int admin_put(const PulsarServer& server, const std::string& path, const std::string& body);

// The broker every test of this test process shares, started by the first call and stopped at
// exit. Tests that kill, stop or configure their broker start a PulsarServer of their own.
// Call it from the main thread only (see babelqueue::testing::shared_broker).
PulsarServer& shared_pulsar_server();

}  // namespace babelqueue::pulsar::test

// Skips the current test, saying why, when no Pulsar broker can be started here; fails it
// instead under CI (TRANSPORTS.md: tests are never skipped there).
#define BABELQUEUE_REQUIRE_PULSAR() \
  BABELQUEUE_REQUIRE_BROKER(::babelqueue::pulsar::test::pulsar_server_unavailable())
