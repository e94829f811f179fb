// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "redis_server.hpp"

#include <babelqueue/spi/uri.hpp>

#include "raw_client.hpp"

#include <chrono>
#include <csignal>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace babelqueue::redis::test {
namespace {

using babelqueue::testing::BrokerProcess;

// Per readiness probe; a probe that times out is simply repeated until the start deadline.
constexpr std::chrono::milliseconds kProbeTimeout{1000};

// find_program()'s result, set by CMake.
constexpr std::string_view kConfiguredServer = BABELQUEUE_REDIS_SERVER;

void ignore_sigpipe_once() {
  // hiredis writes to sockets the server may have closed (killed clients, a stopped server); the
  // test must see EPIPE there, not die of SIGPIPE.
  [[maybe_unused]] static const auto previous = std::signal(SIGPIPE, SIG_IGN);
}

BrokerProcess::Spec redis_spec(const RedisServer::Config& config) {
  ignore_sigpipe_once();
  const std::optional<std::string> executable =
      babelqueue::testing::find_executable("redis-server", kConfiguredServer);
  if (!executable) throw std::runtime_error(*redis_server_unavailable());
  BrokerProcess::Spec spec;
  spec.name = "redis";
  spec.launch = [config, exe = *executable](const BrokerProcess& p) {
    BrokerProcess::Launch launch{
        {exe, "--bind", "127.0.0.1", "--port", std::to_string(p.port()), "--dir", p.dir()}};
    std::vector<std::string>& args = launch.argv;
    args.insert(args.end(), {"--save", "", "--appendonly", config.appendonly ? "yes" : "no"});
    if (config.appendonly) args.insert(args.end(), {"--appendfsync", "always"});
    args.insert(args.end(),
                {"--daemonize", "no", "--protected-mode", "no", "--logfile", p.log_path()});
    if (!config.requirepass.empty()) args.insert(args.end(), {"--requirepass", config.requirepass});
    args.insert(args.end(), config.extra_args.begin(), config.extra_args.end());
    return launch;
  };
  spec.ready = [password = config.requirepass](const BrokerProcess& p) {
    // A short timeout: a foreign process on the port may never answer. A process that took the
    // port before our child could bind it also answers PONG; only our own child counts (it exits
    // with "Address already in use" and BrokerProcess picks another port).
    RawClient client(p.port(), password, kProbeTimeout);
    const Reply pong = client.command({"PING"});
    return pong.type == Reply::Status && pong.str == "PONG" &&
           client.command({"INFO", "server"})
                   .str.find("process_id:" + std::to_string(p.pid()) + "\r\n") != std::string::npos;
  };
  spec.port_taken_marker = "Address already in use";
  return spec;
}

}  // namespace

std::optional<std::string> redis_server_unavailable() {
  if (babelqueue::testing::find_executable("redis-server", kConfiguredServer)) return std::nullopt;
  return "redis-server not found (BABELQUEUE_REDIS_SERVER=\"" + std::string(kConfiguredServer) +
         "\", nor on PATH); install it (Debian: apt-get install redis-server)";
}

RedisServer::RedisServer() : RedisServer(Config{}) {}

RedisServer::RedisServer(Config config)
    : config_(std::move(config)), process_(redis_spec(config_)) {}

std::string RedisServer::url(int db) const {
  // Appended piece by piece: GCC 12 -O2 reports a bogus -Wrestrict for `":" + std::string`.
  std::string url = "redis://";
  if (!config_.requirepass.empty()) {
    url += ':';
    url += babelqueue::spi::percent_encode(config_.requirepass);
    url += '@';
  }
  url += "127.0.0.1:";
  url += std::to_string(port());
  url += '/';
  url += std::to_string(db);
  return url;
}

}  // namespace babelqueue::redis::test
