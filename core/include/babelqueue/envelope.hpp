// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/export.hpp>
#include <babelqueue/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace babelqueue {

/// The language tag this SDK stamps on what it produces (ENV-8, decision D-1).
inline constexpr std::string_view SOURCE_LANG = "cpp";
/// The only envelope version (ENV-1).
inline constexpr std::int64_t SCHEMA_VERSION = 1;

/// Unknown members kept verbatim: name -> compact raw JSON text (ENV-26, ENV-27).
using RawMembers = std::vector<std::pair<std::string, std::string>>;

/// A read-only view of an envelope's `meta` block. The views point into the Envelope.
struct Meta {
  std::string_view id;
  std::string_view queue;
  std::string_view lang;
  std::int64_t schema_version = 0;
  std::int64_t created_at = 0;
};

/// The `dead_letter` block (ENV-38). `error`/`exception` are JSON null when absent.
struct DeadLetter {
  std::string reason;
  std::optional<std::string> error;
  std::optional<std::string> exception;
  std::int64_t failed_at = 0;
  std::string original_queue;
  std::int64_t attempts = 0;
  std::string lang;
  /// Unknown members of the block, kept on re-emit (ENV-26, C++ addition).
  RawMembers unknown;

  friend bool operator==(const DeadLetter&, const DeadLetter&) = default;
};

/// One BabelQueue message (schema_version 1): the canonical wire envelope.
///
/// Build one with `make()` or `decode()`; turn it into bytes with `encode()`. A regular value
/// type: copyable, movable, comparable. Forbidden members are never held (ENV-28) and the `urn`
/// alias is resolved into `urn()` (ENV-23).
///
/// Thread-safety: a value type; concurrent const access is safe, mutation needs external locking.
class BABELQUEUE_EXPORT Envelope {
 public:
  /// An identity-less envelope, as `decode("{}")` gives (ENV-22).
  Envelope() = default;

  /// The resolved, trimmed URN (ENV-23); empty for an identity-less envelope.
  [[nodiscard]] std::string_view urn() const noexcept { return view(urn_); }
  /// The correlation id as received (not trimmed); empty when absent or null.
  [[nodiscard]] std::string_view trace_id() const noexcept { return view(trace_id_); }
  /// The business payload; an empty object when absent or null (see `has_data()`).
  [[nodiscard]] const Json& data() const noexcept { return data_; }
  /// False when `data` was absent or null in the decoded body.
  [[nodiscard]] bool has_data() const noexcept { return has_data_; }
  /// The `meta` block; all zero values when absent (see `has_meta()`).
  [[nodiscard]] Meta meta() const noexcept {
    return Meta{view(meta_id_), view(meta_queue_), view(meta_lang_), schema_version_, created_at_};
  }
  /// False when `meta` was absent or null.
  [[nodiscard]] bool has_meta() const noexcept { return has_meta_; }
  /// True when `meta.schema_version` was present and not null (RT-30 gates only on those).
  [[nodiscard]] bool has_schema_version() const noexcept { return has_schema_version_; }
  /// The retry counter (0 when absent).
  [[nodiscard]] std::int64_t attempts() const noexcept { return attempts_; }
  /// False when `attempts` was absent or null (accepts() rejects that, ENV-29e).
  [[nodiscard]] bool has_attempts() const noexcept { return has_attempts_; }
  /// The dead-letter block, present only on a message that sits on a dead-letter queue.
  [[nodiscard]] const std::optional<DeadLetter>& dead_letter() const noexcept {
    return dead_letter_;
  }
  /// Unknown top-level members, in first-seen order (encode sorts them by name).
  [[nodiscard]] const RawMembers& unknown() const noexcept { return unknown_; }
  /// Unknown members of `meta`.
  [[nodiscard]] const RawMembers& meta_unknown() const noexcept { return meta_unknown_; }

  /// Sets `attempts` (the only field that changes in flight).
  void set_attempts(std::int64_t n) noexcept {
    attempts_ = n;
    has_attempts_ = true;
  }
  /// Replaces `data` (e.g. after GDPR unprotect).
  void set_data(Json data);
  /// Sets or clears the dead-letter block.
  void set_dead_letter(std::optional<DeadLetter> block) { dead_letter_ = std::move(block); }

  friend BABELQUEUE_EXPORT bool operator==(const Envelope& a, const Envelope& b) noexcept;

 private:
  friend struct detail_access;
  struct Span {
    std::size_t off = 0;
    std::size_t len = 0;
  };
  [[nodiscard]] std::string_view view(Span s) const noexcept {
    return std::string_view(text_).substr(s.off, s.len);
  }

  std::string text_;  // one allocation holding every string field
  Span urn_, trace_id_, meta_id_, meta_queue_, meta_lang_;
  Json data_ = Json(JsonObject{});
  std::int64_t schema_version_ = 0;
  std::int64_t created_at_ = 0;
  std::int64_t attempts_ = 0;
  bool has_data_ = false;
  bool has_meta_ = false;
  bool has_schema_version_ = false;
  bool has_attempts_ = false;
  std::optional<DeadLetter> dead_letter_;
  RawMembers unknown_;
  RawMembers meta_unknown_;
};

}  // namespace babelqueue
