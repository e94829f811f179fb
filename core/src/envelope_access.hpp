// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// Private access to Envelope's representation for the codec (decode, make, encode).

#include <babelqueue/envelope.hpp>

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
    e.text_.clear();
    e.text_.reserve(s.urn.size() + s.trace_id.size() + s.meta_id.size() + s.meta_queue.size() +
                    s.meta_lang.size() + s.data_raw.size());
    auto put = [&e](std::string_view v) {
      Envelope::Span span{e.text_.size(), v.size()};
      e.text_.append(v);
      return span;
    };
    e.f_.urn = put(s.urn);
    e.f_.trace_id = put(s.trace_id);
    e.f_.meta_id = put(s.meta_id);
    e.f_.meta_queue = put(s.meta_queue);
    e.f_.meta_lang = put(s.meta_lang);
    e.f_.data_raw = put(s.data_raw);
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
