// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The `pulsar` block: the Pulsar property projection (05 PLS-5), the redeliveryCount
// reconciliation (PLS-7) and the string gate on bq-schema-version (RT-40).

#include "blocks/blocks.hpp"
#include "blocks/broker.hpp"

#include <babelqueue/binding/common.hpp>
#include <babelqueue/binding/pulsar.hpp>
#include <babelqueue/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace babelqueue::conformance::detail {

namespace {

void run_projection(Runner& r, const std::string& block, const Json& proj) {
  run_string_map_projection(r, block, proj, "properties", [](const std::string& body) {
    const auto props = binding::pulsar::properties(body);
    return std::vector<std::pair<std::string, std::string>>(props.begin(), props.end());
  });
}

std::int64_t reconcile(const Json& c, std::int64_t body, std::int64_t /*want*/, Problems& /*p*/) {
  known_members(c,
                {"name", "description", "body_attempts", "redelivery_count", "expected_attempts"});
  return binding::reconcile_attempts(
      body, binding::pulsar::delivery_count(nullable_int_member(c, "redelivery_count")));
}

}  // namespace

void register_pulsar_block(Registry& registry) {
  register_broker(
      registry, "pulsar",
      {.projection = run_projection, .reconcile = reconcile, .gate_property = "bq-schema-version"});
}

}  // namespace babelqueue::conformance::detail
