// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/in_memory_transport.hpp>

#include <algorithm>
#include <any>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace babelqueue {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// One stored message. `deliveries` counts the deliveries so far (0 = never delivered). Headers
// live behind a pointer that is null when there are none: most entries have none, and this keeps
// an entry at 48 bytes instead of 88.
struct Entry {
  std::string body;
  std::unique_ptr<Headers> headers;
  std::int64_t deliveries = 0;
};

std::unique_ptr<Headers> copy_headers(const Headers& headers) {
  return headers.empty() ? nullptr : std::make_unique<Headers>(headers);
}

Headers headers_of(const Entry& e) {
  return e.headers ? *e.headers : Headers{};
}

// An entry waiting for its delay; `seq` keeps entries with the same due time in delay order.
struct Delayed {
  Clock::time_point due;
  std::uint64_t seq = 0;
  Entry entry;
};

// Heap order for a min-heap on (due, seq) with the std heap algorithms (which build max-heaps).
struct DueLater {
  bool operator()(const Delayed& a, const Delayed& b) const noexcept {
    return a.due != b.due ? a.due > b.due : a.seq > b.seq;
  }
};

// The handle of a delivery. Ids come from one process-wide counter, so a message from another
// InMemoryTransport never matches a reservation of this one.
struct Reservation {
  std::uint64_t id = 0;
};

std::atomic<std::uint64_t> next_reservation{1};

// std::deque rather than a growing ring: it never moves entries, and the blocks it frees while a
// queue drains are reused from the allocator's free lists by the next burst (a doubling ring
// buffer paid for fresh, zeroed pages on every growth and ran publish ~6x slower).
struct Queue {
  std::deque<Entry> ready;
  std::vector<Delayed> delayed;  // a heap ordered by DueLater: front() is due first
  // Ids of the deliveries not yet acked or released, ascending (pop appends a new, larger id);
  // settlement mostly takes the front, in delivery order.
  std::deque<std::uint64_t> reserved;
  std::size_t waiters = 0;  // pops blocked on `cv`
  std::condition_variable cv;
};

// Transparent hash so lookups by string_view do not build a std::string.
struct NameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view name) const noexcept {
    return std::hash<std::string_view>{}(name);
  }
};

// `now + delay` without overflowing: a delay past the clock's range saturates at max().
Clock::time_point deadline_after(Clock::time_point now, milliseconds delay) {
  const auto room = std::chrono::duration_cast<milliseconds>(Clock::time_point::max() - now);
  if (delay >= room) return Clock::time_point::max();
  return now + std::chrono::duration_cast<Clock::duration>(delay);
}

// Moves every due delayed entry to the tail of the ready FIFO, in due-time order.
void promote_due(Queue& q, Clock::time_point now) {
  while (!q.delayed.empty() && q.delayed.front().due <= now) {
    std::pop_heap(q.delayed.begin(), q.delayed.end(), DueLater{});
    q.ready.push_back(std::move(q.delayed.back().entry));
    q.delayed.pop_back();
  }
}

// The delayed entries of `q` in due-time order.
std::vector<const Delayed*> delayed_in_order(const Queue& q) {
  std::vector<const Delayed*> out;
  out.reserve(q.delayed.size());
  for (const Delayed& d : q.delayed) {
    out.push_back(&d);
  }
  std::sort(out.begin(), out.end(),
            [](const Delayed* a, const Delayed* b) { return DueLater{}(*b, *a); });
  return out;
}

}  // namespace

struct InMemoryTransport::Impl {
  // Guards everything below.
  mutable std::mutex mu;
  bool closed = false;
  std::uint64_t next_seq = 0;
  // Queues are never erased, so a Queue& stays valid after the lock is released (node-based
  // map: rehashing does not move elements).
  std::unordered_map<std::string, Queue, NameHash, std::equal_to<>> queues;

  Queue* find(std::string_view name) {
    const auto it = queues.find(name);
    return it == queues.end() ? nullptr : &it->second;
  }
  const Queue* find(std::string_view name) const {
    const auto it = queues.find(name);
    return it == queues.end() ? nullptr : &it->second;
  }
  Queue& get(std::string_view name) {
    if (Queue* q = find(name)) return *q;
    return queues.try_emplace(std::string(name)).first->second;
  }

  // Ends the reservation of `msg`; false when there is none (settled already, or not ours).
  bool settle(const ReceivedMessage& msg) {
    const auto* reservation = std::any_cast<Reservation>(&msg.handle);
    if (reservation == nullptr) return false;
    Queue* q = find(msg.queue);
    if (q == nullptr) return false;
    const auto it = std::lower_bound(q->reserved.begin(), q->reserved.end(), reservation->id);
    if (it == q->reserved.end() || *it != reservation->id) return false;
    q->reserved.erase(it);
    return true;
  }

  // Stores `entry`; a release passes the delivery it settles in `released` and stores nothing
  // when that reservation was settled already.
  Status enqueue(std::string_view queue, Entry&& entry, milliseconds delay,
                 const ReceivedMessage* released = nullptr) {
    std::unique_lock lock(mu);
    if (closed) return ClosedError();
    if (released != nullptr && !settle(*released)) return {};
    Queue& q = get(queue);
    bool wake = false;
    if (delay <= milliseconds::zero()) {
      // Entries that fell due before this one was published go ahead of it.
      if (!q.delayed.empty()) promote_due(q, Clock::now());
      q.ready.push_back(std::move(entry));
      wake = q.waiters > 0;
    } else {
      const auto due = deadline_after(Clock::now(), delay);
      // A new earliest due time must reach a blocked pop, which waits only until the old one.
      wake = q.waiters > 0 && (q.delayed.empty() || due < q.delayed.front().due);
      q.delayed.push_back(Delayed{due, next_seq++, std::move(entry)});
      std::push_heap(q.delayed.begin(), q.delayed.end(), DueLater{});
    }
    lock.unlock();
    if (wake) q.cv.notify_one();
    return {};
  }
};

InMemoryTransport::InMemoryTransport() : impl_(std::make_unique<Impl>()) {}

InMemoryTransport::~InMemoryTransport() {
  close();
}

Status InMemoryTransport::publish(std::string_view queue, std::string body) {
  return impl_->enqueue(queue, Entry{std::move(body), {}, 0}, milliseconds::zero());
}

Status InMemoryTransport::publish_with_headers(std::string_view queue, std::string body,
                                               const Headers& headers) {
  return impl_->enqueue(queue, Entry{std::move(body), copy_headers(headers), 0},
                        milliseconds::zero());
}

Status InMemoryTransport::publish_delayed(std::string_view queue, std::string body,
                                          milliseconds delay) {
  return impl_->enqueue(queue, Entry{std::move(body), {}, 0}, delay);
}

Status InMemoryTransport::release(const ReceivedMessage& msg, milliseconds delay) {
  // The delivery being released is msg.delivery_count; the next one reports that + 1.
  return impl_->enqueue(
      msg.queue,
      Entry{msg.body, copy_headers(msg.headers), std::max<std::int64_t>(msg.delivery_count, 0)},
      delay, &msg);
}

Result<std::optional<ReceivedMessage>> InMemoryTransport::pop(std::string_view queue,
                                                              milliseconds timeout) {
  Impl& s = *impl_;
  std::unique_lock lock(s.mu);
  if (s.closed) return ClosedError();
  Queue* q = s.find(queue);
  if (q != nullptr && !q->delayed.empty()) promote_due(*q, Clock::now());
  if (q == nullptr || q->ready.empty()) {
    if (timeout <= milliseconds::zero()) return std::optional<ReceivedMessage>();
    if (q == nullptr) q = &s.get(queue);
    const auto deadline = deadline_after(Clock::now(), timeout);
    for (;;) {
      auto wake = deadline;
      if (!q->delayed.empty()) wake = std::min(wake, q->delayed.front().due);
      ++q->waiters;
      if (wake == Clock::time_point::max()) {
        q->cv.wait(lock);
      } else {
        q->cv.wait_until(lock, wake);
      }
      --q->waiters;
      if (s.closed) return ClosedError();
      const auto now = Clock::now();
      if (!q->delayed.empty()) promote_due(*q, now);
      if (!q->ready.empty()) break;
      if (now >= deadline) return std::optional<ReceivedMessage>();
    }
  }
  Entry entry = std::move(q->ready.front());
  q->ready.pop_front();
  const std::uint64_t id = next_reservation.fetch_add(1, std::memory_order_relaxed);
  q->reserved.push_back(id);
  // notify_one may have picked this thread for work another pop could also do (a second ready
  // entry, or a delayed entry whose due time only this thread was waiting for): pass it on.
  const bool pass_on = q->waiters > 0 && (!q->ready.empty() || !q->delayed.empty());
  lock.unlock();
  if (pass_on) q->cv.notify_one();

  Result<std::optional<ReceivedMessage>> out{std::optional<ReceivedMessage>()};
  ReceivedMessage& m = out.value().emplace();
  m.body = std::move(entry.body);
  m.queue.assign(queue);
  if (entry.headers) m.headers = std::move(*entry.headers);
  m.delivery_count = entry.deliveries + 1;
  m.handle = Reservation{id};
  return out;
}

Status InMemoryTransport::ack(const ReceivedMessage& msg) {
  const std::lock_guard lock(impl_->mu);
  if (impl_->closed) return ClosedError();
  impl_->settle(msg);
  return {};
}

void InMemoryTransport::close() {
  Impl& s = *impl_;
  const std::lock_guard lock(s.mu);
  if (s.closed) return;
  s.closed = true;
  for (auto& [name, q] : s.queues) {
    if (q.waiters > 0) q.cv.notify_all();
  }
}

Result<QueueStats> InMemoryTransport::stats(std::string_view queue,
                                            std::string_view dead_letter_queue) {
  const std::string dlq =
      dead_letter_queue.empty() ? default_dead_letter_name(queue) : std::string(dead_letter_queue);
  const std::lock_guard lock(impl_->mu);
  if (impl_->closed) return ClosedError();
  const auto now = Clock::now();
  const auto count = [](std::size_t n) { return static_cast<std::int64_t>(n); };
  QueueStats out{0, 0, 0, 0, std::nullopt, {}};
  if (Queue* q = impl_->find(queue)) {
    promote_due(*q, now);
    out.ready = count(q->ready.size());
    out.in_flight = count(q->reserved.size());
    out.delayed = count(q->delayed.size());
  }
  if (Queue* d = impl_->find(dlq)) {
    promote_due(*d, now);
    out.dead_letter = count(d->ready.size());
  }
  return out;
}

Result<std::vector<PeekedMessage>> InMemoryTransport::peek(std::string_view queue,
                                                           std::size_t max) {
  std::vector<PeekedMessage> out;
  const std::lock_guard lock(impl_->mu);
  if (impl_->closed) return ClosedError();
  Queue* q = impl_->find(queue);
  if (q == nullptr) return out;
  promote_due(*q, Clock::now());
  const std::size_t n = max == 0 ? q->ready.size() : std::min(max, q->ready.size());
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(PeekedMessage{q->ready[i].body, headers_of(q->ready[i])});
  }
  return out;
}

std::size_t InMemoryTransport::size(std::string_view queue) const {
  const std::lock_guard lock(impl_->mu);
  const Queue* q = impl_->find(queue);
  return q == nullptr ? 0 : q->ready.size() + q->delayed.size();
}

std::vector<InMemoryTransport::StoredEntry> InMemoryTransport::peek_entries(
    std::string_view queue) const {
  std::vector<StoredEntry> out;
  const std::lock_guard lock(impl_->mu);
  const Queue* q = impl_->find(queue);
  if (q == nullptr) return out;
  out.reserve(q->ready.size() + q->delayed.size());
  for (const Entry& e : q->ready) {
    out.push_back(StoredEntry{e.body, headers_of(e), e.deliveries, false});
  }
  for (const Delayed* d : delayed_in_order(*q)) {
    out.push_back(StoredEntry{d->entry.body, headers_of(d->entry), d->entry.deliveries, true});
  }
  return out;
}

std::vector<std::string> InMemoryTransport::peek_all(std::string_view queue) const {
  std::vector<std::string> out;
  const std::lock_guard lock(impl_->mu);
  const Queue* q = impl_->find(queue);
  if (q == nullptr) return out;
  out.reserve(q->ready.size() + q->delayed.size());
  for (const Entry& e : q->ready) {
    out.push_back(e.body);
  }
  for (const Delayed* d : delayed_in_order(*q)) {
    out.push_back(d->entry.body);
  }
  return out;
}

std::vector<std::string> InMemoryTransport::drain_raw(std::string_view queue) {
  std::vector<std::string> out;
  const std::lock_guard lock(impl_->mu);
  Queue* q = impl_->find(queue);
  if (q == nullptr) return out;
  out.reserve(q->ready.size() + q->delayed.size());
  for (Entry& e : q->ready) {
    out.push_back(std::move(e.body));
  }
  q->ready.clear();
  std::sort(q->delayed.begin(), q->delayed.end(),
            [](const Delayed& a, const Delayed& b) { return DueLater{}(b, a); });
  for (Delayed& d : q->delayed) {
    out.push_back(std::move(d.entry.body));
  }
  q->delayed.clear();
  return out;
}

std::vector<std::string> InMemoryTransport::queues() const {
  std::vector<std::string> out;
  {
    const std::lock_guard lock(impl_->mu);
    for (const auto& [name, q] : impl_->queues) {
      if (!q.ready.empty() || !q.delayed.empty()) out.push_back(name);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::size_t InMemoryTransport::blocked_pops(std::string_view queue) const {
  const std::lock_guard lock(impl_->mu);
  const Queue* q = impl_->find(queue);
  return q == nullptr ? 0 : q->waiters;
}

}  // namespace babelqueue
