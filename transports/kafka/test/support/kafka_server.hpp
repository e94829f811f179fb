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
#include <string_view>
#include <vector>

namespace babelqueue::kafka::test {

// Why no Kafka broker can be started here (no java, the broker's jars could not be fetched by
// kafka_dist.sh), or nullopt when one can. The first call fetches the jars into the build tree
// (once per build tree; seconds from ~/.m2, longer from Maven Central).
std::optional<std::string> kafka_server_unavailable();

// A private Apache Kafka 4.4.0 broker for tests (BROKERS.md "Kafka"), on the testing kit's
// BrokerProcess: one KRaft node that is broker and controller, its PLAINTEXT and CONTROLLER
// listeners on 127.0.0.1 and free ports, a log dir formatted with a cluster id of its own in a
// fresh data directory, single-replica internal topics, no initial rebalance delay and
// auto-created topics. Its log (stdout and stderr) is the BrokerProcess log, printed when a test
// fails.
//
// The PID BrokerProcess holds is the JVM's (`java ... kafka.Kafka server.properties`, exec'd):
// kill() is a real kill -9 of the broker, and the kernel kills it with the thread that started
// it (PR_SET_PDEATHSIG). Construct and restart() it from a thread that outlives it, normally the
// test's main thread.
//
// Ready means: a metadata request answers with this node's cluster id, and the group coordinator
// answers an offset fetch (which creates __consumer_offsets on a fresh node, so tests do not pay
// for it).
//
// Thread-safety: not thread-safe; use one object from one thread.
class KafkaServer : public babelqueue::testing::BrokerFixture {
 public:
  struct Config {
    // num.partitions: the partition count of auto-created topics.
    int partitions = 1;
    // Lines appended to server.properties (a later key overrides an earlier one), e.g.
    // "log.retention.ms=1000".
    std::vector<std::string> extra_properties = {};
  };

  // Starts the broker and waits until it is ready (up to 60 s). Throws std::runtime_error (with
  // the log tail) when it does not come up or kafka_server_unavailable(). (Two constructors: GCC
  // rejects `= {}` for a nested struct with member initializers inside the enclosing class.)
  KafkaServer();
  explicit KafkaServer(Config config);

  // The PLAINTEXT listener's port.
  int port() const { return node().port(0); }
  // "127.0.0.1:PORT".
  std::string bootstrap() const;
  // "kafka://127.0.0.1:PORT/", plus "?" + `query` when it is not empty.
  std::string url(std::string_view query = "") const;
  // The cluster id the log dir was formatted with.
  const std::string& cluster_id() const { return cluster_id_; }

  // pid(), kill(), stop(), restart() (same ports and log dir), log_tail(), started_in() (the
  // first start includes formatting the log dir): BrokerFixture's, of the JVM.

 private:
  Config config_;
  std::string cluster_id_;
};

// The broker every test of this test process shares, started by the first call and stopped at
// exit. Tests that kill, stop or configure their broker start a KafkaServer of their own.
//
// Call it from the main thread only, where gtest runs SetUp() and the test bodies: the broker
// dies with the thread that started it. The first call throws std::logic_error on any other
// thread.
KafkaServer& shared_kafka_server();

}  // namespace babelqueue::kafka::test

// Skips the current test, saying why, when no Kafka broker can be started here; fails it
// instead under CI (TRANSPORTS.md: tests are never skipped there). Use at the top of a test body
// or SetUp().
#define BABELQUEUE_REQUIRE_KAFKA() \
  BABELQUEUE_REQUIRE_BROKER(::babelqueue::kafka::test::kafka_server_unavailable())
