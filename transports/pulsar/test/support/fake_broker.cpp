// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "fake_broker.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <stdexcept>
#include <utility>

namespace babelqueue::pulsar::test {
namespace {

using babelqueue::testing::BrokerProcess;
using std::chrono::milliseconds;

// Set by CMake: find_program()'s node, the peer's folder and the build tree its packages go to.
constexpr std::string_view kConfiguredNode = BABELQUEUE_NODE;
constexpr std::string_view kPeerDir = BABELQUEUE_PULSAR_PEER_DIR;
constexpr std::string_view kBuildDir = BABELQUEUE_BUILD_DIR;

constexpr milliseconds kControlTimeout{10'000};

// The node_modules directory, or why there is none: install.sh runs once per process.
const babelqueue::testing::Distribution& packages() {
  static const babelqueue::testing::Distribution result =
      babelqueue::testing::fetch_distribution(std::string(kPeerDir) + "/install.sh", kBuildDir);
  return result;
}

std::optional<std::string> node_executable() {
  return babelqueue::testing::find_executable("node", kConfiguredNode);
}

// A connection to 127.0.0.1:port, closed by the destructor.
class Socket {
 public:
  explicit Socket(int port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    if (fd_ < 0) throw std::runtime_error("fake pulsar broker: socket() failed");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      throw std::runtime_error("fake pulsar broker: no control channel on 127.0.0.1:" +
                               std::to_string(port));
    }
  }
  ~Socket() { ::close(fd_); }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  void write_all(std::string_view data) const {
    while (!data.empty()) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) throw std::runtime_error("fake pulsar broker: control write failed");
      data.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  // One line, without its '\n'.
  std::string read_line() const {
    std::string line;
    while (true) {
      pollfd readable{fd_, POLLIN, 0};
      if (::poll(&readable, 1, static_cast<int>(kControlTimeout.count())) <= 0) {
        throw std::runtime_error("fake pulsar broker: no control answer in 10 s");
      }
      char buffer[4096];
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) throw std::runtime_error("fake pulsar broker: the control channel closed");
      line.append(buffer, static_cast<std::size_t>(n));
      if (const std::size_t end = line.find('\n'); end != std::string::npos) {
        line.resize(end);
        return line;
      }
    }
  }

 private:
  int fd_;
};

}  // namespace

std::optional<std::string> fake_broker_unavailable() {
  if (!node_executable()) {
    return std::string(
        "fake Pulsar broker unavailable: node not found (configured at build time or on PATH); "
        "install Node.js >= 18 and npm (see testing/peers/pulsar/README.md)");
  }
  if (!packages().dir) {
    return "fake Pulsar broker unavailable: its npm packages could not be installed into " +
           std::string(kBuildDir) + "/pulsar-peer: " + packages().reason;
  }
  return std::nullopt;
}

babelqueue::testing::CommandResult run_fake_broker_check(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/bin/bash", std::string(kPeerDir) + "/check.sh",
                                   std::string(kBuildDir)};
  argv.insert(argv.end(), args.begin(), args.end());
  return babelqueue::testing::run_command(argv);
}

babelqueue::testing::CommandResult run_node_peer(const std::string& script,
                                                 const std::vector<std::string>& args,
                                                 const std::string& input) {
  if (const auto reason = fake_broker_unavailable()) throw std::runtime_error(*reason);
  std::vector<std::string> argv = {*node_executable(), script};
  argv.insert(argv.end(), args.begin(), args.end());
  return babelqueue::testing::run_command(argv, {{"NODE_PATH", *packages().dir}}, input);
}

FakeBroker::FakeBroker(std::vector<std::string> args) {
  if (const auto reason = fake_broker_unavailable()) throw std::runtime_error(*reason);
  BrokerProcess::Spec spec;
  spec.name = "fake-pulsar";
  spec.ports = 3;
  spec.launch = [args = std::move(args)](const BrokerProcess& p) {
    BrokerProcess::Launch launch{
        {*node_executable(), std::string(kPeerDir) + "/peer.js", "--port",
         std::to_string(p.port(0)), "--second-port", std::to_string(p.port(1)), "--control-port",
         std::to_string(p.port(2))},
        {{"NODE_PATH", *packages().dir}}};
    launch.argv.insert(launch.argv.end(), args.begin(), args.end());
    return launch;
  };
  // The control port opens last, once both broker listeners are up.
  spec.ready = [](const BrokerProcess& p) {
    return babelqueue::testing::accepts_tcp(p.port(2), milliseconds(200));
  };
  spec.port_taken_marker = "Address already in use";
  spec.stop_grace = milliseconds(2'000);
  start(std::move(spec));
}

std::string FakeBroker::url() const {
  return "pulsar://127.0.0.1:" + std::to_string(node().port(0));
}

std::string FakeBroker::second_url() const {
  return "pulsar://127.0.0.1:" + std::to_string(node().port(1));
}

Json FakeBroker::control(std::string_view line) const {
  const Socket socket(node().port(2));
  socket.write_all(std::string(line) + "\n");
  Json reply = Json::parse(socket.read_line());
  const Json* ok = reply.find("ok");
  if (ok == nullptr || !ok->is_bool() || !ok->as_bool()) {
    const Json* error = reply.find("error");
    throw std::runtime_error(
        "fake pulsar broker: '" + std::string(line.substr(0, 80)) +
        "': " + (error != nullptr && error->is_string() ? error->as_string() : reply.dump()));
  }
  return reply;
}

Json FakeBroker::enqueue(const Json& spec) const {
  return control("enqueue " + spec.dump());
}

std::int64_t FakeBroker::number(const Json& json, std::initializer_list<std::string_view> path) {
  const Json* at = &json;
  std::string where;
  for (const std::string_view step : path) {
    where.append("/").append(step);
    if (at->is_array()) {
      std::size_t index = 0;
      const auto [end, error] = std::from_chars(step.data(), step.data() + step.size(), index);
      at = error == std::errc() && end == step.data() + step.size() && index < at->size()
               ? &at->as_array()[index]
               : nullptr;
    } else {
      at = at->find(step);
    }
    if (at == nullptr)
      throw std::runtime_error("fake pulsar broker: no " + where + " in " + json.dump());
  }
  const auto value = at->as_int64();
  if (!value)
    throw std::runtime_error("fake pulsar broker: " + where + " is not an integer in " +
                             json.dump());
  return *value;
}

}  // namespace babelqueue::pulsar::test
