// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// SKELETON (issue 10): replaced by the transport helper.

#include <babelqueue/kafka/transport.hpp>
#include <babelqueue/spi/registry.hpp>

namespace babelqueue::kafka {
namespace {

spi::TransportFactory factory() {
  spi::TransportFactory f;
  f.component = "kafka";
  f.schemes = {"kafka"};
  f.summary = "Apache Kafka: acks=all idempotent producer, consumer groups, ordered commits";
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
