// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/app.hpp>

#include <signal.h>

#include <atomic>
#include <thread>

namespace babelqueue::cli {

/// Turns SIGINT/SIGTERM into `App::stop()` while it lives. The signal handler only writes the
/// signal number to a pipe (async-signal-safe); a watcher thread reads it and calls `stop()`,
/// which is not. After the first signal the default action is back, so a second one ends a
/// worker whose handler hangs.
///
/// Thread-safety: one instance at a time per process; `signal_number` is safe from any thread.
class StopOnSignal {
 public:
  /// @throws std::system_error when the pipe cannot be created.
  explicit StopOnSignal(App& app);
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

  /// The first signal that arrived, 0 if none.
  [[nodiscard]] int signal_number() const { return signal_.load(); }

 private:
  void watch(App& app);

  int fds_[2] = {-1, -1};
  struct sigaction old_int_ = {};
  struct sigaction old_term_ = {};
  std::atomic<int> signal_{0};
  std::thread watcher_;
};

}  // namespace babelqueue::cli
