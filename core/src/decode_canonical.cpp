// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The fast path of try_decode: a straight-line read of the compact canonical body every SDK's
// encode writes (ENV-12 order, every member present, no whitespace).

#include <cstring>
#include <string_view>

#include "decode_internal.hpp"
#include "decode_parts.hpp"

namespace babelqueue {
namespace detail {
namespace {

// A compact object of scalar members (strings, numbers, true, false, null) at c.p ('{'):
// validated as parse_value does and shown the same events by the same CanonicalHandler, in far
// fewer steps. False leaves the object to read_data_object: nesting, whitespace, a duplicate
// member, an error.
bool read_flat_object(Cursor& c) {
  CanonicalHandler h;
  h.begin_object();
  ++c.p;  // '{'
  if (c.p < c.end && *c.p == '}') {
    ++c.p;
    return true;
  }
  for (;;) {
    RawString text;
    if (c.p >= c.end || *c.p != '"' || !scan_string(c, text)) return false;
    h.key(text);
    if (c.end - c.p < 2 || *c.p != ':') return false;
    ++c.p;
    std::int64_t number = 0;
    switch (*c.p) {
      case '"':
        if (!scan_string(c, text)) return false;
        h.string(text);
        break;
      case 't':
        if (!scan_literal(c, "true")) return false;
        break;
      case 'f':
        if (!scan_literal(c, "false")) return false;
        break;
      case 'n':
        if (!scan_literal(c, "null")) return false;
        break;
      default: {  // a number: most often a short integer, else what the full scanner takes
        RawNumber lexeme;
        if (!read_short_int(c.p, c.end, number) &&
            (!(*c.p == '-' || is_digit(*c.p)) || !scan_number(c, lexeme))) {
          return false;
        }
        break;
      }
    }
    if (c.p >= c.end || !h.canonical) return false;
    if (*c.p == '}') {
      ++c.p;
      return true;
    }
    if (*c.p != ',') return false;
    ++c.p;
  }
}

// The bytes between the values of a compact canonical body: ENV-12 order, every member present,
// no whitespace, as every SDK's encode writes it.
constexpr Token kCanonJob = token("{\"job\":\"");
constexpr Token kCanonTraceId = token(",\"trace_id\":");
constexpr Token kCanonData = token(",\"data\":");
constexpr Token kCanonMetaId = token(",\"meta\":{\"id\":\"");
constexpr Token kCanonQueue = token(",\"queue\":\"");
constexpr Token kCanonLang = token(",\"lang\":\"");
constexpr Token kCanonVersion = token(",\"schema_version\":");
constexpr Token kCanonCreatedAt = token(",\"created_at\":");
constexpr Token kCanonAttempts = token("},\"attempts\":");

// Moves `at` back over the digits that end there, 8 at a time (up to 24), and a '-' before
// them; false when there is no digit or fewer than 8 bytes before `at`. Each byte that is no digit
// has a bit of its high nibble set in `other` (XOR '0' leaves a digit 0 to 9; adding 6 to that
// stays under 16), so the digits at the top of a word are its leading zero bytes.
bool skip_int_back(const char* begin, const char*& at) {
  constexpr std::uint64_t kHigh = 0xF0F0F0F0F0F0F0F0ULL;
  constexpr std::uint64_t kLow = 0x0F0F0F0F0F0F0F0FULL;
  const char* q = at;
  for (int words = 0; words < 3 && q - begin >= 8; ++words) {
    std::uint64_t w = 0;
    std::memcpy(&w, q - 8, 8);
    const std::uint64_t d = w ^ 0x3030303030303030ULL;
    const std::uint64_t other = (d & kHigh) | (((d & kLow) + 0x0606060606060606ULL) & kHigh);
    const auto n = other == 0 ? 8 : __builtin_clzll(other) / 8;
    q -= n;
    if (n < 8) break;
  }
  if (q == at || q == begin) return false;
  if (q[-1] == '-') --q;
  at = q;
  return true;
}

// Moves `at` back over the token that ends there; false when it does not.
bool skip_token_back(const char* begin, const char*& at, const Token& t) {
  if (static_cast<std::size_t>(at - begin) <= t.len) return false;
  at -= t.len;
  return token_at(at, t.len + 1, t);
}

// Where the last two tokens of the layout start when the body ends as the layout does,
// `,"created_at":N},"attempts":N}`. Checked before the forward read, because encoders write
// every other member there (meta's unknown members, dead_letter, the unknown top-level ones):
// such a body goes straight to the general decoder instead of being read twice. The forward
// read then checks that it arrives at these tokens, and reads the numbers after them.
struct Tail {
  const char* created_at;  // `,"created_at":`
  const char* attempts;    // `},"attempts":`
};

bool canonical_tail(const char* begin, const char* end, Tail& tail) {
  if (end - begin < 3 || end[-1] != '}') return false;
  const char* at = end - 1;
  if (is_digit(at[-1]) && at[-2] == ':') {  // attempts mostly has one digit
    --at;
  } else if (!skip_int_back(begin, at)) {
    return false;
  }
  if (!skip_token_back(begin, at, kCanonAttempts)) return false;
  tail.attempts = at;
  if (!skip_int_back(begin, at) || !skip_token_back(begin, at, kCanonCreatedAt)) return false;
  tail.created_at = at;
  return true;
}

// Moves p past the token at p; false when it is not there (or nothing follows it).
[[gnu::always_inline]] inline bool expect(const char*& p, const char* end, const Token& t) {
  if (!token_at(p, static_cast<std::size_t>(end - p), t)) return false;
  p += t.len;
  return true;
}

// The string from p (after its opening quote) to its closing quote, which p moves past; false
// when an escape or a control character comes first.
[[gnu::always_inline]] inline bool plain_string(const char*& p, const char* end, bool& non_ascii,
                                                std::string_view& value) {
  const char* q = find_string_stop(p, end, non_ascii);
  if (q >= end || *q != '"') return false;
  value = std::string_view(p, static_cast<std::size_t>(q - p));
  p = q + 1;
  return true;
}

// Straight-line decode of a compact canonical body, whose `trace_id` may also be null. False on
// any other layout: whitespace, an escape in a string, another member, order or type, a number
// read_short_int leaves to the full scanner, invalid `data`, trailing bytes, invalid UTF-8; the
// general decoder then reads the body from its start. What it accepts reads exactly as there.
bool read_canonical(std::string_view body, Parts& out) {
  const char* p = body.data();
  const char* const end = p + body.size();
  bool non_ascii = false;
  Tail tail{};
  if (!canonical_tail(p, end, tail)) return false;
  detail_access::Strings& s = out.strings;
  std::string_view job;
  if (!expect(p, end, kCanonJob) || !plain_string(p, end, non_ascii, job) ||
      !expect(p, end, kCanonTraceId)) {
    return false;
  }
  if (*p == '"') {  // expect() left a byte after the token
    ++p;
    if (!plain_string(p, end, non_ascii, s.trace_id)) return false;
  } else if (end - p < 4 || std::memcmp(p, "null", 4) != 0) {
    return false;
  } else {
    p += 4;
  }
  if (!expect(p, end, kCanonData) || *p != '{') return false;
  Cursor data(p, end);
  if (read_flat_object(data)) {
    s.data_raw = std::string_view(p, static_cast<std::size_t>(data.p - p));
    out.data_canonical = true;
  } else {
    data.p = p;
    if (!read_data_object(data, s.data_raw, out.data_canonical)) return false;
  }
  p = data.p;
  non_ascii = non_ascii || data.non_ascii;
  if (!expect(p, end, kCanonMetaId) || !plain_string(p, end, non_ascii, s.meta_id) ||
      !expect(p, end, kCanonQueue) || !plain_string(p, end, non_ascii, s.meta_queue) ||
      !expect(p, end, kCanonLang) || !plain_string(p, end, non_ascii, s.meta_lang) ||
      !expect(p, end, kCanonVersion) || !read_short_int(p, end, out.schema_version) ||
      p != tail.created_at) {
    return false;
  }
  p += kCanonCreatedAt.len;
  if (!read_short_int(p, end, out.created_at) || p != tail.attempts) return false;
  p += kCanonAttempts.len;
  if (!read_short_int(p, end, out.attempts) || p != end - 1) return false;
  // Bytes >= 0x80 can only be in the strings, which flag them.
  if (non_ascii && !valid_utf8(body)) return false;
  s.urn = trim_w(job);
  out.has_data = true;
  out.has_meta = true;
  out.has_schema_version = true;
  out.has_attempts = true;
  return true;
}

}  // namespace

std::optional<Envelope> try_decode_canonical(std::string_view body) {
  Parts parts;
  if (!read_canonical(body, parts)) return std::nullopt;
  return assemble(parts);
}

}  // namespace detail

Result<Envelope, DecodeError> try_decode(std::string_view body,
                                         std::vector<std::string>* warnings) {
  // A body that starts or ends otherwise than the compact layout does (a pretty-printed one)
  // goes to the general decoder before anything is set up for the canonical read.
  if (body.size() > 2 && body[1] == '"' && body.back() == '}') {
    detail::Parts parts;
    if (detail::read_canonical(body, parts)) {
      try {
        return detail::assemble(parts);
      } catch (const std::bad_alloc&) {
        return detail::out_of_memory();
      }
    }
  }
  return detail::try_decode_general(body, warnings);
}

}  // namespace babelqueue
