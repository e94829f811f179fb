// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "sqs_emulator.hpp"

#include <babelqueue/testing/command.hpp>

#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "raw_sqs.hpp"

namespace babelqueue::sqs::test {
namespace {

using babelqueue::Json;
using babelqueue::testing::BrokerProcess;
using std::chrono::milliseconds;

// Set by CMake: the run script.
constexpr std::string_view kRunScript = BABELQUEUE_ELASTICMQ_RUN_SCRIPT;

// ElasticMQ is ready in 2-5 s on a 2-core machine; much later when it is shared.
constexpr milliseconds kStartTimeout{60'000};
constexpr milliseconds kStopGrace{10'000};
constexpr milliseconds kProbeInterval{50};
constexpr milliseconds kProbeTimeout{2'000};
// What ElasticMQ logs when it has bound its port, and when it could not (it then keeps running).
constexpr std::string_view kBound = "Started SQS rest server";
constexpr std::string_view kPortTaken = "Address already in use";
// How long approximate_depth() holds what it received before releasing it all.
constexpr int kDepthHoldSeconds = 30;
constexpr std::size_t kBatch = 10;  // SQS's most entries per batch call and per receive

// A small heap is plenty for tests (RSS ~190 MB); C1 only and no shared perf data file start
// the JVM faster and leave nothing in /tmp.
const std::vector<std::string> kJvmOptions = {
    "-Xms64m",          "-Xmx256m",
    "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
    "-XX:-UsePerfData", "-Djava.awt.headless=true",
};

// Java and the jars (CMake sets find_program()'s java, the fetch script and where it keeps
// them): elasticmq_dist.sh runs once per process.
const babelqueue::testing::JvmDistribution& jvm() {
  static const babelqueue::testing::JvmDistribution result(
      "SQS emulator (ElasticMQ)", BABELQUEUE_JAVA, BABELQUEUE_ELASTICMQ_DIST_SCRIPT,
      BABELQUEUE_ELASTICMQ_DIST_DIR);
  return result;
}

std::uintmax_t size_of(const std::string& path) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  return error ? 0 : size;
}

std::string read_from(const std::string& path, std::uintmax_t offset) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// RFC 3986 unreserved characters stay, everything else is %XX.
std::string percent_encode(std::string_view text) {
  static constexpr std::string_view kHex = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    }
  }
  return out;
}

std::string loopback_endpoint(int port) {
  return "http://127.0.0.1:" + std::to_string(port);
}

// The raw client with the tests' credentials (ElasticMQ accepts any signature).
RawSqs raw_client(int port) {
  return RawSqs(loopback_endpoint(port), kRegion, kAccessKeyId, kSecretAccessKey);
}

}  // namespace

std::optional<std::string> sqs_emulator_unavailable() {
  return jvm().unavailable();
}

SqsEmulator::SqsEmulator() {
  jvm().require();
  // Where this (re)start's output begins in the log, which keeps every earlier run's.
  auto log_start = std::make_shared<std::uintmax_t>(0);
  BrokerProcess::Spec spec;
  spec.name = "elasticmq";
  spec.launch = [log_start](const BrokerProcess& p) {
    *log_start = size_of(p.log_path());
    BrokerProcess::Launch launch{
        {"/bin/bash", std::string(kRunScript), jvm().dir(), std::to_string(p.port()), p.dir()},
        {{"BABELQUEUE_JAVA", jvm().java()}}};
    launch.argv.insert(launch.argv.end(), kJvmOptions.begin(), kJvmOptions.end());
    return launch;
  };
  // Another server on the port would answer too: ours must have logged that it bound the port.
  // ElasticMQ keeps running when the port was taken, so the probe kills it: BrokerProcess then
  // sees it exit with the marker in its log and retries on a new port.
  spec.ready = [log_start](const BrokerProcess& p) {
    const std::string log = read_from(p.log_path(), *log_start);
    if (log.find(kPortTaken) != std::string::npos) {
      ::kill(p.pid(), SIGKILL);
      return false;
    }
    if (log.find(kBound) == std::string::npos) return false;
    return raw_client(p.port()).post("ListQueues", "{}", kProbeTimeout).status == 200;
  };
  spec.port_taken_marker = std::string(kPortTaken);
  spec.start_timeout = kStartTimeout;
  spec.probe_interval = kProbeInterval;
  spec.stop_grace = kStopGrace;
  start(std::move(spec));
}

std::string SqsEmulator::endpoint() const {
  return loopback_endpoint(port());
}

std::string SqsEmulator::url(std::string_view query) const {
  std::string url = "sqs://" + std::string(kAccessKeyId) + ":" + percent_encode(kSecretAccessKey) +
                    "@" + std::string(kRegion) + "?endpoint=" + endpoint();
  if (!query.empty()) {
    url += '&';
    url += query;
  }
  return url;
}

Options SqsEmulator::options() const {
  Options o;
  o.region = std::string(kRegion);
  o.endpoint = endpoint();
  o.credentials.access_key_id = std::string(kAccessKeyId);
  o.credentials.secret_access_key = std::string(kSecretAccessKey);
  return o;
}

Json SqsEmulator::call(std::string_view action, const Json& request) {
  return raw_client(port()).call(action, request);
}

std::string SqsEmulator::create_queue(std::string_view name,
                                      const std::map<std::string, std::string>& attributes) {
  Json request = Json::object({{"QueueName", name}});
  if (!attributes.empty()) {
    Json attrs = Json::object();
    for (const auto& [key, value] : attributes)
      attrs[key] = value;
    request["Attributes"] = std::move(attrs);
  }
  return call("CreateQueue", request)["QueueUrl"].as_string();
}

std::map<std::string, std::string> SqsEmulator::queue_attributes(std::string_view name) {
  RawSqs raw = raw_client(port());
  const std::string url =
      raw.call("GetQueueUrl", Json::object({{"QueueName", name}}))["QueueUrl"].as_string();
  const Json reply =
      raw.call("GetQueueAttributes",
               Json::object({{"QueueUrl", url}, {"AttributeNames", Json::array({"All"})}}));
  std::map<std::string, std::string> attributes;
  if (const Json* found = reply.find("Attributes")) {
    for (const auto& [key, value] : found->as_object())
      attributes.emplace(key, value.as_string());
  }
  return attributes;
}

std::string SqsEmulator::queue_arn(std::string_view name) {
  return queue_attributes(name).at("QueueArn");
}

std::size_t SqsEmulator::approximate_depth(std::string_view name) {
  RawSqs raw = raw_client(port());
  const std::string url =
      raw.call("GetQueueUrl", Json::object({{"QueueName", name}}))["QueueUrl"].as_string();
  std::set<std::string> seen;
  std::vector<std::string> held;  // receipt handles to release
  for (;;) {
    const Json reply =
        raw.call("ReceiveMessage", Json::object({{"QueueUrl", url},
                                                 {"MaxNumberOfMessages", static_cast<int>(kBatch)},
                                                 {"VisibilityTimeout", kDepthHoldSeconds},
                                                 {"WaitTimeSeconds", 0}}));
    const Json* messages = reply.find("Messages");
    if (messages == nullptr || messages->as_array().empty()) break;
    for (const Json& m : messages->as_array()) {
      seen.insert(m.find("MessageId")->as_string());
      held.push_back(m.find("ReceiptHandle")->as_string());
    }
  }
  for (std::size_t first = 0; first < held.size(); first += kBatch) {
    Json entries = Json::array();
    for (std::size_t i = first; i < held.size() && i < first + kBatch; ++i) {
      entries.push_back(Json::object(
          {{"Id", std::to_string(i)}, {"ReceiptHandle", held[i]}, {"VisibilityTimeout", 0}}));
    }
    raw.call("ChangeMessageVisibilityBatch",
             Json::object({{"QueueUrl", url}, {"Entries", std::move(entries)}}));
  }
  return seen.size();
}

bool SqsEmulator::persistent() const {
  // elasticmq_run.sh keeps queues and messages in H2 with WRITE_DELAY=0 (the smoke test checks
  // that they survive a kill -9).
  return true;
}

SqsEmulator& shared_sqs_emulator() {
  return babelqueue::testing::shared_broker<SqsEmulator>("the shared SQS emulator");
}

}  // namespace babelqueue::sqs::test
