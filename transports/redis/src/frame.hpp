// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// The legacy layout's `__bq_frame` header frame (ADR-0028, spec/03-redis.md §2.3).

#include <babelqueue/transport.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace babelqueue::redis::detail {

/// `h` without the entries whose key or value is empty (RDS-12).
Headers sanitize_headers(const Headers& h);

/// The compact frame `{"__bq_frame":1,"headers":{...},"body":"..."}` (RDS-14); header keys in
/// byte order (the map's order). `sanitized` should come from `sanitize_headers`.
/// @throws EncodeError when `body` or a header is not valid UTF-8.
std::string encode_frame(std::string_view body, const Headers& sanitized);

/// What a frame carries.
struct Unframed {
  /// The decoded `body` string: the original envelope bytes (RDS-16).
  std::string body;
  /// The sanitised `headers`.
  Headers headers;
};

/// The content of `stored` when it is a frame by the RDS-15 rules; nullopt for a bare value,
/// which the caller delivers unchanged. Never throws except std::bad_alloc.
std::optional<Unframed> unframe(std::string_view stored);

}  // namespace babelqueue::redis::detail
