// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/testing/broker_process.hpp>
#include <babelqueue/testing/command.hpp>

#include <gtest/gtest.h>

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::amqp::test {

using babelqueue::testing::CommandResult;
using babelqueue::testing::run_command;

// Why no RabbitMQ node can be started here (rabbitmq-server, rabbitmqctl, epmd, erl_call or
// openssl missing), or nullopt when one can.
std::optional<std::string> rabbit_server_unavailable();

// One queue as RabbitMQ lists it.
struct QueueInfo {
  std::string name;
  std::uint64_t messages_ready = 0;
  std::uint64_t messages_unacknowledged = 0;
  std::uint64_t consumers = 0;
  bool operator==(const QueueInfo& other) const = default;
};

// A private RabbitMQ 3.10 node for tests (BROKERS.md "RabbitMQ 3.10.8"), on the testing kit's
// BrokerProcess: its own epmd (a second BrokerProcess, started first), the node
// bq_<port>@localhost with every listener and the distribution port on 127.0.0.1, a fresh data
// directory holding config, Mnesia and messages, and its log (stdout) in the BrokerProcess log,
// printed when a test fails.
//
// The node is run so that the PID BrokerProcess holds is beam's (rabbitmq-server execs erl,
// which execs beam.smp): kill() is a real kill -9 of the broker, and the kernel kills it with
// the thread that started it (PR_SET_PDEATHSIG). Construct and start() it from a thread that
// outlives it, normally the test's main thread.
//
// Administration: ctl() runs rabbitmqctl (a VM start per call, ~0.5 s); eval() and the helpers
// built on it (list_queues, close_all_connections, ...) run Erlang on the node through erl_call,
// ~5 ms a call.
//
// Thread-safety: not thread-safe; use one object from one thread.
class RabbitServer {
 public:
  struct Config {
    // An extra TLS listener (tls_port()) with a certificate for localhost / 127.0.0.1 signed by
    // a CA made for this node (ca_file()); clients are not asked for certificates.
    bool tls = false;
    // The server's heartbeat proposal in seconds (rabbitmq.conf `heartbeat`); nullopt: 60.
    std::optional<int> heartbeat = std::nullopt;
    // Lines appended to rabbitmq.conf, e.g. "consumer_timeout = 5000".
    std::vector<std::string> extra_conf = {};
  };

  // Starts epmd and the node and waits until an AMQP login succeeds and the boot has finished
  // (up to 60 s). Throws std::runtime_error (with the log tail) when it does not come up. (Two
  // constructors: GCC rejects `= {}` for a nested struct with member initializers inside the
  // enclosing class.)
  RabbitServer();
  explicit RabbitServer(Config config);

  int port() const { return node_->port(0); }
  // The TLS listener's port. Throws std::logic_error without Config::tls.
  int tls_port() const;
  // "amqp://guest:guest@127.0.0.1:PORT/" for the default vhost "/", else the vhost
  // percent-encoded as the path (AMQP-1).
  std::string url(std::string_view vhost = "/") const;
  // "amqps://guest:guest@localhost:TLSPORT/?cacertfile=CA" (host localhost: the name the
  // certificate carries). Throws std::logic_error without Config::tls.
  std::string tls_url(std::string_view vhost = "/") const;
  // PEM of the CA that signed the server certificate, and of an unrelated CA that signed
  // nothing the node uses (for the failing verification). Throw std::logic_error without tls.
  std::string ca_file() const;
  std::string wrong_ca_file() const;

  // PID of the running beam process, -1 while stopped.
  pid_t pid() const { return node_->pid(); }
  pid_t epmd_pid() const { return epmd_.pid(); }
  bool running() const { return node_->running(); }
  // "bq_<port>@localhost".
  std::string node_name() const;
  const std::string& dir() const { return node_->dir(); }

  // SIGKILL of beam: a crash. No-op if stopped.
  //
  // RabbitMQ 3.10 keeps queue, exchange and binding definitions in Mnesia, which logs the
  // "committed" decision of a transaction through a write cache it flushes within 2 s or with
  // the next synced transaction: a durable queue declared (declare-ok received) just before a
  // kill can be rolled back at restart, together with its confirmed persistent messages. A test
  // whose point is not that window calls sync_mnesia() after its declares and before kill().
  void kill() { node_->kill(); }
  // Waits until the node's Mnesia transaction log is on disk (mnesia:sync_log()).
  void sync_mnesia() const;
  // SIGTERM: a clean shutdown (~1 s); SIGKILL after 30 s. No-op if stopped.
  void stop() { node_->stop(); }
  // Starts the stopped node again on the same ports and data (durable queues and persistent
  // messages are recovered) and waits as the constructor does. Throws std::logic_error if it
  // is running.
  void start() { node_->start(); }

  // The last `lines` lines of the node's log.
  std::string log_tail(std::size_t lines = 20) const { return node_->log_tail(lines); }

  // Runs `rabbitmqctl -n <node> args...` and returns its exit code and output.
  CommandResult ctl(const std::vector<std::string>& args) const;
  // Evaluates Erlang `expressions` (comma-separated, without the final dot) on the node and
  // returns what they printed (io:format). Throws std::runtime_error when they raise or the
  // node cannot be reached.
  std::string eval(std::string_view expressions) const;

  // Closes every client connection with connection.close 320 CONNECTION_FORCED - `reason`.
  void close_all_connections(std::string_view reason) const;
  std::vector<QueueInfo> list_queues(std::string_view vhost = "/") const;
  // How many client connections the node has (closing ones included).
  std::size_t list_connections() const;
  void add_vhost(std::string_view vhost) const;
  void add_user(std::string_view user, std::string_view password) const;
  void set_permissions(std::string_view user, std::string_view vhost,
                       std::string_view configure = ".*", std::string_view write = ".*",
                       std::string_view read = ".*") const;

 private:
  void require_tls(std::string_view what) const;

  Config config_;
  babelqueue::testing::BrokerProcess epmd_;
  // Set by the constructor (which retries on new ports when the distribution port was taken).
  std::optional<babelqueue::testing::BrokerProcess> node_;
};

// The node every test of this test process shares, started by the first call and stopped at
// exit. Tests that kill, stop or configure their node start a RabbitServer of their own.
//
// Call it from the main thread only, where gtest runs SetUp() and the test bodies: the node dies
// with the thread that started it. The first call throws std::logic_error on any other thread.
RabbitServer& shared_rabbit_server();

}  // namespace babelqueue::amqp::test

// Skips the current test, saying why, when no RabbitMQ node can be started here; fails it
// instead when the environment variable CI is set, because tests are never skipped in CI. Use at
// the top of a test body or SetUp().
#define BABELQUEUE_REQUIRE_RABBITMQ() \
  BABELQUEUE_REQUIRE_BROKER(::babelqueue::amqp::test::rabbit_server_unavailable())
