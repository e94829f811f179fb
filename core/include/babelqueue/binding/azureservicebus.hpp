// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/binding/amqp10.hpp>
#include <babelqueue/binding/common.hpp>
#include <babelqueue/export.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

/// @file
/// Azure Service Bus binding rules (05 ASB-4, ASB-6, ASB-9): the message of a publish beside its
/// one Data section, the delivery count, and the typed schema-version gate. Pure code, no I/O.
///
/// Every function here is stateless and thread-safe; every type is a plain value type.

namespace babelqueue::binding::azureservicebus {

/// The message of an ASB publish beside its one Data section.
///
/// Thread-safety: a value type.
struct Projection {
  std::optional<std::string> message_id;          ///< `meta.id`
  std::optional<std::string> correlation_id;      ///< `trace_id`
  std::optional<std::string> subject;             ///< the URN
  std::string content_type = "application/json";  ///< always, also for undecodable bodies
  /// `bq-schema-version` and `bq-created-at` as AMQP long (`std::int64_t`), `bq-source-lang` and
  /// the riders as strings; contract entries win a key collision.
  std::map<std::string, amqp10::Value> application_properties;
};

/// The Azure Service Bus projection of `body` (ASB-4).
BABELQUEUE_EXPORT Projection projection(std::string_view body, const Riders& riders = {});

/// `delivery_count` from the AMQP header delivery-count (0 when the header is absent): header +
/// 1, the SDKs' `DeliveryCount` (ASB-6).
BABELQUEUE_EXPORT std::int64_t delivery_count(std::uint32_t header_delivery_count) noexcept;

/// The typed gate on `bq-schema-version` (ASB-9): null → decode; string → the string gate
/// (`binding::schema_version_gate`); any integral type equal to 1 → decode; any other integral
/// value, float or double (also 1.0), boolean, binary or other type → reject. The route text of a
/// typed value: integers in decimal, floats with a fractional digit (`1.0`), `true`/`false`,
/// binary as lowercase hex, otherwise `<type name>`.
BABELQUEUE_EXPORT GateDecision schema_version_gate(const amqp10::Value& value);

}  // namespace babelqueue::binding::azureservicebus
