// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/binding/amqp.hpp>

#include "binding/detail.hpp"

#include <limits>
#include <utility>

namespace babelqueue::binding::amqp {

namespace {

FieldValue integer_field(std::int64_t n) {
  if (n >= std::numeric_limits<std::int32_t>::min() &&
      n <= std::numeric_limits<std::int32_t>::max()) {
    return FieldValue(std::in_place_type<std::int32_t>, static_cast<std::int32_t>(n));
  }
  return FieldValue(std::in_place_type<std::int64_t>, n);
}

}  // namespace

char field_tag(const FieldValue& value) noexcept {
  switch (value.index()) {
    case 0:
      return 'I';
    case 1:
      return 'l';
    default:
      return 'S';
  }
}

Projection projection(std::string_view body, const Riders& riders) {
  Projection out;
  for (const auto& [key, value] : riders) {
    if (!detail::usable_rider(key, value)) continue;
    if (key.size() > SHORT_STRING_MAX) {
      out.omitted.push_back(Omitted{key, key.size()});
      continue;
    }
    out.headers.insert_or_assign(key, FieldValue(std::in_place_type<std::string>, value));
  }

  const std::optional<Contract> c = contract_of(body);
  if (!c) return out;

  const auto short_property = [&out](std::optional<std::string>& slot, std::string_view name,
                                     const std::string& value) {
    if (value.empty()) return;
    if (value.size() > SHORT_STRING_MAX) {
      out.omitted.push_back(Omitted{std::string(name), value.size()});
      return;
    }
    slot = value;
  };
  short_property(out.properties.type, "type", c->urn);
  short_property(out.properties.correlation_id, "correlation_id", c->trace_id);
  short_property(out.properties.message_id, "message_id", c->message_id);

  out.headers.insert_or_assign("x-attempts", integer_field(c->attempts));
  if (c->schema_version != 0) {
    out.headers.insert_or_assign("x-schema-version", integer_field(c->schema_version));
  }
  if (!c->source_lang.empty()) {
    out.headers.insert_or_assign("x-source-lang",
                                 FieldValue(std::in_place_type<std::string>, c->source_lang));
  }
  return out;
}

}  // namespace babelqueue::binding::amqp
