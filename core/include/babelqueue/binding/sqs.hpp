// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/binding/common.hpp>
#include <babelqueue/export.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

/// @file
/// Amazon SQS binding rules (05 SQS-6, SQS-10): the message attributes of a SendMessage and the
/// delivery count of a received message. The schema-version gate on `bq-schema-version` is the
/// string gate of `common.hpp`. Pure code, no I/O.
///
/// Every function here is stateless and thread-safe; every type is a plain value type.

namespace babelqueue::binding::sqs {

/// SQS's limit of message attributes per message.
inline constexpr std::size_t MAX_ATTRIBUTES = 10;

/// One SQS message attribute (`DataType` `String` or `Number`, value in `StringValue`).
///
/// Thread-safety: a value type.
struct Attribute {
  std::string name;
  std::string data_type;
  std::string string_value;

  friend bool operator==(const Attribute&, const Attribute&) = default;
};

/// The attributes of a SendMessage.
///
/// Thread-safety: a value type.
struct Projection {
  /// Contract attributes in the SQS-6 table order, then riders in sorted key order.
  std::vector<Attribute> attributes;
  /// Rider names left out because the 10-attribute cap was reached.
  std::vector<std::string> dropped_riders;
};

/// The SQS projection of `body` (SQS-6): `bq-job`, `bq-trace-id`, `bq-message-id`,
/// `bq-schema-version` (Number), `bq-source-lang`, `bq-created-at` (Number) per OB-2; riders as
/// String attributes in sorted order, skipping names already present, up to 10 attributes in all.
/// An undecodable body projects no contract attribute.
BABELQUEUE_EXPORT Projection projection(std::string_view body, const Riders& riders = {});

/// `delivery_count` from the `ApproximateReceiveCount` system attribute (SQS-10): the value when
/// it parses as a base-10 integer >= 1 (the syntax of `parse_attempts_header`), else 0 (absent or
/// garbage: not tracked).
BABELQUEUE_EXPORT std::int64_t delivery_count(
    std::optional<std::string_view> approximate_receive_count) noexcept;

}  // namespace babelqueue::binding::sqs
