// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The envelope blocks: `cases` (decode and accept), `roundtrip` (decode, attempts + 1, encode
// keeps unknown members), `data_shape` (data is a JSON object) and `forbidden_keys`
// (non-canonical keys warned on decode, never re-emitted).

#include "blocks/blocks.hpp"
#include "json_tools.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::conformance::detail {

namespace {

void run_cases(Runner& r, const std::string& block, const Json& cases) {
  if (!cases.is_array()) {
    r.add_failure(block, "(block)", "manifest: 'cases' is not an array");
    return;
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Json& c = cases.as_array()[i];
    r.add(block, case_name(c, i), [&] {
      known_members(c, {"name", "file", "valid", "description", "expect", "reason"});
      const std::string& bytes = r.fixture(c, "file");
      std::vector<std::string> warnings;
      auto decoded = try_decode(bytes, &warnings);
      if (!bool_member(c, "valid")) {
        if (decoded && accepts(*decoded)) {
          fail("expected a rejection, but the fixture decodes and accepts() is true");
        }
        return;
      }
      if (!decoded) fail(std::string("decode failed: ") + decoded.error().what());
      const Envelope& env = *decoded;
      if (!accepts(env)) fail("accepts() is false: " + rejection(env));
      Problems p;
      for (const auto& [key, want] : object_member(c, "expect")) {
        const std::string what = "expect." + key;
        if (key == "urn") {
          p.check(want.is_string() && env.urn() == want.as_string(),
                  "urn: expected " + show(want) + ", got " + quote(env.urn()));
        } else if (key == "data") {
          p.check(env.has_data() && strict_equal(env.data(), want),
                  "data: expected " + show(want) + ", got " + show(env.data()));
        } else if (key == "attempts") {
          p.check(env.attempts() == int_value(want, what),
                  "attempts: expected " + show(want) + ", got " + std::to_string(env.attempts()));
        } else if (key == "lang") {
          p.check(want.is_string() && env.meta().lang == want.as_string(),
                  "meta.lang: expected " + show(want) + ", got " + quote(env.meta().lang));
        } else if (key == "schema_version") {
          p.check(env.meta().schema_version == int_value(want, what),
                  "meta.schema_version: expected " + show(want) + ", got " +
                      std::to_string(env.meta().schema_version));
        } else if (key == "dead_letter") {
          if (!env.dead_letter()) {
            p.add("dead_letter: expected a block, got none");
            continue;
          }
          const DeadLetter& dl = *env.dead_letter();
          if (!want.is_object()) fail("manifest: expect.dead_letter is not an object");
          for (const auto& member : want.as_object()) {
            const std::string& dk = member.first;  // named, not bound: lambdas capture them
            const Json& dv = member.second;
            const std::string name = "dead_letter." + dk;
            const auto text = [&](const std::optional<std::string>& got) {
              const bool ok = dv.is_null() ? !got : (dv.is_string() && got == dv.as_string());
              p.check(ok, name + ": expected " + show(dv) + ", got " + show_opt(got));
            };
            const auto number = [&](std::int64_t got) {
              p.check(got == int_value(dv, name),
                      name + ": expected " + show(dv) + ", got " + std::to_string(got));
            };
            if (dk == "reason") {
              text(dl.reason);
            } else if (dk == "error") {
              text(dl.error);
            } else if (dk == "exception") {
              text(dl.exception);
            } else if (dk == "original_queue") {
              text(dl.original_queue);
            } else if (dk == "lang") {
              text(dl.lang);
            } else if (dk == "failed_at") {
              number(dl.failed_at);
            } else if (dk == "attempts") {
              number(dl.attempts);
            } else {
              fail("manifest: " + name + " is not implemented by this runner");
            }
          }
        } else {
          fail("manifest: " + what + " is not implemented by this runner");
        }
      }
      p.check(!env.trace_id().empty(), "trace_id is empty");
      p.check(!env.meta().id.empty(), "meta.id is empty");
      p.check(env.meta().created_at != 0, "meta.created_at is 0");
      p.finish();
    });
  }
}

void run_roundtrip(Runner& r, const std::string& block, const Json& value) {
  r.sub_blocks(block, "", value, {"cases"});
  each_case(r, block, "", value, "cases", [&](std::size_t i, const Json& c) {
    r.add(block, case_name(c, i), [&] {
      known_members(c, {"name", "file", "description", "expect_attempts", "expect_preserved",
                        "producer_schema_valid"});
      Envelope env = r.accepted(c, "file");
      env.set_attempts(env.attempts() + 1);
      const std::string out = encode(env);
      const auto parsed = Json::try_parse(out);
      if (!parsed) fail(std::string("the re-encoding is not valid JSON: ") + parsed.error().what());
      Problems p;
      const Json* attempts = resolve(*parsed, "/attempts");
      p.check(attempts != nullptr && attempts->is_number() &&
                  attempts->as_int64() == int_member(c, "expect_attempts"),
              "/attempts: expected " + show(member(c, "expect_attempts")) + ", got " +
                  (attempts != nullptr ? show(*attempts) : "(absent)"));
      for (const auto& [pointer, want] : object_member(c, "expect_preserved")) {
        const Json* got = resolve(*parsed, pointer);
        p.check(got != nullptr && strict_equal(*got, want),
                pointer + ": expected " + show(want) + ", got " +
                    (got != nullptr ? show(*got) : "(absent)"));
      }
      p.finish();
    });
  });
}

void run_data_shape(Runner& r, const std::string& block, const Json& value) {
  r.sub_blocks(block, "", value, {"cases"});
  each_case(r, block, "", value, "cases", [&](std::size_t i, const Json& c) {
    r.add(block, case_name(c, i), [&] {
      const std::string& mode = string_member(c, "mode");
      if (mode == "encode") {
        known_members(c, {"name", "mode", "urn", "queue", "data", "expect_encoded_data_json",
                          "description", "reason"});
        const Envelope env = make(string_member(c, "urn"), member(c, "data"),
                                  {.queue = string_member(c, "queue"), .trace_id = {}});
        const std::string out = encode(env);
        if (const auto parsed = Json::try_parse(out); !parsed) {
          fail(std::string("the encoding is not valid JSON: ") + parsed.error().what());
        }
        const auto raw = raw_member(out, "data");
        if (!raw) fail("the encoding has no data member: " + quote(out));
        const std::string& want = string_member(c, "expect_encoded_data_json");
        if (without_ws(*raw) != without_ws(want)) {
          fail("data encoded as " + quote(*raw) + ", expected " + quote(want));
        }
      } else if (mode == "decode") {
        known_members(c, {"name", "mode", "file", "valid", "reason", "description"});
        auto decoded = try_decode(r.fixture(c, "file"));
        const bool valid = bool_member(c, "valid");
        if (valid && !decoded) fail(std::string("decode failed: ") + decoded.error().what());
        if (valid && !accepts(*decoded)) fail("accepts() is false: " + rejection(*decoded));
        if (!valid && decoded && accepts(*decoded)) {
          fail("expected a rejection, but the fixture decodes and accepts() is true");
        }
      } else {
        fail("manifest: mode " + quote(mode) + " is not implemented by this runner");
      }
    });
  });
}

// True when `text` names `pointer` as a whole (not as a prefix of a longer pointer).
bool names_pointer(std::string_view text, std::string_view pointer) {
  for (std::size_t at = text.find(pointer); at != std::string_view::npos;
       at = text.find(pointer, at + 1)) {
    const std::size_t end = at + pointer.size();
    const bool longer = end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) ||
                                              text[end] == '_' || text[end] == '/');
    if (!longer) return true;
  }
  return false;
}

void run_forbidden_keys(Runner& r, const std::string& block, const Json& value) {
  r.sub_blocks(block, "", value, {"cases"});
  each_case(r, block, "", value, "cases", [&](std::size_t i, const Json& c) {
    r.add(block, case_name(c, i), [&] {
      known_members(c, {"name", "file", "forbidden_key", "expect", "expect_absent_after_reencode",
                        "description"});
      const std::string& expect = string_member(c, "expect");
      if (expect != "warn") fail("manifest: expect " + quote(expect) + " is not implemented");
      const std::string& pointer = string_member(c, "forbidden_key");
      std::vector<std::string> warnings;
      const Envelope env = r.accepted(c, "file", &warnings);
      Problems p;
      p.check(
          std::any_of(warnings.begin(), warnings.end(),
                      [&](const std::string& w) { return names_pointer(w, pointer); }),
          "no warning names " + pointer + " (" + std::to_string(warnings.size()) + " warnings)");
      const std::string out = encode(env);
      const Json reencoded = Json::parse(out);
      Json original = Json::parse(r.fixture(c, "file"));
      for (const Json& absent : array_member(c, "expect_absent_after_reencode")) {
        if (!absent.is_string())
          fail("manifest: expect_absent_after_reencode entry is not a string");
        p.check(resolve(reencoded, absent.as_string()) == nullptr,
                absent.as_string() + " is still present after re-encode");
        erase(original, absent.as_string());
      }
      erase(original, pointer);
      p.check(reencoded == original,
              "other members changed: expected " + show(original) + ", got " + quote(out));
      p.finish();
    });
  });
}

}  // namespace

void register_envelope_blocks(Registry& registry) {
  registry.add("cases", BlockKind::Sdk, run_cases);
  registry.add("roundtrip", BlockKind::Sdk, run_roundtrip);
  registry.add("data_shape", BlockKind::Sdk, run_data_shape);
  registry.add("forbidden_keys", BlockKind::Sdk, run_forbidden_keys);
}

}  // namespace babelqueue::conformance::detail
