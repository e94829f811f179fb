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
    put(Json(JsonNumber::from_valid_lexeme(std::string(n.lexeme))));
  }
  void boolean(bool b) { put(Json(b)); }
  void null() { put(Json()); }
};

}  // namespace babelqueue::detail
