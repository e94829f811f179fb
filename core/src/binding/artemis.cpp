// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/binding/artemis.hpp>

#include "binding/detail.hpp"

#include <cstddef>
#include <variant>

namespace babelqueue::binding::artemis {

namespace {

// Strict UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
bool valid_utf8(std::string_view s) noexcept {
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80U) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned char lo = 0x80U;
    unsigned char hi = 0xBFU;
    if (b0 >= 0xC2U && b0 <= 0xDFU) {
      len = 2;
    } else if (b0 >= 0xE0U && b0 <= 0xEFU) {
      len = 3;
      if (b0 == 0xE0U) lo = 0xA0U;
      if (b0 == 0xEDU) hi = 0x9FU;
    } else if (b0 >= 0xF0U && b0 <= 0xF4U) {
      len = 4;
      if (b0 == 0xF0U) lo = 0x90U;
      if (b0 == 0xF4U) hi = 0x8FU;
    } else {
      return false;
    }
    if (n - i < len) return false;
    const auto b1 = static_cast<unsigned char>(s[i + 1]);
    if (b1 < lo || b1 > hi) return false;
    for (std::size_t k = 2; k < len; ++k) {
      const auto bk = static_cast<unsigned char>(s[i + k]);
      if (bk < 0x80U || bk > 0xBFU) return false;
    }
    i += len;
  }
  return true;
}

}  // namespace

Projection projection(std::string_view body, const Riders& riders) {
  Projection out;
  auto& props = out.properties;
  if (const std::optional<Contract> c = contract_of(body)) {
    if (!c->urn.empty()) out.jms_type = c->urn;
    if (!c->trace_id.empty()) out.correlation_id = c->trace_id;
    if (c->created_at != 0) out.creation_time = c->created_at;
    if (c->schema_version != 0) {
      props.insert_or_assign("bq_schema_version", std::to_string(c->schema_version));
    }
    if (!c->source_lang.empty()) props.insert_or_assign("bq_source_lang", c->source_lang);
    props.insert_or_assign("bq_attempts", std::to_string(c->attempts));
    props.insert_or_assign("bq_app_id", "babelqueue");
  }
  for (const auto& [key, value] : riders) {
    if (!detail::usable_rider(key, value)) continue;
    props.try_emplace(key, value);  // contract wins
  }
  out.text_body = valid_utf8(body);
  return out;
}

std::int64_t delivery_count(std::uint32_t header_delivery_count) noexcept {
  return static_cast<std::int64_t>(header_delivery_count) + 1;
}

GateDecision schema_version_gate(const amqp10::Value& value) {
  if (std::holds_alternative<std::monostate>(value)) return GateDecision{};
  if (const auto* s = std::get_if<std::string>(&value)) return binding::schema_version_gate(*s);
  return detail::reject_typed(value);
}

}  // namespace babelqueue::binding::artemis
