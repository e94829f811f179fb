// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors

#include "rabbit_server.hpp"

#include <amqp.h>
#include <amqp_tcp_socket.h>

#include <fcntl.h>
#include <glob.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string_view>

extern char** environ;  // NOLINT: POSIX

namespace babelqueue::amqp::test {
namespace {

using babelqueue::testing::BrokerProcess;
using babelqueue::testing::find_executable;

constexpr std::string_view kServer = "/usr/lib/rabbitmq/bin/rabbitmq-server";
constexpr std::string_view kCtl = "/usr/lib/rabbitmq/bin/rabbitmqctl";

std::optional<std::string> epmd_path() {
  glob_t g{};
  std::optional<std::string> found;
  if (::glob("/usr/lib/erlang/erts-*/bin/epmd", 0, nullptr, &g) == 0 && g.gl_pathc > 0) {
    found = g.gl_pathv[0];
  }
  ::globfree(&g);
  return found;
}

bool executable(std::string_view path) {
  return ::access(std::string(path).c_str(), X_OK) == 0;
}

// Runs argv with `env` added, stdout and stderr into one string; the exit code.
RabbitServer::CtlResult run(const std::vector<std::string>& argv,
                            const std::map<std::string, std::string>& env) {
  char path[] = "/tmp/bq-amqp-run-XXXXXX";
  const int out = ::mkstemp(path);
  if (out < 0) throw std::runtime_error("mkstemp failed");
  ::unlink(path);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::dup2(out, STDOUT_FILENO);
    ::dup2(out, STDERR_FILENO);
    const int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, STDIN_FILENO);
    for (const auto& [k, v] : env)
      ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execve(args[0], args.data(), environ);
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  RabbitServer::CtlResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  ::lseek(out, 0, SEEK_SET);
  char buf[4096];
  for (ssize_t n; (n = ::read(out, buf, sizeof buf)) > 0;)
    r.output.append(buf, static_cast<std::size_t>(n));
  ::close(out);
  return r;
}

// An AMQP connection and login as guest succeed.
bool answers_amqp(int port) {
  amqp_connection_state_t conn = amqp_new_connection();
  amqp_socket_t* socket = amqp_tcp_socket_new(conn);
  timeval tv{1, 0};
  bool ok = false;
  if (socket != nullptr && amqp_socket_open_noblock(socket, "127.0.0.1", port, &tv) == 0) {
    amqp_set_handshake_timeout(conn, &tv);
    const amqp_rpc_reply_t r = amqp_login(conn, "/", 0, AMQP_DEFAULT_FRAME_SIZE, 0,
                                          AMQP_SASL_METHOD_PLAIN, "guest", "guest");
    ok = r.reply_type == AMQP_RESPONSE_NORMAL;
    if (ok) amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
  }
  amqp_destroy_connection(conn);
  return ok;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + path);
}

}  // namespace

std::optional<std::string> rabbit_server_unavailable() {
  if (!executable(kServer))
    return std::string(kServer) + " not found (apt-get install rabbitmq-server)";
  if (!epmd_path()) return std::string("epmd not found under /usr/lib/erlang");
  return std::nullopt;
}

RabbitServer::RabbitServer() : RabbitServer(Config{}) {}

RabbitServer::RabbitServer(Config config) : config_(std::move(config)) {
  BrokerProcess::Spec epmd;
  epmd.name = "epmd";
  const std::string epmd_exe = *epmd_path();
  epmd.launch = [epmd_exe](const BrokerProcess& p) {
    return BrokerProcess::Launch{
        {epmd_exe, "-port", std::to_string(p.port()), "-address", "127.0.0.1"}};
  };
  epmd.port_taken_marker = "address already in use";
  epmd_ = std::make_unique<BrokerProcess>(std::move(epmd));

  BrokerProcess::Spec node;
  node.name = "rabbitmq";
  node.ports = 3;  // AMQP, distribution, TLS
  node.start_timeout = std::chrono::seconds(60);
  node.probe_interval = std::chrono::milliseconds(100);
  node.stop_grace = std::chrono::seconds(15);
  node.port_taken_marker = "eaddrinuse";
  const int epmd_port = epmd_->port();
  node.launch = [this, epmd_port](const BrokerProcess& p) {
    const std::string d = p.dir();
    if (config_.tls && ca_file_.empty()) make_certificates_in(d);
    std::string conf = "listeners.tcp.1 = 127.0.0.1:" + std::to_string(p.port(0)) + "\n";
    conf += "loopback_users.guest = true\n";
    if (config_.heartbeat > 0) conf += "heartbeat = " + std::to_string(config_.heartbeat) + "\n";
    if (config_.tls) {
      conf += "listeners.ssl.1 = 127.0.0.1:" + std::to_string(p.port(2)) + "\n";
      conf += "ssl_options.cacertfile = " + d + "/ca.pem\n";
      conf += "ssl_options.certfile = " + d + "/server.pem\n";
      conf += "ssl_options.keyfile = " + d + "/server.key\n";
      conf += "ssl_options.verify = verify_none\n";
      conf += "ssl_options.fail_if_no_peer_cert = false\n";
    }
    for (const std::string& line : config_.extra_conf)
      conf += line + "\n";
    write_file(d + "/rabbitmq.conf", conf);
    write_file(d + "/rabbitmq-env.conf", "");
    write_file(d + "/enabled_plugins", "[].\n");
    std::filesystem::create_directories(d + "/home");
    BrokerProcess::Launch l;
    l.argv = {std::string(kServer)};
    l.env = {
        {"HOME", d + "/home"},
        {"RUNNING_UNDER_SYSTEMD", "1"},
        {"RABBITMQ_CONF_ENV_FILE", d + "/rabbitmq-env.conf"},
        {"RABBITMQ_CONFIG_FILE", d + "/rabbitmq.conf"},
        {"RABBITMQ_ENABLED_PLUGINS_FILE", d + "/enabled_plugins"},
        {"RABBITMQ_NODENAME", "bq_" + std::to_string(p.port(0)) + "@localhost"},
        {"RABBITMQ_MNESIA_BASE", d + "/mnesia"},
        {"RABBITMQ_LOG_BASE", d + "/log"},
        {"RABBITMQ_PID_FILE", d + "/pid"},
        {"RABBITMQ_NODE_IP_ADDRESS", "127.0.0.1"},
        {"RABBITMQ_NODE_PORT", std::to_string(p.port(0))},
        {"RABBITMQ_DIST_PORT", std::to_string(p.port(1))},
        {"ERL_EPMD_PORT", std::to_string(epmd_port)},
        {"ERL_EPMD_ADDRESS", "127.0.0.1"},
        {"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS", "-kernel inet_dist_use_interface {127,0,0,1}"},
    };
    return l;
  };
  node.ready = [](const BrokerProcess& p) { return answers_amqp(p.port(0)); };
  node_ = std::make_unique<BrokerProcess>(std::move(node));
}

RabbitServer::~RabbitServer() = default;

void RabbitServer::make_certificates_in(const std::string& d) {
  const std::string openssl = find_executable("openssl").value_or("/usr/bin/openssl");
  const auto must = [&](const std::vector<std::string>& argv) {
    const CtlResult r = run(argv, {});
    if (r.exit_code != 0) throw std::runtime_error("openssl failed: " + r.output);
  };
  const auto ca = [&](const std::string& name) {
    must({openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
          "-keyout", d + "/" + name + ".key", "-out", d + "/" + name + ".pem", "-days", "2",
          "-subj", "/CN=babelqueue test " + name});
  };
  ca("ca");
  ca("wrong-ca");
  write_file(d + "/san.ext", "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
  must({openssl, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
        d + "/server.key", "-out", d + "/server.csr", "-subj", "/CN=localhost"});
  must({openssl, "x509", "-req", "-in", d + "/server.csr", "-CA", d + "/ca.pem", "-CAkey",
        d + "/ca.key", "-CAcreateserial", "-out", d + "/server.pem", "-days", "2", "-extfile",
        d + "/san.ext"});
  ca_file_ = d + "/ca.pem";
  wrong_ca_file_ = d + "/wrong-ca.pem";
}

int RabbitServer::port() const {
  return node_->port(0);
}
int RabbitServer::tls_port() const {
  return node_->port(2);
}
std::string RabbitServer::url() const {
  return "amqp://guest:guest@127.0.0.1:" + std::to_string(port()) + "/";
}
std::string RabbitServer::tls_url() const {
  return "amqps://guest:guest@localhost:" + std::to_string(tls_port()) + "/?cacertfile=" + ca_file_;
}
pid_t RabbitServer::pid() const {
  return node_->pid();
}
std::string RabbitServer::node_name() const {
  return "bq_" + std::to_string(port()) + "@localhost";
}
const std::string& RabbitServer::dir() const {
  return node_->dir();
}
void RabbitServer::kill() {
  node_->kill();
}
void RabbitServer::stop() {
  node_->stop();
}
void RabbitServer::start() {
  node_->start();
}
std::string RabbitServer::log_tail(std::size_t lines) const {
  return node_->log_tail(lines);
}

std::map<std::string, std::string> RabbitServer::ctl_env() const {
  return {{"HOME", dir() + "/home"},
          {"ERL_EPMD_PORT", std::to_string(epmd_->port())},
          {"ERL_EPMD_ADDRESS", "127.0.0.1"},
          {"RABBITMQ_CONF_ENV_FILE", dir() + "/rabbitmq-env.conf"}};
}

RabbitServer::CtlResult RabbitServer::ctl(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {std::string(kCtl), "-n", node_name(), "-q"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, ctl_env());
}

std::string RabbitServer::ctl_ok(const std::vector<std::string>& args) const {
  CtlResult r = ctl(args);
  if (r.exit_code != 0) {
    std::string what = "rabbitmqctl";
    for (const std::string& a : args)
      what += " " + a;
    throw std::runtime_error(what + " exited " + std::to_string(r.exit_code) + ": " + r.output);
  }
  return std::move(r.output);
}

void RabbitServer::close_all_connections(const std::string& reason) const {
  ctl_ok({"close_all_connections", reason});
}

std::vector<RabbitServer::QueueRow> RabbitServer::list_queues() const {
  std::istringstream in(ctl_ok({"list_queues", "--no-table-headers", "name", "messages_ready",
                                "messages_unacknowledged", "consumers"}));
  std::vector<QueueRow> rows;
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    QueueRow r;
    if (f >> r.name >> r.messages_ready >> r.messages_unacknowledged >> r.consumers)
      rows.push_back(r);
  }
  return rows;
}

std::size_t RabbitServer::list_connections() const {
  std::istringstream in(ctl_ok({"list_connections", "--no-table-headers", "pid"}));
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) ++n;
  }
  return n;
}

void RabbitServer::add_vhost(const std::string& vhost) const {
  ctl_ok({"add_vhost", vhost});
}
void RabbitServer::add_user(const std::string& user, const std::string& password) const {
  ctl_ok({"add_user", user, password});
}
void RabbitServer::set_permissions(const std::string& vhost, const std::string& user) const {
  ctl_ok({"set_permissions", "-p", vhost, user, ".*", ".*", ".*"});
}

RabbitServer& shared_rabbit_server() {
  static RabbitServer server;
  return server;
}

}  // namespace babelqueue::amqp::test
