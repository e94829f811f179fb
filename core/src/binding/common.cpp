// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/binding/common.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>

#include "binding/detail.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace babelqueue::binding {

namespace {

constexpr bool is_ascii_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

}  // namespace

namespace detail {

ContractView contract_view(const Envelope& env) noexcept {
  const Meta meta = env.meta();
  return ContractView{.urn = env.urn(),
                      .trace_id = env.trace_id(),
                      .message_id = meta.id,
                      .source_lang = meta.lang,
                      .schema_version = meta.schema_version,
                      .created_at = meta.created_at,
                      .attempts = env.attempts()};
}

}  // namespace detail

std::optional<Contract> contract_of(std::string_view body) {
  auto decoded = try_decode(body);
  if (!decoded.has_value()) return std::nullopt;
  const detail::ContractView v = detail::contract_view(decoded.value());
  return Contract{.urn = std::string(v.urn),
                  .trace_id = std::string(v.trace_id),
                  .message_id = std::string(v.message_id),
                  .source_lang = std::string(v.source_lang),
                  .schema_version = v.schema_version,
                  .created_at = v.created_at,
                  .attempts = v.attempts};
}

std::int64_t reconcile_attempts(std::int64_t body_attempts, std::int64_t delivery_count) noexcept {
  if (delivery_count <= 0) return body_attempts;
  return std::max(body_attempts, delivery_count - 1);
}

std::optional<std::int64_t> parse_attempts_header(std::string_view value) noexcept {
  while (!value.empty() && is_ascii_space(value.front()))
    value.remove_prefix(1);
  while (!value.empty() && is_ascii_space(value.back()))
    value.remove_suffix(1);
  if (!value.empty() && value.front() == '+') value.remove_prefix(1);
  if (value.empty()) return std::nullopt;
  std::int64_t n = 0;
  constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
  for (const char ch : value) {
    if (ch < '0' || ch > '9') return std::nullopt;
    const std::int64_t digit = ch - '0';
    if (n > (max - digit) / 10) return std::nullopt;
    n = n * 10 + digit;
  }
  return n;
}

std::string query_escape(std::string_view s) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const auto b = static_cast<unsigned char>(ch);
    if ((b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '-' ||
        b == '_' || b == '.' || b == '~') {
      out.push_back(ch);
    } else if (b == ' ') {
      out.push_back('+');
    } else {
      out.push_back('%');
      out.push_back(digits[b >> 4U]);
      out.push_back(digits[b & 0x0FU]);
    }
  }
  return out;
}

std::string unsupported_route(std::string_view version) {
  std::string escaped = query_escape(version);  // ASCII only: characters == bytes
  if (escaped.size() > UNSUPPORTED_ROUTE_VERSION_MAX) {
    escaped.resize(UNSUPPORTED_ROUTE_VERSION_MAX);
    escaped += "...";
  }
  std::string route(UNSUPPORTED_ROUTE_PREFIX);
  route += escaped;
  return route;
}

bool is_unsupported_route(std::string_view route) noexcept {
  return route.starts_with(UNSUPPORTED_ROUTE_PREFIX);
}

bool is_ascii_blank(std::string_view s) noexcept {
  return std::all_of(s.begin(), s.end(), is_ascii_space);
}

GateDecision detail::reject_version(std::string version) {
  GateDecision d;
  d.reject = true;
  d.route = unsupported_route(version);
  d.version = std::move(version);
  return d;
}

GateDecision schema_version_gate(std::optional<std::string_view> value) {
  if (!value || is_ascii_blank(*value) || *value == "1") return GateDecision{};
  return detail::reject_version(std::string(*value));
}

}  // namespace babelqueue::binding
