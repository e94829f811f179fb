// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// The strict RFC 8259 scanner shared by Json::parse, envelope decode and the poison record.
// It only looks at ASCII structure: UTF-8 is validated separately, by the caller, before its
// result is used. Outside strings every accepted byte is ASCII, and scan_string flags a string
// byte >= 0x80 in Cursor::non_ascii, so a text that scans without the flag needs no UTF-8 pass.
// It never throws and never recurses: containers are tracked on an explicit stack, so hostile
// nesting costs memory proportional to the depth limit.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace babelqueue::detail {

inline constexpr int kMaxDepth = 10000;

struct Cursor {
  const char* begin;
  const char* p;
  const char* end;
  const char* error = nullptr;  // static message, set on the first error
  std::size_t error_offset = 0;
  bool saw_ws = false;     // whitespace was skipped somewhere (the text is not compact)
  bool non_ascii = false;  // a string held a byte >= 0x80

  Cursor(const char* b, const char* e) : begin(b), p(b), end(e) {}
  explicit Cursor(std::string_view s) : Cursor(s.data(), s.data() + s.size()) {}

  bool fail(const char* msg) { return fail_at(msg, p); }
  bool fail_at(const char* msg, const char* at) {
    if (error == nullptr) {
      error = msg;
      error_offset = static_cast<std::size_t>(at - begin);
    }
    return false;
  }
  [[nodiscard]] bool at_end() const { return p >= end; }
  [[nodiscard]] std::size_t offset() const { return static_cast<std::size_t>(p - begin); }
};

inline bool is_ws(char ch) {
  return ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t';
}

inline void skip_ws(Cursor& c) {
  while (c.p < c.end && is_ws(*c.p)) {
    ++c.p;
    c.saw_ws = true;
  }
}

inline bool is_hex(char ch) {
  return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}
inline unsigned hex_value(char ch) {
  if (ch <= '9') return static_cast<unsigned>(ch - '0');
  if (ch <= 'F') return static_cast<unsigned>(ch - 'A' + 10);
  return static_cast<unsigned>(ch - 'a' + 10);
}

// Position of the first byte in [p, end) that is '"', '\\' or a control character, and when
// kStopAtNonAscii also the first byte >= 0x80. SSE2 (x86-64 baseline) 16 bytes at a time, else
// 8-byte SWAR.
template <bool kStopAtNonAscii = false>
inline const char* find_string_special(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i ctrl_max = _mm_set1_epi8(0x1F);
  const __m128i space = _mm_set1_epi8(0x20);
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // As signed bytes, both the control characters and the bytes >= 0x80 are below ' '.
    const __m128i other = kStopAtNonAscii ? _mm_cmplt_epi8(v, space)
                                          : _mm_cmpeq_epi8(_mm_max_epu8(v, ctrl_max), ctrl_max);
    const __m128i hits =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)), other);
    const int mask = _mm_movemask_epi8(hits);
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#else
  constexpr std::uint64_t ones = 0x0101010101010101ULL;
  constexpr std::uint64_t highs = 0x8080808080808080ULL;
  while (end - p >= 8) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    const std::uint64_t q = v ^ (ones * '"');
    const std::uint64_t b = v ^ (ones * '\\');
    std::uint64_t mask = ((q - ones) & ~q) | ((b - ones) & ~b) | ((v - ones * 0x20) & ~v);
    if constexpr (kStopAtNonAscii) mask |= v;
    const std::uint64_t hit = mask & highs;
    if (hit != 0) return p + (__builtin_ctzll(hit) >> 3);
    p += 8;
  }
#endif
  while (p < end) {
    const auto u = static_cast<unsigned char>(*p);
    if (u == '"' || u == '\\' || u < 0x20 || (kStopAtNonAscii && u >= 0x80)) return p;
    ++p;
  }
  return end;
}

// A scanned string token: the bytes between the quotes, as written.
struct RawString {
  std::string_view raw;
  bool escaped = false;
};

// Position of the first '"', '\\' or control character in [p, end) (end if none); a byte >= 0x80
// on the way sets `non_ascii`.
inline const char* find_string_stop(const char* p, const char* end, bool& non_ascii) {
  const char* s = find_string_special<true>(p, end);
  if (s < end && static_cast<unsigned char>(*s) >= 0x80) {
    // The first such byte stops the search; flag it and search the rest without stopping at them.
    non_ascii = true;
    s = find_string_special(s, end);
  }
  return s;
}

// Scans a string starting at the opening quote; validates escapes and control characters.
inline bool scan_string(Cursor& c, RawString& out) {
  const char* start = ++c.p;  // past the opening quote
  bool escaped = false;
  for (;;) {
    const char* s = find_string_stop(c.p, c.end, c.non_ascii);
    if (s >= c.end) {
      c.p = c.end;
      return c.fail("unterminated string");
    }
    const char ch = *s;
    if (ch == '"') {
      out.raw = std::string_view(start, static_cast<std::size_t>(s - start));
      out.escaped = escaped;
      c.p = s + 1;
      return true;
    }
    if (ch == '\\') {
      escaped = true;
      if (c.end - s < 2) {
        c.p = c.end;
        return c.fail("unterminated string");
      }
      switch (s[1]) {
        case '"':
        case '\\':
        case '/':
        case 'b':
        case 'f':
        case 'n':
        case 'r':
        case 't':
          c.p = s + 2;
          break;
        case 'u':
          if (c.end - s < 6 || !is_hex(s[2]) || !is_hex(s[3]) || !is_hex(s[4]) || !is_hex(s[5])) {
            return c.fail_at("invalid \\u escape in string", s);
          }
          c.p = s + 6;
          break;
        default:
          return c.fail_at("invalid escape in string", s);
      }
      continue;
    }
    return c.fail_at("unescaped control character in string", s);
  }
}

inline void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Appends the decoded value of a validated raw string. A `\u` escape of a lone surrogate
// becomes U+FFFD (ENV-17).
inline void unescape_append(std::string& out, std::string_view raw) {
  const char* p = raw.data();
  const char* end = p + raw.size();
  while (p < end) {
    const char* bs =
        static_cast<const char*>(std::memchr(p, '\\', static_cast<std::size_t>(end - p)));
    if (bs == nullptr) {
      out.append(p, static_cast<std::size_t>(end - p));
      return;
    }
    out.append(p, static_cast<std::size_t>(bs - p));
    const char e = bs[1];
    p = bs + 2;
    switch (e) {
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u': {
        auto hex4 = [](const char* h) {
          return (hex_value(h[0]) << 12) | (hex_value(h[1]) << 8) | (hex_value(h[2]) << 4) |
                 hex_value(h[3]);
        };
        std::uint32_t cp = hex4(p);
        p += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
            const std::uint32_t lo = hex4(p + 2);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
              p += 6;
            } else {
              cp = 0xFFFD;
            }
          } else {
            cp = 0xFFFD;
          }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          cp = 0xFFFD;
        }
        append_utf8(out, cp);
        break;
      }
      default:
        out.push_back(e);
        break;  // '"', '\\', '/'
    }
  }
}

inline std::string unescape(const RawString& s) {
  if (!s.escaped) return std::string(s.raw);
  std::string out;
  out.reserve(s.raw.size());
  unescape_append(out, s.raw);
  return out;
}

struct RawNumber {
  std::string_view lexeme;
  bool integer = true;
};

/// The JSON type of a value from its first byte, for error texts ("expected object, got array").
inline const char* json_type_name(char first) {
  switch (first) {
    case '{':
      return "object";
    case '[':
      return "array";
    case '"':
      return "string";
    case 't':
    case 'f':
      return "boolean";
    case 'n':
      return "null";
    default:
      return "number";
  }
}

inline bool is_digit(char ch) {
  return ch >= '0' && ch <= '9';
}

// Scans an RFC 8259 number at c.p (which is '-' or a digit).
inline bool scan_number(Cursor& c, RawNumber& out) {
  const char* start = c.p;
  const char* p = c.p;
  const char* end = c.end;
  if (p < end && *p == '-') ++p;
  if (p >= end || !is_digit(*p)) return c.fail_at("invalid number", start);
  if (*p == '0') {
    ++p;
  } else {
    while (p < end && is_digit(*p))
      ++p;
  }
  bool integer = true;
  if (p < end && *p == '.') {
    integer = false;
    ++p;
    if (p >= end || !is_digit(*p)) return c.fail_at("invalid number", start);
    while (p < end && is_digit(*p))
      ++p;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    integer = false;
    ++p;
    if (p < end && (*p == '+' || *p == '-')) ++p;
    if (p >= end || !is_digit(*p)) return c.fail_at("invalid number", start);
    while (p < end && is_digit(*p))
      ++p;
  }
  out.lexeme = std::string_view(start, static_cast<std::size_t>(p - start));
  out.integer = integer;
  c.p = p;
  return true;
}

inline bool scan_literal(Cursor& c, std::string_view word) {
  if (static_cast<std::size_t>(c.end - c.p) < word.size() ||
      std::memcmp(c.p, word.data(), word.size()) != 0) {
    return c.fail("invalid literal");
  }
  c.p += word.size();
  return true;
}

// Parses one JSON value at c.p (whitespace already skipped) and reports it to `h` SAX-style:
//   begin_object() key(RawString) end_object() begin_array() end_array()
//   string(RawString) number(RawNumber) boolean(bool) null()
// `depth` is the nesting depth of the enclosing container (0 at the top level).
// The open containers of parse_value: true = object, false = array. The first 128 levels live
// inline, so ordinary documents never allocate here.
class ContainerStack {
 public:
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] bool back() const { return get(size_ - 1); }
  void push_back(bool is_object) {
    if (size_ < kInline) {
      const std::uint64_t bit = 1ULL << (size_ % 64);
      if (is_object) {
        bits_[size_ / 64] |= bit;
      } else {
        bits_[size_ / 64] &= ~bit;
      }
    } else {
      more_.push_back(is_object);
    }
    ++size_;
  }
  void pop_back() {
    --size_;
    if (size_ >= kInline) more_.pop_back();
  }

 private:
  static constexpr std::size_t kInline = 128;
  [[nodiscard]] bool get(std::size_t i) const {
    if (i < kInline) return ((bits_[i / 64] >> (i % 64)) & 1U) != 0;
    return more_[i - kInline];
  }
  std::uint64_t bits_[kInline / 64] = {};
  std::size_t size_ = 0;
  std::vector<bool> more_;
};

template <class Handler>
bool parse_value(Cursor& c, Handler& h, int depth) {
  ContainerStack stack;
  for (;;) {
    // Expect a value.
    if (c.p >= c.end) return c.fail("unexpected end of input");
    bool closed_container = false;
    switch (*c.p) {
      case '{':
        if (depth + static_cast<int>(stack.size()) + 1 > kMaxDepth) {
          return c.fail("nesting deeper than 10000");
        }
        ++c.p;
        h.begin_object();
        skip_ws(c);
        if (c.p < c.end && *c.p == '}') {
          ++c.p;
          h.end_object();
          closed_container = true;
          break;
        }
        stack.push_back(true);
        if (c.p >= c.end || *c.p != '"') return c.fail("expected a member name");
        {
          RawString k;
          if (!scan_string(c, k)) return false;
          h.key(k);
        }
        skip_ws(c);
        if (c.p >= c.end || *c.p != ':') return c.fail("expected ':'");
        ++c.p;
        skip_ws(c);
        continue;
      case '[':
        if (depth + static_cast<int>(stack.size()) + 1 > kMaxDepth) {
          return c.fail("nesting deeper than 10000");
        }
        ++c.p;
        h.begin_array();
        skip_ws(c);
        if (c.p < c.end && *c.p == ']') {
          ++c.p;
          h.end_array();
          closed_container = true;
          break;
        }
        stack.push_back(false);
        continue;
      case '"': {
        RawString s;
        if (!scan_string(c, s)) return false;
        h.string(s);
        break;
      }
      case 't':
        if (!scan_literal(c, "true")) return false;
        h.boolean(true);
        break;
      case 'f':
        if (!scan_literal(c, "false")) return false;
        h.boolean(false);
        break;
      case 'n':
        if (!scan_literal(c, "null")) return false;
        h.null();
        break;
      default: {
        if (*c.p != '-' && !is_digit(*c.p)) return c.fail("unexpected character");
        RawNumber n;
        if (!scan_number(c, n)) return false;
        h.number(n);
        break;
      }
    }
    (void)closed_container;
    // A value is complete: close containers or move to the next element.
    for (;;) {
      if (stack.empty()) return true;
      skip_ws(c);
      if (c.p >= c.end) return c.fail("unexpected end of input");
      const bool in_object = stack.back();
      if (*c.p == ',') {
        ++c.p;
        skip_ws(c);
        if (in_object) {
          if (c.p >= c.end || *c.p != '"') return c.fail("expected a member name");
          RawString k;
          if (!scan_string(c, k)) return false;
          h.key(k);
          skip_ws(c);
          if (c.p >= c.end || *c.p != ':') return c.fail("expected ':'");
          ++c.p;
          skip_ws(c);
        }
        break;  // parse the next value
      }
      if (in_object && *c.p == '}') {
        ++c.p;
        stack.pop_back();
        h.end_object();
        continue;
      }
      if (!in_object && *c.p == ']') {
        ++c.p;
        stack.pop_back();
        h.end_array();
        continue;
      }
      return c.fail(in_object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
  }
}

// A handler that only validates.
struct NullHandler {
  void begin_object() {}
  void end_object() {}
  void begin_array() {}
  void end_array() {}
  void key(const RawString&) {}
  void string(const RawString&) {}
  void number(const RawNumber&) {}
  void boolean(bool) {}
  void null() {}
};

// A handler that appends the value as compact raw text: whitespace outside strings removed,
// string escapes and number lexemes kept as written (ENV-27).
struct CompactHandler {
  std::string* out;
  std::vector<bool> first;  // per open container: no element written yet

  void sep() {
    if (!first.empty()) {
      if (!first.back()) out->push_back(',');
      first.back() = false;
    }
  }
  void begin_object() {
    if (!pending_key) sep();
    pending_key = false;
    out->push_back('{');
    first.push_back(true);
  }
  void end_object() {
    out->push_back('}');
    first.pop_back();
  }
  void begin_array() {
    if (!pending_key) sep();
    pending_key = false;
    out->push_back('[');
    first.push_back(true);
  }
  void end_array() {
    out->push_back(']');
    first.pop_back();
  }
  void key(const RawString& k) {
    sep();
    out->push_back('"');
    out->append(k.raw);
    out->append("\":");
    pending_key = true;
  }
  void scalar_prefix() {
    if (!pending_key) sep();
    pending_key = false;
  }
  void string(const RawString& s) {
    scalar_prefix();
    out->push_back('"');
    out->append(s.raw);
    out->push_back('"');
  }
  void number(const RawNumber& n) {
    scalar_prefix();
    out->append(n.lexeme);
  }
  void boolean(bool b) {
    scalar_prefix();
    out->append(b ? "true" : "false");
  }
  void null() {
    scalar_prefix();
    out->append("null");
  }
  bool pending_key = false;
};

}  // namespace babelqueue::detail
