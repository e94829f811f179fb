// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/errors.hpp>
#include <babelqueue/export.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/log.hpp>
#include <babelqueue/transport.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

/// @file
/// The App runtime (spec/02-runtime.md): handlers by URN, publish, and a consumer loop that
/// retries, dead-letters, handles poison bodies and the schema-version gate (RT-30, D1..D22).

namespace babelqueue {

/// What the App does with a message whose URN has no handler (RT-6).
enum class UnknownUrnStrategy { Fail, Delete, Release, DeadLetter };

/// Parses the wire spelling (`fail`, `delete`, `release`, `dead_letter`).
/// @throws ConfigError for anything else (C++ decision, RT-6).
BABELQUEUE_EXPORT UnknownUrnStrategy parse_unknown_urn_strategy(std::string_view text);
/// The wire spelling of a strategy.
BABELQUEUE_EXPORT std::string_view to_string(UnknownUrnStrategy strategy) noexcept;

/// The header a redrive stamps on replays (HLP-25).
inline constexpr std::string_view REPLAY_BYPASS_HEADER = "bq-replay-bypass";

/// What a handler sees besides the envelope (RT-13).
///
/// Thread-safety: owned by one dispatch; not shared.
class BABELQUEUE_EXPORT Context {
 public:
  Context(const ReceivedMessage& message, const std::atomic<bool>& stopping) noexcept
      : message_(message), stopping_(stopping) {}
  /// The out-of-band headers of the delivery (empty when none).
  [[nodiscard]] const Headers& headers() const noexcept {
    build_headers(message_);
    return message_.headers;
  }
  /// True iff the `bq-replay-bypass` header is present and non-empty (HLP-25).
  [[nodiscard]] bool is_replay() const noexcept;
  /// True once `App::stop()` was called: long handlers may return early.
  [[nodiscard]] bool stop_requested() const noexcept {
    return stopping_.load(std::memory_order_relaxed);
  }
  /// The delivery itself (queue, delivery count, raw body).
  [[nodiscard]] const ReceivedMessage& message() const noexcept {
    build_headers(message_);
    return message_;
  }

 private:
  const ReceivedMessage& message_;
  const std::atomic<bool>& stopping_;
};

/// Runs `effect` unless the delivery is a bypassed replay (HLP-25); returns its status.
BABELQUEUE_EXPORT Status bypass_external_effects(const Context& ctx,
                                                 const std::function<Status()>& effect);

/// A handler: OK acks; an error Status, a thrown std::exception or any thrown value is a
/// handler error (RT-12) that leads to a retry or the dead-letter queue.
using Handler = std::function<Status(Context&, const Envelope&)>;

/// App options and their defaults (RT-6), checked by a test against the Go reference.
struct AppOptions {
  /// Queue for publish and consume when none is given.
  std::string default_queue = "default";
  /// Deliveries before dead-letter/drop: retry while attempts + 1 < max (<= 1: no retry).
  int max_attempts = 3;
  UnknownUrnStrategy unknown_urn = UnknownUrnStrategy::Fail;
  /// Dead-letter exhausted messages; also turns on poison / version-gate dead-lettering.
  bool dead_letter = false;
  /// Explicit dead-letter queue name (wins over the suffix and the transport's naming).
  std::string dead_letter_queue = {};
  /// Dead-letter queue = consumed queue + suffix; nullopt means the default ".dlq" (or the
  /// transport's DeadLetterNaming default, RT-7).
  std::optional<std::string> dead_letter_suffix = std::nullopt;
  /// Timeout passed to `pop`.
  std::chrono::milliseconds poll_timeout{1000};
  /// Delay of an in-place release on retry (Releaser transports only).
  std::chrono::milliseconds retry_backoff{0};
  /// Delay for the `release` unknown-URN strategy (Releaser transports only).
  std::chrono::milliseconds unknown_urn_release_delay{0};
  /// Wait after a Rewind so the broker does not hot-loop.
  std::chrono::milliseconds rewind_pause{1000};
  /// Workers of one consume loop (decision D-4); < 1 is a ConfigError. The calling thread is one
  /// of them; they take turns to pop (never two pops at once) and each dispatches what it popped,
  /// so up to N handlers run at once and at most N messages are popped-but-unfinished. The pool
  /// pays for itself: while handlers are short (a few microseconds) one worker pops and the
  /// others stay parked, since handing the pop turn between cores would cost more than it gives;
  /// longer handlers bring the others in, and a parked worker takes over within milliseconds
  /// when the active ones are all busy in long handlers. `drain` always dispatches on the
  /// calling thread, one message at a time.
  int concurrency = 1;
  /// Observe a failed ack (the message is not retried).
  std::function<void(const ReceivedMessage&, const Error&)> on_ack_error = {};
  /// Observe a failed in-place release or retry/release republish.
  std::function<void(const ReceivedMessage&, const Error&)> on_release_error = {};
  /// Observe a failed dead-letter write.
  std::function<void(const ReceivedMessage&, const Error&)> on_dead_letter_error = {};
  /// Observe a transient pop error that consume rides out, with the wait before the next try.
  std::function<void(const Error&, std::chrono::milliseconds backoff)> on_consume_error = {};
  /// Where the App logs; empty = `default_logger` (warnings and errors to stderr).
  Logger logger = {};
};

/// Options of `App::publish`.
struct PublishOptions {
  /// Target queue; blank means the App's default queue.
  std::string_view queue = {};
  /// Continue this trace; blank mints a new one.
  std::string_view trace_id = {};
};

/// What `drain` did: the number of dispatched messages and how it ended (ok also after `stop()`).
struct DrainResult {
  std::size_t count = 0;
  Status status;
};

/// The BabelQueue App: routes messages by URN to handlers over any Transport.
///
/// Thread-safety: register handlers with `handle()` before consuming (registration is not
/// synchronised with dispatch). `publish*` are safe from any thread. Call `consume`/`drain` from
/// one thread per queue; with `concurrency` N > 1 up to N handlers run at once (N - 1 threads of
/// the App's own besides the caller). `stop()` may be called from any thread (and from a signal
/// handler through a flag that calls it); in-flight handlers finish and settle, and `consume`
/// returns within one poll timeout (a parked worker notices within 5 ms). Not copyable or
/// movable.
///
/// Stop is not an error (C++ decision, issue 8; RT-14/RT-16 return Cancelled): after `stop()`,
/// `consume`/`run` return an ok Status and `drain` an ok status with the count so far. An error
/// Status always means the loop could not go on (a non-transient pop error such as ConfigError,
/// or Closed after the transport was closed).
///
/// Logging: nothing on the happy path. Every message dropped by configuration (decision rows D6,
/// D8, D13, D18, D21 of RT-31) logs exactly one Warning
/// `dropped a message from queue "<q>" (meta.id "<id>"): <why>` (the meta.id part only when the
/// body was decoded and has one), then is acknowledged.
class BABELQUEUE_EXPORT App {
 public:
  /// @throws ConfigError for invalid options (concurrency < 1, a null transport).
  explicit App(std::shared_ptr<Transport> transport, AppOptions options = {});
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;
  App(App&&) = delete;
  App& operator=(App&&) = delete;

  /// Registers `handler` for the trimmed `urn`; the last registration wins (RT-11).
  /// @throws Error(ErrorCode::Usage) for a blank URN.
  void handle(std::string_view urn, Handler handler);
  /// Convenience overload for handlers that return void and fail by throwing.
  template <class F>
  requires(std::is_invocable_r_v<void, F&, Context&, const Envelope&> &&
           !std::is_convertible_v<F, Handler>) void handle(std::string_view urn, F handler) {
    handle(urn, Handler([h = std::move(handler)](Context& ctx, const Envelope& env) mutable {
             h(ctx, env);
             return Status{};
           }));
  }

  /// Registers `handler` for every URN that has no handler of its own, before the unknown-URN
  /// strategy applies (for generic workers such as `babelqueue work`). Identity-less bodies and
  /// the schema-version gate still follow RT-30. The last registration wins.
  /// @throws Error(ErrorCode::Usage) for an empty handler.
  void handle_any(Handler handler);

  /// Builds, encodes and publishes an envelope (RT-9); returns its meta.id.
  /// @throws Error (EmptyUrn, Encode, or the transport's error).
  std::string publish(std::string_view urn, Json data = Json(JsonObject{}),
                      const PublishOptions& options = {});
  /// Like publish, plus out-of-band headers when the transport is a HeaderPublisher (RT-10).
  std::string publish_with_headers(std::string_view urn, Json data, const Headers& headers,
                                   const PublishOptions& options = {});

  /// Consumes `queue` (default queue when empty) until `stop()`; rides out transient pop errors
  /// with backoff (D-3: 100 ms doubling to 5 s, `stop()` ends the wait). Returns ok after
  /// `stop()`, or the first non-transient pop error once every in-flight handler has settled.
  /// Rethrows an exception that escaped the transport's `pop` (which breaks RT-2), likewise.
  Status consume(std::string_view queue = {});
  /// `consume()` on the default queue (RT-15).
  Status run() { return consume(); }
  /// Processes up to `max` messages (0 = unlimited) or until `pop` returns none or `stop()`
  /// (RT-16); a pop error ends it with that error and the count so far.
  DrainResult drain(std::string_view queue = {}, std::size_t max = 0);
  /// Dispatches one already-reserved delivery (RT-30); for custom consume loops and tests.
  /// Uses `msg.decoded` when set instead of decoding `msg.body` again.
  void dispatch(ReceivedMessage msg);

  /// Asks every consume/drain loop to return; safe from any thread. Sticky.
  void stop() noexcept;
  [[nodiscard]] bool stopping() const noexcept { return stopping_.load(std::memory_order_relaxed); }

  /// The dead-letter queue name for a delivery consumed from `queue` (RT-7).
  [[nodiscard]] std::string dead_letter_queue_for(std::string_view queue) const;
  [[nodiscard]] const AppOptions& options() const noexcept { return options_; }
  [[nodiscard]] const std::shared_ptr<Transport>& transport() const noexcept { return transport_; }

 private:
  class Impl;
  std::shared_ptr<Transport> transport_;
  AppOptions options_;
  std::atomic<bool> stopping_{false};
  std::unique_ptr<Impl> impl_;
};

}  // namespace babelqueue
