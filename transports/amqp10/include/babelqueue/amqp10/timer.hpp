// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

/// @file
/// A one-thread timer for the AMQP 1.0 layer and its transports (CBS token renewal, Service Bus
/// lock renewal). Not the container's: a Proton timer keeps container::run() going until it
/// fires, so a stop would wait for the longest one.

namespace babelqueue::amqp10 {

/// Runs each task on its own thread at its time. Thread-safety: every method from any thread;
/// a task may call `at` and `cancel`, never `stop`.
class Timer {
 public:
  using Clock = std::chrono::steady_clock;
  using Id = std::uint64_t;

  Timer() = default;
  ~Timer() { stop(); }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  Timer(Timer&&) = delete;
  Timer& operator=(Timer&&) = delete;

  /// Runs `task` at `when` (the thread starts on first use); after stop() nothing runs.
  Id at(Clock::time_point when, std::function<void()> task) {
    const std::lock_guard lock(mutex_);
    const Id id = ++next_;
    if (stopped_) return id;
    tasks_.emplace(std::make_pair(when, id), std::move(task));
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
    cv_.notify_all();
    return id;
  }

  /// Drops the task `id` if it has not started.
  void cancel(Id id) {
    const std::lock_guard lock(mutex_);
    for (auto it = tasks_.begin(); it != tasks_.end(); ++it) {
      if (it->first.second == id) {
        tasks_.erase(it);
        return;
      }
    }
  }

  /// Drops every task, waits for a running one and ends the thread. Idempotent.
  void stop() {
    {
      const std::lock_guard lock(mutex_);
      stopped_ = true;
      tasks_.clear();
      cv_.notify_all();
    }
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    while (!stopped_) {
      if (tasks_.empty()) {
        cv_.wait(lock);
        continue;
      }
      const auto first = tasks_.begin();
      // A copy: cancel() may erase the task (and its key) while this waits.
      const Clock::time_point when = first->first.first;
      if (Clock::now() < when) {
        cv_.wait_until(lock, when);
        continue;
      }
      std::function<void()> task = std::move(first->second);
      tasks_.erase(first);
      lock.unlock();
      task();
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::pair<Clock::time_point, Id>, std::function<void()>> tasks_;
  std::thread thread_;
  Id next_ = 0;
  bool stopped_ = false;
};

}  // namespace babelqueue::amqp10
