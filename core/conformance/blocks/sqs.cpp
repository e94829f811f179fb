// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The `sqs` block: the SQS attribute projection (05 SQS-6), the ApproximateReceiveCount
// reconciliation (SQS-10) and the string gate on bq-schema-version (RT-40).

#include "blocks/blocks.hpp"
#include "blocks/broker.hpp"

#include <babelqueue/binding/common.hpp>
#include <babelqueue/binding/sqs.hpp>
#include <babelqueue/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::conformance::detail {

namespace {

void run_sqs_projection(Runner& r, const std::string& block, const Json& proj) {
  const std::string sub = "attribute_projection";
  r.guard(block, sub + " (members)", [&] {
    known_members(proj, {"description", "envelope_file", "message_attributes"});
  });
  const auto attributes = [&] {
    return binding::sqs::projection(r.fixture(proj, "envelope_file")).attributes;
  };
  each_entry(
      r, block, sub, proj, "message_attributes", [&](const std::string& name, const Json& want) {
        known_members(want, {"DataType", "StringValue"});
        std::vector<binding::sqs::Attribute> found;
        for (const binding::sqs::Attribute& a : attributes()) {
          if (a.name == name) found.push_back(a);
        }
        if (found.size() != 1) {
          fail("attribute " + quote(name) + " projected " + std::to_string(found.size()) +
               " times");
        }
        Problems p;
        const std::string& type = string_member(want, "DataType");
        const std::string& text = string_member(want, "StringValue");
        p.check(found[0].data_type == type,
                "DataType: expected " + quote(type) + ", got " + quote(found[0].data_type));
        p.check(found[0].string_value == text,
                "StringValue: expected " + quote(text) + ", got " + quote(found[0].string_value));
        p.finish();
      });
  no_extra(r, block, sub, proj, "message_attributes", [&] {
    std::vector<std::string> names;
    const auto all = attributes();
    if (all.size() > binding::sqs::MAX_ATTRIBUTES) fail("more than 10 attributes projected");
    names.reserve(all.size());
    for (const binding::sqs::Attribute& a : all) {
      names.push_back(a.name);
    }
    return names;
  });
}

std::int64_t reconcile(const Json& c, std::int64_t body, std::int64_t /*want*/, Problems& /*p*/) {
  known_members(c, {"name", "description", "body_attempts", "approximate_receive_count",
                    "expected_attempts"});
  const Json& count = member(c, "approximate_receive_count");
  if (!count.is_null() && !count.is_string()) {
    fail("manifest: approximate_receive_count is neither a string nor null");
  }
  const std::optional<std::string_view> native =
      count.is_null() ? std::nullopt : std::optional<std::string_view>(count.as_string());
  return binding::reconcile_attempts(body, binding::sqs::delivery_count(native));
}

}  // namespace

void register_sqs_block(Registry& registry) {
  register_broker(registry, "sqs",
                  {.projection_key = "attribute_projection",
                   .projection = run_sqs_projection,
                   .reconcile = reconcile,
                   .gate_property = "bq-schema-version"});
}

}  // namespace babelqueue::conformance::detail
