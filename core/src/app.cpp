// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The App runtime (02-runtime RT-6..RT-39): handler routing, publish, the consume/drain loops with
// their worker pool (decisions D-3, D-4) and the dispatch decision table D1..D22 (RT-30..RT-38).
// Nothing on the happy path logs, copies the body, or allocates beyond the decode itself.

#include <babelqueue/app.hpp>
#include <babelqueue/binding/common.hpp>
#include <babelqueue/spi/backoff.hpp>
#include <babelqueue/spi/text.hpp>

#include <exception>
#include <functional>
#include <limits>
#include <string>
#include <unordered_map>

#include "worker_pool.hpp"

namespace babelqueue {
namespace {

using spi::quoted;

using std::chrono::milliseconds;

// ENV-39: the exception name of the unknown-URN cause.
constexpr std::string_view kUnknownUrnErrorType = "babelqueue::UnknownUrnError";
// ENV-43: `error` is non-empty; used when a transport flags poison without a reason.
constexpr std::string_view kFlaggedPoisonReason = "the transport flagged the body as undecodable";

// Heterogeneous hashing, so a handler lookup never builds a std::string from the URN view.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};

// The unknown-URN cause (D7, D11, ENV-39).
FailureCause unknown_urn_cause(std::string_view urn) {
  std::string message = "no handler for urn \"";
  message += urn;
  message += '"';
  return FailureCause{std::move(message), std::string(kUnknownUrnErrorType)};
}

std::int64_t saturating_increment(std::int64_t v) noexcept {
  return v == std::numeric_limits<std::int64_t>::max() ? v : v + 1;
}

const char* identityless_note(const Envelope& env) noexcept {
  return env.urn().empty() ? " (an identity-less body: it names no job URN)" : "";
}

bool valid_strategy(UnknownUrnStrategy s) noexcept {
  switch (s) {
    case UnknownUrnStrategy::Fail:
    case UnknownUrnStrategy::Delete:
    case UnknownUrnStrategy::Release:
    case UnknownUrnStrategy::DeadLetter:
      return true;
  }
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Free functions
// ---------------------------------------------------------------------------------------------

UnknownUrnStrategy parse_unknown_urn_strategy(std::string_view text) {
  if (text == "fail") return UnknownUrnStrategy::Fail;
  if (text == "delete") return UnknownUrnStrategy::Delete;
  if (text == "release") return UnknownUrnStrategy::Release;
  if (text == "dead_letter") return UnknownUrnStrategy::DeadLetter;
  throw ConfigError("unknown unknown_urn strategy " + quoted(text) +
                    " (want fail, delete, release or dead_letter)");
}

std::string_view to_string(UnknownUrnStrategy strategy) noexcept {
  switch (strategy) {
    case UnknownUrnStrategy::Fail:
      return "fail";
    case UnknownUrnStrategy::Delete:
      return "delete";
    case UnknownUrnStrategy::Release:
      return "release";
    case UnknownUrnStrategy::DeadLetter:
      return "dead_letter";
  }
  return "fail";
}

bool Context::is_replay() const noexcept {
  build_headers(message_);
  // Header maps are tiny; a linear scan avoids building a std::string key (HLP-25).
  for (const auto& [name, value] : message_.headers) {
    if (name == REPLAY_BYPASS_HEADER) return !value.empty();
  }
  return false;
}

Status bypass_external_effects(const Context& ctx, const std::function<Status()>& effect) {
  if (ctx.is_replay() || !effect) return Status{};
  return effect();
}

// ---------------------------------------------------------------------------------------------
// App::Impl
// ---------------------------------------------------------------------------------------------

class App::Impl {
 public:
  explicit Impl(App& app)
      : app_(app),
        opt_(app.options_),
        transport_(*app.transport_),
        header_publisher_(dynamic_cast<HeaderPublisher*>(app.transport_.get())),
        releaser_(dynamic_cast<Releaser*>(app.transport_.get())),
        rewinder_(dynamic_cast<Rewinder*>(app.transport_.get())),
        keyed_(dynamic_cast<KeyedRepublisher*>(app.transport_.get())),
        dead_letterer_(dynamic_cast<DeadLetterer*>(app.transport_.get())),
        broker_dead_letter_(dynamic_cast<BrokerDeadLetter*>(app.transport_.get())),
        naming_(dynamic_cast<DeadLetterNaming*>(app.transport_.get())),
        deferred_pop_(dynamic_cast<DeferredHeadersPop*>(app.transport_.get())) {}

  void handle(std::string_view urn, Handler handler) {
    const std::string_view key = trim_w(urn);
    if (key.empty()) throw Error(ErrorCode::Usage, "App::handle: the URN is blank");
    if (!handler) throw Error(ErrorCode::Usage, "App::handle: the handler is empty");
    auto it = handlers_.find(key);
    if (it != handlers_.end()) {
      it->second = std::move(handler);  // the last registration wins (RT-11)
    } else {
      handlers_.emplace(std::string(key), std::move(handler));
    }
  }

  void handle_any(Handler handler) {
    if (!handler) throw Error(ErrorCode::Usage, "App::handle_any: the handler is empty");
    fallback_ = std::move(handler);
  }

  [[nodiscard]] HeaderPublisher* header_publisher() const noexcept { return header_publisher_; }
  [[nodiscard]] const DeadLetterNaming* naming() const noexcept { return naming_; }

  void log(LogLevel level, std::string_view text) const noexcept {
    log_to(opt_.logger, level, text);
  }

  // Ends every interruptible wait (backoff, rewind pause), now and later: App::stop() is sticky.
  void wake() noexcept { stop_wait_.interrupt(); }

  // RT-30, never throws: one bad message (or a broken hook or transport) never stops a loop.
  // Dispatches `msg.decoded` in place when the transport decoded (decode once).
  void dispatch(ReceivedMessage& msg) noexcept {
    try {
      dispatch_unguarded(msg);
    } catch (const std::exception& e) {
      log(LogLevel::Error, "dispatch of a message from queue " + quoted(msg.queue) +
                               " failed unexpectedly, message left unacknowledged: " + e.what());
    } catch (...) {
      log(LogLevel::Error, "dispatch of a message from queue " + quoted(msg.queue) +
                               " failed unexpectedly, message left unacknowledged");
    }
  }

  // RT-14 with decision D-4: see QueueSource.
  Status consume(const std::string& target);
  // RT-16.
  DrainResult drain(const std::string& target, std::size_t max);

 private:
  class QueueSource;

  void dispatch_unguarded(ReceivedMessage& msg);
  // RT-39 onwards, for the decoded body of `msg`.
  void dispatch_decoded(ReceivedMessage& msg, Envelope& env);

  // ---- sub-routines of RT-32..RT-38 ----
  void ack(const ReceivedMessage& msg);
  bool release_in_place(const ReceivedMessage& msg, milliseconds delay);
  Status republish(std::string_view queue, std::string body, const ReceivedMessage& source);
  void republish_failed(const ReceivedMessage& msg, const Error& err);
  void hand_back(const ReceivedMessage& msg);
  void write_dlq(const ReceivedMessage& msg, std::string body);
  void write_dlq_annotated(const ReceivedMessage& msg, const Envelope& env, std::string_view why,
                           std::int64_t attempts, const std::optional<FailureCause>& cause);
  void dlq_failed(const ReceivedMessage& msg, std::string_view target, const Error& err);
  void hand_to_broker(const ReceivedMessage& msg, std::string_view why);
  void retry_or_dlq(const ReceivedMessage& msg, Envelope& env, const FailureCause& cause,
                    bool unknown_urn);
  void unknown(const ReceivedMessage& msg, Envelope& env, std::string_view urn);
  void identityless(const ReceivedMessage& msg, Envelope& env);
  void poison(const ReceivedMessage& msg, std::string_view error_text);
  // `env` is the decoded body, or nullptr when a transport gate rejected it undecoded (route).
  void unsupported(const ReceivedMessage& msg, const Envelope* env = nullptr);
  void release_or_republish_original(const ReceivedMessage& msg);
  // Item 12 of issue 8: a drop by configuration (D6, D8, D13, D18, D21) says so, then acks.
  void drop(const ReceivedMessage& msg, const Envelope* env, std::string_view why);

  // RT-8.
  [[nodiscard]] bool dlq_on() const noexcept {
    return opt_.dead_letter || opt_.unknown_urn == UnknownUrnStrategy::DeadLetter;
  }

  template <class Hook, class... Args>
  void call_hook(const Hook& hook, std::string_view name, const Args&... args) noexcept {
    if (!hook) return;
    (complete(args), ...);  // a hook sees a message's headers
    try {
      hook(args...);
    } catch (const std::exception& e) {
      log(LogLevel::Error, std::string(name) + " hook threw: " + e.what());
    } catch (...) {
      log(LogLevel::Error, std::string(name) + " hook threw an unknown exception");
    }
  }

  static void complete(const ReceivedMessage& msg) noexcept { build_headers(msg); }
  template <class T>
  static void complete(const T& /*not a message*/) noexcept {}

  // Through a DeferredHeadersPop when the transport has one: the headers are built when a
  // handler or hook asks (Context, complete()).
  Result<std::optional<ReceivedMessage>> pop(const std::string& target) {
    return deferred_pop_ != nullptr
               ? deferred_pop_->pop_deferring_headers(target, opt_.poll_timeout)
               : transport_.pop(target, opt_.poll_timeout);
  }

  // Rides out one transient pop error (RT-14): log, hook, interruptible backoff.
  void ride_out(const Error& err, milliseconds backoff) {
    log(LogLevel::Warning, "pop failed (transient), retrying in " +
                               std::to_string(backoff.count()) + " ms: " + err.what());
    call_hook(opt_.on_consume_error, "on_consume_error", err, backoff);
    stop_wait_.wait_for(backoff);
  }

  App& app_;
  const AppOptions& opt_;
  Transport& transport_;
  // Capabilities, discovered once (RT-3).
  HeaderPublisher* header_publisher_;
  Releaser* releaser_;
  Rewinder* rewinder_;
  KeyedRepublisher* keyed_;
  DeadLetterer* dead_letterer_;
  BrokerDeadLetter* broker_dead_letter_;
  DeadLetterNaming* naming_;
  DeferredHeadersPop* deferred_pop_;

  std::unordered_map<std::string, Handler, StringHash, std::equal_to<>> handlers_;
  Handler fallback_;  // handle_any: every URN without a handler of its own

  spi::InterruptibleWait stop_wait_;
};

// ---- dispatch (RT-30, RT-31) ----

void App::Impl::dispatch_unguarded(ReceivedMessage& msg) {
  // A transport gate rejected the version before decoding (RT-40, RT-41): D18..D21.
  if (binding::is_unsupported_route(msg.route)) {
    unsupported(msg);
    return;
  }
  // Transport-flagged poison (D17): the ADR-0035 record in every configuration.
  if (msg.poison) {
    write_dlq(msg, poison_record(msg.body,
                                 msg.poison_reason.empty() ? kFlaggedPoisonReason
                                                           : std::string_view(msg.poison_reason),
                                 msg.queue));
    return;
  }
  // Item 7 of issue 8: the transport's decode when it did one, else the App's own; either is
  // dispatched where it lies (no move of the envelope).
  if (msg.decoded) {
    dispatch_decoded(msg, *msg.decoded);
    return;
  }
  Result<Envelope, DecodeError> decoded = try_decode(msg.body);
  if (!decoded.has_value()) {
    // The RT-39 floor would apply to the EMPTY envelope here; nothing below reads it, because
    // poison is never retried (D13..D16).
    poison(msg, decoded.error().what());
    return;
  }
  dispatch_decoded(msg, *decoded);
}

void App::Impl::dispatch_decoded(ReceivedMessage& msg, Envelope& env) {
  // RT-39 floor, before routing; set only when raised, so an absent `attempts` stays absent.
  if (const std::int64_t floor = binding::reconcile_attempts(env.attempts(), msg.delivery_count);
      floor != env.attempts()) {
    env.set_attempts(floor);
  }
  // Body-level schema_version gate (C++ decision, 02-runtime §14 Q2).
  if (env.has_schema_version() && env.meta().schema_version != SCHEMA_VERSION) {
    unsupported(msg, &env);
    return;
  }
  const std::string_view urn = env.urn();
  if (urn.empty()) {
    identityless(msg, env);
    return;
  }
  const auto it = handlers_.find(urn);
  const Handler* handler = it != handlers_.end() ? &it->second : nullptr;
  if (handler == nullptr && fallback_) handler = &fallback_;
  if (handler == nullptr) {
    unknown(msg, env, urn);
    return;
  }

  // RT-12: an error Status, a std::exception or any other thrown value is a handler error.
  Context ctx(msg, app_.stopping_);
  bool ok = false;
  FailureCause cause;
  try {
    const Status st = (*handler)(ctx, env);
    if (st.ok()) {
      ok = true;
    } else {
      cause = cause_of(st.error());
    }
  } catch (const std::exception& e) {
    cause = cause_of(e);
  } catch (...) {
    cause = cause_of(std::current_exception());
  }
  if (ok) {
    ack(msg);  // D1
    return;
  }
  retry_or_dlq(msg, env, cause, false);
}

// RT-32 retry_or_dlq: D2..D7, D11.
void App::Impl::retry_or_dlq(const ReceivedMessage& msg, Envelope& env, const FailureCause& cause,
                             bool unknown_urn) {
  const std::int64_t attempts = saturating_increment(env.attempts());
  env.set_attempts(attempts);
  if (attempts < static_cast<std::int64_t>(opt_.max_attempts)) {
    if (release_in_place(msg, opt_.retry_backoff)) return;  // D2, D3
    // D4: republish encode(env) (attempts + 1, unknown members kept) to the consumed queue.
    std::string body;
    try {
      body = encode(env);
    } catch (const Error& e) {
      republish_failed(msg, e);  // an encode failure counts as a republish failure
      return;
    } catch (const std::exception& e) {
      republish_failed(msg, Error(ErrorCode::Encode, e.what()));
      return;
    }
    const Status st = republish(msg.queue, std::move(body), msg);
    if (!st.ok()) {
      republish_failed(msg, st.error());
      return;
    }
    ack(msg);
    return;
  }
  if (opt_.dead_letter) {  // D5 / D7 exhausted
    write_dlq_annotated(msg, env, unknown_urn ? reason::unknown_urn : reason::failed, attempts,
                        cause);
    return;
  }
  // D6
  drop(msg, &env,
       "attempts exhausted (" + std::to_string(attempts) + " of max_attempts " +
           std::to_string(opt_.max_attempts) +
           ") and dead-lettering is off; last error: " + cause.message + identityless_note(env));
}

// RT-32 unknown: D7..D10.
void App::Impl::unknown(const ReceivedMessage& msg, Envelope& env, std::string_view urn) {
  switch (opt_.unknown_urn) {
    case UnknownUrnStrategy::Delete:  // D8
      drop(msg, &env,
           unknown_urn_cause(urn).message + identityless_note(env) +
               " and the unknown-URN strategy is delete");
      return;
    case UnknownUrnStrategy::DeadLetter:  // D10: current attempts, no cause
      write_dlq_annotated(msg, env, reason::unknown_urn, env.attempts(), std::nullopt);
      return;
    case UnknownUrnStrategy::Release:  // D9
      release_or_republish_original(msg);
      return;
    case UnknownUrnStrategy::Fail:  // D7
      break;
  }
  retry_or_dlq(msg, env, unknown_urn_cause(urn), true);
}

// RT-32 identityless: D11, D12.
void App::Impl::identityless(const ReceivedMessage& msg, Envelope& env) {
  if (opt_.unknown_urn == UnknownUrnStrategy::Release) {
    retry_or_dlq(msg, env, unknown_urn_cause(""), true);  // D11: bounded, never released
    return;
  }
  unknown(msg, env, "");
}

// RT-32 poison: D13..D16 (decision D-2: never an EMPTY envelope).
void App::Impl::poison(const ReceivedMessage& msg, std::string_view error_text) {
  if (opt_.unknown_urn == UnknownUrnStrategy::Delete) {  // D13: delete wins
    drop(msg, nullptr,
         "undecodable body and the unknown-URN strategy is delete: " + std::string(error_text));
    return;
  }
  if (!dlq_on() && broker_dead_letter_ != nullptr) {  // D15
    hand_to_broker(msg, "poison");
    return;
  }
  // D14 (DLQ on) and D16 (DLQ off, no BrokerDeadLetter): the ADR-0035 record, first delivery.
  write_dlq(msg, poison_record(msg.body, error_text, msg.queue));
}

// RT-32 unsupported: D18..D21.
void App::Impl::unsupported(const ReceivedMessage& msg, const Envelope* env) {
  const auto version = [&] {
    return env != nullptr
               ? "unsupported meta.schema_version " + std::to_string(env->meta().schema_version)
               : "unsupported schema version (route " + quoted(msg.route) + ")";
  };
  if (opt_.unknown_urn == UnknownUrnStrategy::Delete) {  // D18
    drop(msg, env, version() + " and the unknown-URN strategy is delete");
    return;
  }
  if (dlq_on()) {  // D19: the original bytes, no dead_letter block
    write_dlq(msg, msg.body);
    return;
  }
  if (broker_dead_letter_ != nullptr) {  // D20
    hand_to_broker(msg, "unsupported_schema_version");
    return;
  }
  // D21
  drop(msg, env,
       version() + ", dead-lettering is off and the transport has no broker dead-letter mechanism");
}

// RT-32 release_or_republish_original: D9.
void App::Impl::release_or_republish_original(const ReceivedMessage& msg) {
  if (release_in_place(msg, opt_.unknown_urn_release_delay)) return;
  const Status st = republish(msg.queue, msg.body, msg);  // the ORIGINAL bytes
  if (!st.ok()) {
    republish_failed(msg, st.error());
    return;
  }
  ack(msg);
}

// RT-34.
bool App::Impl::release_in_place(const ReceivedMessage& msg, milliseconds delay) {
  if (releaser_ == nullptr) return false;
  const Status st = releaser_->release(msg, delay);
  if (st.ok()) return true;
  if (st.is(ErrorCode::ReleaseUnsupported)) return false;  // fall back, not reported
  log(LogLevel::Warning, "in-place release of a message from queue " + quoted(msg.queue) +
                             " failed; it stays reserved: " + st.error().what());
  call_hook(opt_.on_release_error, "on_release_error", msg, st.error());
  return true;  // D3: no ack, no republish
}

// RT-35.
Status App::Impl::republish(std::string_view queue, std::string body,
                            const ReceivedMessage& source) {
  if (keyed_ != nullptr) return keyed_->republish(queue, std::move(body), source);
  return transport_.publish(queue, std::move(body));
}

// RT-32 republish_failed: log, hook, hand back; no ack.
void App::Impl::republish_failed(const ReceivedMessage& msg, const Error& err) {
  log(LogLevel::Error, "republish to queue " + quoted(msg.queue) +
                           " failed; message not acknowledged: " + err.what());
  call_hook(opt_.on_release_error, "on_release_error", msg, err);
  hand_back(msg);
}

// RT-37 (and §14 Q5: pause only after an actual rewind).
void App::Impl::hand_back(const ReceivedMessage& msg) {
  if (rewinder_ == nullptr) return;
  const Status st = rewinder_->rewind(msg);
  if (!st.ok()) {
    log(LogLevel::Error,
        "rewind of a message from queue " + quoted(msg.queue) + " failed: " + st.error().what());
  }
  stop_wait_.wait_for(opt_.rewind_pause);
}

// RT-36.
void App::Impl::write_dlq(const ReceivedMessage& msg, std::string body) {
  const std::string target = app_.dead_letter_queue_for(msg.queue);
  if (dead_letterer_ != nullptr) {
    const Status st = dead_letterer_->dead_letter(msg, target, std::move(body));  // acks too
    if (!st.ok()) dlq_failed(msg, target, st.error());
    return;
  }
  const Status st = republish(target, std::move(body), msg);
  if (!st.ok()) {
    dlq_failed(msg, target, st.error());
    return;
  }
  ack(msg);
}

void App::Impl::write_dlq_annotated(const ReceivedMessage& msg, const Envelope& env,
                                    std::string_view why, std::int64_t attempts,
                                    const std::optional<FailureCause>& cause) {
  const std::string_view original_queue =
      env.meta().queue.empty() ? std::string_view(msg.queue) : env.meta().queue;
  std::string body;
  try {
    body = encode(annotate(env, why, original_queue, attempts, cause));
  } catch (const Error& e) {
    dlq_failed(msg, app_.dead_letter_queue_for(msg.queue), e);
    return;
  } catch (const std::exception& e) {
    dlq_failed(msg, app_.dead_letter_queue_for(msg.queue), Error(ErrorCode::Encode, e.what()));
    return;
  }
  write_dlq(msg, std::move(body));
}

// D22: no ack; log; on_dead_letter_error; hand back.
void App::Impl::dlq_failed(const ReceivedMessage& msg, std::string_view target, const Error& err) {
  log(LogLevel::Error, "dead-letter write of a message from queue " + quoted(msg.queue) + " to " +
                           quoted(target) + " failed; message not acknowledged: " + err.what());
  call_hook(opt_.on_dead_letter_error, "on_dead_letter_error", msg, err);
  hand_back(msg);
}

// D15, D20 (ADR-0037): no ack. A failed hand-off is logged and reported like a failed DLQ
// write; the message stays with the broker either way.
void App::Impl::hand_to_broker(const ReceivedMessage& msg, std::string_view why) {
  const Status st = broker_dead_letter_->hand_to_broker(msg, why);
  if (st.ok()) return;
  log(LogLevel::Error, "hand-off of a message from queue " + quoted(msg.queue) +
                           " to the broker's dead-letter mechanism failed: " + st.error().what());
  call_hook(opt_.on_dead_letter_error, "on_dead_letter_error", msg, st.error());
}

void App::Impl::drop(const ReceivedMessage& msg, const Envelope* env, std::string_view why) {
  std::string text = "dropped a message from queue " + quoted(msg.queue);
  if (env != nullptr && !env->meta().id.empty())
    text += " (meta.id " + quoted(env->meta().id) + ")";
  text += ": ";
  text += why;
  log(LogLevel::Warning, text);
  ack(msg);
}

// RT-38: a failed ack is only reported.
void App::Impl::ack(const ReceivedMessage& msg) {
  const Status st = transport_.ack(msg);
  if (st.ok()) return;
  log(LogLevel::Warning,
      "ack of a message from queue " + quoted(msg.queue) + " failed: " + st.error().what());
  call_hook(opt_.on_ack_error, "on_ack_error", msg, st.error());
}

// ---- consume / drain (RT-14, RT-16) ----

// RT-14 for one consume call: what the worker pool (decision D-4, worker_pool.hpp) pops and
// dispatches. The pool rides out transient pop errors holding the pop turn, so the loop has one
// backoff whichever worker meets them.
class App::Impl::QueueSource final : public detail::PoolSource {
 public:
  QueueSource(Impl& impl, const std::string& target) : impl_(impl), target_(target) {}

  [[nodiscard]] bool stopping() const noexcept override { return impl_.app_.stopping(); }
  Result<std::optional<ReceivedMessage>> pop() override { return impl_.pop(target_); }
  void ride_out(const Error& err, milliseconds backoff) override { impl_.ride_out(err, backoff); }
  void dispatch(ReceivedMessage& msg) noexcept override { impl_.dispatch(msg); }

 private:
  Impl& impl_;
  const std::string& target_;
};

Status App::Impl::consume(const std::string& target) {
  QueueSource source(*this, target);
  return detail::WorkerPool(source).run(opt_.concurrency);
}

DrainResult App::Impl::drain(const std::string& target, std::size_t max) {
  DrainResult out;
  while (max == 0 || out.count < max) {
    if (app_.stopping()) return out;
    // The poll timeout, as in Go: "none" means nothing arrived within it, which is also right for
    // brokers whose zero-wait receive may miss available messages (SQS short polling).
    Result<std::optional<ReceivedMessage>> popped = pop(target);
    if (!popped.has_value()) {
      out.status = Status(popped.error());
      return out;
    }
    if (!*popped) break;
    dispatch(**popped);
    ++out.count;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// App
// ---------------------------------------------------------------------------------------------

App::App(std::shared_ptr<Transport> transport, AppOptions options)
    : transport_(std::move(transport)), options_(std::move(options)) {
  if (!transport_) throw ConfigError("App: the transport is null");
  if (options_.concurrency < 1) {
    throw ConfigError("App: concurrency must be at least 1, got " +
                      std::to_string(options_.concurrency));
  }
  if (!valid_strategy(options_.unknown_urn)) {
    throw ConfigError("App: invalid unknown_urn strategy value " +
                      std::to_string(static_cast<int>(options_.unknown_urn)));
  }
  const std::pair<std::string_view, milliseconds> durations[] = {
      {"poll_timeout", options_.poll_timeout},
      {"retry_backoff", options_.retry_backoff},
      {"unknown_urn_release_delay", options_.unknown_urn_release_delay},
      {"rewind_pause", options_.rewind_pause}};
  for (const auto& [name, value] : durations) {
    if (value.count() < 0) throw ConfigError("App: " + std::string(name) + " is negative");
  }
  impl_ = std::make_unique<Impl>(*this);
}

App::~App() = default;

void App::handle(std::string_view urn, Handler handler) {
  impl_->handle(urn, std::move(handler));
}

void App::handle_any(Handler handler) {
  impl_->handle_any(std::move(handler));
}

std::string App::publish(std::string_view urn, Json data, const PublishOptions& options) {
  return publish_with_headers(urn, std::move(data), Headers{}, options);
}

std::string App::publish_with_headers(std::string_view urn, Json data, const Headers& headers,
                                      const PublishOptions& options) {
  MakeOptions make_options;
  make_options.queue =
      trim_w(options.queue).empty() ? std::string_view(options_.default_queue) : options.queue;
  make_options.trace_id = options.trace_id;
  const Envelope env = make(urn, std::move(data), make_options);
  std::string body = encode(env);
  const std::string_view queue = env.meta().queue;
  HeaderPublisher* hp = impl_->header_publisher();
  const Status st = (!headers.empty() && hp != nullptr)
                        ? hp->publish_with_headers(queue, std::move(body), headers)
                        : transport_->publish(queue, std::move(body));
  st.throw_if_error();
  return std::string(env.meta().id);
}

Status App::consume(std::string_view queue) {
  const std::string target(trim_w(queue).empty() ? std::string_view(options_.default_queue)
                                                 : queue);
  return impl_->consume(target);
}

DrainResult App::drain(std::string_view queue, std::size_t max) {
  const std::string target(trim_w(queue).empty() ? std::string_view(options_.default_queue)
                                                 : queue);
  return impl_->drain(target, max);
}

void App::dispatch(ReceivedMessage msg) {
  impl_->dispatch(msg);
}

void App::stop() noexcept {
  stopping_.store(true, std::memory_order_relaxed);
  if (impl_) impl_->wake();
}

std::string App::dead_letter_queue_for(std::string_view queue) const {
  if (!options_.dead_letter_queue.empty()) return options_.dead_letter_queue;
  const auto& suffix = options_.dead_letter_suffix;
  if (const DeadLetterNaming* naming = impl_->naming(); naming != nullptr) {
    return naming->dead_letter_name(
        queue, suffix ? std::optional<std::string_view>(*suffix) : std::nullopt);
  }
  return suffix ? std::string(queue) + *suffix : default_dead_letter_name(queue);
}

}  // namespace babelqueue
