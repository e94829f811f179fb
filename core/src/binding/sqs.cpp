// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/binding/sqs.hpp>

#include "binding/detail.hpp"

#include <algorithm>
#include <utility>

namespace babelqueue::binding::sqs {

Projection projection(std::string_view body, const Riders& riders) {
  Projection out;
  auto& attrs = out.attributes;
  if (const std::optional<Contract> c = contract_of(body)) {
    const auto add = [&attrs](std::string name, std::string type, std::string value) {
      attrs.push_back(Attribute{std::move(name), std::move(type), std::move(value)});
    };
    if (!c->urn.empty()) add("bq-job", "String", c->urn);
    if (!c->trace_id.empty()) add("bq-trace-id", "String", c->trace_id);
    if (!c->message_id.empty()) add("bq-message-id", "String", c->message_id);
    if (c->schema_version != 0) {
      add("bq-schema-version", "Number", std::to_string(c->schema_version));
    }
    if (!c->source_lang.empty()) add("bq-source-lang", "String", c->source_lang);
    if (c->created_at != 0) add("bq-created-at", "Number", std::to_string(c->created_at));
  }
  for (const auto& [key, value] : riders) {  // std::map: sorted key order
    if (!detail::usable_rider(key, value)) continue;
    const std::string& name = key;  // clang 14 cannot capture a structured binding
    const bool present = std::any_of(attrs.begin(), attrs.end(),
                                     [&name](const Attribute& a) { return a.name == name; });
    if (present) continue;
    if (attrs.size() >= MAX_ATTRIBUTES) {
      out.dropped_riders.push_back(key);
      continue;
    }
    attrs.push_back(Attribute{key, "String", value});
  }
  return out;
}

std::int64_t delivery_count(std::optional<std::string_view> approximate_receive_count) noexcept {
  if (!approximate_receive_count) return 0;
  // parse_attempts_header never yields a negative value, so "0" and garbage both give 0.
  return parse_attempts_header(*approximate_receive_count).value_or(0);
}

}  // namespace babelqueue::binding::sqs
