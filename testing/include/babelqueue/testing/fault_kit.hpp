// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/errors.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/testing/contract.hpp>
#include <babelqueue/transport.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

/// @file
/// Testing kit: what the broker fault tests share (TRANSPORTS.md "nothing is lost"): a publisher
/// that keeps publishing through a fault and remembers every meta.id whose publish returned ok,
/// a worker that keeps consuming through it, the set of ids the handlers ran for, the text that
/// names the lost ones, and the broker-restart scenario built from them.

namespace babelqueue::testing {

/// Polls `done` every `step` until it holds; false after `within`.
template <class Pred>
bool eventually(Pred&& done, std::chrono::steady_clock::duration within,
                std::chrono::milliseconds step = std::chrono::milliseconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(step);
  }
}

/// Every meta.id a handler ran for, with how often.
///
/// Thread-safety: every member is safe from any thread (the App's workers add).
class HandledIds {
 public:
  void add(const std::string& id) {
    std::lock_guard lock(mu_);
    ++runs_[id];
  }
  [[nodiscard]] int runs(const std::string& id) const {
    std::lock_guard lock(mu_);
    const auto it = runs_.find(id);
    return it == runs_.end() ? 0 : it->second;
  }
  [[nodiscard]] bool contains(const std::string& id) const { return runs(id) > 0; }
  [[nodiscard]] std::size_t distinct() const {
    std::lock_guard lock(mu_);
    return runs_.size();
  }
  /// The ids of `expected` no handler ran for.
  [[nodiscard]] std::vector<std::string> missing(const std::set<std::string>& expected) const {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const std::string& id : expected) {
      if (!runs_.contains(id)) out.push_back(id);
    }
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, int> runs_;
};

/// "N published id(s) never handled: a, b, ..." (the first five).
[[nodiscard]] inline std::string describe_missing(const std::vector<std::string>& missing) {
  std::ostringstream out;
  out << missing.size() << " published id(s) never handled";
  for (std::size_t i = 0; i < missing.size() && i < 5; ++i)
    out << (i == 0 ? ": " : ", ") << missing[i];
  return out.str();
}

/// Publishes envelopes of `urn` (data `{"n": <count>}`) to `queue` one after another through an
/// App of its own, on a thread of its own, until `stop()`, keeping the meta.id of every publish
/// that returned ok (the broker has it: confirms, acks=all). A failed publish (the broker is
/// down, the connection was dropped) is counted and the loop goes on after `retry_pause`.
///
/// Thread-safety: every member is safe from any thread.
class ContinuousPublisher {
 public:
  ContinuousPublisher(std::shared_ptr<Transport> transport, std::string queue, std::string urn,
                      std::chrono::milliseconds retry_pause = std::chrono::milliseconds(20))
      : app_(std::move(transport)),
        queue_(std::move(queue)),
        urn_(std::move(urn)),
        retry_pause_(retry_pause) {
    thread_ = std::thread([this] { run(); });
  }
  ~ContinuousPublisher() { (void)stop(); }
  ContinuousPublisher(const ContinuousPublisher&) = delete;
  ContinuousPublisher& operator=(const ContinuousPublisher&) = delete;

  [[nodiscard]] std::size_t confirmed() const {
    std::lock_guard lock(mu_);
    return ids_.size();
  }
  /// The ids whose publish returned ok so far (a fault test's "published before the fault").
  [[nodiscard]] std::set<std::string> confirmed_ids() const {
    std::lock_guard lock(mu_);
    return ids_;
  }
  [[nodiscard]] std::size_t failures() const { return failures_.load(); }
  /// The texts of the failures that were not transient.
  [[nodiscard]] std::vector<std::string> permanent_failures() const {
    std::lock_guard lock(mu_);
    return permanent_;
  }
  /// Waits until `n` more publishes than now returned ok; false after `within`.
  bool wait_for_more(std::size_t n, std::chrono::steady_clock::duration within) {
    const std::size_t target = confirmed() + n;
    return eventually([&] { return confirmed() >= target; }, within);
  }
  /// Ends the loop; the ids whose publish returned ok.
  std::set<std::string> stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
    std::lock_guard lock(mu_);
    return ids_;
  }

 private:
  void run() {
    for (long n = 0; !stopping_; ++n) {
      try {
        std::string id = app_.publish(urn_, Json::object({{"n", n}}), {.queue = queue_});
        std::lock_guard lock(mu_);
        ids_.insert(std::move(id));
      } catch (const Error& e) {
        ++failures_;
        if (!e.is_transient()) {
          std::lock_guard lock(mu_);
          permanent_.emplace_back(e.what());
        }
        std::this_thread::sleep_for(retry_pause_);
      }
    }
  }

  App app_;
  std::string queue_;
  std::string urn_;
  std::chrono::milliseconds retry_pause_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> failures_{0};
  mutable std::mutex mu_;
  std::set<std::string> ids_;
  std::vector<std::string> permanent_;
  std::thread thread_;
};

/// `App::consume(queue)` on a thread of its own over `transport`, recording the meta.id of every
/// message of `urn` it handles in `handled`, until `stop()` (which also closes the transport).
///
/// Thread-safety: `stop()` from one thread; `handled` is safe from any.
class ConsumingWorker {
 public:
  ConsumingWorker(std::shared_ptr<Transport> transport, std::string queue, const std::string& urn,
                  HandledIds& handled,
                  AppOptions options = {.poll_timeout = std::chrono::milliseconds(200),
                                        .concurrency = 2})
      : transport_(std::move(transport)), app_(transport_, std::move(options)) {
    app_.handle(urn, [&handled](Context&, const Envelope& env) {
      handled.add(std::string(env.meta().id));
      return Status();
    });
    thread_ = std::thread([this, q = std::move(queue)] { status_ = app_.consume(q); });
  }
  ~ConsumingWorker() { (void)stop(); }
  ConsumingWorker(const ConsumingWorker&) = delete;
  ConsumingWorker& operator=(const ConsumingWorker&) = delete;

  /// Stops consuming and closes the transport; the consume loop's status.
  Status stop() {
    if (thread_.joinable()) {
      app_.stop();
      thread_.join();
      transport_->close();
    }
    return status_;
  }

 private:
  std::shared_ptr<Transport> transport_;
  App app_;
  Status status_;
  std::thread thread_;
};

/// The broker-restart scenario of TRANSPORTS.md ("nothing is lost"): `server` is killed with
/// SIGKILL and restarted while a ContinuousPublisher keeps publishing envelopes of `urn` and a
/// ConsumingWorker keeps consuming them, each on a transport of its own from `open()`; a backlog
/// of 200, published (batched) before the crash and consumed only after it, must be complete,
/// publishing must resume, and every id whose publish returned ok must be handled within
/// `recover`. `Server` is a broker of the kit (`kill()`, `restart()`, `log_tail()`,
/// `started_in()`); `Open` returns a `std::shared_ptr` to a transport with `publish_batch`.
/// Prints the run's figures.
template <class Server, class Open>
void expect_broker_restart_loses_nothing(Server& server, Open open, const std::string& urn,
                                         std::chrono::steady_clock::duration recover) {
  const std::string queue = unique_queue_name();
  HandledIds handled;
  ContinuousPublisher publisher(open(), queue, urn);
  ConsumingWorker worker(open(), queue, urn, handled);
  ASSERT_TRUE(publisher.wait_for_more(100, recover)) << server.log_tail();
  ASSERT_TRUE(eventually([&] { return handled.distinct() >= 50; }, recover));

  // A backlog nobody consumes before the crash: only the broker's storage keeps it.
  const std::string backlog = unique_queue_name();
  std::set<std::string> stored;
  {
    const auto t = open();
    std::vector<std::string> bodies;
    for (int i = 0; i < 200; ++i) {
      Envelope env = make(urn, Json::object({{"i", i}}), {.queue = backlog});
      stored.insert(std::string(env.meta().id));
      bodies.push_back(encode(env));
    }
    ASSERT_TRUE(t->publish_batch(backlog, std::move(bodies)).ok());
  }

  server.kill();
  server.restart();

  HandledIds drained;
  {
    App app(open(), {.poll_timeout = std::chrono::seconds(2)});
    app.handle(urn, [&drained](Context&, const Envelope& env) {
      drained.add(std::string(env.meta().id));
      return Status();
    });
    EXPECT_TRUE(app.drain(backlog, stored.size()).status.ok());
  }
  EXPECT_TRUE(drained.missing(stored).empty()) << describe_missing(drained.missing(stored));

  ASSERT_TRUE(publisher.wait_for_more(100, recover))
      << "publishing did not resume after the restart\n"
      << server.log_tail();
  const std::set<std::string> published = publisher.stop();
  const bool all = eventually([&] { return handled.missing(published).empty(); }, recover);
  EXPECT_TRUE(all) << describe_missing(handled.missing(published));
  EXPECT_TRUE(worker.stop().ok());
  std::cout << "[ figure ] " << published.size() << " ids published, " << publisher.failures()
            << " publishes failed during the outage, " << handled.distinct()
            << " distinct ids handled; restart " << server.started_in().count() << " ms\n";
}

}  // namespace babelqueue::testing
