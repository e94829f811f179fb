// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/errors.hpp>

#include <atomic>
#include <string>
#include <string_view>

/// @file
/// Transport kit: the closed state every transport keeps (RT-2: after `close()` every call fails
/// with ErrorCode::Closed, and `close()` itself is idempotent).

namespace babelqueue::spi {

/// Whether the owner was closed, and the one error calls after it return.
///
/// Thread-safety: every member is safe from any thread.
class ClosedGuard {
 public:
  /// `owner` names the object in the error text, e.g. "redis transport".
  explicit ClosedGuard(std::string owner) : owner_(std::move(owner)) {}

  /// Marks the owner closed; true only for the first call, so `close()` runs its work once.
  bool close() noexcept { return !closed_.exchange(true, std::memory_order_acq_rel); }
  [[nodiscard]] bool closed() const noexcept { return closed_.load(std::memory_order_acquire); }
  /// The ClosedError for `operation` (e.g. "publish").
  [[nodiscard]] ClosedError error(std::string_view operation) const {
    return ClosedError(owner_ + ": " + std::string(operation) + " after close()");
  }

 private:
  std::string owner_;
  std::atomic<bool> closed_{false};
};

}  // namespace babelqueue::spi
