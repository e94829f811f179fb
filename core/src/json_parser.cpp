// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "json_build.hpp"

#include <simdjson.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <cstdint>
#include <cstring>
#include <string>

namespace babelqueue {
namespace detail {

bool valid_utf8(std::string_view s) noexcept {
  // ASCII text (most envelopes) skips the library call: one pass OR-ing the high bits.
#if defined(__SSE2__)
  if (s.size() > 64) {
    const char* p = s.data();
    const char* end = p + s.size();
    __m128i acc = _mm_setzero_si128();
    for (; end - p >= 16; p += 16) {
      acc = _mm_or_si128(acc, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    }
    unsigned tail = 0;
    for (; p < end; ++p)
      tail |= static_cast<unsigned char>(*p);
    if (_mm_movemask_epi8(acc) == 0 && (tail & 0x80U) == 0) return true;
    return simdjson::validate_utf8(s.data(), s.size());
  }
#endif
  if (s.size() <= 64) {
    std::uint64_t high = 0;
    std::size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      std::uint64_t v;
      std::memcpy(&v, s.data() + i, 8);
      high |= v;
    }
    for (; i < s.size(); ++i)
      high |= static_cast<unsigned char>(s[i]);
    if ((high & 0x8080808080808080ULL) == 0) return true;
  }
  return simdjson::validate_utf8(s.data(), s.size());
}

void BuildHandler::insert(Frame& f, Json v) {
  auto& obj = f.value.as_object();
  // Duplicate names: the last value wins at the first position (ENV-19).
  if (obj.size() < kIndexThreshold) {
    for (auto& m : obj) {
      if (m.first == f.key) {
        m.second = std::move(v);
        return;
      }
    }
    obj.emplace_back(std::move(f.key), std::move(v));
    return;
  }
  if (!f.index) {
    f.index = std::make_unique<std::unordered_multimap<std::size_t, std::size_t>>();
    for (std::size_t i = 0; i < obj.size(); ++i) {
      f.index->emplace(std::hash<std::string>{}(obj[i].first), i);
    }
  }
  const std::size_t h = std::hash<std::string>{}(f.key);
  auto [lo, hi] = f.index->equal_range(h);
  for (auto it = lo; it != hi; ++it) {
    if (obj[it->second].first == f.key) {
      obj[it->second].second = std::move(v);
      return;
    }
  }
  f.index->emplace(h, obj.size());
  obj.emplace_back(std::move(f.key), std::move(v));
}

bool CanonicalHandler::canonical_escapes(std::string_view raw) {
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '\\') continue;
    const char e = raw[++i];
    if (e == '"' || e == '\\' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') continue;
    if (e != 'u') return false;  // e.g. "\/"
    // Only \u00xx (lowercase) for a control character without a short form.
    const std::string_view hex = raw.substr(i + 1, 4);
    if (hex[0] != '0' || hex[1] != '0' || hex[2] > '1' ||
        !((hex[3] >= '0' && hex[3] <= '9') || (hex[3] >= 'a' && hex[3] <= 'f'))) {
      return false;
    }
    const unsigned v = hex_value(hex[2]) * 16 + hex_value(hex[3]);
    if (v == 0x08 || v == 0x09 || v == 0x0A || v == 0x0C || v == 0x0D) return false;
    i += 4;
  }
  return true;
}

DecodeError syntax_error(const Cursor& c) {
  return DecodeError("invalid JSON at offset " + std::to_string(c.error_offset) + ": " + c.error,
                     c.error_offset);
}

Result<Json, DecodeError> parse_json(std::string_view text, bool check_utf8) {
  if (check_utf8 && !valid_utf8(text)) return DecodeError("text is not valid UTF-8", 0);
  Cursor c(text);
  skip_ws(c);
  BuildHandler h;
  if (!parse_value(c, h, 0)) return syntax_error(c);
  skip_ws(c);
  if (!c.at_end()) {
    return DecodeError("trailing data at offset " + std::to_string(c.offset()), c.offset());
  }
  return std::move(h.result);
}

}  // namespace detail

Json Json::parse(std::string_view text) {
  return detail::parse_json(text, true).value();
}

Result<Json, DecodeError> Json::try_parse(std::string_view text) {
  try {
    return detail::parse_json(text, true);
  } catch (const std::bad_alloc&) {
    return DecodeError("out of memory while parsing JSON");
  }
}

}  // namespace babelqueue
