// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/envelope.hpp>
#include <babelqueue/errors.hpp>
#include <babelqueue/export.hpp>
#include <babelqueue/json.hpp>

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

/// @file
/// The envelope codec: make, encode, decode, accepts, annotate and the ADR-0035 poison record.
/// Every function here is stateless and thread-safe.

namespace babelqueue {

/// Options of `make()`.
struct MakeOptions {
  /// Logical queue; blank means "default" (ENV-10, C++ decision).
  std::string_view queue = {};
  /// Continue this trace (trimmed); blank mints a fresh UUID v4 (ENV-6).
  std::string_view trace_id = {};
};

/// Builds a fresh envelope (ENV-10): new `meta.id`, `created_at` = now, `lang` "cpp", attempts 0.
/// @throws Error(ErrorCode::EmptyUrn) when `urn` is blank after trimming.
/// @throws Error(ErrorCode::Randomness) when the CSPRNG fails.
BABELQUEUE_EXPORT Envelope make(std::string_view urn, Json data = Json(JsonObject{}),
                                const MakeOptions& options = {});

/// Compact canonical JSON in the ENV-12 member order.
/// @throws EncodeError on invalid UTF-8 in a string or a non-finite number (ENV-14).
BABELQUEUE_EXPORT std::string encode(const Envelope& env);
/// Appends the encoding of `env` to `out` (same rules as `encode`).
BABELQUEUE_EXPORT void encode_to(const Envelope& env, std::string& out);

/// Strict decode (ENV-16..28). Forbidden members are dropped and reported, one line per member
/// naming its JSON pointer, through `warnings` when given.
/// @throws DecodeError when the body is poison.
BABELQUEUE_EXPORT Envelope decode(std::string_view body,
                                  std::vector<std::string>* warnings = nullptr);
/// Non-throwing `decode`.
BABELQUEUE_EXPORT Result<Envelope, DecodeError> try_decode(
    std::string_view body, std::vector<std::string>* warnings = nullptr);

/// Semantic acceptability for codec-level users (ENV-29). Never throws.
BABELQUEUE_EXPORT bool accepts(const Envelope& env) noexcept;

/// Why a message failed, as written into `dead_letter.error` / `dead_letter.exception`.
struct FailureCause {
  std::string message;
  std::string type;
};

/// The cause for a thrown exception: `what()` and the demangled dynamic type (ENV-39).
BABELQUEUE_EXPORT FailureCause cause_of(const std::exception& e);
/// The cause for whatever `std::current_exception()`-style pointer holds; a non-std type gives
/// message "unknown exception" and type "unknown" (RT-12).
BABELQUEUE_EXPORT FailureCause cause_of(const std::exception_ptr& e);

/// Dead-letter reasons (ENV-40).
namespace reason {
inline constexpr std::string_view failed = "failed";
inline constexpr std::string_view unknown_urn = "unknown_urn";
inline constexpr std::string_view poison = "poison";
}  // namespace reason

/// A copy of `env` with a fresh `dead_letter` block (ENV-39); `env` is not changed.
/// `failed_at_ms` defaults to now.
BABELQUEUE_EXPORT Envelope annotate(const Envelope& env, std::string_view reason,
                                    std::string_view original_queue, std::int64_t attempts,
                                    const std::optional<FailureCause>& cause = std::nullopt,
                                    std::optional<std::int64_t> failed_at_ms = std::nullopt);

/// The ADR-0035 poison record for exactly these bytes (ENV-42..44): a strict JSON object without
/// a top-level `dead_letter` is spliced byte for byte, anything else is wrapped as `raw` (base64
/// with `raw_encoding` when the bytes are not UTF-8). Never throws for any input bytes except
/// std::bad_alloc.
BABELQUEUE_EXPORT std::string poison_record(
    std::string_view body, std::string_view error, std::string_view original_queue,
    std::optional<std::int64_t> failed_at_ms = std::nullopt);

/// Current UTC time in Unix epoch milliseconds (ENV-7).
BABELQUEUE_EXPORT std::int64_t now_ms() noexcept;

/// A fresh RFC 4122 version-4 UUID from the CSPRNG, lowercase 8-4-4-4-12 (ENV-4).
/// @throws Error(ErrorCode::Randomness) when the CSPRNG fails (never falls back).
BABELQUEUE_EXPORT std::string uuid_v4();

/// Trims the Unicode whitespace set W of ENV-10 from both ends.
BABELQUEUE_EXPORT std::string_view trim_w(std::string_view s) noexcept;

}  // namespace babelqueue
