// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The ADR-0035 poison record (ENV-42..44), built from the raw delivery bytes.

#include <babelqueue/codec.hpp>

#include <string>

#include "json_build.hpp"
#include "json_scan.hpp"

namespace babelqueue {
namespace {

// Finds out whether the top-level object has a member named exactly "dead_letter".
struct TopLevelKeys {
  int depth = 0;
  bool has_dead_letter = false;
  std::string scratch;

  void begin_object() { ++depth; }
  void end_object() { --depth; }
  void begin_array() { ++depth; }
  void end_array() { --depth; }
  void key(const detail::RawString& k) {
    if (depth != 1) return;
    if (!k.escaped) {
      has_dead_letter |= k.raw == "dead_letter";
      return;
    }
    scratch.clear();
    detail::unescape_append(scratch, k.raw);
    has_dead_letter |= scratch == "dead_letter";
  }
  void string(const detail::RawString&) {}
  void number(const detail::RawNumber&) {}
  void boolean(bool) {}
  void null() {}
};

void append_base64(std::string& out, std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t n = bytes.size();
  out.reserve(out.size() + (n + 2) / 3 * 4);
  for (; n >= 3; n -= 3, p += 3) {
    const unsigned v = (unsigned{p[0]} << 16) | (unsigned{p[1]} << 8) | p[2];
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back(kAlphabet[v & 63]);
  }
  if (n > 0) {
    const unsigned v = (unsigned{p[0]} << 16) | (n == 2 ? unsigned{p[1]} << 8 : 0U);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(n == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
}

// Metadata strings (error text, queue name) come from code, not from the body; if one is not
// UTF-8, each invalid sequence is replaced by U+FFFD so the record stays valid JSON. Body bytes
// never are.
void append_text(std::string& out, std::string_view s) {
  if (detail::valid_utf8(s)) {
    append_json_string(out, s);
    return;
  }
  std::string clean;
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    const std::size_t len = b < 0x80           ? 1
                            : (b >> 5) == 0x6  ? 2
                            : (b >> 4) == 0xE  ? 3
                            : (b >> 3) == 0x1E ? 4
                                               : 0;
    if (len != 0 && i + len <= s.size() && detail::valid_utf8(s.substr(i, len))) {
      clean.append(s.substr(i, len));
      i += len;
    } else {
      clean.append("\xEF\xBF\xBD");
      ++i;
    }
  }
  append_json_string(out, clean);
}

void append_block(std::string& out, std::string_view error, std::string_view queue,
                  std::int64_t failed_at) {
  out.append("\"dead_letter\":{\"reason\":\"poison\",\"error\":");
  append_text(out, error.empty() ? std::string_view("undecodable body") : error);
  out.append(",\"failed_at\":");
  out.append(std::to_string(failed_at));
  out.append(",\"original_queue\":");
  append_text(out, queue);
  out.append(",\"lang\":");
  append_json_string(out, SOURCE_LANG);
  out.push_back('}');
}

}  // namespace

std::string poison_record(std::string_view body, std::string_view error,
                          std::string_view original_queue,
                          std::optional<std::int64_t> failed_at_ms) {
  const std::int64_t failed_at = failed_at_ms ? *failed_at_ms : now_ms();
  std::string out;
  if (!detail::valid_utf8(body)) {
    out.append("{\"raw\":\"");
    append_base64(out, body);
    out.append("\",\"raw_encoding\":\"base64\",");
    append_block(out, error, original_queue, failed_at);
    out.push_back('}');
    return out;
  }
  detail::Cursor c(body);
  detail::skip_ws(c);
  if (!c.at_end() && *c.p == '{') {
    TopLevelKeys keys;
    const char* open = c.p;
    if (detail::parse_value(c, keys, 0)) {
      const char* close = c.p - 1;  // the top-level '}'
      detail::skip_ws(c);
      if (c.at_end() && !keys.has_dead_letter) {
        // Splice: every original byte is kept; only the dead_letter member is inserted.
        const char* q = open + 1;
        while (q < close && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
          ++q;
        const bool empty_object = q == close;
        out.reserve(body.size() + 160);
        out.append(body.data(), static_cast<std::size_t>(close - body.data()));
        if (!empty_object) out.push_back(',');
        append_block(out, error, original_queue, failed_at);
        out.append(close, static_cast<std::size_t>(body.data() + body.size() - close));
        return out;
      }
    }
  }
  out.append("{\"raw\":");
  append_json_string(out, body);
  out.push_back(',');
  append_block(out, error, original_queue, failed_at);
  out.push_back('}');
  return out;
}

}  // namespace babelqueue
