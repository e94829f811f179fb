// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <string>
#include <string_view>

namespace babelqueue::redis::detail {

/// `s` in double quotes, for error and log texts.
inline std::string quoted(std::string_view s) {
  std::string out;  // appended, not `"\"" + ...`, which trips GCC 12's -Wrestrict
  out.reserve(s.size() + 2);
  out.push_back('"');
  out.append(s);
  out.push_back('"');
  return out;
}

}  // namespace babelqueue::redis::detail
