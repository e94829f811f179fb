// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/errors.hpp>
#include <babelqueue/transport.hpp>

#include <string>

/// @file
/// Transport kit: errors that cross from one thread to another.
///
/// std::runtime_error keeps its message in a reference-counted string whose count changes inside
/// libstdc++, which ThreadSanitizer does not instrument, so two threads releasing copies of one
/// error look like a race to it. A transport hands an error made on one thread (its I/O thread, a
/// client library's callback) to another only as a copy made by `unshared`: each thread then
/// releases storage of its own.

namespace babelqueue::spi {

/// A copy of `e` that shares no storage with it (same code, text and transience).
///
/// Thread-safety: call it on the thread that owns `e`.
[[nodiscard]] inline Error unshared(const Error& e) {
  return Error(e.code(), std::string(e.what()), e.is_transient());
}

/// `s` with its error, if any, `unshared`.
[[nodiscard]] inline Status unshared(const Status& s) {
  return s.ok() ? Status() : Status(unshared(s.error()));
}

/// `r` with its error, if any, `unshared`.
template <class T>
[[nodiscard]] Result<T> unshared(Result<T> r) {
  if (r.has_value()) return r;
  return Result<T>(unshared(r.error()));
}

}  // namespace babelqueue::spi
