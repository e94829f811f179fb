// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <sys/resource.h>

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

// The process's CPU time (user + system, every thread) and voluntary context switches (a thread
// blocked: each is a wake-up later) so far: the load-insensitive cost of a consume round (`bench
// transport` and the raw baselines it is compared with).
struct Usage {
  double cpu_ns = 0;
  long waits = 0;

  static Usage now() noexcept {
    rusage r{};
    (void)getrusage(RUSAGE_SELF, &r);
    const auto ns = [](const timeval& t) {
      return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_usec) * 1e3;
    };
    return {ns(r.ru_utime) + ns(r.ru_stime), r.ru_nvcsw};
  }
};

// The --cpu-work option's help text.
inline constexpr const char* kCpuWorkHelp =
    "Hash rounds of CPU-bound work per message in the handler (default 0: no-op)";

}  // namespace babelqueue::cli
