// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// The pieces the two envelope decode paths share: the general decoder (decode.cpp) and the
// straight-line read of the compact canonical body (decode_canonical.cpp). The canonical read
// lives in its own translation unit so that it does not take from the general decoder's
// inlining budget.

#include <babelqueue/codec.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "envelope_access.hpp"
#include "json_build.hpp"
#include "json_scan.hpp"

namespace babelqueue::detail {

// True when the 8 bytes of `w` are all decimal digits (a byte's high nibble is 3, and adding 6
// does not carry out of its low nibble).
inline bool eight_digits(std::uint64_t w) {
  constexpr std::uint64_t kHigh = 0xF0F0F0F0F0F0F0F0ULL;
  return ((w & kHigh) | (((w + 0x0606060606060606ULL) & kHigh) >> 4)) == 0x3333333333333333ULL;
}

// The value of 8 digits, the first in the lowest byte: combined pairwise (10, 100, 10000).
inline std::uint64_t eight_digits_value(std::uint64_t w) {
  std::uint64_t v = w & 0x0F0F0F0F0F0F0F0FULL;
  v = ((v * 2561) >> 8) & 0x00FF00FF00FF00FFULL;
  v = ((v * 6553601) >> 16) & 0x0000FFFF0000FFFFULL;
  return (v * 42949672960001ULL) >> 32;
}

// Fast path of an ENV-20 (I) integer at p: an optional '-', 1 to 18 digits without a leading
// zero (so no overflow), and no fraction or exponent. Moves p past it; false leaves the number
// to the full scanner. Eight digits at once when they are (millisecond timestamps are 13), then
// one at a time.
inline bool read_short_int(const char*& p_io, const char* end, std::int64_t& out) {
  const bool neg = *p_io == '-';
  const char* p = p_io + (neg ? 1 : 0);
  const char* const digits = p;
  if (end - p >= 2) {  // one digit, as schema_version and attempts mostly are
    const unsigned d0 = static_cast<unsigned char>(p[0]) - unsigned{'0'};
    const char after = p[1];
    if (d0 <= 9 && static_cast<unsigned char>(after) - unsigned{'0'} > 9 && after != '.' &&
        (after | 0x20) != 'e') {
      out = neg ? -static_cast<std::int64_t>(d0) : static_cast<std::int64_t>(d0);
      p_io = p + 1;
      return true;
    }
  }
  std::uint64_t v = 0;  // unsigned: a run longer than 18 digits may wrap before it is refused
  if (end - p >= 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, 8);
    if (eight_digits(w)) {
      v = eight_digits_value(w);
      p += 8;
    }
  }
  for (; p < end; ++p) {
    const unsigned digit = static_cast<unsigned char>(*p) - unsigned{'0'};  // wraps below '0'
    if (digit > 9) break;
    v = v * 10 + digit;
  }
  const auto nd = p - digits;
  if (nd == 0 || nd > 18 || (nd > 1 && *digits == '0')) return false;
  if (p < end && (*p == '.' || *p == 'e' || *p == 'E')) return false;
  out = neg ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
  p_io = p;
  return true;
}

// A run of 4 to 24 fixed bytes, as little-endian words so that it is checked with two or three
// overlapping loads of the bytes at hand: a member name as compact canonical JSON writes it
// (`"job":`), or the punctuation and names between the values of a canonical body.
struct Token {
  std::size_t len = 0;
  // Bytes [0, w), [8, 16) and [len - w, len), where w is 8, or 4 for a token under 8 bytes.
  std::uint64_t head = 0, mid = 0, tail = 0;
};

// `w` bytes of `text` from `at`, little-endian.
constexpr std::uint64_t token_word(std::string_view text, std::size_t at, std::size_t w) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < w; ++i) {
    const auto byte = static_cast<unsigned char>(text[at + i]);
    v |= static_cast<std::uint64_t>(byte) << (8 * i);
  }
  return v;
}

consteval Token token(std::string_view text) {
  const std::size_t len = text.size();
  if (len < 4 || len > 24) throw "token: the three words cover 4 to 24 bytes";
  const std::size_t w = len >= 8 ? 8 : 4;
  return Token{len, token_word(text, 0, w), len > 16 ? token_word(text, 8, 8) : 0,
               token_word(text, len - w, w)};
}

// True when the `left` bytes at p start with the token and have room for a value after it.
[[gnu::always_inline]] inline bool token_at(const char* p, std::size_t left, const Token& t) {
  if (left <= t.len) return false;
  if (t.len < 8) {
    std::uint32_t head = 0;
    std::uint32_t tail = 0;
    std::memcpy(&head, p, 4);
    std::memcpy(&tail, p + t.len - 4, 4);
    return head == t.head && tail == t.tail;
  }
  std::uint64_t head = 0;
  std::uint64_t tail = 0;
  std::memcpy(&head, p, 8);
  std::memcpy(&tail, p + t.len - 8, 8);
  if (head != t.head || tail != t.tail) return false;
  if (t.len <= 16) return true;
  std::uint64_t mid = 0;
  std::memcpy(&mid, p + 8, 8);
  return mid == t.mid;
}

// Validates the `data` object at c.p ('{') and keeps its text in `raw`; `canonical` when that
// text may be re-emitted as it is (compact, no duplicate member, canonical escapes).
inline bool read_data_object(Cursor& c, std::string_view& raw, bool& canonical) {
  const char* start = c.p;
  const bool ws_before = c.saw_ws;
  c.saw_ws = false;
  detail::CanonicalHandler h;
  if (!detail::parse_value(c, h, 1)) return false;
  raw = std::string_view(start, static_cast<std::size_t>(c.p - start));
  canonical = h.canonical && !c.saw_ws;
  c.saw_ws = ws_before;
  return true;
}

// A decoded envelope but for its extras (unknown members, dead_letter).
struct Parts {
  detail_access::Strings strings;
  bool has_data, data_canonical, has_meta, has_schema_version, has_attempts;
  std::int64_t schema_version, created_at, attempts;
};

inline Envelope assemble(const Parts& p) {
  Envelope env = detail_access::with_strings(p.strings);
  if (p.has_data) detail_access::set_data_pending(env, p.data_canonical);
  detail_access::set_meta(env, p.has_meta, p.has_schema_version, p.schema_version, p.created_at);
  detail_access::set_attempts(env, p.has_attempts, p.attempts);
  return env;
}

// The error of a decode that ran out of memory.
inline DecodeError out_of_memory() {
  return DecodeError("out of memory while decoding");
}

}  // namespace babelqueue::detail
