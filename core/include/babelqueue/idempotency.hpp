// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/app.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/errors.hpp>
#include <babelqueue/export.hpp>

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>

/// @file
/// Optional consumer-side dedupe keyed on `meta.id` (ADR-0022, 02-runtime HLP-1..HLP-4): collapses
/// at-least-once redeliveries into one effect per message. Seen-set, post-success dedupe: it is
/// neither exactly-once delivery nor an in-flight lock (two concurrent deliveries of one id may
/// both run). The envelope is never touched.

namespace babelqueue::idempotency {

/// A record of message ids that were processed successfully (HLP-1). Production backends (Redis,
/// PostgreSQL) implement the same three calls; each may throw (e.g. `TransportError`).
///
/// Thread-safety: implementations MUST be safe to call from several threads at once.
class BABELQUEUE_EXPORT Store {
 public:
  virtual ~Store() = default;

  /// True when `id` was remembered (and not forgotten or expired).
  [[nodiscard]] virtual bool seen(std::string_view id) = 0;
  /// Records `id` as processed.
  virtual void remember(std::string_view id) = 0;
  /// Drops `id` (manual replay); a no-op when it is not recorded.
  virtual void forget(std::string_view id) = 0;

 protected:
  Store() = default;
  Store(const Store&) = default;
  Store& operator=(const Store&) = default;
  Store(Store&&) = default;
  Store& operator=(Store&&) = default;
};

/// A process-local store: a set of ids behind a mutex. For tests and single-process consumers;
/// not shared across workers, not persistent, never expires ids.
///
/// Thread-safety: every member function is thread-safe. Not copyable or movable.
class BABELQUEUE_EXPORT InMemoryStore final : public Store {
 public:
  InMemoryStore() = default;
  InMemoryStore(const InMemoryStore&) = delete;
  InMemoryStore& operator=(const InMemoryStore&) = delete;
  InMemoryStore(InMemoryStore&&) = delete;
  InMemoryStore& operator=(InMemoryStore&&) = delete;
  ~InMemoryStore() override = default;

  [[nodiscard]] bool seen(std::string_view id) override;
  void remember(std::string_view id) override;
  void forget(std::string_view id) override;

  /// The number of remembered ids.
  [[nodiscard]] std::size_t size() const;

 private:
  mutable std::mutex mu_;
  std::set<std::string, std::less<>> ids_;
};

/// What `run_once` did with a delivery.
enum class Outcome {
  Ran,      ///< the effect ran and returned (its id, if any, is now remembered)
  Skipped,  ///< the id was already remembered: the effect did not run; ack the message
};

/// Called when `Store::remember` fails after a successful effect. The failure is otherwise
/// ignored (the message is still acked; a redelivery may run the effect again). An exception
/// thrown by the handler itself is swallowed.
using RememberErrorHandler = std::function<void(std::string_view id, const std::exception& error)>;

/// Runs `effect` at most once per successfully processed `id` (HLP-2):
/// - `id` empty: runs `effect` unchanged (fail-open) and remembers nothing -> `Ran`;
/// - `store.seen(id)` throws: the exception propagates and `effect` does not run;
/// - `id` already seen: `Skipped`, `effect` not run;
/// - `effect` throws: the exception propagates and `id` is NOT remembered (retry/DLQ apply);
/// - otherwise `store.remember(id)`; an exception from it goes to `on_remember_error` (when set)
///   and is swallowed (Go semantics, spec Q13) -> `Ran`.
BABELQUEUE_EXPORT Outcome run_once(Store& store, std::string_view id,
                                   const std::function<void()>& effect,
                                   const RememberErrorHandler& on_remember_error = {});

/// `run_once(store, env.meta().id, effect, on_remember_error)`: the key is `meta.id` verbatim,
/// never `trace_id`.
BABELQUEUE_EXPORT Outcome run_once(Store& store, const Envelope& env,
                                   const std::function<void()>& effect,
                                   const RememberErrorHandler& on_remember_error = {});

/// Decorates a handler so a message whose `meta.id` was already processed is skipped (HLP-2).
///
/// The result is called as `wrapped(env, rest...)` with a `const Envelope&` first; it invokes
/// `handler(env, rest...)` through `run_once` and returns nothing (handlers fail by throwing, so
/// a skip simply returns and the runtime acks). Example:
/// `auto h = idempotency::wrap(store, [](const Envelope& env) { charge(env.data()); });`
///
/// Thread-safety: the wrapper is as thread-safe as `handler` and the store; it owns `handler`
/// (invoked as const) and shares `store`.
/// @throws ConfigError when `store` is null.
template <class Handler>
[[nodiscard]] auto wrap(std::shared_ptr<Store> store, Handler handler,
                        RememberErrorHandler on_remember_error = {}) {
  if (!store) throw ConfigError("idempotency: wrap() needs a store");
  return [store = std::move(store), handler = std::move(handler),
          on_error = std::move(on_remember_error)](const Envelope& env, auto&&... rest) -> void {
    run_once(
        *store, env, [&]() { std::invoke(handler, env, std::forward<decltype(rest)>(rest)...); },
        on_error);
  };
}

/// Decorates an App handler so a message whose `meta.id` was already processed is acked without
/// running it (HLP-2), for `App::handle`:
/// `app.handle(urn, idempotency::wrap_handler(store, handler));`
///
/// Semantics (the `run_once` rules, with the handler's Status as the outcome):
/// - `meta.id` empty: `handler` runs unchanged (fail-open);
/// - `store.seen` throws: the exception propagates (the App treats it as a handler error, so the
///   message is retried) and `handler` does not run;
/// - already seen: returns OK without running `handler` (the App acks);
/// - `handler` returns an error Status or throws: that Status / exception propagates and the id
///   is NOT remembered (retry and dead-lettering still apply);
/// - otherwise the id is remembered; a `remember` failure goes to `on_remember_error` (when set)
///   and is ignored (Go semantics, spec Q13): returns OK.
///
/// Thread-safety: the result is as thread-safe as `handler` and the store (it may run on several
/// App workers at once; see the class comment on dedupe limits). It shares `store`.
/// @throws ConfigError when `store` or `handler` is null.
[[nodiscard]] BABELQUEUE_EXPORT Handler wrap_handler(std::shared_ptr<Store> store, Handler handler,
                                                     RememberErrorHandler on_remember_error = {});

}  // namespace babelqueue::idempotency
