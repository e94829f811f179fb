// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "blocks/broker.hpp"

#include <babelqueue/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace babelqueue::conformance::detail {

namespace {

std::string amqp_type_name(const binding::amqp10::Value& v) {
  static constexpr std::string_view kNames[] = {"null",   "boolean", "byte",   "ubyte", "short",
                                                "ushort", "int",     "uint",   "long",  "ulong",
                                                "float",  "double",  "string", "binary"};
  if (const auto* other = std::get_if<binding::amqp10::Other>(&v)) return other->type_name;
  return std::string(kNames[v.index()]);
}

// The integral value of `v`, or nullopt when it is not of an AMQP integral type.
std::optional<long double> amqp_integral(const binding::amqp10::Value& v) {
  return std::visit(
      [](const auto& x) -> std::optional<long double> {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          return static_cast<long double>(x);
        } else {
          return std::nullopt;
        }
      },
      v);
}

// Every AMQP typed value a JSON number of the manifest stands for: each integral width that holds
// an integer (at least int32 and int64 when they fit), float and double for a decimal.
std::vector<binding::amqp10::Value> amqp_values_for(const Json& number) {
  std::vector<binding::amqp10::Value> out;
  const JsonNumber& n = number.as_number();
  if (!n.is_integer()) {
    out.emplace_back(static_cast<float>(n.as_double()));
    out.emplace_back(n.as_double());
    return out;
  }
  const auto add = [&]<class T>(T /*tag*/) {
    if (const auto s = n.as_int64()) {
      if (std::in_range<T>(*s)) out.emplace_back(static_cast<T>(*s));
    } else if (const auto u = n.as_uint64()) {
      if (std::in_range<T>(*u)) out.emplace_back(static_cast<T>(*u));
    }
  };
  add(std::int8_t{});
  add(std::uint8_t{});
  add(std::int16_t{});
  add(std::uint16_t{});
  add(std::int32_t{});
  add(std::uint32_t{});
  add(std::int64_t{});
  add(std::uint64_t{});
  if (out.empty()) fail("manifest: the number " + n.lexeme() + " fits no AMQP integral type");
  return out;
}

std::string show_amqp(const binding::amqp10::Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return "string " + quote(*s);
  const auto text = binding::amqp10::header_text(v);
  return amqp_type_name(v) + (text ? " " + *text : "");
}

void run_reconciliation(Runner& r, const std::string& block, const Json& value,
                        const BrokerRules& rules) {
  const std::string sub = "attempts_reconciliation";
  r.sub_blocks(block, sub, value, {"cases"});
  each_case(r, block, sub + "/", value, "cases", [&](std::size_t i, const Json& c) {
    r.add(block, sub + "/" + case_name(c, i), [&] {
      const std::int64_t body = int_member(c, "body_attempts");
      const std::int64_t want = int_member(c, "expected_attempts");
      Problems p;
      const std::int64_t got = rules.reconcile(c, body, want, p);
      p.check(got == want,
              "attempts: expected " + std::to_string(want) + ", got " + std::to_string(got));
      p.finish();
    });
  });
}

// The gate verdicts of one manifest value under `block`'s binding: (label, decision) pairs.
std::vector<std::pair<std::string, binding::GateDecision>> gate_verdicts(const std::string& block,
                                                                         const Json& c,
                                                                         const BrokerRules& rules) {
  std::vector<std::pair<std::string, binding::GateDecision>> out;
  const bool absent = bool_member(c, "absent", false);
  const Json* value = c.find("value");
  if (absent && value != nullptr) fail("manifest: a case is both absent and has a value");
  if (!absent && value == nullptr) fail("manifest: a case has neither 'value' nor 'absent'");
  const bool typed_gate = static_cast<bool>(rules.typed_gate);
  const auto& typed = rules.typed_gate;
  if (absent || value->is_null() || value->is_string()) {
    std::optional<std::string_view> text;
    if (!absent && value->is_string()) text = value->as_string();
    out.emplace_back("schema_version_gate", binding::schema_version_gate(text));
    if (typed_gate) {
      const binding::amqp10::Value v = text ? binding::amqp10::Value(std::string(*text))
                                            : binding::amqp10::Value(std::monostate{});
      out.emplace_back(block + "_schema_version_gate(" + amqp_type_name(v) + ")", typed(v));
    }
    return out;
  }
  if (!typed_gate) {
    fail("manifest: a typed (" + show(*value) + ") property is not implemented for " + block);
  }
  if (value->is_bool()) {
    out.emplace_back(block + "_schema_version_gate(boolean)", typed(value->as_bool()));
  } else if (value->is_number()) {
    for (const binding::amqp10::Value& v : amqp_values_for(*value)) {
      out.emplace_back(block + "_schema_version_gate(" + amqp_type_name(v) + ")", typed(v));
    }
  } else {
    fail("manifest: a property value " + show(*value) + " is not implemented");
  }
  return out;
}

void run_gate(Runner& r, const std::string& block, const Json& value, const BrokerRules& rules) {
  const std::string_view property = rules.gate_property;
  const std::string sub = "schema_version_gate";
  r.sub_blocks(block, sub, value, {"property", "fixture", "cases"});
  r.add(block, sub + "/property", [&] {
    const std::string& want = string_member(value, "property");
    if (want != property) {
      fail("the manifest gates on " + quote(want) + ", the " + block + " binding reads " +
           quote(property));
    }
  });
  each_case(r, block, sub, value, "cases", [&](std::size_t i, const Json& c) {
    std::string label = "absent";
    if (const Json* v = c.find("value")) label = show(*v);
    const Json* expect = c.find("expect");
    std::string index = i < 10 ? "0" : "";  // not "0" + ...: GCC 12 -Wrestrict false positive
    index += std::to_string(i);
    const std::string name = sub + "[" + index + "] " + label + " -> " +
                             (expect != nullptr && expect->is_string() ? expect->as_string() : "?");
    r.add(block, name, [&] {
      known_members(c, {"value", "absent", "expect", "description"});
      const std::string& want = string_member(c, "expect");
      if (want != "decode" && want != "reject") {
        fail("manifest: expect " + quote(want) + " is not implemented");
      }
      Problems p;
      for (const auto& [how, decision] : gate_verdicts(block, c, rules)) {
        const std::string got = decision.reject ? "reject" : "decode";
        if (got != want) {
          p.add(std::string(how).append(": ").append(got));
          continue;
        }
        if (decision.reject) {
          p.check(decision.route == binding::unsupported_route(decision.version) &&
                      binding::is_unsupported_route(decision.route),
                  how + ": route " + quote(decision.route) + " is not the reserved route of " +
                      quote(decision.version));
          if (const Json* v = c.find("value"); v != nullptr && v->is_string()) {
            p.check(decision.version == v->as_string(),
                    how + ": version " + quote(decision.version) + " is not the value as-is");
          }
        }
      }
      if (want == "decode") {
        // The gate passed: the body's own check still applies, and the fixture passes it.
        r.accepted(value, "fixture");
      }
      p.finish();
    });
  });
}

void run_broker(Runner& r, const std::string& block, const Json& value, const BrokerRules& rules) {
  std::vector<std::string_view> known{rules.projection_key};
  if (rules.reconcile) known.emplace_back("attempts_reconciliation");
  if (!rules.gate_property.empty()) known.emplace_back("schema_version_gate");
  r.sub_blocks(block, "", value, known);
  if (const Json* proj = value.find(rules.projection_key)) rules.projection(r, block, *proj);
  const Json* rec = value.find("attempts_reconciliation");
  if (rules.reconcile && rec != nullptr) run_reconciliation(r, block, *rec, rules);
  const Json* gate = value.find("schema_version_gate");
  if (!rules.gate_property.empty() && gate != nullptr) run_gate(r, block, *gate, rules);
}

}  // namespace

void register_broker(Registry& registry, std::string block, BrokerRules rules) {
  registry.add(std::move(block), BlockKind::Sdk,
               [rules = std::move(rules)](Runner& r, const std::string& name, const Json& value) {
                 run_broker(r, name, value, rules);
               });
}

void each_entry(Runner& r, const std::string& block, const std::string& sub, const Json& proj,
                std::string_view key,
                const std::function<void(const std::string&, const Json&)>& body) {
  const Json* map = proj.find(key);
  if (map == nullptr || !map->is_object()) {
    r.add_failure(block, sub + "/" + std::string(key),
                  "manifest: '" + std::string(key) + "' is missing or not an object");
    return;
  }
  for (const auto& entry : map->as_object()) {
    r.add(block, sub + "/" + std::string(key) + "/" + entry.first,
          [&] { body(entry.first, entry.second); });
  }
}

void no_extra(Runner& r, const std::string& block, const std::string& sub, const Json& proj,
              std::string_view key, const std::function<std::vector<std::string>()>& names) {
  r.add(block, sub + "/" + std::string(key) + " (nothing unlisted)", [&] {
    const Json* map = proj.find(key);
    if (map == nullptr) fail("manifest: '" + std::string(key) + "' is missing");
    std::string extra;
    for (const std::string& n : names()) {
      if (map->find(n) == nullptr) extra += (extra.empty() ? "" : ", ") + n;
    }
    if (!extra.empty()) fail("unlisted entries projected: " + extra);
  });
}

void run_string_map_projection(
    Runner& r, const std::string& block, const Json& proj, std::string_view key,
    const std::function<std::vector<std::pair<std::string, std::string>>(const std::string&)>&
        project) {
  const std::string sub = "property_projection";
  r.guard(block, sub + " (members)", [&] {
    known_members(proj, {"description", "envelope_file", key});
  });
  each_entry(r, block, sub, proj, key, [&](const std::string& name, const Json& want) {
    if (!want.is_string()) fail("manifest: " + name + " is not a string");
    std::vector<std::string> found;
    for (const auto& [k, v] : project(r.fixture(proj, "envelope_file"))) {
      if (k == name) found.push_back(v);
    }
    if (found.size() != 1) {
      fail(quote(name) + " projected " + std::to_string(found.size()) + " times");
    }
    if (found[0] != want.as_string()) {
      fail("expected " + quote(want.as_string()) + ", got " + quote(found[0]));
    }
  });
  no_extra(r, block, sub, proj, key, [&] {
    std::vector<std::string> names;
    for (const auto& [k, v] : project(r.fixture(proj, "envelope_file"))) {
      names.push_back(k);
    }
    return names;
  });
}

void expect_amqp(const binding::amqp10::Value& got, const Json& want) {
  bool ok = false;
  if (want.is_string()) {
    const auto* s = std::get_if<std::string>(&got);
    ok = s != nullptr && *s == want.as_string();
  } else if (want.is_bool()) {
    const auto* b = std::get_if<bool>(&got);
    ok = b != nullptr && *b == want.as_bool();
  } else if (want.is_number() && want.as_number().is_integer()) {
    const auto i = amqp_integral(got);
    ok = i.has_value() && ((want.as_int64() && *i == static_cast<long double>(*want.as_int64())) ||
                           (want.as_uint64() && *i == static_cast<long double>(*want.as_uint64())));
  } else if (want.is_number()) {
    const double d = want.as_number().as_double();
    if (const auto* f = std::get_if<float>(&got)) ok = static_cast<double>(*f) == d;
    if (const auto* g = std::get_if<double>(&got)) ok = *g == d;
  } else {
    fail("manifest: an application property of JSON type " + show(want) + " is not implemented");
  }
  if (!ok) fail("expected " + show(want) + ", got " + show_amqp(got));
}

}  // namespace babelqueue::conformance::detail
