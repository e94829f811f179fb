// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "servicebus_peer.hpp"

#include <babelqueue/testing/command.hpp>
#include <babelqueue/testing/tls_certificates.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <stdexcept>
#include <utility>

namespace babelqueue::azureservicebus::test {
namespace {

using babelqueue::testing::BrokerProcess;

struct Tools {
  std::string node;
  std::string modules;  // NODE_PATH
  std::optional<std::string> missing;
};

// node, and the peer's npm packages installed once into the build tree (install.sh).
const Tools& tools() {
  static const Tools t = [] {
    Tools out;
    const auto node = babelqueue::testing::find_executable("node");
    const auto npm = babelqueue::testing::find_executable("npm");
    if (!node || !npm) {
      out.missing = "node and npm are needed for the scripted Service Bus peer";
      return out;
    }
    out.node = *node;
    const auto r = babelqueue::testing::run_command(
        {"/bin/bash", BABELQUEUE_SERVICEBUS_PEER_DIR "/install.sh", BABELQUEUE_BUILD_DIR});
    if (r.exit_code != 0) {
      out.missing = "the peer's npm install failed: " + r.output;
      return out;
    }
    // The last line of install.sh's output is the node_modules directory.
    std::string text = r.output;
    while (!text.empty() && text.back() == '\n')
      text.pop_back();
    out.modules = text.substr(text.find_last_of('\n') + 1);
    return out;
  }();
  return t;
}

// A line to the control port and the reply line.
std::string exchange(int port, const std::string& line) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("control socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot connect to the peer's control port");
  }
  const std::string out = line + "\n";
  std::size_t sent = 0;
  while (sent < out.size()) {
    const ssize_t n = ::send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  std::string reply;
  char buffer[4096];
  while (reply.find('\n') == std::string::npos) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    reply.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return reply.substr(0, reply.find('\n'));
}

}  // namespace

std::optional<std::string> ServiceBusPeer::unavailable() {
  return tools().missing;
}

ServiceBusPeer::ServiceBusPeer(std::vector<std::string> args, bool tls) {
  if (const auto why = unavailable()) throw std::runtime_error(*why);
  BrokerProcess::Spec spec;
  spec.name = "servicebus-peer";
  spec.ports = 2;
  spec.launch = [args, tls](const BrokerProcess& p) {
    BrokerProcess::Launch launch;
    launch.argv = {tools().node,     BABELQUEUE_SERVICEBUS_PEER_DIR "/peer.js",
                   "--port",         std::to_string(p.port(0)),
                   "--control-port", std::to_string(p.port(1))};
    launch.argv.insert(launch.argv.end(), args.begin(), args.end());
    if (tls) {
      const auto openssl = babelqueue::testing::find_executable("openssl", BABELQUEUE_OPENSSL);
      if (!openssl) throw std::runtime_error("openssl not found: the peer's TLS listener needs it");
      const std::string dir = p.dir() + "/tls";
      babelqueue::testing::make_test_certificates(*openssl, dir);
      launch.argv.insert(launch.argv.end(),
                         {"--tls-cert", dir + "/server.pem", "--tls-key", dir + "/server.key"});
    }
    launch.env = {{"NODE_PATH", tools().modules}};
    return launch;
  };
  // The control port listens after the AMQP one.
  spec.ready = [](const BrokerProcess& p) {
    return babelqueue::testing::accepts_tcp(p.port(1), std::chrono::milliseconds(200));
  };
  spec.port_taken_marker = "EADDRINUSE";
  process_ = std::make_unique<BrokerProcess>(std::move(spec));
}

std::string ServiceBusPeer::url(std::string_view query) const {
  std::string u = "sb://k:v@127.0.0.1:";
  u += std::to_string(port());
  u += "?tls=0";
  if (!query.empty()) {
    u += '&';
    u += query;
  }
  return u;
}

std::string ServiceBusPeer::connection_string() const {
  std::string cs = "Endpoint=sb://127.0.0.1:";
  cs += std::to_string(port());
  cs += "/;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true";
  return cs;
}

Json ServiceBusPeer::control(const std::string& line) {
  const std::string reply = exchange(process_->port(1), line);
  Json json = Json::parse(reply);
  const Json* ok = json.find("ok");
  EXPECT_TRUE(ok != nullptr && ok->as_bool()) << line << " -> " << reply;
  return json;
}

std::int64_t ServiceBusPeer::count(const std::string& entity, const std::string& field) {
  const Json reply = control("counts " + entity);
  const Json* v = reply.find(field);
  return v == nullptr ? -1 : v->as_int64().value_or(-1);
}

ServiceBusPeer& shared_peer() {
  return babelqueue::testing::shared_broker<ServiceBusPeer>("the shared Service Bus peer");
}

}  // namespace babelqueue::azureservicebus::test
