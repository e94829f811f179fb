// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/binding/common.hpp>
#include <babelqueue/export.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

/// @file
/// RabbitMQ (AMQP 0-9-1) binding rules (04 AMQP-12..15): the basic.properties and the `headers`
/// field table a publish carries beside the body bytes. Pure code, no I/O.
///
/// Every function here is stateless and thread-safe; every type is a plain value type.

namespace babelqueue::binding::amqp {

/// The longest AMQP 0-9-1 short string (property values and field-table keys), in bytes.
inline constexpr std::size_t SHORT_STRING_MAX = 255;

/// A field-table value as this SDK writes it: signed 32-bit `I`, signed 64-bit `l` or long string
/// `S` (never stringified numbers, AMQP-13).
using FieldValue = std::variant<std::int32_t, std::int64_t, std::string>;

/// The AMQP 0-9-1 field-type tag of `value`: `'I'`, `'l'` or `'S'`.
BABELQUEUE_EXPORT char field_tag(const FieldValue& value) noexcept;

/// The basic.properties of a publish (AMQP-12). Properties not listed here are never set.
///
/// Thread-safety: a value type.
struct Properties {
  std::string content_type = "application/json";  ///< always
  std::string content_encoding = "utf-8";         ///< always
  std::uint8_t delivery_mode = 2;                 ///< always persistent
  std::string app_id = "babelqueue";              ///< always
  std::optional<std::string> type;                ///< the URN
  std::optional<std::string> correlation_id;      ///< `trace_id`
  std::optional<std::string> message_id;          ///< `meta.id`

  friend bool operator==(const Properties&, const Properties&) = default;
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
struct Projection {
  Properties properties;
  /// The `headers` field table: riders as `S` strings, then the contract `x-*` headers, which win
  /// a key collision (AMQP-13/14). Keys are unique.
  std::map<std::string, FieldValue> headers;
  /// Property values and rider keys dropped by the short-string rule.
  std::vector<Omitted> omitted;
};

/// The RabbitMQ projection of `body` (AMQP-12..15): `type`/`correlation_id`/`message_id` and the
/// `x-attempts` (always), `x-schema-version` (non-zero) and `x-source-lang` (non-empty) headers
/// when the body decodes; only the constant properties and the riders when it does not.
BABELQUEUE_EXPORT Projection projection(std::string_view body, const Riders& riders = {});

/// projection() into `out`, reusing its storage: `out` ends equal to `projection(body, riders)`
/// whatever it held, and a publisher that projects one body after another into the same object
/// allocates nothing for the properties and headers once their strings and entries fit.
BABELQUEUE_EXPORT void projection_into(std::string_view body, const Riders& riders,
                                       Projection& out);

}  // namespace babelqueue::binding::amqp
