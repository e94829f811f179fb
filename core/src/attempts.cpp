// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// `attempts` + 1 in the stored bytes of a released message (RDS-57): a splice, not a re-encode,
// so big integers, unknown members and escapes survive exactly as written.

#include <babelqueue/spi/attempts.hpp>

#include <charconv>
#include <cstdint>
#include <limits>
#include <string>

#include "json_build.hpp"
#include "json_scan.hpp"

namespace babelqueue {
namespace {

using detail::json_type_name;

// Finds the effective top-level `attempts` member during one strict scan. Every occurrence
// overwrites the previous one, so the last wins (ENV-19) and earlier ones stay untouched.
struct AttemptsFinder {
  explicit AttemptsFinder(const detail::Cursor& c) : cursor(&c) {}

  const detail::Cursor* cursor;
  int depth = 0;
  // The value about to start belongs to a top-level member named `attempts`.
  bool next_is_attempts = false;
  bool found = false;
  // For a number or null: its text in the body. Empty for any other JSON type.
  std::string_view value;
  bool integer = false;
  // The JSON type of a value that is neither a number nor null.
  const char* bad_type = nullptr;
  std::string scratch;

  bool take() {
    const bool mine = next_is_attempts;
    next_is_attempts = false;
    if (mine) {
      found = true;
      value = {};
      integer = false;
      bad_type = nullptr;
    }
    return mine;
  }
  void begin_object() {
    if (take()) bad_type = "object";
    ++depth;
  }
  void end_object() { --depth; }
  void begin_array() {
    if (take()) bad_type = "array";
    ++depth;
  }
  void end_array() { --depth; }
  void key(const detail::RawString& k) {
    if (depth != 1) return;
    // Names match after unescaping (ENV-18): "attempt\u0073" is `attempts`.
    if (!k.escaped) {
      next_is_attempts = k.raw == "attempts";
      return;
    }
    scratch.clear();
    detail::unescape_append(scratch, k.raw);
    next_is_attempts = scratch == "attempts";
  }
  void string(const detail::RawString&) {
    if (take()) bad_type = "string";
  }
  void number(const detail::RawNumber& n) {
    if (take()) {
      value = n.lexeme;
      integer = n.integer;
    }
  }
  void boolean(bool) {
    if (take()) bad_type = "boolean";
  }
  void null() {
    // The cursor has just passed the literal.
    if (take()) value = std::string_view(cursor->p - 4, 4);
  }
};

std::string splice(std::string_view body, std::size_t at, std::size_t erase,
                   std::string_view insert) {
  std::string out;
  out.reserve(body.size() - erase + insert.size());
  out.append(body.substr(0, at));
  out.append(insert);
  out.append(body.substr(at + erase));
  return out;
}

}  // namespace

namespace spi {

Result<std::string, Error> increment_attempts(std::string_view body) {
  // Same strictness as decode (ENV-16): a body that fails here is poison, and RDS-25 / RDS-56
  // forbid releasing poison.
  if (!detail::valid_utf8(body)) return DecodeError("body is not valid UTF-8");
  detail::Cursor c(body);
  detail::skip_ws(c);
  if (c.at_end()) return DecodeError("invalid JSON at offset 0: empty body");
  const char* open = c.p;
  const char first = *open;
  AttemptsFinder finder(c);
  if (!detail::parse_value(c, finder, 0)) return detail::syntax_error(c);
  const char* close = c.p - 1;  // the top-level closing bracket
  detail::skip_ws(c);
  if (!c.at_end()) {
    return DecodeError("trailing data at offset " + std::to_string(c.offset()), c.offset());
  }
  if (first != '{') {
    return DecodeError(std::string("expected a JSON object, got ") + json_type_name(first));
  }

  if (!finder.found) {
    // Legacy bodies may lack the member (RDS-57): append it as the last top-level member.
    const char* q = open + 1;
    while (q < close && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
      ++q;
    const auto at = static_cast<std::size_t>(close - body.data());
    return splice(body, at, 0, q == close ? "\"attempts\":1" : ",\"attempts\":1");
  }
  if (finder.bad_type != nullptr) {
    return DecodeError(std::string("attempts: expected integer, got ") + finder.bad_type);
  }
  const auto at = static_cast<std::size_t>(finder.value.data() - body.data());
  // JSON null counts as absent, i.e. 0 (ENV-20), so the released body carries 1.
  if (finder.value == "null") return splice(body, at, finder.value.size(), "1");
  if (!finder.integer) {
    return DecodeError("attempts: expected integer, got " + std::string(finder.value));
  }
  // ENV-20 (I): the grammar already excludes a leading '+' and leading zeros; "-0" is 0.
  std::int64_t n = 0;
  const auto r = std::from_chars(finder.value.data(), finder.value.data() + finder.value.size(), n);
  if (r.ec != std::errc()) {
    return DecodeError("attempts: integer out of range: " + std::string(finder.value));
  }
  if (n == std::numeric_limits<std::int64_t>::max()) {
    // RDS-57: overflow is treated as poison that cannot be released in place.
    return Error(ErrorCode::ReleaseUnsupported,
                 "attempts would overflow int64: " + std::string(finder.value) + " + 1");
  }
  return splice(body, at, finder.value.size(), std::to_string(n + 1));
}

}  // namespace spi
}  // namespace babelqueue
