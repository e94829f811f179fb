// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// An idempotency Store double whose calls can fail, counting each call (HLP-1..HLP-4 tests).

#include <babelqueue/errors.hpp>
#include <babelqueue/idempotency.hpp>

#include <string_view>

namespace babelqueue::test {

/// Not thread-safe: each test owns one.
class FailingStore final : public idempotency::Store {
 public:
  bool seen_throws = false;
  bool remember_throws = false;
  int seen_calls = 0;
  int remember_calls = 0;

  bool seen(std::string_view /*id*/) override {
    ++seen_calls;
    if (seen_throws) throw TransportError("store down");
    return false;
  }
  void remember(std::string_view /*id*/) override {
    ++remember_calls;
    if (remember_throws) throw TransportError("write failed");
  }
  void forget(std::string_view /*id*/) override {}
};

}  // namespace babelqueue::test
