// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <string>
#include <string_view>

/// @file
/// Transport kit: small text helpers for error and log messages.

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

}  // namespace babelqueue::spi
