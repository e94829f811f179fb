// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "rabbit_server.hpp"

#include <babelqueue/testing/tls_certificates.hpp>

#include <babelqueue/spi/uri.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include "raw_client.hpp"

namespace babelqueue::amqp::test {
namespace {

using babelqueue::testing::BrokerProcess;
using babelqueue::testing::write_file;

// find_program()'s results, set by CMake.
constexpr std::string_view kConfiguredServer = BABELQUEUE_RABBITMQ_SERVER;
constexpr std::string_view kConfiguredCtl = BABELQUEUE_RABBITMQCTL;
constexpr std::string_view kConfiguredEpmd = BABELQUEUE_EPMD;
constexpr std::string_view kConfiguredErlCall = BABELQUEUE_ERL_CALL;
constexpr std::string_view kConfiguredOpenssl = BABELQUEUE_OPENSSL;
// Where Debian keeps the scripts that run as the calling user; the /usr/sbin ones are wrappers
// that switch to the rabbitmq user.
constexpr std::string_view kRabbitmqScripts = "/usr/lib/rabbitmq/bin/";

// Per readiness probe; a probe that fails is repeated until the start deadline.
constexpr std::chrono::milliseconds kProbeTimeout{1000};
// Boot takes 4-9 s on a shared 2-core machine.
constexpr std::chrono::milliseconds kStartTimeout{60'000};
constexpr std::chrono::milliseconds kStopGrace{30'000};
constexpr std::chrono::milliseconds kProbeInterval{20};
// What the node prints when its AMQP or TLS listener port is taken (BrokerProcess retries), and
// when its distribution port is (the constructor retries).
constexpr std::string_view kListenerPortTaken = "eaddrinuse";
constexpr std::string_view kDistPortTaken = "dist_port_already_used";
constexpr int kMaxDistPortAttempts = 3;
// What epmd -d prints when another process holds its port, and for each names request.
constexpr std::string_view kEpmdPortTaken = "there is already a epmd running";
constexpr std::string_view kEpmdNamesRequest = "** got NAMES_REQ";
// The value eval() appends to the caller's expressions; erl_call prints `{ok, Value}`.
constexpr std::string_view kEvalDone = "{ok, bq_eval_done}";
// What erl_call prints when it could not set up the distribution connection to the node (the
// expressions were not sent). Under load (ASan builds) this happened about 1 s after the node
// reported "Server startup complete", with the node registered in epmd; a later attempt
// connects. Only this failure is retried, with a doubling pause, within kErlCallConnectBudget.
constexpr std::string_view kErlCallNoConnection = "failed to connect to node";
constexpr std::chrono::milliseconds kErlCallFirstPause{50};
constexpr std::chrono::milliseconds kErlCallMaxPause{1000};
constexpr std::chrono::milliseconds kErlCallConnectBudget{15'000};

// The configured path, else Debian's; not PATH, whose /usr/sbin ones are the wrappers.
std::optional<std::string> rabbitmq_script(std::string_view name, std::string_view configured) {
  for (std::string path :
       {std::string(configured), std::string(kRabbitmqScripts) + std::string(name)}) {
    if (::access(path.c_str(), X_OK) == 0) return path;
  }
  return std::nullopt;
}

std::optional<std::string> server_executable() {
  return rabbitmq_script("rabbitmq-server", kConfiguredServer);
}

std::string required(std::optional<std::string> path) {
  if (!path) throw std::runtime_error(*rabbit_server_unavailable());
  return *path;
}

std::string node_name_of(int port) {
  return "bq_" + std::to_string(port) + "@localhost";
}

// An Erlang binary literal of `text`'s bytes: no quoting or encoding question arises.
std::string erlang_binary(std::string_view text) {
  std::string out = "<<";
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(static_cast<unsigned char>(text[i]));
  }
  return out + ">>";
}

std::string hex_decode(std::string_view hex) {
  if (hex.size() % 2 != 0) throw std::runtime_error("bad hex from the node: " + std::string(hex));
  std::string out;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  }
  return out;
}

// The environment both the node and rabbitmqctl need: every file and directory in the data
// directory, the node's name and ports, and our epmd.
std::map<std::string, std::string> node_environment(const std::string& dir, int port, int dist_port,
                                                    int epmd_port) {
  return {
      {"HOME", dir + "/home"},
      {"RABBITMQ_CONF_ENV_FILE", dir + "/rabbitmq-env.conf"},
      {"RABBITMQ_CONFIG_FILE", dir + "/rabbitmq.conf"},
      {"RABBITMQ_ENABLED_PLUGINS_FILE", dir + "/enabled_plugins"},
      {"RABBITMQ_NODENAME", node_name_of(port)},
      {"RABBITMQ_MNESIA_BASE", dir + "/mnesia"},
      {"RABBITMQ_LOG_BASE", dir + "/log"},
      {"RABBITMQ_PID_FILE", dir + "/pid"},
      {"RABBITMQ_NODE_IP_ADDRESS", "127.0.0.1"},
      {"RABBITMQ_NODE_PORT", std::to_string(port)},
      {"RABBITMQ_DIST_PORT", std::to_string(dist_port)},
      {"ERL_EPMD_PORT", std::to_string(epmd_port)},
      {"ERL_EPMD_ADDRESS", "127.0.0.1"},
  };
}

// RabbitServer::eval for the node `port` names, with its data directory and epmd.
std::string erlang_eval(int port, const std::string& data_dir, int epmd_port,
                        std::string_view expressions) {
  const std::string erl_call =
      required(babelqueue::testing::find_executable("erl_call", kConfiguredErlCall));
  const std::string node = node_name_of(port);
  // erl_call is a C node: it starts no VM and listens nowhere. It reads the cookie from
  // $HOME/.erlang.cookie and finds the node through our epmd.
  const auto call = [&] {
    return run_command({erl_call, "-n", node, "-timeout", "30", "-e", "-fetch_stdout"},
                       {{"HOME", data_dir + "/home"}, {"ERL_EPMD_PORT", std::to_string(epmd_port)}},
                       std::string(expressions) + ", bq_eval_done.\n");
  };
  const auto deadline = std::chrono::steady_clock::now() + kErlCallConnectBudget;
  auto pause = kErlCallFirstPause;
  int attempts = 1;
  CommandResult result = call();
  // A refused connection ran nothing on the node, so trying again cannot run it twice; any
  // other failure (the expressions ran and failed, a timeout) is reported at once.
  while (result.exit_code != 0 && result.output.find(kErlCallNoConnection) != std::string::npos &&
         std::chrono::steady_clock::now() + pause < deadline) {
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, kErlCallMaxPause);
    ++attempts;
    result = call();
  }
  std::string output = result.output;
  while (!output.empty() && (output.back() == '\n' || output.back() == ' '))
    output.pop_back();
  if (result.exit_code != 0 || !output.ends_with(kEvalDone)) {
    throw std::runtime_error(
        "erl_call on " + node + " failed (exit " + std::to_string(result.exit_code) +
        (attempts > 1 ? ", attempt " + std::to_string(attempts) + " within " +
                            std::to_string(kErlCallConnectBudget.count()) + " ms"
                      : std::string()) +
        "): " + result.output);
  }
  output.resize(output.size() - kEvalDone.size());
  return output;
}

std::string tls_dir(const std::string& data_dir) {
  return data_dir + "/tls";
}

// A CA, a certificate for localhost / 127.0.0.1 it signs, and an unrelated CA, into `d`.
void make_certificates(const std::string& d) {
  babelqueue::testing::make_test_certificates(
      required(babelqueue::testing::find_executable("openssl", kConfiguredOpenssl)), d);
}

BrokerProcess::Spec epmd_spec() {
  const std::string exe = required(babelqueue::testing::find_executable("epmd", kConfiguredEpmd));
  BrokerProcess::Spec spec;
  spec.name = "epmd";
  // In the foreground, so its PID is ours (a node would otherwise spawn `epmd -daemon`, which
  // outlives it). -d: it logs the requests it serves and why it exits.
  spec.launch = [exe](const BrokerProcess& p) {
    return BrokerProcess::Launch{
        {exe, "-d", "-port", std::to_string(p.port()), "-address", "127.0.0.1"}};
  };
  // Another process on the port would answer too: only a request our epmd logged counts.
  spec.ready = [exe](const BrokerProcess& p) {
    return run_command({exe, "-port", std::to_string(p.port()), "-names"}).exit_code == 0 &&
           p.log_tail(1000).find(kEpmdNamesRequest) != std::string::npos;
  };
  spec.port_taken_marker = std::string(kEpmdPortTaken);
  return spec;
}

}  // namespace

std::optional<std::string> rabbit_server_unavailable() {
  std::string missing;
  const auto check = [&missing](std::string_view name, const std::optional<std::string>& path) {
    if (!path) missing += (missing.empty() ? "" : ", ") + std::string(name);
  };
  check("rabbitmq-server", server_executable());
  check("rabbitmqctl", rabbitmq_script("rabbitmqctl", kConfiguredCtl));
  check("epmd", babelqueue::testing::find_executable("epmd", kConfiguredEpmd));
  check("erl_call", babelqueue::testing::find_executable("erl_call", kConfiguredErlCall));
  check("openssl", babelqueue::testing::find_executable("openssl", kConfiguredOpenssl));
  if (missing.empty()) return std::nullopt;
  return "RabbitMQ test node unavailable: " + missing +
         " not found (configured at build time or in " + std::string(kRabbitmqScripts) +
         " or on PATH); install them (Debian: apt-get install rabbitmq-server erlang-base openssl)";
}

RabbitServer::RabbitServer() : RabbitServer(Config{}) {}

RabbitServer::RabbitServer(Config config) : config_(std::move(config)), epmd_(epmd_spec()) {
  const std::string exe = required(server_executable());
  BrokerProcess::Spec spec;
  spec.name = "rabbitmq";
  // AMQP, distribution, TLS.
  spec.ports = config_.tls ? 3 : 2;
  spec.launch = [this, exe](const BrokerProcess& p) {
    const std::string& d = p.dir();
    std::filesystem::create_directories(d + "/home");
    write_file(d + "/rabbitmq-env.conf", "");
    write_file(d + "/enabled_plugins", "[].\n");
    std::string conf = "listeners.tcp.1 = 127.0.0.1:" + std::to_string(p.port(0)) + "\n";
    // Sent in connection.start: the readiness probe recognises the node by it (the default is
    // the node name with the machine's host name).
    conf += "cluster_name = " + node_name_of(p.port(0)) + "\n";
    // Everything to stdout, which is the BrokerProcess log.
    conf += "log.file = false\nlog.console = true\nlog.console.level = info\n";
    if (config_.heartbeat) conf += "heartbeat = " + std::to_string(*config_.heartbeat) + "\n";
    if (config_.tls) {
      const std::string tls = tls_dir(d);
      if (!std::filesystem::exists(tls + "/ca.pem")) make_certificates(tls);
      conf += "listeners.ssl.1 = 127.0.0.1:" + std::to_string(p.port(2)) + "\n";
      conf += "ssl_options.cacertfile = " + tls + "/ca.pem\n";
      conf += "ssl_options.certfile = " + tls + "/server.pem\n";
      conf += "ssl_options.keyfile = " + tls + "/server.key\n";
      conf += "ssl_options.verify = verify_none\nssl_options.fail_if_no_peer_cert = false\n";
    }
    for (const std::string& line : config_.extra_conf)
      conf += line + "\n";
    write_file(d + "/rabbitmq.conf", conf);

    BrokerProcess::Launch launch{{exe}, node_environment(d, p.port(0), p.port(1), epmd_.port())};
    // The script execs erl only when input is allowed (else it stays as a shell that forwards
    // signals, and beam would be its child, outside PR_SET_PDEATHSIG); -noinput keeps the VM
    // off stdin. The distribution listens on 127.0.0.1 only.
    launch.env["RABBITMQ_ALLOW_INPUT"] = "true";
    launch.env["RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS"] =
        "-noinput -kernel inet_dist_use_interface {127,0,0,1}";
    // Boot and recovery about 1.5 s faster on a loaded 2-core machine, ~12 MB less RSS:
    // unbound schedulers (bound ones stall when other processes hold the cores) and a process
    // table of 65,536 instead of 1,048,576 entries (plenty for tests).
    launch.env["RABBITMQ_SCHEDULER_BIND_TYPE"] = "u";
    launch.env["RABBITMQ_MAX_NUMBER_OF_PROCESSES"] = "65536";
    return launch;
  };
  // A login that a foreign broker on the port could also accept counts only when the node
  // names itself as ours. The listeners open ~0.1 s before the boot ends; administration
  // (add_vhost, ...) waits for the end too.
  spec.ready = [this](const BrokerProcess& p) {
    RawClient::Endpoint endpoint;
    endpoint.port = p.port(0);
    endpoint.timeout = kProbeTimeout;
    const RawClient probe(endpoint);
    if (probe.server_property("cluster_name") != node_name_of(p.port(0))) return false;
    erlang_eval(p.port(0), p.dir(), epmd_.port(), "true = rabbit:is_booted()");
    return true;
  };
  spec.port_taken_marker = std::string(kListenerPortTaken);
  spec.start_timeout = kStartTimeout;
  spec.probe_interval = kProbeInterval;
  spec.stop_grace = kStopGrace;
  for (int attempt = 1;; ++attempt) {
    try {
      node_.emplace(spec);
      return;
    } catch (const std::runtime_error& e) {
      if (attempt == kMaxDistPortAttempts ||
          std::string_view(e.what()).find(kDistPortTaken) == std::string_view::npos) {
        throw;
      }
    }
  }
}

int RabbitServer::tls_port() const {
  require_tls("tls_port");
  return node_->port(2);
}

std::string RabbitServer::url(std::string_view vhost) const {
  std::string url = "amqp://guest:guest@127.0.0.1:";
  url += std::to_string(port());
  url += '/';
  if (vhost != "/") url += babelqueue::spi::percent_encode(vhost);
  return url;
}

std::string RabbitServer::tls_url(std::string_view vhost) const {
  std::string url = "amqps://guest:guest@localhost:";
  url += std::to_string(tls_port());
  url += '/';
  if (vhost != "/") url += babelqueue::spi::percent_encode(vhost);
  url += "?cacertfile=";
  url += babelqueue::spi::percent_encode(ca_file(), "/");
  return url;
}

std::string RabbitServer::ca_file() const {
  require_tls("ca_file");
  return tls_dir(dir()) + "/ca.pem";
}

std::string RabbitServer::wrong_ca_file() const {
  require_tls("wrong_ca_file");
  return tls_dir(dir()) + "/wrong-ca.pem";
}

std::string RabbitServer::node_name() const {
  return node_name_of(port());
}

void RabbitServer::require_tls(std::string_view what) const {
  if (!config_.tls)
    throw std::logic_error("RabbitServer::" + std::string(what) + " needs Config::tls");
}

CommandResult RabbitServer::ctl(const std::vector<std::string>& args) const {
  std::vector<std::string> argv{required(rabbitmq_script("rabbitmqctl", kConfiguredCtl)), "-n",
                                node_name()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::map<std::string, std::string> env =
      node_environment(dir(), port(), node_->port(1), epmd_.port());
  // The CLI is an Erlang node too: an ephemeral distribution port on 127.0.0.1 (its default is
  // 0.0.0.0 and a range of 11 ports shared with every other CLI on the machine).
  env["RABBITMQ_CTL_DIST_PORT_MIN"] = "0";
  env["RABBITMQ_CTL_DIST_PORT_MAX"] = "0";
  env["RABBITMQ_CTL_ERL_ARGS"] = "-kernel inet_dist_use_interface {127,0,0,1}";
  return run_command(argv, env);
}

std::string RabbitServer::eval(std::string_view expressions) const {
  return erlang_eval(port(), dir(), epmd_.port(), expressions);
}

void RabbitServer::sync_mnesia() const {
  eval("ok = mnesia:sync_log()");
}

void RabbitServer::close_all_connections(std::string_view reason) const {
  eval("ok = rabbit_networking:close_all_connections(binary_to_list(" + erlang_binary(reason) +
       "))");
}

std::vector<QueueInfo> RabbitServer::list_queues(std::string_view vhost) const {
  // One line per queue: the name in hex (any bytes survive), then the three counts.
  const std::string printed = eval(
      "[begin {resource, _, queue, N} = proplists:get_value(name, I), "
      "io:format(\"~s ~w ~w ~w~n\", [binary:encode_hex(N), "
      "proplists:get_value(messages_ready, I), proplists:get_value(messages_unacknowledged, I), "
      "proplists:get_value(consumers, I)]) end || I <- rabbit_amqqueue:info_all(" +
      erlang_binary(vhost) + ", [name, messages_ready, messages_unacknowledged, consumers])]");
  std::vector<QueueInfo> queues;
  std::istringstream lines(printed);
  std::string hex;
  QueueInfo queue;
  while (lines >> hex >> queue.messages_ready >> queue.messages_unacknowledged >> queue.consumers) {
    queue.name = hex_decode(hex);
    queues.push_back(queue);
  }
  if (!lines.eof()) throw std::runtime_error("unexpected list_queues output: " + printed);
  return queues;
}

std::size_t RabbitServer::list_connections() const {
  return std::stoul(eval("io:format(\"~b\", [length(rabbit_networking:connections())])"));
}

void RabbitServer::add_vhost(std::string_view vhost) const {
  eval("ok = rabbit_vhost:add(" + erlang_binary(vhost) + ", <<\"babelqueue-test\">>)");
}

void RabbitServer::add_user(std::string_view user, std::string_view password) const {
  eval("ok = rabbit_auth_backend_internal:add_user(" + erlang_binary(user) + ", " +
       erlang_binary(password) + ", <<\"babelqueue-test\">>)");
}

void RabbitServer::set_permissions(std::string_view user, std::string_view vhost,
                                   std::string_view configure, std::string_view write,
                                   std::string_view read) const {
  eval("ok = rabbit_auth_backend_internal:set_permissions(" + erlang_binary(user) + ", " +
       erlang_binary(vhost) + ", " + erlang_binary(configure) + ", " + erlang_binary(write) + ", " +
       erlang_binary(read) + ", <<\"babelqueue-test\">>)");
}

RabbitServer& shared_rabbit_server() {
  return babelqueue::testing::shared_broker<RabbitServer>("the shared RabbitMQ node");
}

}  // namespace babelqueue::amqp::test
