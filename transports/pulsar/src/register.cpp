// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The pulsar:// and pulsar+ssl:// schemes for open_transport and the CLI.

#include <babelqueue/pulsar/transport.hpp>
#include <babelqueue/spi/registry.hpp>

namespace babelqueue::pulsar {
namespace {

spi::TransportFactory factory() {
  spi::TransportFactory f;
  f.component = "pulsar";
  f.schemes = {"pulsar", "pulsar+ssl"};
  f.summary = "Apache Pulsar on the binary protocol: send receipts, subscriptions, flow permits";
  f.flags = {
      {"subscription", "subscription", "Pulsar: subscription name (default babelqueue)"},
      {"subscription-type", "subscription_type",
       "Pulsar: Shared (default), Exclusive, Failover or Key_Shared"},
      {"prefetch", "prefetch", "Pulsar: flow permits per queue and partition (default 100)"},
      {"topic-prefix", "topic_prefix", "Pulsar: prefix of every topic name (default none)"},
  };
  f.open = [](std::string_view url, const OpenOptions& options) -> std::shared_ptr<Transport> {
    Options o;
    o.logger = options.logger;
    return std::make_shared<PulsarTransport>(parse_url(url, std::move(o)));
  };
  return f;
}

}  // namespace
}  // namespace babelqueue::pulsar

BABELQUEUE_REGISTER_TRANSPORT(pulsar, babelqueue::pulsar::factory());
