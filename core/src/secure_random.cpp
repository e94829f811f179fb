// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors

#include <babelqueue/spi/secure_random.hpp>

#include "random.hpp"

namespace babelqueue::spi {

void secure_random_bytes(unsigned char* out, std::size_t n) {
  detail::random_bytes(out, n);
}

std::string secure_random_hex(std::size_t bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(bytes * 2, '\0');
  // The raw bytes go into the second half of `out`, then expand front to back: byte i is read
  // (at bytes + i) before position 2i + 1 >= bytes + i overwrites it.
  auto* raw = reinterpret_cast<unsigned char*>(out.data()) + bytes;
  detail::random_bytes(raw, bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    const unsigned char b = raw[i];
    out[2 * i] = kHex[b >> 4];
    out[2 * i + 1] = kHex[b & 0x0f];
  }
  return out;
}

}  // namespace babelqueue::spi
