// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <cstdint>
#include <string>

namespace babelqueue::cli {

// The CPU-bound handler of `bench app` and `bench transport` (--cpu-work): `rounds` steps of a
// 64-bit mix (splitmix64) seeded by the message, so the result depends on every step and cannot
// be folded away.
inline std::uint64_t cpu_work(std::uint64_t seed, int rounds) noexcept {
  std::uint64_t x = seed;
  for (int i = 0; i < rounds; ++i) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
  }
  return x;
}

// "no-op handler" or "handler doing N hash rounds", for the benchmarks' headings.
inline std::string handler_description(int rounds) {
  return rounds > 0 ? "handler doing " + std::to_string(rounds) + " hash rounds"
                    : std::string("no-op handler");
}

// The --cpu-work option's help text.
inline constexpr const char* kCpuWorkHelp =
    "Hash rounds of CPU-bound work per message in the handler (default 0: no-op)";

}  // namespace babelqueue::cli
