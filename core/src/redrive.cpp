// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/redrive.hpp>

#include <babelqueue/app.hpp>
#include <babelqueue/codec.hpp>

#include <exception>
#include <optional>
#include <string>
#include <utility>

namespace babelqueue {

namespace {

constexpr std::chrono::milliseconds kDefaultTimeout{1000};

// One delivery taken off the dead-letter queue, with its decoded envelope when it decodes.
struct Popped {
  ReceivedMessage msg;
  std::optional<Envelope> env;
};

// The optional capabilities of the transport, discovered once.
struct Caps {
  Transport& transport;
  HeaderPublisher* headers = nullptr;
  KeyedRepublisher* keyed = nullptr;
  Restorer* restorer = nullptr;
  Rewinder* rewinder = nullptr;

  explicit Caps(Transport& t)
      : transport(t),
        headers(dynamic_cast<HeaderPublisher*>(&t)),
        keyed(dynamic_cast<KeyedRepublisher*>(&t)),
        restorer(dynamic_cast<Restorer*>(&t)),
        rewinder(dynamic_cast<Rewinder*>(&t)) {}
};

// An item describing what is known about a delivery before it is settled.
RedriveItem describe(const Popped& p, std::string_view dlq) {
  RedriveItem item;
  item.from = std::string(dlq);
  if (!p.env) return item;  // undecodable: only `from`
  const Envelope& env = *p.env;
  item.message_id = std::string(env.meta().id);
  item.trace_id = std::string(env.trace_id());
  item.urn = std::string(env.urn());
  if (env.dead_letter()) item.reason = env.dead_letter()->reason;
  return item;
}

// A poison record (ADR-0035) or an identity-less entry: never replayed as an envelope.
bool is_unreplayable(const Envelope& env) {
  return env.urn().empty() || (env.dead_letter() && env.dead_letter()->reason == reason::poison);
}

// The default target: dead_letter.original_queue, else meta.queue (Go `sourceQueueOf`).
std::string default_target(const Envelope& env) {
  if (env.dead_letter() && !env.dead_letter()->original_queue.empty()) {
    return env.dead_letter()->original_queue;
  }
  return std::string(env.meta().queue);
}

// An error with `what` prefixed by context, keeping the code and transience of `cause`.
Error with_context(const Error& cause, const std::string& context) {
  return Error(cause.code(), context + ": " + cause.what(), cause.is_transient());
}

// `error` with " (<note>)" appended, keeping its code and transience.
Error with_note(const Error& error, const std::string& note) {
  return Error(error.code(), std::string(error.what()) + " (" + note + ")", error.is_transient());
}

// Runs the redrive of one batch; owns the result being built.
class Run {
 public:
  Run(Transport& transport, std::string_view dlq, const RedriveOptions& options)
      : caps_(transport), dlq_(dlq), options_(options) {}

  RedriveResult execute() {
    if (trim_w(dlq_).empty()) {
      result_.status = Error(ErrorCode::Usage, "redrive: the dead-letter queue name is blank");
      return std::move(result_);
    }
    Status failure = drain();
    std::size_t next = 0;
    for (; next < batch_.size() && failure.ok(); ++next) {
      if (!settle(batch_[next], failure)) return std::move(result_);
    }
    // After a failure the rest of the batch goes back to the dead-letter queue untouched.
    for (; next < batch_.size(); ++next) {
      if (!restore_skipped(batch_[next], describe(batch_[next], dlq_), &failure)) {
        return std::move(result_);
      }
    }
    result_.status = std::move(failure);
    return std::move(result_);
  }

 private:
  // Pops until nothing arrives or `max` deliveries were taken; a pop error ends the drain.
  Status drain() {
    const std::chrono::milliseconds timeout =
        options_.timeout.count() < 0 ? kDefaultTimeout : options_.timeout;
    while (options_.max == 0 || batch_.size() < options_.max) {
      Result<std::optional<ReceivedMessage>> popped = caps_.transport.pop(dlq_, timeout);
      if (!popped) return with_context(popped.error(), "redrive: pop from " + std::string(dlq_));
      if (!popped->has_value()) break;
      Popped p{std::move(**popped), std::nullopt};
      if (auto decoded = try_decode(p.msg.body)) p.env = std::move(*decoded);
      batch_.push_back(std::move(p));
    }
    return {};
  }

  // Settles one delivery. Returns false when the run must stop at once (a failed restore);
  // sets `failure` when the rest of the batch must be restored.
  bool settle(const Popped& p, Status& failure) {
    RedriveItem item = describe(p, dlq_);
    if (!p.env || is_unreplayable(*p.env)) return restore_skipped(p, std::move(item), nullptr);
    const Envelope& env = *p.env;

    if (options_.select) {
      bool selected = false;
      try {
        selected = options_.select(env);
      } catch (const std::exception& e) {
        failure = Error(ErrorCode::Usage, std::string("redrive: select threw: ") + e.what());
      } catch (...) {
        failure = Error(ErrorCode::Usage, "redrive: select threw an unknown exception");
      }
      if (!failure.ok()) return restore_skipped(p, std::move(item), &failure);
      if (!selected) return restore_skipped(p, std::move(item), nullptr);
    }

    const std::string target =
        trim_w(options_.to_queue).empty() ? default_target(env) : options_.to_queue;
    item.to = target;
    if (options_.dry_run) return restore_skipped(p, std::move(item), nullptr);
    if (target.empty()) return restore_skipped(p, std::move(item), nullptr);

    bool bypassed = false;
    Status published = publish_reset(p, env, target, bypassed);
    if (!published.ok()) {
      failure = with_context(published.error(), "redrive: publish to " + target);
      return restore_skipped(p, std::move(item), &failure);
    }
    ack(p.msg);
    item.redriven = true;
    item.bypassed = bypassed;
    ++result_.redriven;
    result_.items.push_back(std::move(item));
    return true;
  }

  // Encodes the reset envelope and publishes it to `target` (HLP-20).
  Status publish_reset(const Popped& p, const Envelope& env, const std::string& target,
                       bool& bypassed) {
    Envelope reset = env;
    reset.set_dead_letter(std::nullopt);
    reset.set_attempts(0);
    std::string body;
    try {
      body = encode(reset);
    } catch (const Error& e) {
      return e;
    }
    if (options_.bypass && caps_.headers != nullptr) {
      const Headers stamp{{std::string(REPLAY_BYPASS_HEADER), std::string(REPLAY_BYPASS_VALUE)}};
      Status st = caps_.headers->publish_with_headers(target, std::move(body), stamp);
      bypassed = st.ok();
      return st;
    }
    if (caps_.keyed != nullptr) return caps_.keyed->republish(target, std::move(body), p.msg);
    return caps_.transport.publish(target, std::move(body));
  }

  // Writes the original delivery back to the dead-letter queue.
  Status write_back(const ReceivedMessage& msg) {
    if (caps_.restorer != nullptr) {
      if (msg.queue == dlq_) return caps_.restorer->restore(msg);
      ReceivedMessage copy = msg;  // a transport that leaves `queue` empty still restores to dlq
      copy.queue = std::string(dlq_);
      return caps_.restorer->restore(copy);
    }
    if (caps_.keyed != nullptr) return caps_.keyed->republish(dlq_, msg.body, msg);
    if (!msg.headers.empty() && caps_.headers != nullptr) {
      return caps_.headers->publish_with_headers(dlq_, msg.body, msg.headers);
    }
    return caps_.transport.publish(dlq_, msg.body);
  }

  // Restores `p` and records it as skipped. On a failed write: no ack, rewind when supported,
  // the run's status becomes the write error (after `earlier`, if any) and false is returned.
  bool restore_skipped(const Popped& p, RedriveItem item, const Status* earlier) {
    Status written = write_back(p.msg);
    if (!written.ok()) {
      std::string context = "redrive: restore to " + std::string(dlq_);
      if (p.env && !p.env->meta().id.empty()) {
        context += " of message " + std::string(p.env->meta().id);
      }
      Error error = with_context(written.error(), context);
      if (caps_.rewinder != nullptr) {
        if (Status rewound = caps_.rewinder->rewind(p.msg); !rewound.ok()) {
          error = with_note(error, std::string("rewind failed: ") + rewound.error().what());
        }
      }
      if (earlier != nullptr && !earlier->ok()) {
        error = with_note(error, std::string("while restoring after: ") + earlier->error().what());
      }
      result_.status = std::move(error);
      return false;
    }
    if (caps_.restorer == nullptr || !caps_.restorer->restores_in_place(p.msg)) ack(p.msg);
    ++result_.skipped;
    result_.items.push_back(std::move(item));
    return true;
  }

  void ack(const ReceivedMessage& msg) {
    Status acked = caps_.transport.ack(msg);
    if (acked.ok() || !options_.on_ack_error) return;
    try {
      options_.on_ack_error(msg, acked.error());
    } catch (...) {  // NOLINT(bugprone-empty-catch): an observer must not stop the run
    }
  }

  Caps caps_;
  std::string_view dlq_;
  const RedriveOptions& options_;
  std::vector<Popped> batch_;
  RedriveResult result_;
};

}  // namespace

RedriveResult redrive(Transport& transport, std::string_view dead_letter_queue,
                      const RedriveOptions& options) {
  return Run(transport, dead_letter_queue, options).execute();
}

}  // namespace babelqueue
