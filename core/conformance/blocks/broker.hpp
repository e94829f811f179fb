// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// What the broker-binding blocks share: one block per broker, with a projection sub-block and,
// for the brokers that have them, `attempts_reconciliation` and `schema_version_gate`
// (RT-39, RT-40, OB-2..6). Each broker's file supplies its rules (BrokerRules).

#include "suite.hpp"

#include <babelqueue/binding/amqp10.hpp>
#include <babelqueue/binding/common.hpp>
#include <babelqueue/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace babelqueue::conformance::detail {

// What one broker block checks (a member left out: the broker has no such sub-block).
struct BrokerRules {
  // The projection sub-block (`property_projection`; SQS: `attribute_projection`) and its checks.
  std::string_view projection_key = "property_projection";
  std::function<void(Runner&, const std::string& block, const Json& projection)> projection{};
  // The handler-visible attempts of one `attempts_reconciliation` case whose `body_attempts` and
  // `expected_attempts` are `body` and `want`; further problems go to `p`. Empty: the broker has
  // no such sub-block.
  std::function<std::int64_t(const Json& c, std::int64_t body, std::int64_t want, Problems& p)>
      reconcile{};
  // The property the schema-version gate reads. Empty: the broker has no gate sub-block.
  std::string_view gate_property{};
  // The typed AMQP 1.0 gate (ASB, Artemis); empty where the gate reads a string.
  std::function<binding::GateDecision(const binding::amqp10::Value&)> typed_gate{};
};

// Registers the broker block `block`, checked by `rules`.
void register_broker(Registry& registry, std::string block, BrokerRules rules);

// ---- Projection checks ----

// Runs `body` for every member of the map `key` of a projection block, one case each.
void each_entry(Runner& r, const std::string& block, const std::string& sub, const Json& proj,
                std::string_view key,
                const std::function<void(const std::string&, const Json&)>& body);

// One case: the projection has no entry beyond the manifest's list.
void no_extra(Runner& r, const std::string& block, const std::string& sub, const Json& proj,
              std::string_view key, const std::function<std::vector<std::string>()>& names);

// A projection onto string key/value pairs (Pulsar properties, Kafka headers) under `key`.
void run_string_map_projection(
    Runner& r, const std::string& block, const Json& proj, std::string_view key,
    const std::function<std::vector<std::pair<std::string, std::string>>(const std::string&)>&
        project);

// Compares a typed application property with the manifest's JSON value: strings with strings,
// integers with any AMQP integral type, decimals with float/double, booleans with booleans.
void expect_amqp(const binding::amqp10::Value& got, const Json& want);

}  // namespace babelqueue::conformance::detail
