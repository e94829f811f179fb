// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// Private access to Envelope's representation for the codec (decode, make, encode).

#include <babelqueue/envelope.hpp>

#include <cstring>
#include <memory>
#include <optional>
#include <string_view>

namespace babelqueue {

struct detail_access {
  struct Strings {
    std::string_view urn, trace_id, meta_id, meta_queue, meta_lang;
    std::string_view data_raw = {};  // validated raw `data` object text, kept for lazy parsing
  };

  /// A new envelope holding the string fields in its single text allocation; everything else is
  /// zero until set. Built in one go: default-constructing an envelope and then filling it in
  /// costs a block clear of the whole object.
  static Envelope with_strings(const Strings& s) {
    const std::size_t total = s.urn.size() + s.trace_id.size() + s.meta_id.size() +
                              s.meta_queue.size() + s.meta_lang.size() + s.data_raw.size();
    std::unique_ptr<char[]> text;
    if (total != 0) text = std::make_unique_for_overwrite<char[]>(total);
    char* const out = text.get();
    std::size_t at = 0;
    // Spelled out rather than looped over arrays of parts and spans, which cost more than the
    // copies of these short strings.
    const auto put = [out, &at](std::string_view part) {
      copy_short(out + at, part);
      const Envelope::Span span{at, part.size()};
      at += part.size();
      return span;
    };
    Envelope::Fields f;
    f.urn = put(s.urn);
    f.trace_id = put(s.trace_id);
    f.meta_id = put(s.meta_id);
    f.meta_queue = put(s.meta_queue);
    f.meta_lang = put(s.meta_lang);
    f.data_raw = put(s.data_raw);
    return Envelope(std::move(text), f);
  }
  /// memcpy for the short strings of an envelope, without a library call for up to 64 bytes.
  static void copy_short(char* dst, std::string_view src) {
    const std::size_t n = src.size();
    if (n > 64) {
      std::memcpy(dst, src.data(), n);
    } else if (n > 32) {  // a UUID: two overlapping halves
      std::memcpy(dst, src.data(), 32);
      std::memcpy(dst + n - 32, src.data() + n - 32, 32);
    } else if (n >= 16) {
      std::memcpy(dst, src.data(), 16);
      std::memcpy(dst + n - 16, src.data() + n - 16, 16);
    } else if (n >= 8) {
      std::memcpy(dst, src.data(), 8);
      std::memcpy(dst + n - 8, src.data() + n - 8, 8);
    } else if (n >= 4) {
      std::memcpy(dst, src.data(), 4);
      std::memcpy(dst + n - 4, src.data() + n - 4, 4);
    } else {
      for (std::size_t i = 0; i < n; ++i)
        dst[i] = src[i];
    }
  }
  /// Marks `data` as held by the raw text given to with_strings (parsed on first access).
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
  /// Sets `data` to an object (make).
  static void set_data(Envelope& e, Json data) {
    e.data_ = std::move(data);
    e.f_.has_data = true;
  }
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
  /// The unknown members and the dead-letter block, created on first use.
  static Envelope::Extras& extras(Envelope& e) { return e.mutable_extras(); }
};

}  // namespace babelqueue
