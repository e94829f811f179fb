// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/export.hpp>

#include <cstddef>
#include <string>

/// @file
/// Transport kit: the SDK's CSPRNG (getrandom(2), batched per thread), for transports that need unguessable
/// tokens. There is no fallback to a weaker generator.

namespace babelqueue::spi {

/// Fills `out[0..n)` with cryptographically secure random bytes.
/// @throws Error with ErrorCode::Randomness when the kernel CSPRNG fails.
BABELQUEUE_EXPORT void secure_random_bytes(unsigned char* out, std::size_t n);

/// `bytes` random bytes as 2 * `bytes` lowercase hex digits.
/// @throws Error with ErrorCode::Randomness when the kernel CSPRNG fails.
BABELQUEUE_EXPORT std::string secure_random_hex(std::size_t bytes);

}  // namespace babelqueue::spi
