// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The artemis:// and artemis+ssl:// schemes for open_transport and the CLI.

#include <babelqueue/artemis/transport.hpp>
#include <babelqueue/spi/registry.hpp>

namespace babelqueue::artemis {
namespace {

spi::TransportFactory factory() {
  spi::TransportFactory f;
  f.component = "artemis";
  f.schemes = {"artemis", "artemis+ssl"};
  f.summary = "Apache ActiveMQ Artemis over AMQP 1.0: anycast queues, settled sends, credit";
  f.flags = {
      {"prefetch", "prefetch", "Artemis: the receiver's credit per queue (default 100)"},
  };
  f.open = [](std::string_view url, const OpenOptions& options) -> std::shared_ptr<Transport> {
    Options o;
    o.logger = options.logger;
    return std::make_shared<ArtemisTransport>(parse_url(url, std::move(o)));
  };
  return f;
}

}  // namespace
}  // namespace babelqueue::artemis

BABELQUEUE_REGISTER_TRANSPORT(artemis, babelqueue::artemis::factory());
