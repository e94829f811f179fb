// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The `payload_schema` and `payload_schema_unicode` blocks: the schema validator's verdicts.

#include "blocks/blocks.hpp"

#include <babelqueue/json.hpp>
#include <babelqueue/schema.hpp>

#include <cstddef>
#include <exception>
#include <optional>
#include <string>
#include <vector>

namespace babelqueue::conformance::detail {

namespace {

void run_payload_schema(Runner& r, const std::string& block, const Json& value) {
  r.sub_blocks(block, "", value, {"schema", "cases"});
  std::optional<schema::Schema> compiled;
  std::string schema_error;
  try {
    compiled.emplace(member(value, "schema"));
  } catch (const CaseFailure& f) {
    schema_error = f.message;
  } catch (const std::exception& e) {
    schema_error = std::string("the schema does not compile: ") + e.what();
  }
  each_case(r, block, "", value, "cases", [&](std::size_t i, const Json& c) {
    r.add(block, case_name(c, i), [&] {
      if (!compiled) fail(schema_error);
      known_members(c, {"name", "valid", "data", "description"});
      const bool want = bool_member(c, "valid");
      const Json& data = member(c, "data");
      const std::vector<std::string> violations = compiled->validate(data);
      const bool valid = compiled->is_valid(data);
      if (valid != violations.empty()) {
        fail("is_valid() and validate() disagree (" + std::to_string(violations.size()) +
             " violations)");
      }
      if (valid && !want) fail("expected invalid, the validator accepted " + show(data));
      if (!valid && want) {
        std::string list;
        for (const std::string& v : violations) {
          list += (list.empty() ? "" : "; ") + v;
        }
        fail("expected valid, the validator reported: " + list);
      }
    });
  });
}

}  // namespace

void register_payload_schema_blocks(Registry& registry) {
  registry.add("payload_schema", BlockKind::Sdk, run_payload_schema);
  registry.add("payload_schema_unicode", BlockKind::Sdk, run_payload_schema);
}

}  // namespace babelqueue::conformance::detail
