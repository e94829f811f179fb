// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// Private access to Envelope's representation for the codec (decode, make, encode).

#include <babelqueue/envelope.hpp>

#include <string_view>

namespace babelqueue {

struct detail_access {
  struct Strings {
    std::string_view urn, trace_id, meta_id, meta_queue, meta_lang;
  };

  /// Stores the five string fields in the envelope's single text allocation.
  static void set_strings(Envelope& e, const Strings& s) {
    e.text_.clear();
    e.text_.reserve(s.urn.size() + s.trace_id.size() + s.meta_id.size() + s.meta_queue.size() +
                    s.meta_lang.size());
    auto put = [&e](std::string_view v) {
      Envelope::Span span{e.text_.size(), v.size()};
      e.text_.append(v);
      return span;
    };
    e.urn_ = put(s.urn);
    e.trace_id_ = put(s.trace_id);
    e.meta_id_ = put(s.meta_id);
    e.meta_queue_ = put(s.meta_queue);
    e.meta_lang_ = put(s.meta_lang);
  }
  static Json& data(Envelope& e) { return e.data_; }
  static void set_has_data(Envelope& e, bool v) { e.has_data_ = v; }
  static void set_meta(Envelope& e, bool present, bool has_version, std::int64_t version,
                       std::int64_t created_at) {
    e.has_meta_ = present;
    e.has_schema_version_ = has_version;
    e.schema_version_ = version;
    e.created_at_ = created_at;
  }
  static void set_attempts(Envelope& e, bool present, std::int64_t n) {
    e.has_attempts_ = present;
    e.attempts_ = n;
  }
  static RawMembers& unknown(Envelope& e) { return e.unknown_; }
  static RawMembers& meta_unknown(Envelope& e) { return e.meta_unknown_; }
  static std::optional<DeadLetter>& dead_letter(Envelope& e) { return e.dead_letter_; }
};

}  // namespace babelqueue
