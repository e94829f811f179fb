// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// Building babelqueue::Json values from the scanner's SAX events.

#include <babelqueue/errors.hpp>
#include <babelqueue/json.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "json_scan.hpp"

namespace babelqueue::detail {

/// True when `s` is valid UTF-8 (simdjson's validator; short ASCII strings skip it).
bool valid_utf8(std::string_view s) noexcept;

/// The DecodeError for a failed scan.
DecodeError syntax_error(const Cursor& c);

/// Strict parse of a whole document into a Json (ENV-16 syntax).
Result<Json, DecodeError> parse_json(std::string_view text, bool check_utf8);

struct BuildHandler {
  static constexpr std::size_t kIndexThreshold = 16;
  struct Frame {
    Json value;
    std::string key;
    std::unique_ptr<std::unordered_multimap<std::size_t, std::size_t>> index;
  };
  // The frame stack is borrowed from a per-thread pool, so parsing does not allocate it anew.
  BuildHandler() { stack.swap(pool()); }
  ~BuildHandler() {
    stack.clear();
    if (pool().capacity() < stack.capacity()) stack.swap(pool());
  }
  BuildHandler(const BuildHandler&) = delete;
  BuildHandler& operator=(const BuildHandler&) = delete;
  static std::vector<Frame>& pool() {
    thread_local std::vector<Frame> frames;
    return frames;
  }

  std::vector<Frame> stack;
  Json result;

  static void insert(Frame& f, Json v);
  void put(Json v) {
    if (stack.empty()) {
      result = std::move(v);
      return;
    }
    Frame& f = stack.back();
    if (f.value.is_array()) {
      f.value.as_array().push_back(std::move(v));
    } else {
      insert(f, std::move(v));
    }
  }
  void begin_object() { stack.push_back(Frame{Json(JsonObject{}), {}, nullptr}); }
  void begin_array() { stack.push_back(Frame{Json(JsonArray{}), {}, nullptr}); }
  void end_container() {
    Json v = std::move(stack.back().value);
    stack.pop_back();
    put(std::move(v));
  }
  void end_object() { end_container(); }
  void end_array() { end_container(); }
  void key(const RawString& k) {
    std::string& key = stack.back().key;
    key.clear();
    if (k.escaped) {
      unescape_append(key, k.raw);
    } else {
      key.assign(k.raw);
    }
  }
  void string(const RawString& s) { put(Json(unescape(s))); }
  void number(const RawNumber& n) {
    put(Json(JsonNumber::from_valid_lexeme(std::string(n.lexeme), n.integer)));
  }
  void boolean(bool b) { put(Json(b)); }
  void null() { put(Json()); }
};

// Validates a value and tells whether its text is already what Json::dump() would write for it:
// no whitespace (checked by the caller through Cursor::saw_ws), no duplicate names, and only the
// escapes the canonical writer produces (ENV-13). Conservative: when unsure it says "no".
struct CanonicalHandler {
  static constexpr int kMaxKeys = 64;
  static constexpr int kMaxDepth = 32;
  bool canonical = true;
  int nkeys = 0;
  int depth = 0;
  // Deliberately uninitialized (only [0, nkeys) and [0, depth) are read): zeroing a kilobyte
  // per decode would cost more than the whole check.
  struct KeyRef {
    const char* data;
    std::size_t size;
  };
  KeyRef keys[kMaxKeys];
  int starts[kMaxDepth];

  void open() {
    if (!canonical) return;
    if (depth == kMaxDepth) {
      canonical = false;
      return;
    }
    starts[depth++] = nkeys;
  }
  void close() {
    if (canonical) nkeys = starts[--depth];
  }
  void begin_object() { open(); }
  void end_object() { close(); }
  void begin_array() { open(); }
  void end_array() { close(); }
  void key(const RawString& k) {
    if (!canonical) return;
    if (k.escaped || nkeys == kMaxKeys) {
      canonical = false;
      return;
    }
    for (int i = starts[depth - 1]; i < nkeys; ++i) {
      if (std::string_view(keys[i].data, keys[i].size) == k.raw) {
        canonical = false;
        return;
      }
    }
    keys[nkeys++] = KeyRef{k.raw.data(), k.raw.size()};
  }
  void string(const RawString& s) {
    if (canonical && s.escaped) canonical = canonical_escapes(s.raw);
  }
  void number(const RawNumber&) {}
  void boolean(bool) {}
  void null() {}

  static bool canonical_escapes(std::string_view raw);
};

}  // namespace babelqueue::detail
