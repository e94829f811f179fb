// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// CSPRNG bytes for UUIDs and reservation tokens: getrandom(2) into a per-thread buffer, refilled
// in 4 KiB batches. A fork() bumps a generation counter so a child never reuses its parent's
// buffered bytes. There is no fallback to a weak generator (ENV-4).

#include "random.hpp"

#include <pthread.h>
#include <sys/random.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include <babelqueue/errors.hpp>

namespace babelqueue::detail {
namespace {

std::atomic<unsigned> fork_generation{0};

void on_fork_child() {
  fork_generation.fetch_add(1, std::memory_order_relaxed);
}

struct RandomBuffer {
  static constexpr std::size_t kSize = 4096;
  unsigned char bytes[kSize];
  std::size_t pos = kSize;
  unsigned generation = 0;

  void refill() {
    std::size_t got = 0;
    while (got < kSize) {
      const ssize_t n = getrandom(bytes + got, kSize - got, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw Error(ErrorCode::Randomness,
                    std::string("the CSPRNG (getrandom) failed: ") + std::strerror(errno));
      }
      got += static_cast<std::size_t>(n);
    }
    pos = 0;
  }
};

}  // namespace

void random_bytes(unsigned char* out, std::size_t n) {
  static const int registered = pthread_atfork(nullptr, nullptr, on_fork_child);
  (void)registered;
  thread_local RandomBuffer buf;
  const unsigned gen = fork_generation.load(std::memory_order_relaxed);
  if (buf.generation != gen) {
    buf.generation = gen;
    buf.pos = RandomBuffer::kSize;  // discard what the parent process buffered
  }
  while (n > 0) {
    if (buf.pos == RandomBuffer::kSize) buf.refill();
    const std::size_t take = std::min(n, RandomBuffer::kSize - buf.pos);
    std::memcpy(out, buf.bytes + buf.pos, take);
    std::memset(buf.bytes + buf.pos, 0, take);  // a used byte is never handed out twice
    buf.pos += take;
    out += take;
    n -= take;
  }
}

void uuid_v4_into(char* out) {
  unsigned char b[16];
  random_bytes(b, sizeof b);
  b[6] = static_cast<unsigned char>((b[6] & 0x0F) | 0x40);
  b[8] = static_cast<unsigned char>((b[8] & 0x3F) | 0x80);
  static constexpr char kHex[] = "0123456789abcdef";
  std::size_t o = 0;
  for (std::size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
    out[o++] = kHex[b[i] >> 4];
    out[o++] = kHex[b[i] & 0x0F];
  }
}

}  // namespace babelqueue::detail
