// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The kafka:// scheme for open_transport and the CLI's Kafka flags.

#include <babelqueue/kafka/transport.hpp>
#include <babelqueue/spi/registry.hpp>

namespace babelqueue::kafka {
namespace {

spi::TransportFactory factory() {
  spi::TransportFactory f;
  f.component = "kafka";
  f.schemes = {"kafka"};
  f.summary = "Apache Kafka: acks=all idempotent producer, consumer groups, ordered commits";
  f.flags = {
      {"group-id", "group_id", "Kafka: consumer group of the offsets (default babelqueue)"},
      {"partitions", "partitions",
       "Kafka: create missing topics (and their .dlq) with this many partitions (default 0: no)"},
      {"topic-prefix", "topic_prefix", "Kafka: prefix of every topic name (default none)"},
  };
  f.open = [](std::string_view url, const OpenOptions& options) -> std::shared_ptr<Transport> {
    Options o;
    o.logger = options.logger;
    return std::make_shared<KafkaTransport>(parse_url(url, std::move(o)));
  };
  return f;
}

}  // namespace
}  // namespace babelqueue::kafka

BABELQUEUE_REGISTER_TRANSPORT(kafka, babelqueue::kafka::factory());
