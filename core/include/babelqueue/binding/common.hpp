// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/export.hpp>
#include <babelqueue/headers.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

/// @file
/// The binding rules every broker shares, as pure code: the contract values a body projects
/// (OB-2), the out-of-band riders (OB-3), the App's attempts floor (RT-39, OB-5), and the
/// schema-version gate with its reserved route (RT-40, OB-6). The App calls these too.
/// The per-broker rules are in `babelqueue/binding/<broker>.hpp`: `amqp` (RabbitMQ, AMQP 0-9-1),
/// `kafka`, `sqs`, `azureservicebus`, `pulsar`, `artemis`; `amqp10` holds the AMQP 1.0 values
/// the last two share. No broker library, no I/O.
///
/// Every function here is stateless and thread-safe; every type is a plain value type.

namespace babelqueue::binding {

/// Out-of-band headers ("riders", OB-3) passed to `publish_with_headers`. Every projection drops
/// entries with an empty key or value and lets a contract entry win a key collision; a contract
/// entry the body omits (OB-2) does not block a rider of that name. Riders are also carried for an
/// undecodable body (AMQP-15). The same type as a message's `Headers` (sorted, unique keys).
using Riders = Headers;

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
// Attempts (RT-39, OB-5)
// ---------------------------------------------------------------------------------------------

/// The App floor (RT-39): `max(body_attempts, delivery_count - 1)` when `delivery_count > 0`,
/// else `body_attempts`. `delivery_count` is the 1-based `ReceivedMessage::delivery_count`.
BABELQUEUE_EXPORT std::int64_t reconcile_attempts(std::int64_t body_attempts,
                                                  std::int64_t delivery_count) noexcept;

/// Parses a native counter written as text: the Kafka `bq-attempts` header (KFK-10) and the SQS
/// `ApproximateReceiveCount` (SQS-10). Surrounding ASCII whitespace (space, TAB, LF, VT, FF, CR)
/// ignored, an optional `+`, then one or more ASCII digits that fit in int64. Anything else (a
/// sign `-`, other characters, overflow, empty) gives nullopt ("absent").
BABELQUEUE_EXPORT std::optional<std::int64_t> parse_attempts_header(
    std::string_view value) noexcept;

// ---------------------------------------------------------------------------------------------
// Schema-version gate and reserved route (RT-40, OB-6)
// ---------------------------------------------------------------------------------------------

/// The prefix of the reserved route a gate reject sets on `ReceivedMessage::route` (RT-40); the
/// App routes every delivery that carries it to the RT-41 handling (D18..D21).
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

/// The RT-40 gate on a string property/header/attribute (SQS, Pulsar, Kafka; the string case of
/// the typed AMQP 1.0 gates): absent (nullopt, also a null value) or blank → decode; otherwise
/// exactly `"1"` (no trimming) → decode; anything else → reject.
BABELQUEUE_EXPORT GateDecision schema_version_gate(std::optional<std::string_view> value);

}  // namespace babelqueue::binding
