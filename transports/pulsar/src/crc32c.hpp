// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <cstdint>
#include <string_view>

namespace babelqueue::pulsar::wire {

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of Pulsar's payload
/// frames: `crc32c("123456789") == 0xE3069283`. `crc` continues an earlier result, so
/// crc32c(b, crc32c(a)) == crc32c(a + b). Software slice-by-8, no CPU feature needed.
///
/// Thread-safety: a pure function.
[[nodiscard]] std::uint32_t crc32c(std::string_view data, std::uint32_t crc = 0) noexcept;

}  // namespace babelqueue::pulsar::wire
