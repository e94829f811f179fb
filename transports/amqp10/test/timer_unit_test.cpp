// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The layer's Timer (CBS token renewal, Service Bus lock renewal): tasks run in time order on
// its thread, a cancelled one never runs (also the one being waited for), stop() drops the rest
// and later tasks never run.

#include <babelqueue/amqp10/timer.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace babelqueue::amqp10 {
namespace {

using namespace std::chrono_literals;

class Ran {
 public:
  void add(int n) {
    const std::lock_guard lock(mu_);
    order_.push_back(n);
    cv_.notify_all();
  }
  // Waits until `n` tasks ran (bounded: a broken timer fails the test, never hangs it).
  std::vector<int> wait_for(std::size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, 20s, [&] { return order_.size() >= n; });
    return order_;
  }
  std::vector<int> now() {
    const std::lock_guard lock(mu_);
    return order_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int> order_;
};

TEST(Timer, RunsTasksInTimeOrderOnItsThread) {
  Timer timer;
  Ran ran;
  const auto now = Timer::Clock::now();
  const std::thread::id caller = std::this_thread::get_id();
  std::thread::id runner;
  timer.at(now + 60ms, [&] { ran.add(3); });
  timer.at(now + 20ms, [&] {
    runner = std::this_thread::get_id();
    ran.add(1);
  });
  timer.at(now + 40ms, [&] { ran.add(2); });
  EXPECT_EQ(ran.wait_for(3), (std::vector<int>{1, 2, 3}));
  EXPECT_NE(runner, caller);
}

TEST(Timer, ACancelledTaskNeverRunsEvenTheOneBeingWaitedFor) {
  Timer timer;
  Ran ran;
  const auto now = Timer::Clock::now();
  const Timer::Id first = timer.at(now + 50ms, [&] { ran.add(1); });
  timer.at(now + 100ms, [&] { ran.add(2); });
  std::this_thread::sleep_for(10ms);  // the thread now waits for `first`'s deadline
  timer.cancel(first);
  EXPECT_EQ(ran.wait_for(1), (std::vector<int>{2}));
  timer.cancel(first);  // twice, and an unknown id: no effect
  timer.cancel(12345);
}

TEST(Timer, StopDropsWhatIsLeftAndLaterTasksNeverRun) {
  Ran ran;
  {
    Timer timer;
    timer.at(Timer::Clock::now(), [&] { ran.add(1); });
    EXPECT_EQ(ran.wait_for(1), (std::vector<int>{1}));
    timer.at(Timer::Clock::now() + 1h, [&] { ran.add(2); });
    const auto before = std::chrono::steady_clock::now();
    timer.stop();
    EXPECT_LT(std::chrono::steady_clock::now() - before, 10s) << "stop waited for the task";
    timer.at(Timer::Clock::now(), [&] { ran.add(3); });
    timer.stop();  // idempotent
  }
  EXPECT_EQ(ran.now(), (std::vector<int>{1}));
}

}  // namespace
}  // namespace babelqueue::amqp10
