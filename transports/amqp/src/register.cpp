// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The amqp:// and amqps:// schemes for open_transport and the CLI's RabbitMQ flags.

#include <babelqueue/amqp/transport.hpp>
#include <babelqueue/spi/registry.hpp>

namespace babelqueue::amqp {
namespace {

spi::TransportFactory factory() {
  spi::TransportFactory f;
  f.component = "amqp";
  f.schemes = {"amqp", "amqps"};
  f.summary = "RabbitMQ (AMQP 0-9-1): push consumption, publisher confirms, TTL delay queues";
  f.flags = {
      {"consume-mode", "consume", "RabbitMQ: push (basic.consume, default) or get (basic.get)"},
      {"confirms", "confirms", "RabbitMQ: publisher confirms, true (default) or false"},
      {"declare", "declare", "RabbitMQ: queue declare, classic (default), quorum or passive"},
      {"heartbeat", "heartbeat", "RabbitMQ: heartbeat seconds (default: the broker's)"},
      {"prefetch", "prefetch", "RabbitMQ: basic.qos prefetch of the push consumer (default 100)"},
  };
  f.open = [](std::string_view url, const OpenOptions& options) -> std::shared_ptr<Transport> {
    Options o;
    o.logger = options.logger;
    return std::make_shared<AmqpTransport>(parse_url(url, std::move(o)));
  };
  return f;
}

}  // namespace
}  // namespace babelqueue::amqp

BABELQUEUE_REGISTER_TRANSPORT(amqp, babelqueue::amqp::factory());
