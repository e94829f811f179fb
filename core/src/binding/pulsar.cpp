// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/binding/pulsar.hpp>

#include "binding/detail.hpp"

#include <limits>

namespace babelqueue::binding::pulsar {

std::map<std::string, std::string> properties(std::string_view body, const Riders& riders) {
  std::map<std::string, std::string> out;
  if (const std::optional<Contract> c = contract_of(body)) {
    if (!c->urn.empty()) out.insert_or_assign("bq-job", c->urn);
    if (!c->trace_id.empty()) out.insert_or_assign("bq-trace-id", c->trace_id);
    if (!c->message_id.empty()) out.insert_or_assign("bq-message-id", c->message_id);
    if (c->schema_version != 0) {
      out.insert_or_assign("bq-schema-version", std::to_string(c->schema_version));
    }
    if (!c->source_lang.empty()) out.insert_or_assign("bq-source-lang", c->source_lang);
    out.insert_or_assign("bq-attempts", std::to_string(c->attempts));
  }
  for (const auto& [key, value] : riders) {
    if (!detail::usable_rider(key, value)) continue;
    out.try_emplace(key, value);  // contract wins
  }
  return out;
}

std::int64_t delivery_count(std::optional<std::int64_t> redelivery_count) noexcept {
  if (!redelivery_count || *redelivery_count < 0) return 1;
  if (*redelivery_count == std::numeric_limits<std::int64_t>::max()) return *redelivery_count;
  return *redelivery_count + 1;
}

}  // namespace babelqueue::binding::pulsar
