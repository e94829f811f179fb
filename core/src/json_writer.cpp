// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/json.hpp>

#include <string>

#include "json_build.hpp"
#include "json_scan.hpp"

namespace babelqueue {

void append_json_string(std::string& out, std::string_view s) {
  // Fast path: ASCII with nothing to escape is copied in one go.
  if (detail::find_string_special<true>(s.data(), s.data() + s.size()) == s.data() + s.size()) {
    out.reserve(out.size() + s.size() + 2);
    out.push_back('"');
    out.append(s);
    out.push_back('"');
    return;
  }
  if (!detail::valid_utf8(s)) throw EncodeError("string is not valid UTF-8");
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  const char* p = s.data();
  const char* end = p + s.size();
  while (p < end) {
    const char* q = detail::find_string_special(p, end);
    out.append(p, static_cast<std::size_t>(q - p));
    if (q == end) break;
    const auto ch = static_cast<unsigned char>(*q);
    switch (ch) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\b':
        out.append("\\b");
        break;
      case '\f':
        out.append("\\f");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      default: {
        const char esc[6] = {'\\', 'u', '0', '0', kHex[ch >> 4], kHex[ch & 0xF]};
        out.append(esc, 6);
      }
    }
    p = q + 1;
  }
  out.push_back('"');
}

void Json::dump_to(std::string& out) const {
  switch (type()) {
    case Type::Null:
      out.append("null");
      return;
    case Type::Bool:
      out.append(std::get<bool>(v_) ? "true" : "false");
      return;
    case Type::Number: {
      const auto& n = std::get<JsonNumber>(v_);
      if (!n.is_finite()) throw EncodeError("a number is NaN or infinite");
      out.append(n.lexeme());
      return;
    }
    case Type::String:
      append_json_string(out, std::get<std::string>(v_));
      return;
    case Type::Array: {
      out.push_back('[');
      bool first = true;
      for (const auto& item : std::get<JsonArray>(v_)) {
        if (!first) out.push_back(',');
        first = false;
        item.dump_to(out);
      }
      out.push_back(']');
      return;
    }
    case Type::Object: {
      out.push_back('{');
      bool first = true;
      for (const auto& [k, v] : std::get<JsonObject>(v_)) {
        if (!first) out.push_back(',');
        first = false;
        append_json_string(out, k);
        out.push_back(':');
        v.dump_to(out);
      }
      out.push_back('}');
      return;
    }
  }
}

std::string Json::dump() const {
  std::string out;
  dump_to(out);
  return out;
}

}  // namespace babelqueue
