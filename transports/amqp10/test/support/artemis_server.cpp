// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "artemis_server.hpp"

#include <babelqueue/testing/tls_certificates.hpp>

#include <babelqueue/testing/command.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <regex>
#include <stdexcept>
#include <utility>
#include <vector>

namespace babelqueue::amqp10::test {
namespace {

using babelqueue::testing::BrokerProcess;
using babelqueue::testing::write_file;
using std::chrono::milliseconds;

// Set by CMake: find_program()'s openssl (the TLS acceptor's certificates).
constexpr std::string_view kConfiguredOpenssl = BABELQUEUE_OPENSSL;
// The PKCS12 key store of the TLS acceptor (a throwaway certificate): its password.
constexpr std::string_view kKeyStorePassword = "bq-test-keystore";

// A fresh instance is ready in ~5 s on an idle 2-core machine (create included); much later when
// the machine is shared.
constexpr milliseconds kStartTimeout{60'000};
constexpr milliseconds kStopGrace{30'000};
constexpr milliseconds kProbeInterval{50};
constexpr milliseconds kProbeTimeout{500};
// What the broker logs once it serves (AMQ221007: "Server is now active").
constexpr std::string_view kStartedMarker = "AMQ221007";
constexpr std::string_view kPortTaken = "Address already in use";
// The AMQP 1.0 SASL protocol header (AMQP, protocol id 3, version 1.0.0); the broker answers it
// with its own.
constexpr std::array<char, 8> kSaslHeader = {'A', 'M', 'Q', 'P', 3, 1, 0, 0};

// A small heap is plenty for tests (RSS ~120-160 MB); C1 only and no shared perf data file start
// the JVM faster and leave nothing in /tmp. The last two are what the instance's profile sets
// and the broker needs.
constexpr std::string_view kJvmOptions =
    "-Xms64m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData "
    "-Djava.awt.headless=true -Dlog4j2.disableJmx=true "
    "--add-opens java.base/jdk.internal.misc=ALL-UNNAMED";

// The acceptors of broker.xml: one AMQP acceptor on loopback, its port a system property, and
// (Config::tls) one for AMQP over TLS with the key store `tls_dir`/server.p12.
std::string acceptors_xml(bool tls, const std::string& tls_dir) {
  std::string xml =
      "<acceptors>\n"
      "         <acceptor name=\"amqp\">tcp://127.0.0.1:${babelqueue.amqp.port}?protocols=AMQP;"
      "amqpCredits=1000;amqpLowCredits=300;amqpDuplicateDetection=true</acceptor>\n";
  if (tls) {
    xml +=
        "         <acceptor name=\"amqps\">tcp://127.0.0.1:${babelqueue.amqps.port}?"
        "protocols=AMQP;sslEnabled=true;keyStoreType=PKCS12;keyStorePath=" +
        tls_dir + "/server.p12;keyStorePassword=" + std::string(kKeyStorePassword) +
        "</acceptor>\n";
  }
  return xml + "      </acceptors>";
}

std::string tls_dir_of(const std::string& data_dir) {
  return data_dir + "/tls";
}

// The CA, the server certificate and its PKCS12 key store for the TLS acceptor, into `dir`.
void make_key_store(const std::string& dir) {
  const std::optional<std::string> openssl =
      babelqueue::testing::find_executable("openssl", kConfiguredOpenssl);
  if (!openssl) throw std::runtime_error("openssl not found: the TLS acceptor needs it");
  babelqueue::testing::make_test_certificates(*openssl, dir);
  const babelqueue::testing::CommandResult exported = babelqueue::testing::run_command(
      {*openssl, "pkcs12", "-export", "-in", dir + "/server.pem", "-inkey", dir + "/server.key",
       "-name", "server", "-out", dir + "/server.p12", "-passout",
       "pass:" + std::string(kKeyStorePassword)});
  if (exported.exit_code != 0)
    throw std::runtime_error("openssl pkcs12 -export failed: " + exported.output);
}
// Prepended to the catch-all address setting: no broker-side dead-lettering.
constexpr std::string_view kCatchAll = "<address-setting match=\"#\">";
constexpr std::string_view kNoBrokerDlq =
    "\n            <max-delivery-attempts>-1</max-delivery-attempts>";

// Java and the distribution (CMake sets find_program()'s java, the fetch script and where it
// keeps it): artemis_dist.sh runs once per process.
const babelqueue::testing::JvmDistribution& jvm() {
  static const babelqueue::testing::JvmDistribution result("Artemis test broker", BABELQUEUE_JAVA,
                                                           BABELQUEUE_ARTEMIS_DIST_SCRIPT,
                                                           BABELQUEUE_ARTEMIS_DIST_DIR);
  return result;
}

std::size_t count_of(const std::string& text, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

// `artemis create` of the instance in `instance` and its broker.xml edits; a no-op when made.
void create_instance(const std::string& instance, bool anonymous, bool tls,
                     const std::string& tls_dir) {
  const std::string broker_xml = instance + "/etc/broker.xml";
  if (!babelqueue::testing::read_file(broker_xml).empty()) return;
  std::vector<std::string> argv = {jvm().dir() + "/bin/artemis",
                                   "create",
                                   "--silent",
                                   "--user",
                                   std::string(ArtemisServer::kUser),
                                   "--password",
                                   std::string(ArtemisServer::kPassword),
                                   anonymous ? "--allow-anonymous" : "--require-login",
                                   "--host",
                                   "127.0.0.1",
                                   "--no-web",
                                   "--no-autotune",
                                   "--no-fsync",
                                   "--nio",
                                   "--no-hornetq-acceptor",
                                   "--no-mqtt-acceptor",
                                   "--no-stomp-acceptor",
                                   instance};
  const babelqueue::testing::CommandResult created =
      babelqueue::testing::run_command(argv, {{"JAVACMD", jvm().java()}});
  std::string xml = babelqueue::testing::read_file(broker_xml);
  if (created.exit_code != 0 || xml.empty())
    throw std::runtime_error("artemis create failed: " + created.output);
  const std::regex acceptors("<acceptors>[\\s\\S]*?</acceptors>");
  if (!std::regex_search(xml, acceptors) || xml.find(kCatchAll) == std::string::npos)
    throw std::runtime_error("unexpected broker.xml from artemis create in " + broker_xml);
  if (tls) make_key_store(tls_dir);
  xml = std::regex_replace(xml, acceptors, acceptors_xml(tls, tls_dir),
                           std::regex_constants::format_first_only);
  xml.insert(xml.find(kCatchAll) + kCatchAll.size(), kNoBrokerDlq);
  write_file(broker_xml, xml);
}

// True when 127.0.0.1:`port` answers the SASL header with the same header within kProbeTimeout.
bool answers_sasl_header(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::array<char, kSaslHeader.size()> reply{};
  std::size_t got = 0;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0 &&
      ::send(fd, kSaslHeader.data(), kSaslHeader.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(kSaslHeader.size())) {
    pollfd p{fd, POLLIN, 0};
    while (got < reply.size() && ::poll(&p, 1, static_cast<int>(kProbeTimeout.count())) == 1) {
      const ssize_t n = ::recv(fd, reply.data() + got, reply.size() - got, 0);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
  }
  ::close(fd);
  return got == reply.size() && reply == kSaslHeader;
}

}  // namespace

std::optional<std::string> artemis_server_unavailable() {
  return jvm().unavailable();
}

ArtemisServer::ArtemisServer() : ArtemisServer(Config{}) {}

ArtemisServer::ArtemisServer(Config config) : config_(config) {
  jvm().require();
  // How many "started" lines the log had when the current start began: the log is appended to
  // across restarts.
  auto started_before = std::make_shared<std::size_t>(0);
  BrokerProcess::Spec spec;
  spec.name = "artemis";
  spec.launch = [this, started_before](const BrokerProcess& p) {
    const std::string instance = p.dir() + "/instance";
    create_instance(instance, config_.anonymous, config_.tls, tls_dir_of(p.dir()));
    *started_before = count_of(babelqueue::testing::read_file(p.log_path()), kStartedMarker);
    return BrokerProcess::Launch{
        {instance + "/bin/artemis", "run"},
        {{"JAVACMD", jvm().java()},
         {"JAVA_ARGS", std::string(kJvmOptions)},
         {"JAVA_ARGS_APPEND",
          "-Dbabelqueue.amqp.port=" + std::to_string(p.port(0)) +
              (config_.tls ? " -Dbabelqueue.amqps.port=" + std::to_string(p.port(1))
                           : std::string())}}};
  };
  spec.ready = [started_before](const BrokerProcess& p) {
    return count_of(babelqueue::testing::read_file(p.log_path()), kStartedMarker) >
               *started_before &&
           answers_sasl_header(p.port());
  };
  spec.port_taken_marker = std::string(kPortTaken);
  spec.ports = config_.tls ? 2 : 1;
  spec.start_timeout = kStartTimeout;
  spec.probe_interval = kProbeInterval;
  spec.stop_grace = kStopGrace;
  start(std::move(spec));
}

std::string ArtemisServer::host_port() const {
  return "127.0.0.1:" + std::to_string(port());
}

int ArtemisServer::tls_port() const {
  if (!config_.tls) throw std::logic_error("ArtemisServer: no TLS acceptor (Config::tls)");
  return node().port(1);
}

std::string ArtemisServer::ca_file() const {
  if (!config_.tls) throw std::logic_error("ArtemisServer: no TLS acceptor (Config::tls)");
  return tls_dir_of(dir()) + "/ca.pem";
}

std::string ArtemisServer::wrong_ca_file() const {
  if (!config_.tls) throw std::logic_error("ArtemisServer: no TLS acceptor (Config::tls)");
  return tls_dir_of(dir()) + "/wrong-ca.pem";
}

ArtemisServer& shared_artemis_server() {
  return babelqueue::testing::shared_broker<ArtemisServer>("the shared Artemis broker");
}

}  // namespace babelqueue::amqp10::test
