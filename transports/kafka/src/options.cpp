// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Option validation and the librdkafka configurations. Every property goes through
// RdKafka::Conf::set, whose refusal becomes a ConfigError naming the property; the value of a
// secret property is never shown.

#include "options.hpp"

#include <babelqueue/spi/text.hpp>

#include <librdkafka/rdkafkacpp.h>

#include <array>
#include <map>
#include <string>

namespace babelqueue::kafka::detail {
namespace {

using spi::quoted;

[[noreturn]] void invalid(const std::string& what) {
  throw ConfigError("kafka options: " + what);
}

// The commit protocol (KFK-6, KFK-11) is the transport's: these may not be overridden.
constexpr std::array<std::string_view, 2> kFixed{"enable.auto.commit", "enable.auto.offset.store"};

bool secret(std::string_view name) {
  return name.find("password") != std::string_view::npos ||
         name.find("secret") != std::string_view::npos || name == "sasl.oauthbearer.config";
}

class ConfBuilder {
 public:
  ConfBuilder(const Options& options, std::string_view client)
      : options_(options),
        client_(client),
        conf_(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL)) {}

  void set(const std::string& name, const std::string& value) {
    std::string err;
    if (conf_->set(name, value, err) != RdKafka::Conf::CONF_OK) {
      invalid(std::string(client_) + " property " + quoted(name) + ": " +
              (secret(name) ? std::string("refused") : scrub(err, options_.sasl_password)));
    }
  }
  void set_if(const std::string& name, const std::string& value) {
    if (!value.empty()) set(name, value);
  }
  void pass_through(const std::map<std::string, std::string>& properties, std::string_view map) {
    for (const auto& [name, value] : properties) {
      for (const std::string_view fixed : kFixed) {
        if (name == fixed) {
          invalid(std::string(map) + " property " + quoted(name) +
                  " cannot be set: the transport commits acked offsets itself (KFK-6, KFK-11)");
        }
      }
      if (name == "partition.assignment.strategy" &&
          value.find("cooperative-sticky") != std::string::npos) {
        invalid(std::string(map) +
                " property \"partition.assignment.strategy\": cooperative-sticky is refused on "
                "librdkafka 2.0.2 (it aborts when a never-assigned consumer closes)");
      }
      set(name, value);
    }
  }
  void callbacks(const Callbacks& cb) {
    std::string err;
    if (cb.event != nullptr) conf_->set("event_cb", cb.event, err);
    if (cb.delivery != nullptr) conf_->set("dr_cb", cb.delivery, err);
    if (cb.rebalance != nullptr) conf_->set("rebalance_cb", cb.rebalance, err);
    if (cb.commit != nullptr) conf_->set("offset_commit_cb", cb.commit, err);
  }
  void common() {
    set("bootstrap.servers", options_.brokers);
    set("client.id", options_.client_id);
    set_if("security.protocol", options_.security_protocol);
    set_if("sasl.mechanism", options_.sasl_mechanism);
    set_if("sasl.username", options_.sasl_username);
    set_if("sasl.password", options_.sasl_password);
    set_if("ssl.ca.location", options_.ssl_ca_location);
  }
  std::unique_ptr<RdKafka::Conf> take() { return std::move(conf_); }

 private:
  const Options& options_;
  std::string_view client_;
  std::unique_ptr<RdKafka::Conf> conf_;
};

}  // namespace

std::string scrub(std::string_view text, std::string_view secret_text) {
  std::string out(text);
  if (secret_text.empty()) return out;
  for (std::size_t at = out.find(secret_text); at != std::string::npos;
       at = out.find(secret_text, at + 3)) {
    out.replace(at, secret_text.size(), "***");
  }
  return out;
}

std::string_view assignor_name(Assignor assignor) noexcept {
  return assignor == Assignor::RoundRobin ? "roundrobin" : "range";
}

void validate(const Options& o) {
  if (o.brokers.empty()) invalid("empty brokers (bootstrap.servers)");
  if (o.group_id.empty()) invalid("empty group_id");
  if (o.publish_timeout.count() <= 0 || o.publish_timeout.count() > kMaxMilliseconds) {
    invalid("publish_timeout must be 1.." + std::to_string(kMaxMilliseconds) + " ms, got " +
            std::to_string(o.publish_timeout.count()));
  }
  const auto non_negative = [](std::string_view name, std::chrono::milliseconds v) {
    if (v.count() < 0 || v.count() > kMaxMilliseconds) {
      invalid(std::string(name) + " must be 0.." + std::to_string(kMaxMilliseconds) + " ms, got " +
              std::to_string(v.count()));
    }
  };
  non_negative("max_wait", o.max_wait);
  non_negative("revoke_grace", o.revoke_grace);
  non_negative("linger", o.linger);
  if (o.commit_batch < 1 || o.commit_batch > static_cast<std::size_t>(kMaxCommitBatch)) {
    invalid("commit_batch must be 1.." + std::to_string(kMaxCommitBatch) + ", got " +
            std::to_string(o.commit_batch));
  }
  if (o.partitions < 0 || o.partitions > kMaxPartitions) {
    invalid("partitions must be 0.." + std::to_string(kMaxPartitions) + ", got " +
            std::to_string(o.partitions));
  }
  if (o.replication_factor == 0 || o.replication_factor < -1 ||
      o.replication_factor > kMaxReplicationFactor) {
    invalid("replication_factor must be -1 or 1.." + std::to_string(kMaxReplicationFactor) +
            ", got " + std::to_string(o.replication_factor));
  }
}

std::unique_ptr<RdKafka::Conf> producer_conf(const Options& o, const Callbacks& callbacks) {
  ConfBuilder b(o, "producer");
  b.common();
  b.set("acks", "all");
  b.set("enable.idempotence", o.idempotence ? "true" : "false");
  b.set("linger.ms", std::to_string(o.linger.count()));
  b.set("message.timeout.ms", std::to_string(o.publish_timeout.count()));
  b.pass_through(o.properties, "properties");
  b.pass_through(o.producer_properties, "producer_properties");
  b.callbacks(callbacks);
  return b.take();
}

std::unique_ptr<RdKafka::Conf> consumer_conf(const Options& o, const std::string& group_id,
                                             const Callbacks& callbacks) {
  ConfBuilder b(o, "consumer");
  b.common();
  b.set("group.id", group_id);
  b.set("auto.offset.reset", "earliest");
  b.set("partition.assignment.strategy", std::string(assignor_name(o.assignor)));
  b.pass_through(o.properties, "properties");
  b.pass_through(o.consumer_properties, "consumer_properties");
  b.set("enable.auto.commit", "false");
  b.set("enable.auto.offset.store", "false");
  b.callbacks(callbacks);
  return b.take();
}

}  // namespace babelqueue::kafka::detail
