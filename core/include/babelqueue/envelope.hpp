// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/export.hpp>
#include <babelqueue/json.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
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
/// A decoded envelope keeps `data` as its validated raw text and parses it on the first call to
/// `data()`; re-encoding an envelope whose `data` was never read copies that text when it is
/// already canonical, so a retry never pays for a DOM.
///
/// Thread-safety: a value type; concurrent const access (including the first `data()`) is safe,
/// mutation needs external locking.
class BABELQUEUE_EXPORT Envelope {
 public:
  /// An identity-less envelope, as `decode("{}")` gives (ENV-22).
  Envelope() = default;
  Envelope(const Envelope& other);
  Envelope(Envelope&& other) noexcept;
  Envelope& operator=(const Envelope& other);
  Envelope& operator=(Envelope&& other) noexcept;
  ~Envelope() = default;

  /// The resolved, trimmed URN (ENV-23); empty for an identity-less envelope.
  [[nodiscard]] std::string_view urn() const noexcept { return view(f_.urn); }
  /// The correlation id as received (not trimmed); empty when absent or null.
  [[nodiscard]] std::string_view trace_id() const noexcept { return view(f_.trace_id); }
  /// The business payload; an empty object when absent or null (see `has_data()`).
  /// @throws std::bad_alloc only (the text was validated by decode).
  [[nodiscard]] const Json& data() const {
    if (data_state_.load(std::memory_order_acquire) == kDataReady && data_) return *data_;
    return parse_data();
  }
  /// False when `data` was absent or null in the decoded body.
  [[nodiscard]] bool has_data() const noexcept { return f_.has_data; }
  /// The `meta` block; all zero values when absent (see `has_meta()`).
  [[nodiscard]] Meta meta() const noexcept {
    return Meta{view(f_.meta_id), view(f_.meta_queue), view(f_.meta_lang), f_.schema_version,
                f_.created_at};
  }
  /// False when `meta` was absent or null.
  [[nodiscard]] bool has_meta() const noexcept { return f_.has_meta; }
  /// True when `meta.schema_version` was present and not null (RT-30 gates only on those).
  [[nodiscard]] bool has_schema_version() const noexcept { return f_.has_schema_version; }
  /// The retry counter (0 when absent).
  [[nodiscard]] std::int64_t attempts() const noexcept { return f_.attempts; }
  /// False when `attempts` was absent or null (accepts() rejects that, ENV-29e).
  [[nodiscard]] bool has_attempts() const noexcept { return f_.has_attempts; }
  /// The dead-letter block, present only on a message that sits on a dead-letter queue.
  [[nodiscard]] const std::optional<DeadLetter>& dead_letter() const noexcept {
    return extras().dead_letter;
  }
  /// Unknown top-level members, in first-seen order (encode sorts them by name).
  [[nodiscard]] const RawMembers& unknown() const noexcept { return extras().unknown; }
  /// Unknown members of `meta`.
  [[nodiscard]] const RawMembers& meta_unknown() const noexcept { return extras().meta_unknown; }

  /// Sets `attempts` (the only field that changes in flight).
  void set_attempts(std::int64_t n) noexcept {
    f_.attempts = n;
    f_.has_attempts = true;
  }
  /// Replaces `data` (e.g. after GDPR unprotect).
  void set_data(Json data);
  /// Sets or clears the dead-letter block.
  void set_dead_letter(std::optional<DeadLetter> block);

  friend BABELQUEUE_EXPORT bool operator==(const Envelope& a, const Envelope& b) noexcept;

 private:
  friend struct detail_access;
  struct Span {
    std::size_t off = 0;
    std::size_t len = 0;
  };
  // The parts most messages lack, held out of line so that moving and destroying an envelope
  // stays a handful of instructions.
  struct Extras {
    std::optional<DeadLetter> dead_letter;
    RawMembers unknown;
    RawMembers meta_unknown;
  };
  static const Extras kNoExtras;

  [[nodiscard]] std::string_view view(Span s) const noexcept {
    return std::string_view(text_.get() + s.off, s.len);
  }
  [[nodiscard]] const Extras& extras() const noexcept { return extras_ ? *extras_ : kNoExtras; }
  Extras& mutable_extras();
  const Json& parse_data() const;
  void copy_data_from(const Envelope& other);
  int take_data_state() noexcept;
  void clear_fields() noexcept;

  static constexpr int kDataReady = 0;    // data_ holds the payload (none: an empty object)
  static constexpr int kDataPending = 1;  // data_raw holds it, not parsed yet
  static constexpr int kDataParsing = 2;  // one thread is parsing data_raw

  // Everything but the payload and the extras: trivially copyable, and kept to 128 bytes so that
  // clearing a moved-from envelope is a few vector stores.
  struct Fields {
    Span urn, trace_id, meta_id, meta_queue, meta_lang;
    Span data_raw;  // raw JSON of a decoded data object, last in text_
    std::int64_t schema_version = 0;
    std::int64_t created_at = 0;
    std::int64_t attempts = 0;
    bool data_raw_canonical = false;  // data_raw can be re-emitted verbatim
    bool has_data = false;
    bool has_meta = false;
    bool has_schema_version = false;
    bool has_attempts = false;
  };
  // A decoded or made envelope: every string field in `text`.
  Envelope(std::unique_ptr<char[]> text, const Fields& fields) noexcept
      : text_(std::move(text)), f_(fields) {}
  // Bytes in text_: data_raw is stored last.
  [[nodiscard]] std::size_t text_size() const noexcept { return f_.data_raw.off + f_.data_raw.len; }

  std::unique_ptr<char[]> text_;  // one allocation holding every string field (and data_raw)
  Fields f_;
  mutable std::optional<Json> data_;  // only once parsed or set: a decoded payload stays text
  mutable std::atomic<int> data_state_{kDataReady};
  std::unique_ptr<Extras> extras_;
};

}  // namespace babelqueue
