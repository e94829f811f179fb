// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>

/// @file
/// Transport kit: the one reconnect/retry backoff of the SDK (decision D-3) and an interruptible
/// wait. The App's consume loop and every transport use these, so a worker everywhere waits
/// 100 ms, 200 ms, ... up to 5 s between failed attempts and wakes at once on stop/close.

namespace babelqueue::spi {

/// Capped exponential backoff: `initial`, doubling, never above `cap`.
///
/// Thread-safety: a value type; one instance per retry loop.
class Backoff {
 public:
  /// D-3: 100 ms doubling to 5 s.
  static constexpr std::chrono::milliseconds kDefaultInitial{100};
  static constexpr std::chrono::milliseconds kDefaultCap{5000};

  constexpr Backoff() noexcept = default;
  constexpr Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds cap) noexcept
      : initial_(initial), cap_(std::max(cap, initial)), current_(initial) {}

  /// The wait before the next attempt; the one after it doubles (up to the cap).
  constexpr std::chrono::milliseconds next() noexcept {
    const std::chrono::milliseconds out = current_;
    current_ = std::min(current_ * 2, cap_);
    return out;
  }
  /// What `next()` would return, without advancing.
  [[nodiscard]] constexpr std::chrono::milliseconds peek() const noexcept { return current_; }
  /// After a success: the next failure waits `initial` again.
  constexpr void reset() noexcept { current_ = initial_; }

 private:
  std::chrono::milliseconds initial_ = kDefaultInitial;
  std::chrono::milliseconds cap_ = kDefaultCap;
  std::chrono::milliseconds current_ = kDefaultInitial;
};

/// A sleep that `interrupt()` ends early, for backoffs, poll intervals and pauses that must
/// not delay a stop or a close.
///
/// Thread-safety: `wait_for` from any number of threads; `interrupt` from any thread. Sticky:
/// after `interrupt()` every wait returns at once until `reset()`.
class InterruptibleWait {
 public:
  /// Sleeps `d` unless interrupted first; true when the full time passed, false when interrupted.
  bool wait_for(std::chrono::milliseconds d) {
    std::unique_lock<std::mutex> lock(mu_);
    return !cv_.wait_for(lock, d, [this] { return interrupted_; });
  }
  /// Ends every current and future wait.
  void interrupt() noexcept {
    {
      std::lock_guard<std::mutex> lock(mu_);
      interrupted_ = true;
    }
    cv_.notify_all();
  }
  /// Makes waits sleep again.
  void reset() noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    interrupted_ = false;
  }
  [[nodiscard]] bool interrupted() const noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    return interrupted_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool interrupted_ = false;
};

}  // namespace babelqueue::spi
