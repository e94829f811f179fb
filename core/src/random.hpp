// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <cstddef>

namespace babelqueue::detail {

/// Fills `out` with CSPRNG bytes. @throws Error(ErrorCode::Randomness) when getrandom fails.
void random_bytes(unsigned char* out, std::size_t n);

/// Writes a fresh UUID v4 as 36 lowercase characters (no terminator) to `out`.
void uuid_v4_into(char* out);

}  // namespace babelqueue::detail
