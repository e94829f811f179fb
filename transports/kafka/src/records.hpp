// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/transport.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::kafka::detail {

/// One record header as on the wire: a value may be null, names may repeat.
struct RecordHeader {
  std::string name;
  std::optional<std::string> value;

  friend bool operator==(const RecordHeader&, const RecordHeader&) = default;
};
using RecordHeaders = std::vector<RecordHeader>;

/// A record header read in place: `name` and `value` point into the list it was read from.
struct HeaderView {
  std::string_view name;
  std::optional<std::string_view> value;
};
/// A consumed record's header list read in place (WireHeaders::views).
using HeaderViews = std::span<const HeaderView>;

/// A copy of `headers` (order, duplicates and null values kept).
[[nodiscard]] RecordHeaders copy(HeaderViews headers);

/// What a produce writes.
struct OutgoingRecord {
  std::string topic;
  std::string value;
  std::optional<std::string> key;
  RecordHeaders headers;
  /// CreateTime in Unix ms; 0 = the client's clock.
  std::int64_t timestamp_ms = 0;
};

/// A publish of `body` (KFK-5): the projection's headers and timestamp, riders after them.
OutgoingRecord outgoing(std::string topic, std::string body, const Headers& riders = {});

/// OB-4: every non-null header as text, the first occurrence of a name winning.
[[nodiscard]] Headers text_headers(HeaderViews headers);

/// What the consume side of a record leaves beside the message's fields (KFK-9, KFK-10).
struct Incoming {
  /// The value bytes as received, set only when the body is a KFK-10 rewrite of them.
  std::optional<std::string> original_value;
  /// The version the gate rejected (then `route` is set), for the OB-6 hook.
  std::string rejected_version;
};

/// The two headers a consumed record is judged by, each the value of the first header of its
/// name (nullopt when absent or null).
struct JudgedHeaders {
  std::optional<std::string_view> schema_version;  // bq-schema-version (KFK-9)
  std::optional<std::string_view> attempts;        // bq-attempts (KFK-10)
};

/// Applies the gate on `bq-schema-version`, then the `bq-attempts` authority, to a record: sets
/// `msg`'s body, route (when the gate rejected: then the body is the value untouched) and
/// decoded (when deciding the KFK-10 rewrite decoded it); the OB-4 headers are left to the
/// caller (`text_headers`, built on first use). `msg` is the one the caller hands out, so the
/// envelope is not moved again on its way to the App.
Incoming incoming(ReceivedMessage& msg, std::string value, const JudgedHeaders& headers);

}  // namespace babelqueue::kafka::detail
