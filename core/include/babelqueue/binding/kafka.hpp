// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/binding/common.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/export.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

/// @file
/// Apache Kafka binding rules (05 KFK-5, KFK-10): the headers and timestamp of a record, and the
/// `bq-attempts` header that is authoritative over the body. The header syntax is
/// `parse_attempts_header` and the schema-version gate on `bq-schema-version` is the string gate,
/// both in `common.hpp`. Pure code, no I/O.
///
/// Every function here is stateless and thread-safe; every type is a plain value type.

namespace babelqueue::binding::kafka {

/// The metadata of a Kafka record beside its value (KFK-5). The key is never invented (null).
///
/// Thread-safety: a value type.
struct Projection {
  /// `bq-job`, `bq-trace-id`, `bq-message-id`, `bq-schema-version`, `bq-source-lang`,
  /// `bq-attempts` in this order (OB-2 omissions), then riders in sorted key order, skipping keys
  /// already present. Values are UTF-8 bytes.
  std::vector<std::pair<std::string, std::string>> headers;
  /// CreateTime in Unix ms = `meta.created_at`; 0 (let the client stamp it) when the body does not
  /// decode or `created_at` is 0 or negative (C++ decision: Kafka rejects negative timestamps).
  std::int64_t timestamp_ms = 0;
};

/// The Kafka projection of `body` (KFK-5).
BABELQUEUE_EXPORT Projection projection(std::string_view body, const Riders& riders = {});

/// The handler-visible attempts: the header value when present (authoritative, not a max), else
/// the body's (KFK-10).
BABELQUEUE_EXPORT std::int64_t attempts(std::int64_t body_attempts,
                                        std::optional<std::int64_t> header_attempts) noexcept;

/// The body rewrite decision (KFK-10; call only after the gate passed): when the header is
/// present, the body decodes and its `attempts` differs from the header, returns the re-emitted
/// body (ENV-34: lexemes and unknown members kept) with `attempts` = the header value; otherwise
/// nullopt, meaning "keep the original bytes" (ENV-37).
BABELQUEUE_EXPORT std::optional<std::string> reconcile_body(
    std::string_view body, std::optional<std::int64_t> header_attempts);

/// `reconcile_body`, which also leaves in `decoded`, when it keeps the original bytes and
/// decoded them to decide, their envelope (`try_decode(body)`'s value), so that a consumer does
/// not decode the same bytes twice (ReceivedMessage::decoded: pass the message's own, and the
/// envelope is not moved again on its way to the App). `decoded` is left empty otherwise.
BABELQUEUE_EXPORT std::optional<std::string> reconcile(std::string_view body,
                                                       std::optional<std::int64_t> header_attempts,
                                                       std::optional<Envelope>& decoded);

}  // namespace babelqueue::binding::kafka
