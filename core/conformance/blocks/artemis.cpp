// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The `artemis` block: the Artemis (AMQP 1.0) message projection (05 ART-4), the
// delivery-count reconciliation (ART-5) and the typed gate on bq_schema_version (ART-6).

#include "blocks/blocks.hpp"
#include "blocks/broker.hpp"

#include <babelqueue/binding/artemis.hpp>
#include <babelqueue/binding/common.hpp>
#include <babelqueue/json.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace babelqueue::conformance::detail {

namespace {

void run_artemis_projection(Runner& r, const std::string& block, const Json& proj) {
  const std::string sub = "property_projection";
  r.guard(block, sub + " (members)", [&] {
    known_members(proj, {"description", "envelope_file", "jms_type_annotation", "jms_type",
                         "correlation_id", "properties"});
  });
  const auto projection = [&] {
    return binding::artemis::projection(r.fixture(proj, "envelope_file"));
  };
  r.add(block, sub + "/jms_type_annotation", [&] {
    const std::string& want = string_member(proj, "jms_type_annotation");
    if (want != binding::artemis::JMS_TYPE_ANNOTATION) {
      fail("annotation key: expected " + quote(want) + ", the binding uses " +
           quote(binding::artemis::JMS_TYPE_ANNOTATION));
    }
    if (!projection().jms_type) fail("no " + want + " annotation projected");
  });
  r.add(block, sub + "/jms_type",
        [&] { expect_string(projection().jms_type, member(proj, "jms_type"), "jms_type"); });
  r.add(block, sub + "/correlation_id", [&] {
    expect_string(projection().correlation_id, member(proj, "correlation_id"), "correlation_id");
  });
  each_entry(r, block, sub, proj, "properties", [&](const std::string& name, const Json& want) {
    const auto props = projection().properties;
    const auto it = props.find(name);
    expect_string(it == props.end() ? std::nullopt : std::optional<std::string>(it->second), want,
                  name);
  });
  no_extra(r, block, sub, proj, "properties", [&] {
    std::vector<std::string> names;
    for (const auto& [name, v] : projection().properties) {
      names.push_back(name);
    }
    return names;
  });
}

std::int64_t reconcile(const Json& c, std::int64_t body, std::int64_t /*want*/, Problems& /*p*/) {
  known_members(c, {"name", "description", "body_attempts", "delivery_count", "expected_attempts"});
  const std::int64_t count = int_member(c, "delivery_count");  // 0-based AMQP header
  if (count < 0 || count > std::numeric_limits<std::uint32_t>::max()) {
    fail("manifest: delivery_count is outside the AMQP uint range");
  }
  return binding::reconcile_attempts(
      body, binding::artemis::delivery_count(static_cast<std::uint32_t>(count)));
}

}  // namespace

void register_artemis_block(Registry& registry) {
  register_broker(registry, "artemis",
                  {.projection = run_artemis_projection,
                   .reconcile = reconcile,
                   .gate_property = "bq_schema_version",
                   .typed_gate = binding::artemis::schema_version_gate});
}

}  // namespace babelqueue::conformance::detail
