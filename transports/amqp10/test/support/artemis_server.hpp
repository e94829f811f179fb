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

namespace babelqueue::amqp10::test {

// Why no Artemis broker can be started here (no java, the distribution could not be fetched by
// artemis_dist.sh), or nullopt when one can. The first call fetches and unpacks it into the
// build tree (once per build tree; ~10-40 s from Maven Central).
std::optional<std::string> artemis_server_unavailable();

// A private Apache ActiveMQ Artemis 2.40.0 broker for tests (BROKERS.md "AMQP 1.0"), on the
// testing kit's BrokerProcess: an instance made by `artemis create` in a fresh data directory,
// one AMQP acceptor on 127.0.0.1 and a free port (broker.xml reads it from the system property
// babelqueue.amqp.port, which every start passes), persistence on (NIO journal without fsync),
// auto-created queues, and max-delivery-attempts -1 (the broker never moves a message to its own
// DLQ address: dead-lettering is the SDK's <queue>.dlq). Its log is the BrokerProcess log,
// printed when a test fails.
//
// The PID BrokerProcess holds is the JVM's (the instance's bin/artemis execs java): kill() is a
// real kill -9 of the broker, and the kernel kills it with the thread that started it
// (PR_SET_PDEATHSIG). Construct and restart() it from a thread that outlives it, normally the
// test's main thread.
//
// Ready means: the log shows AMQ221007 (server started) and the AMQP port answers the SASL
// protocol header.
//
// Wire facts tests rely on: a link without the `queue` capability is multicast (a message sent
// before a receiver exists is dropped); modified{delivery-failed} raises the delivery-count,
// released and modified without it do not.
//
// Thread-safety: not thread-safe; use one object from one thread.
class ArtemisServer : public babelqueue::testing::BrokerFixture {
 public:
  struct Config {
    // --allow-anonymous (SASL ANONYMOUS accepted) instead of --require-login.
    bool anonymous = false;
    // A second acceptor on tls_port() that speaks AMQP over TLS, with a certificate for
    // localhost / 127.0.0.1 signed by a CA made for this broker (ca_file(); the testing kit's
    // make_test_certificates, turned into a PKCS12 key store); clients are not asked for
    // certificates.
    bool tls = false;
  };

  // Creates the instance, starts the broker and waits until it is ready (up to 60 s). Throws
  // std::runtime_error (with the log tail) when it does not come up or
  // artemis_server_unavailable(). (Two constructors: GCC rejects `= {}` for a nested struct with
  // member initializers inside the enclosing class.)
  ArtemisServer();
  explicit ArtemisServer(Config config);

  // The AMQP acceptor's port.
  int port() const { return node().port(0); }
  // "127.0.0.1:PORT".
  std::string host_port() const;
  // The TLS acceptor's port, the PEM of the CA that signed its certificate, and of a CA that
  // signed nothing the broker uses. Throw std::logic_error without Config::tls.
  int tls_port() const;
  std::string ca_file() const;
  std::string wrong_ca_file() const;
  // The user and password of the instance (SASL PLAIN).
  static constexpr std::string_view kUser = "bq-test";
  static constexpr std::string_view kPassword = "bq-test-secret";
  bool anonymous() const { return config_.anonymous; }

  // pid(), kill(), stop(), restart() (same port and instance), log_tail(), started_in() (the
  // first start includes `artemis create`): BrokerFixture's, of the JVM. The instance is the
  // subdirectory "instance" of dir().

 private:
  Config config_;
};

// The broker every test of this test process shares (SASL PLAIN), started by the first call and
// stopped at exit. Tests that kill, stop or configure their broker start an ArtemisServer of
// their own. Call it from the main thread only (testing::shared_broker).
ArtemisServer& shared_artemis_server();

}  // namespace babelqueue::amqp10::test

// Skips the current test, saying why, when no Artemis broker can be started here; fails it
// instead under CI (TRANSPORTS.md: tests are never skipped there). Use at the top of a test body
// or SetUp().
#define BABELQUEUE_REQUIRE_ARTEMIS() \
  BABELQUEUE_REQUIRE_BROKER(::babelqueue::amqp10::test::artemis_server_unavailable())
