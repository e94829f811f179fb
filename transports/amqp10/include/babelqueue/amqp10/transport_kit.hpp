// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/amqp10/client.hpp>
#include <babelqueue/binding/common.hpp>
#include <babelqueue/errors.hpp>
#include <babelqueue/log.hpp>
#include <babelqueue/spi/closed_guard.hpp>
#include <babelqueue/spi/schema_gate.hpp>
#include <babelqueue/transport.hpp>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

/// @file
/// What the transports on the AMQP 1.0 layer (Artemis, Service Bus) do alike with a received
/// delivery: pop it with the wait capped, read it into a ReceivedMessage, and settle it once from
/// any copy of its message.

namespace babelqueue::amqp10 {

/// A received delivery shared by the copies of its ReceivedMessage (std::any copies the handle
/// that points here): the first settle takes it, a later one finds it gone. A transport that
/// keeps more per delivery derives from it.
struct HeldDelivery {
  std::mutex mu;
  std::optional<Delivery> delivery;
};

/// How a transport reads a received message (spec/05 ART-5/ART-6, ASB-6/ASB-9): its name (for
/// the hook's log), the application property of its schema-version gate, and its binding's
/// delivery count and typed gate.
struct ReceiveRules {
  std::string_view transport;
  std::string_view schema_version_property;
  std::int64_t (*delivery_count)(std::uint32_t header_delivery_count) noexcept;
  binding::GateDecision (*schema_version_gate)(const Value& value);
};

/// The ReceivedMessage of `delivery` on `queue`, its handle left to the transport: the body, the
/// delivery count by `rules`, the application properties that have a text form
/// (binding::amqp10::header_text) as headers, and the schema-version gate on
/// `rules.schema_version_property`, whose reject sets the route and calls `hook`
/// (spi::notify_schema_version_rejected, logged to `logger`). The body and the string property
/// values are moved out of the delivery's message (settling reads neither).
ReceivedMessage received_message(std::string_view queue, Delivery& delivery,
                                 const ReceiveRules& rules, const spi::SchemaVersionRejected& hook,
                                 const Logger& logger);

/// Transport::pop on `client`: one receive of `address`, waiting `timeout` capped by `max_wait`
/// when that is positive, the delivery made a ReceivedMessage by `received(Delivery&&)`. After
/// close the guard's error; any other error as the result.
template <class Received>
Result<std::optional<ReceivedMessage>> pop_delivery(Client& client, const spi::ClosedGuard& guard,
                                                    std::string_view address,
                                                    std::chrono::milliseconds timeout,
                                                    std::chrono::milliseconds max_wait,
                                                    Received&& received) {
  using std::chrono::milliseconds;
  if (guard.closed()) return guard.error("pop");
  const milliseconds wait =
      std::max(milliseconds::zero(),
               max_wait > milliseconds::zero() ? std::min(timeout, max_wait) : timeout);
  try {
    std::optional<Delivery> d = client.receive(std::string(address), wait);
    if (!d) return std::optional<ReceivedMessage>();
    return std::optional<ReceivedMessage>(received(std::move(*d)));
  } catch (const ClosedError&) {
    return guard.error("pop");
  } catch (const Error& e) {
    return e;
  }
}

/// Settles the delivery `held` still has with `how(Delivery&)`, once: it is taken under the lock
/// (where `on_taken()` runs too), so a second settle from any copy of the message is
/// ErrorCode::StaleDelivery naming `transport` ("artemis"), `operation` and `queue`. After close
/// the guard's error; an error of the settle as the result.
template <class Settle, class OnTaken>
Status settle_once(HeldDelivery& held, const spi::ClosedGuard& guard, std::string_view transport,
                   std::string_view operation, const std::string& queue, Settle&& how,
                   OnTaken&& on_taken) {
  if (guard.closed()) return guard.error(operation);
  std::optional<Delivery> delivery;
  {
    const std::lock_guard lock(held.mu);
    if (!held.delivery) {
      return Error(ErrorCode::StaleDelivery, std::string(transport) + ": " +
                                                 std::string(operation) + " of a delivery of " +
                                                 queue + " that was settled already");
    }
    delivery = std::move(held.delivery);
    held.delivery.reset();
    on_taken();
  }
  try {
    how(*delivery);
    return {};
  } catch (const ClosedError&) {
    return guard.error(operation);
  } catch (const Error& e) {
    return e;
  }
}

}  // namespace babelqueue::amqp10
