// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// What the per-broker binding sources share and do not publish.

#include <babelqueue/binding/amqp10.hpp>
#include <babelqueue/binding/common.hpp>
#include <babelqueue/envelope.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace babelqueue::binding::detail {

inline bool usable_rider(const std::string& key, const std::string& value) noexcept {
  return !key.empty() && !value.empty();
}

// contract_of() as views into the decoded envelope `env` (no copy), for a projection that
// reuses its own strings (common.cpp).
struct ContractView {
  std::string_view urn;
  std::string_view trace_id;
  std::string_view message_id;
  std::string_view source_lang;
  std::int64_t schema_version = 0;
  std::int64_t created_at = 0;
  std::int64_t attempts = 0;
};
ContractView contract_view(const Envelope& env) noexcept;

template <class T>
inline constexpr bool is_amqp_integral_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// A reject of `version` with its reserved route (common.cpp).
GateDecision reject_version(std::string version);

// A reject of a typed value, its route text as the ASB-9 rules render it (amqp10.cpp).
GateDecision reject_typed(const amqp10::Value& value);

}  // namespace babelqueue::binding::detail
