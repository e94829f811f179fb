// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "kafka_server.hpp"

#include <babelqueue/testing/command.hpp>

#include <array>
#include <random>
#include <stdexcept>
#include <utility>

#include "raw_kafka.hpp"

namespace babelqueue::kafka::test {
namespace {

using babelqueue::testing::BrokerProcess;
using babelqueue::testing::write_file;
using std::chrono::milliseconds;

// A fresh node is ready in 2-4 s on an idle 2-core machine; much later when it is shared.
constexpr milliseconds kStartTimeout{60'000};
constexpr milliseconds kStopGrace{30'000};
constexpr milliseconds kProbeInterval{50};
constexpr milliseconds kProbeConnect{200};
constexpr milliseconds kProbeTimeout{5'000};
// What the broker logs when a listener's port is taken (BrokerProcess retries on new ports).
constexpr std::string_view kPortTaken = "Address already in use";
// The group and topic of the readiness probe's offset fetch.
constexpr std::string_view kProbeGroup = "babelqueue-ready-probe";
constexpr std::string_view kProbeTopic = "babelqueue-ready-probe";

// A small heap is plenty for tests (RSS ~280 MB); C1 only and no shared perf data file start
// the JVM faster and leave nothing in /tmp. The log lines carry the time of day.
const std::vector<std::string> kJvmOptions = {
    "-Xms64m",
    "-Xmx256m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:-UsePerfData",
    "-Djava.awt.headless=true",
    "-Dorg.slf4j.simpleLogger.showDateTime=true",
    "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
};

// Formats the log dir ($3) with the cluster id ($4) unless done, then execs the broker, so the
// PID is the JVM's. $1 java, $2 the jars, $5 server.properties, then the JVM options.
constexpr std::string_view kLaunchScript = R"(set -e
java=$1 libs=$2 log_dir=$3 cluster_id=$4 properties=$5
shift 5
if [ ! -f "$log_dir/meta.properties" ]; then
  "$java" "$@" -cp "$libs/*" kafka.tools.StorageTool format --cluster-id="$cluster_id" -c "$properties"
fi
exec "$java" "$@" -cp "$libs/*" kafka.Kafka "$properties"
)";

// Java and the jars (CMake sets find_program()'s java, the fetch script and where it keeps
// them): kafka_dist.sh runs once per process.
const babelqueue::testing::JvmDistribution& jvm() {
  static const babelqueue::testing::JvmDistribution result("Kafka test broker", BABELQUEUE_JAVA,
                                                           BABELQUEUE_KAFKA_DIST_SCRIPT,
                                                           BABELQUEUE_KAFKA_DIST_DIR);
  return result;
}

// A new cluster id: 16 random bytes, URL-safe base64 without padding (Kafka's Uuid form).
std::string new_cluster_id() {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::random_device random;
  std::array<unsigned char, 18> bytes{};  // 16 random ones, two zero ones for the padding
  for (std::size_t i = 0; i < 16; ++i)
    bytes[i] = static_cast<unsigned char>(random());
  std::string id;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const unsigned group =
        (unsigned{bytes[i]} << 16) | (unsigned{bytes[i + 1]} << 8) | bytes[i + 2];
    for (int shift = 18; shift >= 0; shift -= 6)
      id += kAlphabet[(group >> shift) & 0x3f];
  }
  id.resize(22);
  return id;
}

std::string server_properties(const BrokerProcess& p, const KafkaServer::Config& config) {
  const std::string plaintext = "127.0.0.1:" + std::to_string(p.port(0));
  const std::string controller = "127.0.0.1:" + std::to_string(p.port(1));
  std::string text = "process.roles=broker,controller\nnode.id=1\n";
  text += "controller.quorum.voters=1@" + controller + "\n";
  text += "listeners=PLAINTEXT://" + plaintext + ",CONTROLLER://" + controller + "\n";
  text += "advertised.listeners=PLAINTEXT://" + plaintext + "\n";
  text += "controller.listener.names=CONTROLLER\n";
  text += "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n";
  text += "inter.broker.listener.name=PLAINTEXT\n";
  text += "log.dirs=" + p.dir() + "/log\n";
  // One broker: every internal topic has one replica; one offsets partition is created fastest.
  text += "offsets.topic.replication.factor=1\noffsets.topic.num.partitions=1\n";
  text += "transaction.state.log.replication.factor=1\ntransaction.state.log.min.isr=1\n";
  text += "share.coordinator.state.topic.replication.factor=1\n";
  text += "share.coordinator.state.topic.min.isr=1\n";
  text += "group.initial.rebalance.delay.ms=0\nauto.create.topics.enable=true\n";
  // After a kill -9 the controller keeps the dead broker's registration until its session
  // times out (default 9 s, ~12 s to restart); 2 s with heartbeats every 0.5 s: ~4 s.
  text += "broker.session.timeout.ms=2000\nbroker.heartbeat.interval.ms=500\n";
  text += "num.partitions=" + std::to_string(config.partitions) + "\n";
  for (const std::string& line : config.extra_properties)
    text += line + "\n";
  return text;
}

}  // namespace

std::optional<std::string> kafka_server_unavailable() {
  return jvm().unavailable();
}

KafkaServer::KafkaServer() : KafkaServer(Config{}) {}

KafkaServer::KafkaServer(Config config)
    : config_(std::move(config)), cluster_id_(new_cluster_id()) {
  jvm().require();
  BrokerProcess::Spec spec;
  spec.name = "kafka";
  // PLAINTEXT, CONTROLLER.
  spec.ports = 2;
  spec.launch = [this](const BrokerProcess& p) {
    const std::string properties = p.dir() + "/server.properties";
    write_file(properties, server_properties(p, config_));
    BrokerProcess::Launch launch{{"/bin/sh", "-c", std::string(kLaunchScript), "kafka",
                                  jvm().java(), jvm().dir(), p.dir() + "/log", cluster_id_,
                                  properties}};
    launch.argv.insert(launch.argv.end(), kJvmOptions.begin(), kJvmOptions.end());
    return launch;
  };
  // Another broker on the port would answer too: only ours has this cluster id.
  spec.ready = [this](const BrokerProcess& p) {
    if (!babelqueue::testing::accepts_tcp(p.port(0), kProbeConnect)) return false;
    RawKafka probe("127.0.0.1:" + std::to_string(p.port(0)));
    if (probe.cluster_id(kProbeTimeout) != cluster_id_) return false;
    static_cast<void>(
        probe.committed(std::string(kProbeGroup), std::string(kProbeTopic), 0, kProbeTimeout));
    return true;
  };
  spec.port_taken_marker = std::string(kPortTaken);
  spec.start_timeout = kStartTimeout;
  spec.probe_interval = kProbeInterval;
  spec.stop_grace = kStopGrace;
  start(std::move(spec));
}

std::string KafkaServer::bootstrap() const {
  return "127.0.0.1:" + std::to_string(port());
}

std::string KafkaServer::url(std::string_view query) const {
  std::string url = "kafka://" + bootstrap() + "/";
  if (!query.empty()) {
    url += '?';
    url += query;
  }
  return url;
}

KafkaServer& shared_kafka_server() {
  return babelqueue::testing::shared_broker<KafkaServer>("the shared Kafka broker");
}

}  // namespace babelqueue::kafka::test
