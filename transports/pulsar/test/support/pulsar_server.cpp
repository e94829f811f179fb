// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "pulsar_server.hpp"

#include <babelqueue/testing/command.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
#include <utility>

#include "raw_pulsar.hpp"

namespace babelqueue::pulsar::test {
namespace {

using babelqueue::testing::BrokerProcess;
using babelqueue::testing::write_file;
using std::chrono::milliseconds;

// Ready in ~7 s on an idle 2-core machine (fresh or restarted); much later when it is shared.
constexpr milliseconds kStartTimeout{120'000};
constexpr milliseconds kStopGrace{30'000};
constexpr milliseconds kProbeInterval{100};
constexpr milliseconds kProbeTimeout{5'000};
// What Netty logs when a listener's port is taken (BrokerProcess retries on new ports).
constexpr std::string_view kPortTaken = "Address already in use";
constexpr std::string_view kProbeTopic = "persistent://public/default/babelqueue-ready-probe";

// A small heap is plenty for tests; C1 only and no shared perf data file start the JVM faster
// and leave nothing in /tmp. The --add-opens are those Pulsar's own launch script passes on
// Java 17 (Netty, BookKeeper and the metrics read JDK internals). log4j2 has no configuration
// file here: its default one, at INFO, logs to stdout.
const std::vector<std::string> kJvmOptions = {
    "-Xms64m",
    "-Xmx512m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:-UsePerfData",
    "-Djava.awt.headless=true",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dorg.apache.logging.log4j.level=INFO",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.util.zip=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.platform=ALL-UNNAMED",
    "--add-opens=java.base/sun.net=ALL-UNNAMED",
    "--add-opens=java.management/sun.management=ALL-UNNAMED",
    "--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED",
};

// Java and the jars (CMake sets find_program()'s java, the fetch script and where it keeps
// them): pulsar_dist.sh runs once per process.
const babelqueue::testing::JvmDistribution& jvm() {
  static const babelqueue::testing::JvmDistribution result("Pulsar test broker", BABELQUEUE_JAVA,
                                                           BABELQUEUE_PULSAR_DIST_SCRIPT,
                                                           BABELQUEUE_PULSAR_DIST_DIR);
  return result;
}

std::string standalone_conf(const BrokerProcess& p, const PulsarServer::Config& config) {
  std::string text = "clusterName=standalone\n";
  text += "bindAddress=127.0.0.1\nadvertisedAddress=127.0.0.1\n";
  text += "brokerServicePort=" + std::to_string(p.port(0)) + "\n";
  text += "webServicePort=" + std::to_string(p.port(1)) + "\n";
  // One bookie: every ledger has one copy.
  text += "managedLedgerDefaultEnsembleSize=1\nmanagedLedgerDefaultWriteQuorum=1\n";
  text += "managedLedgerDefaultAckQuorum=1\n";
  text += "functionsWorkerEnabled=false\nwebSocketServiceEnabled=false\n";
  text += "transactionCoordinatorEnabled=false\n";
  text += "allowAutoTopicCreation=true\nallowAutoTopicCreationType=non-partitioned\n";
  // NAR extraction and the plugin directories inside the data directory, not /tmp.
  text += "narExtractionDirectory=" + p.dir() + "/nar\n";
  for (const std::string& line : config.extra_properties)
    text += line + "\n";
  return text;
}

}  // namespace

std::optional<std::string> pulsar_server_unavailable() {
  return jvm().unavailable();
}

std::string pulsar_java() {
  return jvm().java();
}

std::string pulsar_jars() {
  return jvm().dir();
}

PulsarServer::PulsarServer() : PulsarServer(Config{}) {}

PulsarServer::PulsarServer(Config config) : config_(std::move(config)) {
  jvm().require();
  BrokerProcess::Spec spec;
  spec.name = "pulsar";
  // Binary protocol, web service.
  spec.ports = 2;
  spec.launch = [this](const BrokerProcess& p) {
    const std::string conf = p.dir() + "/standalone.conf";
    write_file(conf, standalone_conf(p, config_));
    BrokerProcess::Launch launch{{jvm().java()}};
    launch.argv.insert(launch.argv.end(), kJvmOptions.begin(), kJvmOptions.end());
    launch.argv.insert(
        launch.argv.end(),
        {"-cp", jvm().dir() + "/*", "org.apache.pulsar.PulsarStandaloneStarter", "--config", conf,
         "--no-functions-worker", "--no-stream-storage", "--advertised-address", "127.0.0.1",
         "--metadata-dir", p.dir() + "/metadata", "--bookkeeper-dir", p.dir() + "/bookkeeper"});
    return launch;
  };
  spec.ready = [](const BrokerProcess& p) {
    if (!babelqueue::testing::accepts_tcp(p.port(0), kProbeTimeout)) return false;
    RawPulsar probe(p.port(0), kProbeTimeout);
    return probe.lookup(std::string(kProbeTopic)).response() ==
           proto::CommandLookupTopicResponse::Connect;
  };
  spec.port_taken_marker = std::string(kPortTaken);
  spec.start_timeout = kStartTimeout;
  spec.probe_interval = kProbeInterval;
  spec.stop_grace = kStopGrace;
  start(std::move(spec));
}

std::string PulsarServer::service_url() const {
  return "pulsar://127.0.0.1:" + std::to_string(port());
}

std::string PulsarServer::admin_url() const {
  return "http://127.0.0.1:" + std::to_string(web_port());
}

int admin_put(const PulsarServer& server, const std::string& path, const std::string& body) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(server.web_port()));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    throw std::runtime_error("connect to the admin port failed");
  }
  const std::string request =
      "PUT " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
      "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: close\r\n\r\n" + body;
  std::size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  std::string response;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    response.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (response.rfind("HTTP/1.1 ", 0) != 0) throw std::runtime_error("no HTTP answer: " + response);
  return std::stoi(response.substr(9, 3));
}

PulsarServer& shared_pulsar_server() {
  return babelqueue::testing::shared_broker<PulsarServer>("the shared Pulsar broker");
}

}  // namespace babelqueue::pulsar::test
