// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "json_tools.hpp"

#include "suite.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace babelqueue::conformance::detail {

namespace {

// The reference tokens of an RFC 6901 pointer.
std::vector<std::string> pointer_tokens(std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer.front() != '/') fail("manifest: invalid JSON pointer " + quote(pointer));
  std::size_t pos = 1;
  while (true) {
    const std::size_t end = std::min(pointer.find('/', pos), pointer.size());
    std::string token;
    for (std::size_t i = pos; i < end; ++i) {
      if (pointer[i] != '~') {
        token += pointer[i];
      } else if (i + 1 < end && (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
        token += pointer[++i] == '0' ? '~' : '/';
      } else {
        fail("manifest: invalid JSON pointer " + quote(pointer));
      }
    }
    tokens.push_back(std::move(token));
    if (end == pointer.size()) break;
    pos = end + 1;
  }
  return tokens;
}

std::optional<std::size_t> array_index(std::string_view token) {
  if (token.empty() || (token.size() > 1 && token.front() == '0') || token.size() > 9) return {};
  std::size_t n = 0;
  for (const char c : token) {
    if (c < '0' || c > '9') return {};
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  return n;
}

std::size_t skip_ws(std::string_view text, std::size_t i) {
  while (i < text.size() &&
         (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) {
    ++i;
  }
  return i;
}

// The end of the string token that starts at text[i] == '"'.
std::size_t skip_string(std::string_view text, std::size_t i) {
  for (++i; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '"') {
      return i + 1;
    }
  }
  return text.size();
}

// The end of the value that starts at text[i] (the text is known to be valid JSON).
std::size_t skip_value(std::string_view text, std::size_t i) {
  if (i >= text.size()) return i;
  if (text[i] == '"') return skip_string(text, i);
  if (text[i] == '{' || text[i] == '[') {
    int depth = 0;
    while (i < text.size()) {
      const char c = text[i];
      if (c == '"') {
        i = skip_string(text, i);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') --depth;
      ++i;
      if (depth == 0) return i;
    }
    return i;
  }
  while (i < text.size() &&
         std::string_view(",}] \t\n\r").find(text[i]) == std::string_view::npos) {
    ++i;
  }
  return i;
}

}  // namespace

bool strict_equal(const Json& a, const Json& b) {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case Json::Type::Null:
      return true;
    case Json::Type::Bool:
      return a.as_bool() == b.as_bool();
    case Json::Type::Number:
      return a.as_number().is_integer() == b.as_number().is_integer() &&
             a.as_number() == b.as_number();
    case Json::Type::String:
      return a.as_string() == b.as_string();
    case Json::Type::Array: {
      const JsonArray& x = a.as_array();
      const JsonArray& y = b.as_array();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!strict_equal(x[i], y[i])) return false;
      }
      return true;
    }
    case Json::Type::Object: {
      if (a.size() != b.size()) return false;
      for (const auto& [key, value] : a.as_object()) {
        const Json* other = b.find(key);
        if (other == nullptr || !strict_equal(value, *other)) return false;
      }
      return true;
    }
  }
  return false;
}

const Json* resolve(const Json& root, std::string_view pointer) {
  const Json* at = &root;
  for (const std::string& token : pointer_tokens(pointer)) {
    if (at->is_object()) {
      at = at->find(token);
    } else if (at->is_array()) {
      const auto i = array_index(token);
      at = i && *i < at->size() ? &at->as_array()[*i] : nullptr;
    } else {
      at = nullptr;
    }
    if (at == nullptr) return nullptr;
  }
  return at;
}

bool erase(Json& root, std::string_view pointer) {
  std::vector<std::string> tokens = pointer_tokens(pointer);
  if (tokens.empty()) return false;
  Json* at = &root;
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
    at = at->find(tokens[i]);
    if (at == nullptr) return false;
  }
  if (!at->is_object()) return false;
  JsonObject& members = at->as_object();
  const auto it = std::find_if(members.begin(), members.end(),
                               [&](const auto& m) { return m.first == tokens.back(); });
  if (it == members.end()) return false;
  members.erase(it);
  return true;
}

std::optional<std::string_view> raw_member(std::string_view text, std::string_view key) {
  std::optional<std::string_view> found;
  std::size_t i = skip_ws(text, 0);
  if (i >= text.size() || text[i] != '{') return std::nullopt;
  i = skip_ws(text, i + 1);
  while (i < text.size() && text[i] == '"') {
    const std::size_t name_end = skip_string(text, i);
    const Json name = Json::parse(text.substr(i, name_end - i));
    i = skip_ws(text, name_end);
    if (i >= text.size() || text[i] != ':') return std::nullopt;
    i = skip_ws(text, i + 1);
    const std::size_t value_end = skip_value(text, i);
    if (name.as_string() == key) found = text.substr(i, value_end - i);
    i = skip_ws(text, value_end);
    if (i < text.size() && text[i] == ',') i = skip_ws(text, i + 1);
  }
  return found;
}

std::string without_ws(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '"') {
      const std::size_t end = skip_string(text, i);
      out.append(text.substr(i, end - i));
      i = end;
    } else {
      if (std::string_view(" \t\n\r").find(text[i]) == std::string_view::npos) out += text[i];
      ++i;
    }
  }
  return out;
}

}  // namespace babelqueue::conformance::detail
