// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// The two paths of try_decode, apart, so that the tests and the decode fuzzer can check that
// they agree: a straight-line read of the compact canonical body every SDK writes, and the
// general decoder that every other body (and every body the first one refuses) goes to.

#include <babelqueue/codec.hpp>
#include <babelqueue/export.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "envelope_access.hpp"

namespace babelqueue::detail {

/// try_decode through the general decoder only.
BABELQUEUE_EXPORT Result<Envelope, DecodeError> try_decode_general(
    std::string_view body, std::vector<std::string>* warnings = nullptr);

/// The envelope when the canonical fast path of try_decode accepts the body, else nothing.
BABELQUEUE_EXPORT std::optional<Envelope> try_decode_canonical(std::string_view body);

/// The first observable difference between two decodes of one body, or "" when there is none:
/// success or failure, the error text and offset, every accessor of the envelope including
/// whether its raw `data` may be re-emitted verbatim, and the warnings. It reads `data()`, after
/// which neither envelope offers its raw data any more.
inline std::string decode_difference(const Result<Envelope, DecodeError>& a,
                                     const std::vector<std::string>& a_warnings,
                                     const Result<Envelope, DecodeError>& b,
                                     const std::vector<std::string>& b_warnings) {
  if (a_warnings != b_warnings) return "warnings";
  if (a.has_value() != b.has_value()) {
    return a ? "only the first decoded; the second failed: " + std::string(b.error().what())
             : "only the second decoded; the first failed: " + std::string(a.error().what());
  }
  if (!a) {
    if (std::string_view(a.error().what()) != b.error().what()) return "error text";
    return a.error().offset() == b.error().offset() ? "" : "error offset";
  }
  const Envelope& x = *a;
  const Envelope& y = *b;
  // In this order: reading data() parses it, after which its raw text is no longer offered.
  const std::pair<bool, const char*> checks[] = {
      {detail_access::canonical_raw_data(x) == detail_access::canonical_raw_data(y),
       "canonical raw data"},
      {x.urn() == y.urn(), "urn"},
      {x.trace_id() == y.trace_id(), "trace_id"},
      {x.has_data() == y.has_data(), "has_data"},
      {x.meta().id == y.meta().id, "meta.id"},
      {x.meta().queue == y.meta().queue, "meta.queue"},
      {x.meta().lang == y.meta().lang, "meta.lang"},
      {x.meta().schema_version == y.meta().schema_version, "meta.schema_version"},
      {x.meta().created_at == y.meta().created_at, "meta.created_at"},
      {x.has_meta() == y.has_meta(), "has_meta"},
      {x.has_schema_version() == y.has_schema_version(), "has_schema_version"},
      {x.attempts() == y.attempts(), "attempts"},
      {x.has_attempts() == y.has_attempts(), "has_attempts"},
      {x.dead_letter() == y.dead_letter(), "dead_letter"},
      {x.unknown() == y.unknown(), "unknown"},
      {x.meta_unknown() == y.meta_unknown(), "meta_unknown"},
      {x.data() == y.data(), "data"},
  };
  for (const auto& [same, field] : checks) {
    if (!same) return field;
  }
  return "";
}

/// Where try_decode, and the fast path when it accepts the body, differ from the general decoder
/// on `body` ("" when nowhere): the check of the decode fuzzer and the codec tests.
inline std::string decode_paths_difference(std::string_view body) {
  std::vector<std::string> warnings;
  std::vector<std::string> general_warnings;
  const auto decoded = try_decode(body, &warnings);
  const auto general = try_decode_general(body, &general_warnings);
  std::string diff = decode_difference(decoded, warnings, general, general_warnings);
  if (!diff.empty()) return "try_decode and the general decoder differ: " + diff;
  if (auto fast = try_decode_canonical(body)) {
    // A fresh general decode: the comparison above parsed its data, which drops the raw text.
    diff = decode_difference(std::move(*fast), {}, try_decode_general(body), general_warnings);
    if (!diff.empty()) return "the fast path and the general decoder differ: " + diff;
  }
  return diff;
}

}  // namespace babelqueue::detail
