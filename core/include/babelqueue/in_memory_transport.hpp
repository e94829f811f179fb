// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/errors.hpp>
#include <babelqueue/export.hpp>
#include <babelqueue/transport.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

/// @file
/// The process-local transport (RT-5 as revised by README D-7): per-queue FIFOs in memory, a
/// blocking `pop`, delayed publishes and delayed in-place release, and inspection. For tests,
/// examples, benchmarks and single-process pipelines; nothing is persisted or shared between
/// processes.

namespace babelqueue {

/// An in-memory transport: one FIFO of ready entries plus a set of delayed entries per queue.
///
/// Behaviour (RT-5, README D-7):
/// - `publish` appends the body verbatim with empty headers; `publish_with_headers` appends it
///   with a copy of the headers (empty headers behave exactly like `publish`).
/// - `pop` removes and returns the head of the queue. Unlike the Go reference it BLOCKS until a
///   message is ready or `timeout` passes (a publish or a due delayed entry wakes it at once);
///   `timeout <= 0` never blocks. "Nothing arrived" is an empty optional, not an error.
/// - Reservations: the popped message is in flight (Inspector::stats) until it is acked or
///   released. `ack` only ends that: `pop` already removed the entry, so an unacked message is
///   never redelivered. An ack or release of a reservation already settled (or of a message this
///   transport did not deliver) changes nothing and returns ok.
/// - Releaser: `release(msg, delay)` puts the delivery back untouched (body and headers) and makes
///   it ready again after `delay`, at the tail of the FIFO at that moment.
/// - Delivery count: every entry remembers how often it was delivered before. `pop` reports
///   `delivery_count` = that number + 1, so the first delivery of a published message reports 1
///   (the App's floor `attempts = max(attempts, delivery_count - 1)` is then a no-op) and each
///   in-place release raises the next delivery's count by one (2, 3, ...), which is how released
///   retries still reach `max_attempts` (RT-3: a Releaser counts the attempt). `release` reads the
///   count from `msg.delivery_count`, which the App passes back unchanged.
/// - Ordering: FIFO among ready entries; delayed entries (DelayedPublisher, delayed releases)
///   become ready in due-time order (ties in the order they were delayed) and join the tail when
///   they fall due.
/// - `close()` is idempotent and wakes every blocked `pop`; afterwards every Transport and
///   capability call fails with ErrorCode::Closed (`ClosedError`). Stored entries are kept, so
///   the test helpers still report them after `close()`.
///
/// Capabilities: HeaderPublisher, Releaser, DelayedPublisher and Inspector.
///
/// Thread-safety: every member function is thread-safe and may be called from any thread,
/// including any number of concurrent `pop`s on the same queue (each message is delivered to
/// exactly one of them). Not copyable or movable (blocked threads refer to it). Destroying it
/// while another thread is still inside a member function is undefined behaviour.
class BABELQUEUE_EXPORT InMemoryTransport final : public Transport,
                                                  public HeaderPublisher,
                                                  public Releaser,
                                                  public DelayedPublisher,
                                                  public Inspector {
 public:
  /// A stored entry as reported by `peek_entries()`.
  struct StoredEntry {
    /// The stored body, byte for byte.
    std::string body;
    /// The headers it will be delivered with.
    Headers headers;
    /// Deliveries so far (0 for a published message); the next `pop` reports this + 1.
    std::int64_t delivery_count = 0;
    /// True while the entry waits for its delay to pass.
    bool delayed = false;
  };

  InMemoryTransport();
  /// Closes and frees the stored entries. No other thread may still be inside a member function.
  ~InMemoryTransport() override;
  InMemoryTransport(const InMemoryTransport&) = delete;
  InMemoryTransport& operator=(const InMemoryTransport&) = delete;
  InMemoryTransport(InMemoryTransport&&) = delete;
  InMemoryTransport& operator=(InMemoryTransport&&) = delete;

  /// Appends `body` to `queue` with empty headers. Fails only with ClosedError.
  Status publish(std::string_view queue, std::string body) override;

  /// Reserves and removes the head of `queue`, waiting up to `timeout` for one to be ready
  /// (`timeout <= 0`: no wait). The result has `queue` set, the stored headers and
  /// `delivery_count` >= 1. Empty optional when nothing was ready in time.
  /// Fails with ClosedError after `close()`, including for a pop that was blocked in it.
  Result<std::optional<ReceivedMessage>> pop(std::string_view queue,
                                             std::chrono::milliseconds timeout) override;

  /// Ends the reservation (the entry was removed by `pop`); a settled one is left alone. Fails
  /// only with ClosedError.
  Status ack(const ReceivedMessage& msg) override;

  /// Idempotent; wakes every blocked `pop`, which then fails with ClosedError.
  void close() override;

  /// HeaderPublisher: appends `body` with a copy of `headers`. Fails only with ClosedError.
  Status publish_with_headers(std::string_view queue, std::string body,
                              const Headers& headers) override;

  /// Releaser: ends the reservation and puts `msg` back on `msg.queue` (body and headers
  /// untouched) with its delivery count raised to `msg.delivery_count`, ready after `delay`
  /// (`<= 0`: at once, at the tail). A reservation already settled is left alone (nothing is put
  /// back). Fails only with ClosedError; never returns ReleaseUnsupported.
  Status release(const ReceivedMessage& msg, std::chrono::milliseconds delay) override;

  /// DelayedPublisher: appends `body` to `queue` (empty headers) once `delay` has passed (`<= 0`:
  /// like `publish`). Fails only with ClosedError.
  Status publish_delayed(std::string_view queue, std::string body,
                         std::chrono::milliseconds delay) override;

  /// Inspector: `ready` (entries due now), `in_flight` (reservations not yet settled), `delayed`
  /// (entries not yet due) of `queue`, and `dead_letter`, the ready count of `dead_letter_queue`
  /// (blank: `default_dead_letter_name(queue)`). `consumers` is not known (nullopt). Fails only
  /// with ClosedError.
  Result<QueueStats> stats(std::string_view queue, std::string_view dead_letter_queue) override;

  /// Inspector: up to `max` (0 = all) of the entries of `queue` that are due now, head first,
  /// with their headers, leaving them where they are. Fails only with ClosedError.
  Result<std::vector<PeekedMessage>> peek(std::string_view queue, std::size_t max) override;

  // ---- Test helpers (thread-safe; they work after close() too) ----

  /// Number of entries stored on `queue`, ready and delayed.
  [[nodiscard]] std::size_t size(std::string_view queue) const;
  /// The stored bodies of `queue` without removing them: ready ones in FIFO order, then
  /// delayed ones in due-time order.
  [[nodiscard]] std::vector<std::string> peek_all(std::string_view queue) const;
  /// Like `peek_all`, with headers, delivery counts and the delayed flag.
  [[nodiscard]] std::vector<StoredEntry> peek_entries(std::string_view queue) const;
  /// Removes every entry of `queue` (ready and delayed) and returns the bodies in `peek_all`
  /// order.
  std::vector<std::string> drain_raw(std::string_view queue);
  /// The names of the queues that hold at least one entry, sorted.
  [[nodiscard]] std::vector<std::string> queues() const;
  /// Number of `pop` calls currently blocked on `queue` (lets tests wait for a consumer to block
  /// without sleeping).
  [[nodiscard]] std::size_t blocked_pops(std::string_view queue) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace babelqueue
