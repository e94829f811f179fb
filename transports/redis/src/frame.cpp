// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "frame.hpp"

#include <babelqueue/json.hpp>

#include <utility>

namespace babelqueue::redis::detail {
namespace {

constexpr std::string_view kSentinel = "__bq_frame";

}  // namespace

Headers sanitize_headers(const Headers& h) {
  Headers out;
  for (const auto& [key, value] : h) {
    if (!key.empty() && !value.empty()) out.emplace_hint(out.end(), key, value);
  }
  return out;
}

std::string encode_frame(std::string_view body, const Headers& sanitized) {
  std::string out;
  out.reserve(body.size() + body.size() / 8 + 64);
  out.append("{\"__bq_frame\":1,\"headers\":{");
  // std::map<std::string, ...> orders keys by char_traits<char>::lt, which compares bytes as
  // unsigned char: the byte order RDS-14 (and Go, RT-52) writes.
  bool first = true;
  for (const auto& [key, value] : sanitized) {
    if (!first) out.push_back(',');
    first = false;
    append_json_string(out, key);
    out.push_back(':');
    append_json_string(out, value);
  }
  out.append("},\"body\":");
  append_json_string(out, body);
  out.push_back('}');
  return out;
}

std::optional<Unframed> unframe(std::string_view stored) {
  // RDS-15 (a) and (b): a cheap negative filter, so bare envelopes are never parsed twice.
  if (stored.empty() || stored.front() != '{') return std::nullopt;
  if (stored.find("\"__bq_frame\"") == std::string_view::npos) return std::nullopt;
  // (c) a strict JSON object; Json keeps the last of duplicate names.
  auto parsed = Json::try_parse(stored);
  if (!parsed.has_value() || !parsed->is_object()) return std::nullopt;
  Json& doc = *parsed;
  // (d) a non-zero ENV-20 (I) integer, what Go's int field accepts: 0, 1.0, 1e0, true, "1" and
  // out-of-range integers are bare.
  const Json* sentinel = doc.find(kSentinel);
  if (sentinel == nullptr || !sentinel->is_number() || !sentinel->as_number().is_integer()) {
    return std::nullopt;
  }
  const auto marker = sentinel->as_number().as_int64();
  if (!marker || *marker == 0) return std::nullopt;
  // (e) the body is a string.
  Json* body = doc.find("body");
  if (body == nullptr || !body->is_string()) return std::nullopt;
  // (f) headers absent, null, or an object of strings only.
  Unframed out;
  if (const Json* headers = doc.find("headers"); headers != nullptr && !headers->is_null()) {
    if (!headers->is_object()) return std::nullopt;
    for (const auto& [key, value] : headers->as_object()) {
      if (!value.is_string()) return std::nullopt;
      // Sanitised while copying (RDS-12, RDS-16), as sanitize_headers would.
      if (!key.empty() && !value.as_string().empty()) out.headers.emplace(key, value.as_string());
    }
  }
  out.body = std::move(body->as_string());
  return out;
}

}  // namespace babelqueue::redis::detail
