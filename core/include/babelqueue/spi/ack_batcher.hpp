// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <cstddef>
#include <deque>
#include <iterator>
#include <mutex>
#include <utility>
#include <vector>

/// @file
/// Transport kit: settlements (acks, deletes, commits) collected so that one broker round trip
/// carries many (Redis pipelined acks, SQS DeleteMessageBatch, Kafka commits).

namespace babelqueue::spi {

/// A FIFO of pending settlements of type `T` with a flush threshold.
///
/// The owner `add`s settlements; once `add` reports the threshold (or before its next round
/// trip, or at flush/close) it `take`s them, sends them, and on a failed send `restore`s the ones
/// that were not sent, ahead of any added meanwhile, so order is kept and nothing is dropped.
///
/// Thread-safety: every member is safe from any thread.
template <class T>
class AckBatcher {
 public:
  /// `flush_at` >= 1: `add` returns true once this many are pending.
  explicit AckBatcher(std::size_t flush_at) : flush_at_(flush_at == 0 ? 1 : flush_at) {}

  /// Queues one settlement; true when the pending count reached `flush_at`.
  bool add(T item) {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.push_back(std::move(item));
    return pending_.size() >= flush_at_;
  }
  /// Every pending settlement, oldest first; the batcher is empty afterwards.
  std::vector<T> take() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<T> out(std::make_move_iterator(pending_.begin()),
                       std::make_move_iterator(pending_.end()));
    pending_.clear();
    return out;
  }
  /// Puts `items` (a suffix of what `take` returned that was not sent) back in front.
  void restore(std::vector<T> items) {
    if (items.empty()) return;
    std::lock_guard<std::mutex> lock(mu_);
    pending_.insert(pending_.begin(), std::make_move_iterator(items.begin()),
                    std::make_move_iterator(items.end()));
  }
  /// Takes everything and hands it to `send(std::vector<T>&)`, which returns a Status-like
  /// value (with `ok()`) and leaves in the vector what it did NOT send; on failure that rest is
  /// restored. Returns what `send` returned; with nothing pending, `send` is not called and a
  /// default-constructed (ok) value is returned.
  template <class Send>
  auto flush(Send&& send) -> decltype(send(std::declval<std::vector<T>&>())) {
    std::vector<T> batch = take();
    if (batch.empty()) return {};
    auto status = send(batch);
    if (!status.ok()) restore(std::move(batch));
    return status;
  }
  [[nodiscard]] std::size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return pending_.size();
  }
  [[nodiscard]] bool empty() const { return size() == 0; }
  [[nodiscard]] std::size_t flush_at() const noexcept { return flush_at_; }

 private:
  const std::size_t flush_at_;
  mutable std::mutex mu_;
  std::deque<T> pending_;
};

}  // namespace babelqueue::spi
