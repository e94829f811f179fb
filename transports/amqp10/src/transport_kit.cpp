// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/amqp10/transport_kit.hpp>
#include <babelqueue/binding/amqp10.hpp>

#include <string>
#include <utility>
#include <variant>

namespace babelqueue::amqp10 {

ReceivedMessage received_message(std::string_view queue, Delivery& delivery,
                                 const ReceiveRules& rules, const spi::SchemaVersionRejected& hook,
                                 const Logger& logger) {
  Message& in = delivery.message();
  ReceivedMessage m;
  m.body = std::move(in.body);
  m.queue = std::string(queue);
  m.delivery_count = rules.delivery_count(in.delivery_count);
  m.headers.reserve(in.properties.size());
  for (auto& [key, value] : in.properties) {
    if (key == rules.schema_version_property) {
      const binding::GateDecision gate = rules.schema_version_gate(value);
      if (gate.reject) {
        m.route = gate.route;
        spi::notify_schema_version_rejected(hook, gate.version, queue, logger, rules.transport);
      }
    }
    // A string is its own text: moved rather than copied.
    if (auto* text = std::get_if<std::string>(&value)) {
      m.headers.emplace(key, std::move(*text));
    } else if (auto other = binding::amqp10::header_text(value)) {
      m.headers.emplace(key, std::move(*other));
    }
  }
  return m;
}

}  // namespace babelqueue::amqp10
