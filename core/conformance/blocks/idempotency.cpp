// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The `idempotency` block (ADR-0022): the dedupe key is meta.id, and the wrapped handler runs
// once per meta.id across the manifest's delivery sequences.

#include "blocks/blocks.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/idempotency.hpp>
#include <babelqueue/json.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace babelqueue::conformance::detail {

namespace {

// A decodable body with this meta.id and trace id, for driving the idempotency helper.
std::string body_with_id(std::string_view meta_id, std::string_view trace_id) {
  Json body = Json::object({
      {"job", "urn:babel:conformance:idempotency"},
      {"trace_id", Json(trace_id)},
      {"data", Json::object()},
      {"meta", Json::object({{"id", Json(meta_id)},
                             {"queue", "conformance"},
                             {"lang", Json(SOURCE_LANG)},
                             {"schema_version", SCHEMA_VERSION},
                             {"created_at", 1749132727000LL}})},
      {"attempts", 0},
  });
  return body.dump();
}

void run_idempotency(Runner& r, const std::string& block, const Json& value) {
  r.sub_blocks(block, "", value, {"dedup_key", "sequences"});
  if (const Json* dedup = value.find("dedup_key")) {
    r.add(block, "dedup_key", [&] {
      known_members(*dedup, {"description", "envelope_file", "key_field", "expected_key"});
      const std::string& field = string_member(*dedup, "key_field");
      if (field != "meta.id") fail("manifest: key_field " + quote(field) + " is not implemented");
      const std::string& want = string_member(*dedup, "expected_key");
      const Envelope env = r.accepted(*dedup, "envelope_file");
      if (env.meta().id != want) {
        fail("meta.id: expected " + quote(want) + ", got " + quote(env.meta().id));
      }
      // The helper keys on meta.id: a run remembers exactly it, and a second delivery skips.
      idempotency::InMemoryStore store;
      int effects = 0;
      const auto effect = [&] { ++effects; };
      Problems p;
      p.check(idempotency::run_once(store, env, effect) == idempotency::Outcome::Ran,
              "the first delivery did not run");
      p.check(store.seen(want), "the store did not remember " + quote(want));
      p.check(!store.seen(env.trace_id()), "the store remembered the trace_id");
      p.check(idempotency::run_once(store, env, effect) == idempotency::Outcome::Skipped,
              "a redelivery of the same meta.id was not skipped");
      // Same trace_id, another meta.id: a distinct message.
      const Envelope sibling = decode(body_with_id("conformance-other-id", env.trace_id()));
      p.check(idempotency::run_once(store, sibling, effect) == idempotency::Outcome::Ran,
              "a message sharing only the trace_id was skipped");
      p.check(effects == 2, "effects: expected 2, got " + std::to_string(effects));
      p.finish();
    });
  }
  const Json* sequences = value.find("sequences");
  if (sequences == nullptr) return;
  r.sub_blocks(block, "sequences", *sequences, {"cases"});
  each_case(r, block, "sequences/", *sequences, "cases", [&](std::size_t i, const Json& c) {
    r.add(block, "sequences/" + case_name(c, i), [&] {
      known_members(c, {"name", "description", "deliveries", "expected_effects"});
      auto store = std::make_shared<idempotency::InMemoryStore>();
      std::int64_t invocations = 0;
      bool throw_next = false;
      auto wrapped = idempotency::wrap(store, [&](const Envelope& /*env*/) {
        ++invocations;
        if (throw_next) throw std::runtime_error("conformance handler outcome: throw");
      });
      Problems p;
      const JsonArray& deliveries = array_member(c, "deliveries");
      for (std::size_t d = 0; d < deliveries.size(); ++d) {
        const Json& delivery = deliveries[d];
        known_members(delivery,
                      {"meta_id", "expect_effect", "outcome", "forget_before", "description"});
        const std::string at = "delivery " + std::to_string(d + 1) + ": ";
        const std::string& id = string_member(delivery, "meta_id");
        const std::string& effect = string_member(delivery, "expect_effect");
        if (effect != "run" && effect != "skip") {
          fail("manifest: expect_effect " + quote(effect) + " is not implemented");
        }
        const Json* outcome_value = delivery.find("outcome");
        const std::string outcome = outcome_value == nullptr ? "ok" : outcome_value->as_string();
        if (outcome != "ok" && outcome != "throw") {
          fail("manifest: outcome " + quote(outcome) + " is not implemented");
        }
        if (bool_member(delivery, "forget_before", false)) store->forget(id);
        const Envelope env = decode(body_with_id(id, "conformance-trace"));
        throw_next = outcome == "throw";
        const std::int64_t before = invocations;
        bool threw = false;
        try {
          wrapped(env);
        } catch (const std::runtime_error&) {
          threw = true;
        }
        const bool ran = invocations > before;
        std::string problem = at;
        problem.append("expected ").append(effect).append(", the handler ");
        problem.append(ran ? "ran" : "was skipped");
        p.check(ran == (effect == "run"), problem);
        if (ran) {
          p.check(threw == throw_next, at + (threw ? "the wrapper threw after an ok outcome"
                                                   : "the handler's exception was swallowed"));
        } else {
          p.check(!threw, at + "a skipped delivery threw");
        }
      }
      const std::int64_t want = int_member(c, "expected_effects");
      p.check(invocations == want,
              "effects: expected " + std::to_string(want) + ", got " + std::to_string(invocations));
      p.finish();
    });
  });
}

}  // namespace

void register_idempotency_block(Registry& registry) {
  registry.add("idempotency", BlockKind::Sdk, run_idempotency);
}

}  // namespace babelqueue::conformance::detail
