// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/testing/broker_process.hpp>

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace babelqueue::amqp::test {

// Why no RabbitMQ node can be started here (rabbitmq-server or epmd missing), or nullopt.
std::optional<std::string> rabbit_server_unavailable();

// A private RabbitMQ node for tests (../shared/BROKERS.md): its own epmd in the foreground, node
// bq_<port>@localhost, 127.0.0.1 only, free ports, a fresh data directory; both processes are
// children of the test process, signalled only by their PIDs (RUNNING_UNDER_SYSTEMD makes the
// launcher exec beam, so the PID is beam's and kill() is a real crash).
class RabbitServer {
 public:
  struct Config {
    // An extra TLS listener with a self-signed CA and a certificate for localhost/127.0.0.1.
    bool tls = false;
    // The heartbeat the node proposes, in seconds (0 = RabbitMQ's default, 60).
    int heartbeat = 0;
    // Lines appended to rabbitmq.conf.
    std::vector<std::string> extra_conf = {};
  };

  RabbitServer();
  explicit RabbitServer(Config config);
  ~RabbitServer();
  RabbitServer(const RabbitServer&) = delete;
  RabbitServer& operator=(const RabbitServer&) = delete;

  int port() const;
  int tls_port() const;
  // "amqp://guest:guest@127.0.0.1:PORT/" (the default vhost).
  std::string url() const;
  // "amqps://guest:guest@localhost:TLSPORT/?cacertfile=<ca_file()>".
  std::string tls_url() const;
  const std::string& ca_file() const { return ca_file_; }
  // A CA that signed nothing this node presents.
  const std::string& wrong_ca_file() const { return wrong_ca_file_; }
  pid_t pid() const;
  std::string node_name() const;
  const std::string& dir() const;

  // kill -9 of beam, and wait.
  void kill();
  // SIGTERM (a clean stop), and wait.
  void stop();
  // Starts the stopped node again on the same ports and data.
  void start();
  std::string log_tail(std::size_t lines = 30) const;

  struct CtlResult {
    int exit_code = -1;
    std::string output;
  };
  // rabbitmqctl -n <node> args... (an Erlang VM start per call: about a second).
  CtlResult ctl(const std::vector<std::string>& args) const;
  // ctl() that throws std::runtime_error (with the output) unless it exits 0.
  std::string ctl_ok(const std::vector<std::string>& args) const;
  void close_all_connections(const std::string& reason = "test") const;
  struct QueueRow {
    std::string name;
    long messages_ready = 0;
    long messages_unacknowledged = 0;
    long consumers = 0;
  };
  std::vector<QueueRow> list_queues() const;
  std::size_t list_connections() const;
  void add_vhost(const std::string& vhost) const;
  void add_user(const std::string& user, const std::string& password) const;
  void set_permissions(const std::string& vhost, const std::string& user) const;

 private:
  void make_certificates_in(const std::string& dir);
  std::map<std::string, std::string> ctl_env() const;

  Config config_;
  std::unique_ptr<babelqueue::testing::BrokerProcess> epmd_;
  std::unique_ptr<babelqueue::testing::BrokerProcess> node_;
  std::string ca_file_;
  std::string wrong_ca_file_;
};

// One node per test binary, started on first use (from the main thread).
RabbitServer& shared_rabbit_server();

}  // namespace babelqueue::amqp::test

// Skips the current test (locally) or fails it (CI) when no RabbitMQ node can be started.
#define BABELQUEUE_REQUIRE_RABBITMQ() \
  BABELQUEUE_REQUIRE_BROKER(::babelqueue::amqp::test::rabbit_server_unavailable())
