// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The sb:// scheme for open_transport and the CLI.

#include <babelqueue/azureservicebus/transport.hpp>
#include <babelqueue/spi/registry.hpp>

namespace babelqueue::azureservicebus {
namespace {

spi::TransportFactory factory() {
  spi::TransportFactory f;
  f.component = "azureservicebus";
  f.schemes = {"sb"};
  f.summary = "Azure Service Bus over AMQP 1.0: CBS (SAS, Entra ID), PeekLock, lock renewal";
  f.flags = {
      {"prefetch", "prefetch",
       "Service Bus: the receiver's credit per entity (default 0: one per waiting pop)"},
      {"native-dead-letter", "native_dead_letter",
       "Service Bus: ADR-0037 hand-off, abandon (default) or dead_letter"},
  };
  f.open = [](std::string_view url, const OpenOptions& options) -> std::shared_ptr<Transport> {
    Options o;
    o.logger = options.logger;
    return std::make_shared<ServiceBusTransport>(parse_url(url, std::move(o)));
  };
  return f;
}

}  // namespace
}  // namespace babelqueue::azureservicebus

BABELQUEUE_REGISTER_TRANSPORT(azureservicebus, babelqueue::azureservicebus::factory());
