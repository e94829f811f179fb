// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// Private access to Envelope's representation for the codec (decode, make, encode).

#include <babelqueue/envelope.hpp>

#include <cstring>
#include <optional>
#include <string_view>

namespace babelqueue {

struct detail_access {
  struct Strings {
    std::string_view urn, trace_id, meta_id, meta_queue, meta_lang;
    std::string_view data_raw = {};  // validated raw `data` object text, kept for lazy parsing
  };

  /// Stores the string fields in the envelope's single text allocation.
  static void set_strings(Envelope& e, const Strings& s) {
    const std::string_view parts[] = {s.urn,        s.trace_id,  s.meta_id,
                                      s.meta_queue, s.meta_lang, s.data_raw};
    std::size_t total = 0;
    for (const auto part : parts)
      total += part.size();
    e.text_.resize(total);
    char* out = e.text_.data();
    Envelope::Span* spans[] = {&e.f_.urn,        &e.f_.trace_id,  &e.f_.meta_id,
                               &e.f_.meta_queue, &e.f_.meta_lang, &e.f_.data_raw};
    std::size_t at = 0;
    for (std::size_t i = 0; i < 6; ++i) {
      copy_short(out + at, parts[i]);
      *spans[i] = Envelope::Span{at, parts[i].size()};
      at += parts[i].size();
    }
  }
  /// memcpy for the short strings of an envelope, without a library call for up to 32 bytes.
  static void copy_short(char* dst, std::string_view src) {
    const std::size_t n = src.size();
    if (n > 32) {
      std::memcpy(dst, src.data(), n);
    } else if (n >= 16) {
      std::memcpy(dst, src.data(), 16);
      std::memcpy(dst + n - 16, src.data() + n - 16, 16);
    } else if (n >= 8) {
      std::memcpy(dst, src.data(), 8);
      std::memcpy(dst + n - 8, src.data() + n - 8, 8);
    } else {
      for (std::size_t i = 0; i < n; ++i)
        dst[i] = src[i];
    }
  }
  /// Marks `data` as held by the raw text given to set_strings (parsed on first access).
  static void set_data_pending(Envelope& e, bool canonical) {
    e.f_.has_data = true;
    e.f_.data_raw_canonical = canonical;
    e.data_state_.store(Envelope::kDataPending, std::memory_order_relaxed);
  }
  /// The raw `data` text when it was never parsed and is canonical, so encode may copy it.
  static std::optional<std::string_view> canonical_raw_data(const Envelope& e) {
    if (!e.f_.data_raw_canonical ||
        e.data_state_.load(std::memory_order_acquire) == Envelope::kDataReady) {
      return std::nullopt;
    }
    return e.view(e.f_.data_raw);
  }
  static Json& data(Envelope& e) { return e.data_; }
  static void set_has_data(Envelope& e, bool v) { e.f_.has_data = v; }
  static void set_meta(Envelope& e, bool present, bool has_version, std::int64_t version,
                       std::int64_t created_at) {
    e.f_.has_meta = present;
    e.f_.has_schema_version = has_version;
    e.f_.schema_version = version;
    e.f_.created_at = created_at;
  }
  static void set_attempts(Envelope& e, bool present, std::int64_t n) {
    e.f_.has_attempts = present;
    e.f_.attempts = n;
  }
  static RawMembers& unknown(Envelope& e) { return e.unknown_; }
  static RawMembers& meta_unknown(Envelope& e) { return e.meta_unknown_; }
  static std::optional<DeadLetter>& dead_letter(Envelope& e) { return e.dead_letter_; }
};

}  // namespace babelqueue
