// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The `asb` block: the Azure Service Bus message projection (05 ASB-4), the delivery-count
// reconciliation (ASB-6) and the typed gate on bq-schema-version (ASB-9).

#include "blocks/blocks.hpp"
#include "blocks/broker.hpp"

#include <babelqueue/binding/azureservicebus.hpp>
#include <babelqueue/binding/common.hpp>
#include <babelqueue/json.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace babelqueue::conformance::detail {

namespace {

void run_asb_projection(Runner& r, const std::string& block, const Json& proj) {
  const std::string sub = "property_projection";
  r.guard(block, sub + " (members)", [&] {
    known_members(proj, {"description", "envelope_file", "message", "application_properties"});
  });
  const auto projection = [&] {
    return binding::azureservicebus::projection(r.fixture(proj, "envelope_file"));
  };
  each_entry(r, block, sub, proj, "message", [&](const std::string& name, const Json& want) {
    const binding::azureservicebus::Projection p = projection();
    if (name == "subject") return expect_string(p.subject, want, name);
    if (name == "correlation_id") return expect_string(p.correlation_id, want, name);
    if (name == "message_id") return expect_string(p.message_id, want, name);
    if (name == "content_type") return expect_string(p.content_type, want, name);
    fail("manifest: message field " + quote(name) + " is not implemented by this runner");
  });
  each_entry(r, block, sub, proj, "application_properties",
             [&](const std::string& name, const Json& want) {
               const auto props = projection().application_properties;
               const auto it = props.find(name);
               if (it == props.end()) fail("application property " + quote(name) + " is absent");
               expect_amqp(it->second, want);
             });
  no_extra(r, block, sub, proj, "application_properties", [&] {
    std::vector<std::string> names;
    for (const auto& [name, v] : projection().application_properties) {
      names.push_back(name);
    }
    return names;
  });
}

std::int64_t reconcile(const Json& c, std::int64_t body, std::int64_t want, Problems& p) {
  known_members(c, {"name", "description", "body_attempts", "delivery_count", "expected_attempts"});
  const std::int64_t count = int_member(c, "delivery_count");  // 1-based DeliveryCount
  // The same through the binding's mapping of the 0-based AMQP header.
  if (count >= 1 && count - 1 <= std::numeric_limits<std::uint32_t>::max()) {
    const auto header = static_cast<std::uint32_t>(count - 1);
    const std::int64_t via_header =
        binding::reconcile_attempts(body, binding::azureservicebus::delivery_count(header));
    p.check(via_header == want, "via the AMQP header delivery-count " + std::to_string(header) +
                                    ": got " + std::to_string(via_header));
  }
  return binding::reconcile_attempts(body, count);
}

}  // namespace

void register_azureservicebus_block(Registry& registry) {
  register_broker(registry, "asb",
                  {.projection = run_asb_projection,
                   .reconcile = reconcile,
                   .gate_property = "bq-schema-version",
                   .typed_gate = binding::azureservicebus::schema_version_gate});
}

}  // namespace babelqueue::conformance::detail
