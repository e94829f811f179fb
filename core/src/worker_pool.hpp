// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The consume loop's worker pool (decision D-4, issue 8 item 8). The workers take turns to pop
// and each dispatches what it popped, so no message is handed between threads, at most N are
// popped-but-unfinished and pop never runs twice at once. Handing the pop turn to another core
// costs about a microsecond (a few cache lines move with it), more than a short handler does, so
// the pool uses a second worker only while handlers take long enough to pay for it: with short
// handlers one worker keeps the turn and the others stay parked; with long ones (sampled EWMA of
// dispatch times) the holder wakes a parked worker for the next pop. A parked worker also looks
// again every few milliseconds and takes the turn when nothing was popped meanwhile, so a long
// handler among short ones delays the next pop by a few milliseconds at most (and stop() reaches
// a parked worker within one such look).

#pragma once

#include <babelqueue/errors.hpp>
#include <babelqueue/spi/backoff.hpp>
#include <babelqueue/transport.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace babelqueue::detail {

// What the pool runs (RT-14): `pop` and `ride_out` are called by the worker holding the pop
// turn (one at a time, each call happening-after the previous one), `dispatch` by the worker
// that popped the message.
class PoolSource {
 public:
  virtual ~PoolSource() = default;
  [[nodiscard]] virtual bool stopping() const noexcept = 0;
  // One pop of the transport. What it throws ends the loop and is rethrown by `run`.
  virtual Result<std::optional<ReceivedMessage>> pop() = 0;
  // A transient pop error: report it and wait `backoff` (ended by a stop) before the next pop.
  virtual void ride_out(const Error& err, std::chrono::milliseconds backoff) = 0;
  virtual void dispatch(ReceivedMessage& msg) noexcept = 0;
};

class WorkerPool {
 public:
  explicit WorkerPool(PoolSource& source) : source_(source) {}

  // Runs `workers` workers, the calling thread one of them, until `stopping()` or a
  // non-transient pop error; returns ok or that error once every worker has finished its
  // dispatch. Rethrows what `pop` threw, likewise.
  Status run(int workers) {
    std::vector<std::thread> helpers;
    helpers.reserve(static_cast<std::size_t>(workers - 1));
    try {
      for (int i = 1; i < workers; ++i)
        helpers.emplace_back([this] { work(); });
    } catch (...) {
      end();
      join(helpers);
      throw;
    }
    work();
    join(helpers);
    if (thrown_) std::rethrow_exception(thrown_);
    return error_ ? Status(*error_) : Status{};
  }

 private:
  using Clock = std::chrono::steady_clock;

  // Dispatches at least this long (on average) are worth a second worker.
  static constexpr std::int64_t kParallelFromNs = 5'000;
  // Assumed until measured, so long handlers get their workers from the first message; also the
  // cap of one sample.
  static constexpr std::int64_t kInitialDispatchNs = 4 * kParallelFromNs;
  static constexpr unsigned kSampleEvery = 8;
  static constexpr std::chrono::milliseconds kParkedRecheck{5};
  static constexpr std::chrono::nanoseconds kSpinFor{2'000};

  void work() noexcept {
    unsigned dispatched = 0;
    while (take_turn()) {
      Result<std::optional<ReceivedMessage>> popped = pop();
      if (!popped.has_value()) {
        if (thrown_ || !popped.error().is_transient()) {
          error_ = popped.error();
          end_holding_turn();
          return;
        }
        source_.ride_out(popped.error(), backoff_.next());
        release_turn(false);
        continue;
      }
      backoff_.reset();
      std::optional<ReceivedMessage>& msg = *popped;
      release_turn(msg.has_value());
      if (msg) dispatch(*msg, ++dispatched);
    }
  }

  // Built in place: the message is not moved on its way to dispatch.
  Result<std::optional<ReceivedMessage>> pop() noexcept {
    try {
      return source_.pop();
    } catch (...) {
      thrown_ = std::current_exception();
      return Error(ErrorCode::Transport, "babelqueue: the transport's pop threw");
    }
  }

  // False once the pool ends or the source stops.
  bool take_turn() {
    for (;;) {
      if (!turn_.load(std::memory_order_relaxed) &&
          !turn_.exchange(true, std::memory_order_acquire)) {
        if (!ended()) return true;
        turn_.store(false, std::memory_order_release);
        return false;
      }
      if (ended()) return false;
      if (parallel() && spin_until_free()) continue;
      while (!park()) {
      }
    }
  }

  void release_turn(bool popped) {
    if (popped) pops_.store(pops_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    turn_.store(false, std::memory_order_release);
    if (!popped || !parallel() || parked_.load(std::memory_order_relaxed) == 0) return;
    {
      std::lock_guard<std::mutex> lock(park_mu_);
      if (calls_ < parked_.load(std::memory_order_relaxed)) ++calls_;
    }
    park_cv_.notify_one();
  }

  [[nodiscard]] bool ended() const noexcept {
    return done_.load(std::memory_order_acquire) || source_.stopping();
  }

  [[nodiscard]] bool parallel() const noexcept {
    return dispatch_ns_.load(std::memory_order_relaxed) >= kParallelFromNs;
  }

  // True when the turn looked free within the spin budget.
  bool spin_until_free() const noexcept {
    const auto until = Clock::now() + kSpinFor;
    do {
      for (int i = 0; i < 16; ++i) {
        if (!turn_.load(std::memory_order_relaxed)) return true;
        cpu_relax();
      }
    } while (Clock::now() < until);
    return false;
  }

  // True when called for, ended, or when nothing was popped for a while (the active workers are
  // all in long handlers); false when the others keep popping without help.
  bool park() {
    std::unique_lock<std::mutex> lock(park_mu_);
    const std::uint64_t seen = pops_.load(std::memory_order_relaxed);
    parked_.fetch_add(1, std::memory_order_relaxed);
    const bool woken =
        park_cv_.wait_for(lock, kParkedRecheck, [this] { return calls_ > 0 || ended(); });
    parked_.fetch_sub(1, std::memory_order_relaxed);
    if (calls_ > 0) --calls_;
    return woken || pops_.load(std::memory_order_relaxed) == seen;
  }

  void dispatch(ReceivedMessage& msg, unsigned dispatched) noexcept {
    if (dispatched % kSampleEvery != 0) {
      source_.dispatch(msg);
      return;
    }
    const auto start = Clock::now();
    source_.dispatch(msg);
    // Capped, so one preempted or page-faulting dispatch cannot flip a pool of short handlers.
    const std::int64_t ns = std::min<std::int64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count(),
        kInitialDispatchNs);
    const std::int64_t average = dispatch_ns_.load(std::memory_order_relaxed);
    dispatch_ns_.store(average + (ns - average) / 8, std::memory_order_relaxed);
  }

  void end() noexcept {
    done_.store(true, std::memory_order_release);
    { std::lock_guard<std::mutex> lock(park_mu_); }
    park_cv_.notify_all();
  }

  void end_holding_turn() noexcept {
    end();
    turn_.store(false, std::memory_order_release);
  }

  static void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
  }

  static void join(std::vector<std::thread>& threads) noexcept {
    for (auto& t : threads)
      t.join();
  }

  PoolSource& source_;
  std::atomic<bool> turn_{false};
  std::atomic<bool> done_{false};
  std::atomic<int> parked_{0};
  std::atomic<std::uint64_t> pops_{0};  // written by the turn holder only
  std::atomic<std::int64_t> dispatch_ns_{kInitialDispatchNs};
  std::mutex park_mu_;
  std::condition_variable park_cv_;
  int calls_ = 0;         // wake-ups asked for; guarded by park_mu_
  spi::Backoff backoff_;  // used holding the turn
  // Written by the turn holder that ends the pool, read after the join.
  std::optional<Error> error_;
  std::exception_ptr thrown_;
};

}  // namespace babelqueue::detail
