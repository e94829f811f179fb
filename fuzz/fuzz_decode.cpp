// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/codec.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "decode_internal.hpp"

// Decoding arbitrary bytes must not crash, and whatever decodes must re-encode to a fixed point:
// encode(decode(encode(env))) == encode(env), without new warnings and without losing accepts().
// try_decode, with its fast path for compact canonical bodies, must agree in every observable
// way with the general decoder alone, on the input and on its encoding.

namespace {

[[noreturn]] void fail(const char* what, std::string_view first, std::string_view second = {}) {
  std::fprintf(stderr, "fuzz_decode: %s\n  %.*s\n  %.*s\n", what, static_cast<int>(first.size()),
               first.data(), static_cast<int>(second.size()), second.data());
  std::abort();
}

std::string encode_or_fail(const babelqueue::Envelope& env, const char* which) {
  try {
    return babelqueue::encode(env);
  } catch (const std::exception& e) {
    fail(which, e.what());
  }
}

void check_paths_agree(std::string_view body) {
  const std::string diff = babelqueue::detail::decode_paths_difference(body);
  if (!diff.empty()) fail(diff.c_str(), body);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  check_paths_agree(body);

  const auto decoded = babelqueue::try_decode(body);
  if (!decoded) {
    if (decoded.error().code() != babelqueue::ErrorCode::Decode) {
      fail("try_decode failed with a code other than Decode", decoded.error().what());
    }
    return 0;
  }
  const bool accepted = babelqueue::accepts(*decoded);
  const std::string first = encode_or_fail(*decoded, "encode of a decoded envelope threw");
  check_paths_agree(first);  // the canonical layout the fast path is for

  std::vector<std::string> warnings;
  const auto again = babelqueue::try_decode(first, &warnings);
  if (!again) fail("the encoding does not decode", first, again.error().what());
  if (!warnings.empty()) fail("the encoding has forbidden members", first, warnings.front());
  if (accepted && !babelqueue::accepts(*again)) fail("accepts() lost in the round trip", first);

  const std::string second = encode_or_fail(*again, "encode of the re-decoded envelope threw");
  if (second != first) fail("encode is not a fixed point", first, second);
  return 0;
}
