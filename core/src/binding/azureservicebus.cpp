// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/binding/azureservicebus.hpp>

#include "binding/detail.hpp"

#include <type_traits>
#include <utility>
#include <variant>

namespace babelqueue::binding::azureservicebus {

Projection projection(std::string_view body, const Riders& riders) {
  Projection out;
  auto& props = out.application_properties;
  if (const std::optional<Contract> c = contract_of(body)) {
    if (!c->message_id.empty()) out.message_id = c->message_id;
    if (!c->trace_id.empty()) out.correlation_id = c->trace_id;
    if (!c->urn.empty()) out.subject = c->urn;
    if (c->schema_version != 0) {
      props.insert_or_assign("bq-schema-version",
                             amqp10::Value(std::in_place_type<std::int64_t>, c->schema_version));
    }
    if (!c->source_lang.empty()) {
      props.insert_or_assign("bq-source-lang",
                             amqp10::Value(std::in_place_type<std::string>, c->source_lang));
    }
    if (c->created_at != 0) {
      props.insert_or_assign("bq-created-at",
                             amqp10::Value(std::in_place_type<std::int64_t>, c->created_at));
    }
  }
  for (const auto& [key, value] : riders) {
    if (!detail::usable_rider(key, value)) continue;
    props.try_emplace(key, std::in_place_type<std::string>, value);  // contract wins
  }
  return out;
}

std::int64_t delivery_count(std::uint32_t header_delivery_count) noexcept {
  return static_cast<std::int64_t>(header_delivery_count) + 1;
}

GateDecision schema_version_gate(const amqp10::Value& value) {
  return std::visit(
      [&value](const auto& v) -> GateDecision {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return GateDecision{};
        } else if constexpr (std::is_same_v<T, std::string>) {
          return binding::schema_version_gate(std::string_view(v));
        } else if constexpr (detail::is_amqp_integral_v<T>) {
          if (v == T{1}) return GateDecision{};
          return detail::reject_typed(value);
        } else {
          return detail::reject_typed(value);  // bool, float, double, binary, other
        }
      },
      value);
}

}  // namespace babelqueue::binding::azureservicebus
