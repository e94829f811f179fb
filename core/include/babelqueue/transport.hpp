// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/envelope.hpp>
#include <babelqueue/errors.hpp>
#include <babelqueue/export.hpp>
#include <babelqueue/headers.hpp>

#include <any>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

/// @file
/// The transport contract (RT-1..RT-3): the seam between the App runtime and a broker.
/// Transport methods never throw across the interface (RT-2): they return a `Status` or a
/// `Result`, whose error carries `code()` and `is_transient()`.
///
/// A transport implements `Transport` and, by multiple inheritance, the capabilities below that
/// its broker really offers; the App and the tools discover them with `dynamic_cast` (see
/// `capability<T>()`). Transport authors: see `babelqueue/spi/` for the kit.

namespace babelqueue {

/// The outcome of an operation that returns nothing: ok, or an `Error`.
///
/// Thread-safety: a value type.
// Header-only, so not BABELQUEUE_EXPORT: GCC rejects __attribute__ after [[nodiscard]] here,
// which broke every shared-library build.
class [[nodiscard]] Status {
 public:
  /// Ok.
  Status() = default;
  /// Failed with `error` (implicit, so a function can `return TransportError("...")`).
  Status(Error error) : error_(std::move(error)) {}  // NOLINT: implicit by design

  [[nodiscard]] bool ok() const noexcept { return !error_.has_value(); }
  explicit operator bool() const noexcept { return ok(); }
  /// The error; only valid when `!ok()`.
  [[nodiscard]] const Error& error() const { return *error_; }
  /// True when the error has `code`.
  [[nodiscard]] bool is(ErrorCode code) const noexcept { return error_ && error_->code() == code; }
  /// Throws the error, if any, as the class its code stands for (`throw_error`).
  void throw_if_error() const {
    if (error_) throw_error(*error_);
  }

 private:
  std::optional<Error> error_;
};

/// One reserved delivery (RT-1).
struct ReceivedMessage {
  /// The raw payload, unframed; may be invalid UTF-8.
  std::string body;
  /// The queue it was reserved from.
  std::string queue;
  /// Transport-private acknowledgement handle.
  std::any handle;
  /// Out-of-band headers; empty when none. After a deferred pop (`DeferredHeadersPop`) they are
  /// built on first use: call `build_headers()` before reading them (the App does, for its
  /// `Context` and its hooks).
  mutable Headers headers;
  /// The broker's 1-based delivery count for this reservation; 0 = not tracked.
  std::int64_t delivery_count = 0;
  /// The transport already classified the body as undecodable (Redis).
  bool poison = false;
  /// The text for the poison record's `error` when `poison` is set.
  std::string poison_reason;
  /// Empty, or a reserved route set by a transport gate (RT-40).
  std::string route;
  /// Source record key (Kafka): nullopt = null key, empty = empty key.
  std::optional<std::string> key;
  /// The body decoded by the transport when it had to decode it anyway (to classify poison):
  /// the App dispatches it in place instead of decoding `body` a second time (decode once; the
  /// App may raise its `attempts`, RT-39). Must be exactly `try_decode(body)`'s value when the
  /// message is popped; leave it empty when the transport did not decode.
  std::optional<Envelope> decoded;
  /// Set by a deferred pop: fills `out` with the message's headers (from its handle).
  /// `build_headers()` runs it once and clears it; it leaves `out` empty when it cannot build.
  mutable void (*headers_builder)(const ReceivedMessage& msg, Headers& out) noexcept = nullptr;
};

/// Builds `msg.headers` when a deferred pop left them to be built on first use; a no-op
/// otherwise. Not safe against a concurrent use of `msg` (one thread handles a message at a time).
inline void build_headers(const ReceivedMessage& msg) noexcept {
  if (msg.headers_builder != nullptr) std::exchange(msg.headers_builder, nullptr)(msg, msg.headers);
}

/// The core transport interface (RT-2).
///
/// Thread-safety (the contract every implementation states): `publish` is safe from any thread;
/// `pop` is called for a queue by one thread at a time, not always the same one (the App's
/// workers take turns, each pop happening-after the previous one), so it keeps no thread-local
/// state; `ack` and the capability methods may be called from the App's worker threads; `close`
/// is idempotent and safe from any thread.
class BABELQUEUE_EXPORT Transport {
 public:
  virtual ~Transport() = default;
  /// Appends an already-encoded body verbatim.
  virtual Status publish(std::string_view queue, std::string body) = 0;
  /// Reserves the next message, blocking at most `timeout`; nullopt when none arrived.
  virtual Result<std::optional<ReceivedMessage>> pop(std::string_view queue,
                                                     std::chrono::milliseconds timeout) = 0;
  /// Acknowledges (removes) a reserved message.
  virtual Status ack(const ReceivedMessage& msg) = 0;
  /// Releases resources; afterwards every call fails with ErrorCode::Closed. Idempotent. Work
  /// the transport still holds (pending acks, prefetched messages) is settled or given back
  /// first; a Flusher reports a failure of that through `flush()` before closing.
  virtual void close() = 0;
};

/// The capability `T` of `transport`, or nullptr when it does not have it.
template <class T>
[[nodiscard]] T* capability(Transport& transport) noexcept {
  return dynamic_cast<T*>(&transport);
}

/// Capability: a pop that may leave `ReceivedMessage::headers` to be built on first use
/// (`headers_builder`), for a caller that reads them only after `build_headers()`. The App pops
/// through it (a handler that never reads the headers does not pay for them); otherwise exactly
/// `Transport::pop`.
class BABELQUEUE_EXPORT DeferredHeadersPop {
 public:
  virtual ~DeferredHeadersPop() = default;
  virtual Result<std::optional<ReceivedMessage>> pop_deferring_headers(
      std::string_view queue, std::chrono::milliseconds timeout) = 0;
};

/// Capability: carry headers beside the body (RT-3).
class BABELQUEUE_EXPORT HeaderPublisher {
 public:
  virtual ~HeaderPublisher() = default;
  virtual Status publish_with_headers(std::string_view queue, std::string body,
                                      const Headers& headers) = 0;
};

/// Capability: append many bodies to one queue in few broker round trips (RT-3 extension).
/// Bodies keep their order; on error an unknown prefix of them may have been appended.
class BABELQUEUE_EXPORT BatchPublisher {
 public:
  virtual ~BatchPublisher() = default;
  virtual Status publish_batch(std::string_view queue, std::vector<std::string> bodies) = 0;
};

/// Capability: give a reservation back in place, redelivered after `delay` (RT-3). Returns
/// ErrorCode::ReleaseUnsupported when this message cannot be released in place; a Releaser counts
/// the attempt itself (delivery_count or the stored body).
class BABELQUEUE_EXPORT Releaser {
 public:
  virtual ~Releaser() = default;
  virtual Status release(const ReceivedMessage& msg, std::chrono::milliseconds delay) = 0;
};

/// Capability: hand an unacked delivery back for prompt redelivery (RT-3).
class BABELQUEUE_EXPORT Rewinder {
 public:
  virtual ~Rewinder() = default;
  virtual Status rewind(const ReceivedMessage& msg) = 0;
};

/// Capability: publish carrying the source record's key (RT-3, RT-35).
class BABELQUEUE_EXPORT KeyedRepublisher {
 public:
  virtual ~KeyedRepublisher() = default;
  virtual Status republish(std::string_view queue, std::string body,
                           const ReceivedMessage& source) = 0;
};

/// Capability: a reservation-gated dead-letter write that also acknowledges (RT-3, RT-36).
class BABELQUEUE_EXPORT DeadLetterer {
 public:
  virtual ~DeadLetterer() = default;
  virtual Status dead_letter(const ReceivedMessage& msg, std::string_view dead_letter_queue,
                             std::string body) = 0;
};

/// Capability: leave the message to the broker's own dead-letter mechanism (ADR-0037). No ack.
class BABELQUEUE_EXPORT BrokerDeadLetter {
 public:
  virtual ~BrokerDeadLetter() = default;
  virtual Status hand_to_broker(const ReceivedMessage& msg, std::string_view why) = 0;
};

/// Capability: publish a body that becomes visible after `delay` (Redis Laravel layout `:delayed`,
/// RabbitMQ TTL holding queues, SQS DelaySeconds, ...). A delay <= 0 publishes at once.
///
/// Thread-safety: as `Transport::publish`.
class BABELQUEUE_EXPORT DelayedPublisher {
 public:
  virtual ~DelayedPublisher() = default;
  virtual Status publish_delayed(std::string_view queue, std::string body,
                                 std::chrono::milliseconds delay) = 0;
};

/// Capability: send what the transport batched (pipelined acks, commits) now; the first error.
/// `close()` flushes too but cannot report a failure: call `flush()` first when it matters.
///
/// Thread-safety: safe from any thread.
class BABELQUEUE_EXPORT Flusher {
 public:
  virtual ~Flusher() = default;
  virtual Status flush() = 0;
};

/// Counts of one queue as the broker reports them; a figure the broker does not have is nullopt.
struct QueueStats {
  /// Ready to be delivered.
  std::optional<std::int64_t> ready;
  /// Delivered and not yet settled.
  std::optional<std::int64_t> in_flight;
  /// Scheduled for later (delayed publishes and releases).
  std::optional<std::int64_t> delayed;
  /// Records in the queue's dead-letter queue.
  std::optional<std::int64_t> dead_letter;
  /// Consumers attached, where the broker knows it.
  std::optional<std::int64_t> consumers;
  /// Broker-specific figures, in display order (e.g. per-partition offsets and lag).
  std::vector<std::pair<std::string, std::string>> details;
};

/// One message read by `Inspector::peek`: what a consumer would receive.
struct PeekedMessage {
  /// The raw payload, unframed.
  std::string body;
  /// Its out-of-band headers; empty when none.
  Headers headers;
};

/// Capability: look at a queue without consuming from it (`babelqueue queue stats`, `dlq list`).
///
/// Thread-safety: safe from any thread.
class BABELQUEUE_EXPORT Inspector {
 public:
  virtual ~Inspector() = default;
  /// The counts of `queue`; `dead_letter_queue` names its dead-letter queue (blank: the default
  /// name, `default_dead_letter_name`).
  virtual Result<QueueStats> stats(std::string_view queue, std::string_view dead_letter_queue) = 0;
  /// Up to `max` (0 = all) messages of `queue`, head first, leaving every one where it is.
  virtual Result<std::vector<PeekedMessage>> peek(std::string_view queue, std::size_t max) = 0;
};

/// Capability: re-write a delivery to the queue it was read from exactly as it was (original
/// bytes, the original out-of-band headers verbatim and the original record key), as a redrive
/// restore needs it (05 KFK-15; C++ decision). Without it, `redrive` restores through
/// KeyedRepublisher, HeaderPublisher or plain `publish` (see `redrive`).
///
/// Thread-safety: as `Transport::publish`.
class BABELQUEUE_EXPORT Restorer {
 public:
  virtual ~Restorer() = default;
  /// Writes `source.body` with `source.headers` and `source.key` back to `source.queue`.
  virtual Status restore(const ReceivedMessage& source) = 0;
  /// True when `restore(source)` puts the delivery itself back instead of writing a copy (a
  /// queue that takes no writes: a Service Bus `$DeadLetterQueue` message is abandoned in place);
  /// the delivery is then settled, and the caller must not acknowledge it.
  [[nodiscard]] virtual bool restores_in_place(const ReceivedMessage& /*source*/) const {
    return false;
  }
};

/// The dead-letter suffix of RT-7 when neither the App nor the transport names another.
inline constexpr std::string_view DEFAULT_DEAD_LETTER_SUFFIX = ".dlq";

/// `queue` + `.dlq` (RT-7): the one default dead-letter queue name.
[[nodiscard]] inline std::string default_dead_letter_name(std::string_view queue) {
  std::string name(queue);
  name += DEFAULT_DEAD_LETTER_SUFFIX;
  return name;
}

/// Capability: a transport-specific default dead-letter queue name (RT-7).
class BABELQUEUE_EXPORT DeadLetterNaming {
 public:
  virtual ~DeadLetterNaming() = default;
  /// `explicit_suffix` is set only when the App's dead_letter_suffix was given explicitly.
  [[nodiscard]] virtual std::string dead_letter_name(
      std::string_view source_queue, std::optional<std::string_view> explicit_suffix) const = 0;
};

}  // namespace babelqueue
