// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

/// @file
/// Transport kit: small text helpers for error and log messages, and for protocol names.

namespace babelqueue::spi {

/// `s` in double quotes, for error and log texts (no escaping: the text is for people).
inline std::string quoted(std::string_view s) {
  std::string out;  // appended, not `"\"" + ...`, which trips GCC 12's -Wrestrict
  out.reserve(s.size() + 2);
  out.push_back('"');
  out.append(s);
  out.push_back('"');
  return out;
}

/// True when `a` and `b` are equal ignoring ASCII letter case (HTTP header names, protocol
/// tokens); other bytes compare exactly.
constexpr bool iequals_ascii(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    char y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

}  // namespace babelqueue::spi
