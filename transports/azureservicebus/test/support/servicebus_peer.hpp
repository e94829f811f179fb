// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// The scripted Service Bus peer (testing/peers/servicebus/peer.js) as a test fixture: started by
// BrokerProcess on 127.0.0.1 and two free ports (AMQP, control), stopped by PID, with its control
// channel (drop, refuse-next-put-token, hold-drains, enqueue, counts, expire-locks).

#include <babelqueue/json.hpp>
#include <babelqueue/testing/broker_process.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::azureservicebus::test {

class ServiceBusPeer {
 public:
  /// Peer options beside the ports, e.g. {"--lock-duration-ms", "1500"}. With `tls` its AMQP
  /// listener speaks TLS with a certificate for localhost / 127.0.0.1 signed by a throwaway CA
  /// (the testing kit's make_test_certificates, into the peer's directory): ca_file() trusts it,
  /// wrong_ca_file() does not.
  explicit ServiceBusPeer(std::vector<std::string> args = {}, bool tls = false);

  /// Why the peer cannot run here (no node/npm, the npm install failed), or nullopt.
  static std::optional<std::string> unavailable();

  [[nodiscard]] int port() const { return process_->port(0); }
  /// sb://k:v@127.0.0.1:PORT?tls=0 (the peer's key), `query` appended with '&'.
  [[nodiscard]] std::string url(std::string_view query = {}) const;
  /// Endpoint=sb://127.0.0.1:PORT/;SharedAccessKeyName=k;SharedAccessKey=v;
  /// UseDevelopmentEmulator=true
  [[nodiscard]] std::string connection_string() const;

  /// One control command, its JSON reply (a test failure when it is not ok).
  Json control(const std::string& line);
  /// `counts ENTITY`: active, locked, deferred, dead_lettered, receivers, credit (held by the
  /// receiver links now), draining (links whose drain is unanswered), transferred, drains.
  std::int64_t count(const std::string& entity, const std::string& field);

  [[nodiscard]] const babelqueue::testing::BrokerProcess& process() const { return *process_; }
  [[nodiscard]] std::string ca_file() const { return process_->dir() + "/tls/ca.pem"; }
  [[nodiscard]] std::string wrong_ca_file() const { return process_->dir() + "/tls/wrong-ca.pem"; }

 private:
  std::unique_ptr<babelqueue::testing::BrokerProcess> process_;
};

/// The peer every test of the binary shares (default options), started on first use.
ServiceBusPeer& shared_peer();

#define BABELQUEUE_REQUIRE_SERVICEBUS_PEER() \
  BABELQUEUE_REQUIRE_BROKER(::babelqueue::azureservicebus::test::ServiceBusPeer::unavailable())

}  // namespace babelqueue::azureservicebus::test
