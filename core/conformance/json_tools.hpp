// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// JSON checks of the envelope blocks: strict equality, RFC 6901 pointers, raw member text.

#include <babelqueue/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace babelqueue::conformance::detail {

// Deep equality with strict types: an integer lexeme never equals a decimal one, an object is
// never an array, null is not absent; member order is not significant.
bool strict_equal(const Json& a, const Json& b);

// The value at `pointer`, or nullptr when there is none.
const Json* resolve(const Json& root, std::string_view pointer);

// Removes the object member at `pointer`; false when there is none.
bool erase(Json& root, std::string_view pointer);

// The raw text of the top-level member `key` of the JSON object `text` (the last one when the
// name repeats), or nullopt.
std::optional<std::string_view> raw_member(std::string_view text, std::string_view key);

// `text` without whitespace outside strings.
std::string without_ws(std::string_view text);

}  // namespace babelqueue::conformance::detail
