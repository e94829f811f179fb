// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/errors.hpp>
#include <babelqueue/export.hpp>

#include <string>
#include <string_view>

/// @file
/// Transport kit: the byte-preserving attempts rewrite of a transport that counts a release in
/// the stored bytes (Redis, RDS-57).

namespace babelqueue::spi {

/// `body` with its top-level `attempts` + 1, for a transport that counts a release in the
/// stored bytes (RDS-57). Only the lexeme of the effective (last, ENV-19) top-level `attempts`
/// member is replaced; every other byte (unknown members, number lexemes, escapes, member order,
/// whitespace) is kept. A `null` value counts as 0 like in decode (ENV-20) and becomes `1`; an
/// absent member is appended as the last top-level member, `"attempts":1`.
/// Errors: a body that is not a strict JSON object, or whose `attempts` is not an ENV-20 (I)
/// integer, gives a DecodeError (the body is poison); `attempts` = INT64_MAX gives
/// Error(ErrorCode::ReleaseUnsupported). Only std::bad_alloc is thrown.
BABELQUEUE_EXPORT Result<std::string, Error> increment_attempts(std::string_view body);

}  // namespace babelqueue::spi
