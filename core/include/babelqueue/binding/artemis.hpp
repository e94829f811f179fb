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
/// ActiveMQ Artemis (AMQP 1.0) binding rules (05 ART-4, ART-5, ART-6): the message of a publish
/// beside its body, the delivery count, and the typed schema-version gate. Pure code, no I/O.
///
/// Every function here is stateless and thread-safe; every type is a plain value type.

namespace babelqueue::binding::artemis {

/// The AMQP 1.0 message of an Artemis publish beside its body.
///
/// Thread-safety: a value type.
struct Projection {
  /// Message annotation `x-opt-jms-type` (symbol key) = the URN (JMSType).
  std::optional<std::string> jms_type;
  /// properties.correlation-id as an AMQP string = `trace_id`.
  std::optional<std::string> correlation_id;
  /// properties.creation-time (AMQP timestamp, Unix ms) = `meta.created_at`.
  std::optional<std::int64_t> creation_time;
  /// String application properties: `bq_schema_version`, `bq_source_lang`, `bq_attempts`,
  /// `bq_app_id` (underscores, JMS-legal) and the riders; contract entries win a collision.
  std::map<std::string, std::string> properties;
  /// True when the body is valid UTF-8 and goes out as an AMQP string value (a JMS TextMessage);
  /// false: one Data section.
  bool text_body = true;
};

/// The message-annotation key that carries the JMS type.
inline constexpr std::string_view JMS_TYPE_ANNOTATION = "x-opt-jms-type";

/// The Artemis projection of `body` (ART-4). Undecodable: no annotation, no contract properties.
BABELQUEUE_EXPORT Projection projection(std::string_view body, const Riders& riders = {});

/// `delivery_count` from the 0-based AMQP header delivery-count (ART-5): header + 1.
BABELQUEUE_EXPORT std::int64_t delivery_count(std::uint32_t header_delivery_count) noexcept;

/// The typed gate on `bq_schema_version` (ART-6): null → decode; string → the string gate
/// (`binding::schema_version_gate`); any other type → reject (route text as in
/// `azureservicebus::schema_version_gate`).
BABELQUEUE_EXPORT GateDecision schema_version_gate(const amqp10::Value& value);

}  // namespace babelqueue::binding::artemis
