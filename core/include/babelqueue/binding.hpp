// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/export.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

/// @file
/// Broker binding rules as pure code, for every transport to call: the native metadata projected
/// from a body (04 AMQP-12..15, 05 OB-2/OB-3, KFK-5, SQS-6, ASB-4, PLS-5, ART-4), the attempts
/// reconciliation of native delivery counters (RT-39, OB-5, KFK-10) and the schema-version gate
/// with its reserved route (RT-40, OB-6, ASB-9, ART-6). No broker library, no I/O.
///
/// Every function here is stateless and thread-safe; every type is a plain value type.

namespace babelqueue::binding {

/// Out-of-band headers ("riders", OB-3) passed to `publish_with_headers`. Every projection drops
/// entries with an empty key or value and lets a contract entry win a key collision; a contract
/// entry the body omits (OB-2) does not block a rider of that name. Riders are also carried for an
/// undecodable body (AMQP-15).
using Riders = std::map<std::string, std::string>;

// ---------------------------------------------------------------------------------------------
// Contract values (OB-2)
// ---------------------------------------------------------------------------------------------

/// The contract values a decodable body projects, after the OB-2 omission rules: an empty string
/// or a zero number means "omit" (attempts is never omitted).
///
/// Thread-safety: a value type.
struct Contract {
  std::string urn;                  ///< resolved URN (ENV-23), `job` else the `urn` alias
  std::string trace_id;             ///< `trace_id`
  std::string message_id;           ///< `meta.id`
  std::string source_lang;          ///< `meta.lang`
  std::int64_t schema_version = 0;  ///< `meta.schema_version`; 0 when absent or null
  std::int64_t created_at = 0;      ///< `meta.created_at` (Unix ms); 0 when absent or null
  std::int64_t attempts = 0;        ///< `attempts`; 0 when absent

  friend bool operator==(const Contract&, const Contract&) = default;
};

/// Decodes `body` with the strict codec (ENV-16) and returns its contract values, or nullopt when
/// the body is undecodable (the projections then carry only their constants).
BABELQUEUE_EXPORT std::optional<Contract> contract_of(std::string_view body);

// ---------------------------------------------------------------------------------------------
// RabbitMQ, AMQP 0-9-1 (04 AMQP-12..15)
// ---------------------------------------------------------------------------------------------

/// The longest AMQP 0-9-1 short string (property values and field-table keys), in bytes.
inline constexpr std::size_t RABBITMQ_SHORT_STRING_MAX = 255;

/// A field-table value as this SDK writes it: signed 32-bit `I`, signed 64-bit `l` or long string
/// `S` (never stringified numbers, AMQP-13).
using RabbitmqFieldValue = std::variant<std::int32_t, std::int64_t, std::string>;

/// The AMQP 0-9-1 field-type tag of `value`: `'I'`, `'l'` or `'S'`.
BABELQUEUE_EXPORT char field_tag(const RabbitmqFieldValue& value) noexcept;

/// The basic.properties of a publish (AMQP-12). Properties not listed here are never set.
///
/// Thread-safety: a value type.
struct RabbitmqProperties {
  std::string content_type = "application/json";  ///< always
  std::string content_encoding = "utf-8";         ///< always
  std::uint8_t delivery_mode = 2;                 ///< always persistent
  std::string app_id = "babelqueue";              ///< always
  std::optional<std::string> type;                ///< the URN
  std::optional<std::string> correlation_id;      ///< `trace_id`
  std::optional<std::string> message_id;          ///< `meta.id`

  friend bool operator==(const RabbitmqProperties&, const RabbitmqProperties&) = default;
};

/// A value or header key left out because it exceeds the 255-byte short-string limit (AMQP-12,
/// AMQP-14). The transport logs these; it never truncates.
///
/// Thread-safety: a value type.
struct Omitted {
  std::string name;       ///< property name (`type`, `correlation_id`, `message_id`) or header key
  std::size_t bytes = 0;  ///< the length that did not fit

  friend bool operator==(const Omitted&, const Omitted&) = default;
};

/// Everything a RabbitMQ publish carries beside the body bytes.
///
/// Thread-safety: a value type.
struct RabbitmqProjection {
  RabbitmqProperties properties;
  /// The `headers` field table: riders as `S` strings, then the contract `x-*` headers, which win
  /// a key collision (AMQP-13/14). Keys are unique.
  std::map<std::string, RabbitmqFieldValue> headers;
  /// Property values and rider keys dropped by the short-string rule.
  std::vector<Omitted> omitted;
};

/// The RabbitMQ projection of `body` (AMQP-12..15): `type`/`correlation_id`/`message_id` and the
/// `x-attempts` (always), `x-schema-version` (non-zero) and `x-source-lang` (non-empty) headers
/// when the body decodes; only the constant properties and the riders when it does not.
BABELQUEUE_EXPORT RabbitmqProjection rabbitmq_projection(std::string_view body,
                                                         const Riders& riders = {});

// ---------------------------------------------------------------------------------------------
// Amazon SQS (05 SQS-6)
// ---------------------------------------------------------------------------------------------

/// SQS's limit of message attributes per message.
inline constexpr std::size_t SQS_MAX_ATTRIBUTES = 10;

/// One SQS message attribute (`DataType` `String` or `Number`, value in `StringValue`).
///
/// Thread-safety: a value type.
struct SqsAttribute {
  std::string name;
  std::string data_type;
  std::string string_value;

  friend bool operator==(const SqsAttribute&, const SqsAttribute&) = default;
};

/// The attributes of a SendMessage.
///
/// Thread-safety: a value type.
struct SqsProjection {
  /// Contract attributes in the SQS-6 table order, then riders in sorted key order.
  std::vector<SqsAttribute> attributes;
  /// Rider names left out because the 10-attribute cap was reached.
  std::vector<std::string> dropped_riders;
};

/// The SQS projection of `body` (SQS-6): `bq-job`, `bq-trace-id`, `bq-message-id`,
/// `bq-schema-version` (Number), `bq-source-lang`, `bq-created-at` (Number) per OB-2; riders as
/// String attributes in sorted order, skipping names already present, up to 10 attributes in all.
/// An undecodable body projects no contract attribute.
BABELQUEUE_EXPORT SqsProjection sqs_projection(std::string_view body, const Riders& riders = {});

// ---------------------------------------------------------------------------------------------
// AMQP 1.0 values (Azure Service Bus, Artemis)
// ---------------------------------------------------------------------------------------------

/// An AMQP 1.0 `binary` value.
///
/// Thread-safety: a value type.
struct AmqpBinary {
  std::string bytes;
  friend bool operator==(const AmqpBinary&, const AmqpBinary&) = default;
};

/// Any other AMQP 1.0 type (symbol, char, timestamp, uuid, decimal, list, map, array, ...),
/// named by its AMQP type name.
///
/// Thread-safety: a value type.
struct AmqpOther {
  std::string type_name;
  friend bool operator==(const AmqpOther&, const AmqpOther&) = default;
};

/// An AMQP 1.0 application-property value: null (`std::monostate`), boolean, the eight integral
/// types, float, double, string, binary, or another type.
using AmqpValue = std::variant<std::monostate, bool, std::int8_t, std::uint8_t, std::int16_t,
                               std::uint16_t, std::int32_t, std::uint32_t, std::int64_t,
                               std::uint64_t, float, double, std::string, AmqpBinary, AmqpOther>;

/// The OB-4 text of an application-property value for `ReceivedMessage::headers`: strings as-is,
/// integers in decimal, booleans `true`/`false`, floats in shortest round-trip form; nullopt (skip
/// the entry) for null, binary and any other type.
BABELQUEUE_EXPORT std::optional<std::string> header_text(const AmqpValue& value);

// ---------------------------------------------------------------------------------------------
// Azure Service Bus (05 ASB-4)
// ---------------------------------------------------------------------------------------------

/// The message of an ASB publish beside its one Data section.
///
/// Thread-safety: a value type.
struct AsbProjection {
  std::optional<std::string> message_id;          ///< `meta.id`
  std::optional<std::string> correlation_id;      ///< `trace_id`
  std::optional<std::string> subject;             ///< the URN
  std::string content_type = "application/json";  ///< always, also for undecodable bodies
  /// `bq-schema-version` and `bq-created-at` as AMQP long (`std::int64_t`), `bq-source-lang` and
  /// the riders as strings; contract entries win a key collision.
  std::map<std::string, AmqpValue> application_properties;
};

/// The Azure Service Bus projection of `body` (ASB-4).
BABELQUEUE_EXPORT AsbProjection asb_projection(std::string_view body, const Riders& riders = {});

// ---------------------------------------------------------------------------------------------
// Apache Pulsar (05 PLS-5)
// ---------------------------------------------------------------------------------------------

/// The string properties of a Pulsar publish (PLS-5): `bq-job`, `bq-trace-id`, `bq-message-id`,
/// `bq-schema-version`, `bq-source-lang` per OB-2 and `bq-attempts` whenever the body decodes;
/// riders as extra properties, contract entries winning a collision. Undecodable: riders only.
BABELQUEUE_EXPORT std::map<std::string, std::string> pulsar_properties(std::string_view body,
                                                                       const Riders& riders = {});

// ---------------------------------------------------------------------------------------------
// Apache Kafka (05 KFK-5)
// ---------------------------------------------------------------------------------------------

/// The metadata of a Kafka record beside its value (KFK-5). The key is never invented (null).
///
/// Thread-safety: a value type.
struct KafkaProjection {
  /// `bq-job`, `bq-trace-id`, `bq-message-id`, `bq-schema-version`, `bq-source-lang`,
  /// `bq-attempts` in this order (OB-2 omissions), then riders in sorted key order, skipping keys
  /// already present. Values are UTF-8 bytes.
  std::vector<std::pair<std::string, std::string>> headers;
  /// CreateTime in Unix ms = `meta.created_at`; 0 (let the client stamp it) when the body does not
  /// decode or `created_at` is 0 or negative (C++ decision: Kafka rejects negative timestamps).
  std::int64_t timestamp_ms = 0;
};

/// The Kafka projection of `body` (KFK-5).
BABELQUEUE_EXPORT KafkaProjection kafka_projection(std::string_view body,
                                                   const Riders& riders = {});

// ---------------------------------------------------------------------------------------------
// ActiveMQ Artemis, AMQP 1.0 (05 ART-4)
// ---------------------------------------------------------------------------------------------

/// The AMQP 1.0 message of an Artemis publish beside its body.
///
/// Thread-safety: a value type.
struct ArtemisProjection {
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
inline constexpr std::string_view ARTEMIS_JMS_TYPE_ANNOTATION = "x-opt-jms-type";

/// The Artemis projection of `body` (ART-4). Undecodable: no annotation, no contract properties.
BABELQUEUE_EXPORT ArtemisProjection artemis_projection(std::string_view body,
                                                       const Riders& riders = {});

// ---------------------------------------------------------------------------------------------
// Attempts reconciliation (RT-39, OB-5, KFK-10)
// ---------------------------------------------------------------------------------------------

/// The App floor (RT-39): `max(body_attempts, delivery_count - 1)` when `delivery_count > 0`,
/// else `body_attempts`. `delivery_count` is the 1-based `ReceivedMessage::delivery_count`.
BABELQUEUE_EXPORT std::int64_t reconcile_attempts(std::int64_t body_attempts,
                                                  std::int64_t delivery_count) noexcept;

/// SQS `delivery_count` from the `ApproximateReceiveCount` system attribute (SQS-10): the value
/// when it parses as a base-10 integer >= 1 (same syntax as `parse_attempts_header`), else 0
/// (absent or garbage: not tracked).
BABELQUEUE_EXPORT std::int64_t sqs_delivery_count(
    std::optional<std::string_view> approximate_receive_count) noexcept;

/// Azure Service Bus `delivery_count` from the AMQP header delivery-count (0 when the header is
/// absent): header + 1, the SDKs' `DeliveryCount` (ASB-6).
BABELQUEUE_EXPORT std::int64_t asb_delivery_count(std::uint32_t header_delivery_count) noexcept;

/// Pulsar `delivery_count` from the 0-based `redeliveryCount` (PLS-7): count + 1; an absent or
/// negative count counts as 0.
BABELQUEUE_EXPORT std::int64_t pulsar_delivery_count(
    std::optional<std::int64_t> redelivery_count) noexcept;

/// Artemis `delivery_count` from the 0-based AMQP header delivery-count (ART-5): header + 1.
BABELQUEUE_EXPORT std::int64_t artemis_delivery_count(std::uint32_t header_delivery_count) noexcept;

/// Parses a Kafka `bq-attempts` header value (KFK-10): surrounding ASCII whitespace (space, TAB,
/// LF, VT, FF, CR) ignored, an optional `+`, then one or more ASCII digits that fit in int64.
/// Anything else (a sign `-`, other characters, overflow, empty) gives nullopt ("absent").
BABELQUEUE_EXPORT std::optional<std::int64_t> parse_attempts_header(
    std::string_view value) noexcept;

/// The handler-visible attempts on Kafka: the header value when present (authoritative, not a
/// max), else the body's (KFK-10).
BABELQUEUE_EXPORT std::int64_t kafka_attempts(std::int64_t body_attempts,
                                              std::optional<std::int64_t> header_attempts) noexcept;

/// The Kafka body rewrite decision (KFK-10; call only after the gate passed): when the header is
/// present, the body decodes and its `attempts` differs from the header, returns the re-emitted
/// body (ENV-34: lexemes and unknown members kept) with `attempts` = the header value; otherwise
/// nullopt, meaning "keep the original bytes" (ENV-37).
BABELQUEUE_EXPORT std::optional<std::string> kafka_reconcile_body(
    std::string_view body, std::optional<std::int64_t> header_attempts);

// ---------------------------------------------------------------------------------------------
// Schema-version gate and reserved route (RT-40, OB-6)
// ---------------------------------------------------------------------------------------------

/// The prefix of the reserved route a gate reject sets on `ReceivedMessage::route` (RT-40).
inline constexpr std::string_view UNSUPPORTED_ROUTE_PREFIX =
    "babelqueue:unsupported-schema-version:";

/// The longest escaped version kept in a route before `...` is appended.
inline constexpr std::size_t UNSUPPORTED_ROUTE_VERSION_MAX = 64;

/// Go `url.QueryEscape`: `A-Z a-z 0-9 - _ . ~` kept, space as `+`, every other byte `%XX`
/// (uppercase hex).
BABELQUEUE_EXPORT std::string query_escape(std::string_view s);

/// The reserved route for a rejected version (RT-40): the prefix + `query_escape(version)`, cut to
/// its first 64 characters plus `...` when longer.
BABELQUEUE_EXPORT std::string unsupported_route(std::string_view version);

/// True when `route` starts with `UNSUPPORTED_ROUTE_PREFIX` (RT-30).
BABELQUEUE_EXPORT bool is_unsupported_route(std::string_view route) noexcept;

/// True when `s` is empty or only ASCII space, TAB, LF, VT, FF or CR (RT-40's blank; non-ASCII
/// whitespace such as U+00A0, U+3000 or a BOM is NOT blank).
BABELQUEUE_EXPORT bool is_ascii_blank(std::string_view s) noexcept;

/// The outcome of the schema-version gate.
///
/// Thread-safety: a value type.
struct GateDecision {
  /// True: do not decode the body; set `ReceivedMessage::route` to `route`.
  bool reject = false;
  /// On reject, the version as text (for `on_schema_version_rejected(version, queue)`).
  std::string version;
  /// On reject, `unsupported_route(version)`.
  std::string route;

  friend bool operator==(const GateDecision&, const GateDecision&) = default;
};

/// The RT-40 gate on a string property/header/attribute: absent (nullopt, also a null value) or
/// blank → decode; otherwise exactly `"1"` (no trimming) → decode; anything else → reject.
BABELQUEUE_EXPORT GateDecision schema_version_gate(std::optional<std::string_view> value);

/// The Azure Service Bus typed gate (ASB-9): null → decode; string → `schema_version_gate`; any
/// integral type equal to 1 → decode; any other integral value, float or double (also 1.0),
/// boolean, binary or other type → reject. The route text of a typed value: integers in decimal,
/// floats with a fractional digit (`1.0`), `true`/`false`, binary as lowercase hex, otherwise
/// `<type name>`.
BABELQUEUE_EXPORT GateDecision asb_schema_version_gate(const AmqpValue& value);

/// The Artemis typed gate (ART-6): null → decode; string → `schema_version_gate`; any other type
/// → reject (route text as in `asb_schema_version_gate`).
BABELQUEUE_EXPORT GateDecision artemis_schema_version_gate(const AmqpValue& value);

}  // namespace babelqueue::binding
