// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/binding/kafka.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/errors.hpp>

#include "binding/detail.hpp"

#include <algorithm>
#include <cstddef>

namespace babelqueue::binding::kafka {

Projection projection(std::string_view body, const Riders& riders) {
  Projection out;
  auto& headers = out.headers;
  if (const std::optional<Contract> c = contract_of(body)) {
    if (!c->urn.empty()) headers.emplace_back("bq-job", c->urn);
    if (!c->trace_id.empty()) headers.emplace_back("bq-trace-id", c->trace_id);
    if (!c->message_id.empty()) headers.emplace_back("bq-message-id", c->message_id);
    if (c->schema_version != 0) {
      headers.emplace_back("bq-schema-version", std::to_string(c->schema_version));
    }
    if (!c->source_lang.empty()) headers.emplace_back("bq-source-lang", c->source_lang);
    headers.emplace_back("bq-attempts", std::to_string(c->attempts));
    out.timestamp_ms = c->created_at > 0 ? c->created_at : 0;
  }
  const std::size_t contract_count = headers.size();
  for (const auto& [key, value] : riders) {
    if (!detail::usable_rider(key, value)) continue;
    const auto end = headers.begin() + static_cast<std::ptrdiff_t>(contract_count);
    const std::string& name = key;  // clang 14 cannot capture a structured binding
    const bool present =
        std::any_of(headers.begin(), end, [&name](const auto& h) { return h.first == name; });
    if (!present) headers.emplace_back(key, value);
  }
  return out;
}

std::int64_t attempts(std::int64_t body_attempts,
                      std::optional<std::int64_t> header_attempts) noexcept {
  return header_attempts ? *header_attempts : body_attempts;
}

std::optional<std::string> reconcile_body(std::string_view body,
                                          std::optional<std::int64_t> header_attempts) {
  std::optional<Envelope> unused;
  return reconcile(body, header_attempts, unused);
}

std::optional<std::string> reconcile(std::string_view body,
                                     std::optional<std::int64_t> header_attempts,
                                     std::optional<Envelope>& decoded) {
  decoded.reset();
  if (!header_attempts) return std::nullopt;
  auto result = try_decode(body);
  if (!result.has_value()) return std::nullopt;
  Envelope& env = result.value();
  if (env.attempts() == *header_attempts) {
    decoded.emplace(std::move(env));
    return std::nullopt;
  }
  env.set_attempts(*header_attempts);
  try {
    return encode(env);
  } catch (const Error&) {
    // Cannot happen for a decoded body; keep the original bytes (not decoded: env changed).
    return std::nullopt;
  }
}

}  // namespace babelqueue::binding::kafka
