// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The `rabbitmq` block: the RabbitMQ (AMQP 0-9-1) property and header projection (04 AMQP-12..15).

#include "blocks/blocks.hpp"
#include "blocks/broker.hpp"

#include <babelqueue/binding/amqp.hpp>
#include <babelqueue/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace babelqueue::conformance::detail {

namespace {

void run_rabbitmq_projection(Runner& r, const std::string& block, const Json& proj) {
  const std::string sub = "property_projection";
  r.guard(block, sub + " (members)", [&] {
    known_members(proj, {"description", "envelope_file", "properties", "headers"});
  });
  const auto projection = [&] {
    return binding::amqp::projection(r.fixture(proj, "envelope_file"));
  };
  each_entry(r, block, sub, proj, "properties", [&](const std::string& name, const Json& want) {
    const binding::amqp::Properties p = projection().properties;
    if (name == "type") return expect_string(p.type, want, name);
    if (name == "correlation_id") return expect_string(p.correlation_id, want, name);
    if (name == "message_id") return expect_string(p.message_id, want, name);
    if (name == "app_id") return expect_string(p.app_id, want, name);
    if (name == "content_type") return expect_string(p.content_type, want, name);
    if (name == "content_encoding") return expect_string(p.content_encoding, want, name);
    if (name == "delivery_mode") {
      if (p.delivery_mode != int_value(want, name)) {
        fail("delivery_mode: expected " + show(want) + ", got " + std::to_string(p.delivery_mode));
      }
      return;
    }
    fail("manifest: property " + quote(name) + " is not implemented by this runner");
  });
  each_entry(r, block, sub, proj, "headers", [&](const std::string& name, const Json& want) {
    const auto headers = projection().headers;
    const auto it = headers.find(name);
    if (it == headers.end()) fail("header " + quote(name) + " is absent");
    const binding::amqp::FieldValue& got = it->second;
    const char tag = binding::amqp::field_tag(got);
    std::string shown;
    std::visit(
        [&](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) {
            shown = quote(v);
          } else {
            shown = std::to_string(v);
          }
        },
        got);
    shown = std::string(1, tag) + " " + shown;
    bool ok = false;
    if (want.is_string()) {
      const auto* s = std::get_if<std::string>(&got);
      ok = s != nullptr && *s == want.as_string();
    } else if (want.is_number() && want.as_number().is_integer()) {
      std::optional<std::int64_t> n;
      if (const auto* i = std::get_if<std::int32_t>(&got)) n = *i;
      if (const auto* l = std::get_if<std::int64_t>(&got)) n = *l;
      ok = n.has_value() && want.as_int64() == n;
    } else {
      fail("manifest: a header of JSON type " + show(want) + " is not implemented");
    }
    if (!ok) fail("header " + name + ": expected " + show(want) + ", got " + shown);
  });
  no_extra(r, block, sub, proj, "headers", [&] {
    std::vector<std::string> names;
    for (const auto& [name, v] : projection().headers) {
      names.push_back(name);
    }
    return names;
  });
}

}  // namespace

void register_amqp_block(Registry& registry) {
  register_broker(registry, "rabbitmq", {.projection = run_rabbitmq_projection});
}

}  // namespace babelqueue::conformance::detail
