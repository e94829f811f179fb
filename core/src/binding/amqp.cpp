// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/binding/amqp.hpp>

#include <babelqueue/codec.hpp>

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

// Sets headers[key], reusing the entry (and its string) when there is one.
void set_integer(std::map<std::string, FieldValue>& headers, const std::string& key,
                 std::int64_t n) {
  const auto it = headers.find(key);
  if (it == headers.end()) {
    headers.emplace(key, integer_field(n));
  } else {
    it->second = integer_field(n);
  }
}
void set_text(std::map<std::string, FieldValue>& headers, const std::string& key,
              std::string_view text) {
  const auto it = headers.find(key);
  if (it == headers.end()) {
    headers.emplace(key, FieldValue(std::in_place_type<std::string>, text));
  } else if (auto* s = std::get_if<std::string>(&it->second)) {
    s->assign(text);
  } else {
    it->second.emplace<std::string>(text);
  }
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

void projection_into(std::string_view body, const Riders& riders, Projection& out) {
  static const Properties kConstants;
  static const std::string kAttempts = "x-attempts";
  static const std::string kSchemaVersion = "x-schema-version";
  static const std::string kSourceLang = "x-source-lang";

  // The contract's values as views into the decoded body: copied only into out's own strings.
  const auto decoded = try_decode(body);
  std::optional<detail::ContractView> c;
  if (decoded.has_value()) c = detail::contract_view(decoded.value());
  const auto rider_kept = [&riders](const std::string& key) {
    const auto it = riders.find(key);
    return it != riders.end() && detail::usable_rider(key, it->second) &&
           key.size() <= SHORT_STRING_MAX;
  };
  // The entries this projection does not set go; the others are overwritten in place.
  std::erase_if(out.headers, [&](const auto& entry) {
    const std::string& key = entry.first;
    if (rider_kept(key)) return false;
    if (!c) return true;
    if (key == kAttempts) return false;
    if (key == kSchemaVersion) return c->schema_version == 0;
    if (key == kSourceLang) return c->source_lang.empty();
    return true;
  });
  out.omitted.clear();
  for (const auto& [key, value] : riders) {
    if (!detail::usable_rider(key, value)) continue;
    if (key.size() > SHORT_STRING_MAX) {
      out.omitted.push_back(Omitted{key, key.size()});
      continue;
    }
    set_text(out.headers, key, value);
  }

  Properties& p = out.properties;
  p.content_type = kConstants.content_type;
  p.content_encoding = kConstants.content_encoding;
  p.delivery_mode = kConstants.delivery_mode;
  p.app_id = kConstants.app_id;
  if (!c) {
    p.type.reset();
    p.correlation_id.reset();
    p.message_id.reset();
    return;
  }
  const auto short_property = [&out](std::optional<std::string>& slot, std::string_view name,
                                     std::string_view value) {
    if (value.size() > SHORT_STRING_MAX)
      out.omitted.push_back(Omitted{std::string(name), value.size()});
    if (value.empty() || value.size() > SHORT_STRING_MAX) {
      slot.reset();
    } else if (slot) {
      slot->assign(value);
    } else {
      slot.emplace(value);
    }
  };
  short_property(p.type, "type", c->urn);
  short_property(p.correlation_id, "correlation_id", c->trace_id);
  short_property(p.message_id, "message_id", c->message_id);

  set_integer(out.headers, kAttempts, c->attempts);
  if (c->schema_version != 0) set_integer(out.headers, kSchemaVersion, c->schema_version);
  if (!c->source_lang.empty()) set_text(out.headers, kSourceLang, c->source_lang);
}

Projection projection(std::string_view body, const Riders& riders) {
  Projection out;
  projection_into(body, riders, out);
  return out;
}

}  // namespace babelqueue::binding::amqp
