// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// Publisher-confirm bookkeeping of one channel in confirm mode (decision D-9): the broker numbers
// the publishes of the channel 1, 2, 3, ... and confirms them with basic.ack / basic.nack, one
// tag or (multiple) every tag up to one. A batch of publishes completes once none of its numbers
// is outstanding; it failed when any of them was nacked. Pure code, no I/O.

#include <cstdint>
#include <deque>
#include <iterator>
#include <map>
#include <utility>
#include <vector>

namespace babelqueue::amqp::detail {

// `T` is what a waiting publisher is woken with (a completion handle).
template <class T>
class ConfirmTracker {
 public:
  struct Completed {
    T waiter;
    bool nacked = false;
  };

  // Registers `count` (>= 1) publishes just written, numbered after the previous ones.
  void add(std::uint64_t count, T waiter) {
    const std::uint64_t first = next_;
    const std::uint64_t last = next_ + count - 1;
    next_ = last + 1;
    if (!outstanding_.empty() && std::prev(outstanding_.end())->second + 1 == first) {
      std::prev(outstanding_.end())->second = last;
    } else {
      outstanding_.emplace(first, last);
    }
    batches_.push_back(Batch{first, last, false, std::move(waiter)});
  }

  // basic.ack (nack = false) or basic.nack of `tag`, or of every tag up to it when `multiple`.
  // Returns the batches that completed, oldest first.
  std::vector<Completed> settle(std::uint64_t tag, bool multiple, bool nack) {
    std::vector<Completed> done;
    settle_into(tag, multiple, nack, done);
    return done;
  }
  // settle() into `done` (cleared first), whose storage a caller reuses from one confirm to the
  // next.
  void settle_into(std::uint64_t tag, bool multiple, bool nack, std::vector<Completed>& done) {
    done.clear();
    const std::uint64_t lo = multiple ? 1 : tag;
    if (nack) {
      for (Batch& b : batches_) {
        if (b.first <= tag && b.last >= lo &&
            overlaps(std::max(b.first, lo), std::min(b.last, tag)))
          b.nacked = true;
      }
    }
    erase(lo, tag);
    for (auto it = batches_.begin(); it != batches_.end();) {
      if (overlaps(it->first, it->last)) {
        ++it;
        continue;
      }
      done.push_back(Completed{std::move(it->waiter), it->nacked});
      it = batches_.erase(it);
    }
  }

  // Every waiting batch (the channel is gone: none will be confirmed); numbering restarts at 1.
  std::vector<T> reset() {
    std::vector<T> out;
    for (Batch& b : batches_)
      out.push_back(std::move(b.waiter));
    batches_.clear();
    outstanding_.clear();
    next_ = 1;
    return out;
  }

  [[nodiscard]] bool empty() const noexcept { return batches_.empty(); }

 private:
  struct Batch {
    std::uint64_t first;
    std::uint64_t last;
    bool nacked;
    T waiter;
  };

  // True when any number in [lo, hi] is outstanding.
  [[nodiscard]] bool overlaps(std::uint64_t lo, std::uint64_t hi) const {
    auto it = outstanding_.upper_bound(hi);
    if (it == outstanding_.begin()) return false;
    return std::prev(it)->second >= lo;
  }

  // Removes [lo, hi] from the outstanding intervals.
  void erase(std::uint64_t lo, std::uint64_t hi) {
    auto it = outstanding_.upper_bound(lo);
    if (it != outstanding_.begin()) --it;
    while (it != outstanding_.end() && it->first <= hi) {
      const std::uint64_t a = it->first;
      const std::uint64_t b = it->second;
      if (b < lo) {
        ++it;
        continue;
      }
      it = outstanding_.erase(it);
      if (a < lo) outstanding_.emplace(a, lo - 1);
      if (b > hi) {
        outstanding_.emplace(hi + 1, b);
        break;
      }
    }
  }

  std::uint64_t next_ = 1;
  std::map<std::uint64_t, std::uint64_t> outstanding_;  // first -> last, disjoint
  std::deque<Batch> batches_;
};

}  // namespace babelqueue::amqp::detail
