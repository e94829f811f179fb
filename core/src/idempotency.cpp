// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/idempotency.hpp>

#include <stdexcept>
#include <utility>

namespace babelqueue::idempotency {

// ---- InMemoryStore ----

bool InMemoryStore::seen(std::string_view id) {
  const std::lock_guard<std::mutex> lock(mu_);
  return ids_.find(id) != ids_.end();
}

void InMemoryStore::remember(std::string_view id) {
  const std::lock_guard<std::mutex> lock(mu_);
  ids_.emplace(id);
}

void InMemoryStore::forget(std::string_view id) {
  const std::lock_guard<std::mutex> lock(mu_);
  if (const auto it = ids_.find(id); it != ids_.end()) ids_.erase(it);
}

std::size_t InMemoryStore::size() const {
  const std::lock_guard<std::mutex> lock(mu_);
  return ids_.size();
}

// ---- run_once ----

namespace {
// Hands a swallowed remember() failure to the caller's hook; a throwing hook is ignored too, since
// the effect already ran and the message must be acked.
void report(const RememberErrorHandler& hook, std::string_view id,
            const std::exception& error) noexcept {
  if (!hook) return;
  try {
    hook(id, error);
  } catch (...) {  // NOLINT(bugprone-empty-catch): nothing sensible is left to do
  }
}
}  // namespace

Outcome run_once(Store& store, std::string_view id, const std::function<void()>& effect,
                 const RememberErrorHandler& on_remember_error) {
  // No usable id: the message cannot be deduped, so it runs unchanged (fail-open).
  if (id.empty()) {
    effect();
    return Outcome::Ran;
  }
  // A failing store propagates: guessing the dedupe state would either lose or repeat work.
  if (store.seen(id)) return Outcome::Skipped;
  effect();  // a throw propagates and leaves the id unmarked
  // Best effort: the effect succeeded, so the message is acked whatever happens here.
  try {
    store.remember(id);
  } catch (const std::exception& e) {
    report(on_remember_error, id, e);
  } catch (...) {
    report(on_remember_error, id, std::runtime_error("remember: unknown exception"));
  }
  return Outcome::Ran;
}

Outcome run_once(Store& store, const Envelope& env, const std::function<void()>& effect,
                 const RememberErrorHandler& on_remember_error) {
  return run_once(store, env.meta().id, effect, on_remember_error);
}

// ---- wrap_handler ----

namespace {
// Thrown through run_once when the handler returned an error Status, so the id stays unmarked.
struct HandlerFailed {};
}  // namespace

Handler wrap_handler(std::shared_ptr<Store> store, Handler handler,
                     RememberErrorHandler on_remember_error) {
  if (!store) throw ConfigError("idempotency: wrap_handler() needs a store");
  if (!handler) throw ConfigError("idempotency: wrap_handler() needs a handler");
  return [store = std::move(store), handler = std::move(handler),
          on_error = std::move(on_remember_error)](Context& ctx, const Envelope& env) -> Status {
    Status status;
    try {
      run_once(
          *store, env,
          [&]() {
            status = handler(ctx, env);
            if (!status.ok()) throw HandlerFailed{};
          },
          on_error);
    } catch (const HandlerFailed&) {  // NOLINT(bugprone-empty-catch): `status` holds the error
    }
    return status;
  };
}

}  // namespace babelqueue::idempotency
