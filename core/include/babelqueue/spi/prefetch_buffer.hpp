// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

/// @file
/// Transport kit: messages a transport reserved ahead of `pop` (one round trip fetching many),
/// kept per queue, handed out in order, and given back to the broker on close.

namespace babelqueue::spi {

/// Per-queue FIFOs of prefetched items of type `T` (usually ReceivedMessage).
///
/// Thread-safety: every member is safe from any thread.
template <class T>
class PrefetchBuffer {
 public:
  /// Appends `items` to `queue`'s FIFO, in order.
  void put(std::string_view queue, std::vector<T> items) {
    if (items.empty()) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto& fifo = fifo_for(queue);
    for (auto& item : items)
      fifo.push_back(std::move(item));
  }
  /// The oldest item of `queue`, if any.
  std::optional<T> take(std::string_view queue) {
    std::optional<T> out;  // the one return object, so the copy is elided (NRVO)
    std::lock_guard<std::mutex> lock(mu_);
    auto it = queues_.find(queue);
    if (it != queues_.end() && !it->second.empty()) {
      out.emplace(std::move(it->second.front()));
      it->second.pop_front();
    }
    return out;
  }
  /// Removes and returns every item, queue by queue, each FIFO oldest first: what `close()`
  /// gives back to the broker.
  std::vector<std::pair<std::string, std::vector<T>>> take_all() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::pair<std::string, std::vector<T>>> out;
    for (auto& [queue, fifo] : queues_) {
      if (fifo.empty()) continue;
      std::vector<T> items;
      items.reserve(fifo.size());
      for (auto& item : fifo)
        items.push_back(std::move(item));
      fifo.clear();
      out.emplace_back(queue, std::move(items));
    }
    return out;
  }
  [[nodiscard]] std::size_t size(std::string_view queue) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = queues_.find(queue);
    return it == queues_.end() ? 0 : it->second.size();
  }

 private:
  std::deque<T>& fifo_for(std::string_view queue) {
    auto it = queues_.find(queue);
    if (it == queues_.end()) it = queues_.emplace(std::string(queue), std::deque<T>{}).first;
    return it->second;
  }

  mutable std::mutex mu_;
  std::map<std::string, std::deque<T>, std::less<>> queues_;
};

}  // namespace babelqueue::spi
