// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The Redis transport: both layouts of spec/03-redis.md over one connection pool and one set of
// scripts. Every reserve round trip also carries the pending acknowledgements (pipelined
// settlement) and reserves up to `prefetch` messages, each with its own deadline / reserved
// member, so throughput comes from fewer round trips, never from weaker guarantees.

#include <babelqueue/codec.hpp>
#include <babelqueue/redis/transport.hpp>
#include <babelqueue/secure_random.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "connection.hpp"
#include "frame.hpp"
#include "scripts.hpp"
#include "text.hpp"

namespace babelqueue::redis {

using detail::Call;
using detail::ReplyPtr;
using detail::ScriptId;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

using detail::quoted;

constexpr std::size_t kTokenBytes = 16;  // RDS-17
constexpr std::size_t kTokenHex = 2 * kTokenBytes;
constexpr std::size_t kMaxPendingAcks = 256;  // Options::pipelined_acks
constexpr std::size_t kPublishChunk = 1000;   // bodies per command in publish_batch
constexpr milliseconds kFirstBackoff{100};    // RDS-22
constexpr milliseconds kMaxBackoff{1000};
constexpr milliseconds kMaxSlice{1000};  // RDS-53

/// The ack handle: the member that gates every settlement (RDS-24, RDS-53).
struct Handle {
  /// Legacy: "<token>:<stored value>". Laravel: the reserved member, exactly as returned.
  std::string member;
};

std::int64_t now_seconds() {
  using namespace std::chrono;
  return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

std::int64_t ceil_seconds(milliseconds d) {
  return (std::max<std::int64_t>(d.count(), 0) + 999) / 1000;
}

}  // namespace

class RedisTransport::Impl {
 public:
  explicit Impl(Options options) : opt_(validated(std::move(options))), pool_(opt_) {}
  Impl(redisContext* borrowed, Options options)
      : opt_(validated(std::move(options))), pool_(borrowed) {}

  Status publish(std::string_view queue, std::string body);
  Status publish_many(std::string_view queue, std::vector<std::string> bodies);
  Status publish_delayed(std::string_view queue, std::string body, milliseconds delay);
  Result<std::optional<ReceivedMessage>> pop(std::string_view queue, milliseconds timeout);
  Status ack(const ReceivedMessage& msg);
  Status release(const ReceivedMessage& msg, milliseconds delay);
  Status dead_letter(const ReceivedMessage& msg, std::string_view dlq, std::string body);
  Status flush();
  Result<QueueStats> stats(std::string_view queue, std::string_view dlq);
  Result<std::vector<PeekedMessage>> peek(std::string_view queue, std::size_t max);
  void close();
  Keys keys(std::string_view queue) const;

  Options opt_;

 private:
  struct QueueState {
    Keys keys;
    std::deque<ReceivedMessage> prefetched;  // reserved, not yet handed to the App
    milliseconds backoff = kFirstBackoff;    // RDS-22, survives across pops
  };
  struct PendingAck {
    std::string queue;
    std::string member;
  };

  static Options validated(Options o);
  Status check_open(std::string_view queue) const;
  QueueState& state_for(std::string_view queue);
  void log(LogLevel level, const std::string& text) const;
  void warn_expired(std::string_view op, std::string_view queue) const;
  static const Handle* handle_of(const ReceivedMessage& msg);

  // One round trip: the pending acks, then sweep/migrate, then a batched reserve.
  Result<std::vector<ReceivedMessage>> reserve_round(detail::Connection& c, std::string_view queue,
                                                     QueueState& st);
  void append_ack_calls(const std::vector<PendingAck>& acks, std::vector<Call>& calls,
                        std::vector<Keys>& key_storage) const;
  // Reads the replies of the ack calls at the front of `replies`.
  void settle_ack_replies(const std::vector<PendingAck>& acks,
                          const std::vector<ReplyPtr>& replies) const;
  void restore_pending(std::vector<PendingAck>&& acks);
  std::vector<PendingAck> take_pending();
  ReceivedMessage make_message(std::string_view queue, std::string_view stored, std::string member,
                               bool flagged) const;
  Status run_gated(std::string_view op, std::string_view queue, Call call);
  Status give_back_prefetched();
  Result<bool> wait_for_notify(detail::Connection& c, const QueueState& st,
                               steady_clock::time_point deadline);

  detail::Pool pool_;
  detail::Scripts scripts_;
  std::atomic<bool> closed_{false};
  mutable std::mutex mu_;  // guards queues_, pending_ and every QueueState::prefetched
  std::condition_variable wake_;
  std::map<std::string, QueueState, std::less<>> queues_;
  std::vector<PendingAck> pending_;
};

Options RedisTransport::Impl::validated(Options o) {
  if (o.retry_after && o.retry_after->count() < 0) {
    throw ConfigError("redis retry_after must be >= 0 seconds or none (RDS-59)");
  }
  if (o.migration_batch_size == 0 || o.migration_batch_size < -1) {
    throw ConfigError("redis migration_batch_size must be -1 (all) or >= 1 (RDS-51)");
  }
  if (o.prefetch < 1) throw ConfigError("redis prefetch must be >= 1");
  if (o.layout == Layout::Laravel && o.command_timeout <= kMaxSlice) {
    throw ConfigError("redis command timeout must exceed the 1 s BLPOP slice (RDS-53)");
  }
  if (o.laravel_key_prefix.empty() && o.layout == Layout::Laravel) {
    throw ConfigError("redis laravel_key_prefix must not be empty");
  }
  if (o.processing_suffix.empty()) throw ConfigError("redis processing_suffix must not be empty");
  return o;
}

Keys RedisTransport::Impl::keys(std::string_view queue) const {
  Keys k;
  if (opt_.layout == Layout::Legacy) {
    k.ready = std::string(queue);  // RDS-10
    k.in_flight = k.ready + opt_.processing_suffix;
    k.schedule = k.in_flight + ":deadlines";
  } else {
    k.ready = opt_.laravel_key_prefix + std::string(queue);  // RDS-40
    k.in_flight = k.ready + ":reserved";
    k.schedule = k.ready + ":delayed";
    k.notify = k.ready + ":notify";
  }
  return k;
}

Status RedisTransport::Impl::check_open(std::string_view queue) const {
  if (closed_.load(std::memory_order_acquire)) return ClosedError("redis transport is closed");
  if (queue.empty()) return ConfigError("redis: empty queue name");
  return {};
}

RedisTransport::Impl::QueueState& RedisTransport::Impl::state_for(std::string_view queue) {
  std::lock_guard lock(mu_);
  auto it = queues_.find(queue);
  if (it == queues_.end()) {
    it = queues_.emplace(std::string(queue), QueueState{}).first;
    it->second.keys = keys(queue);
  }
  return it->second;
}

void RedisTransport::Impl::log(LogLevel level, const std::string& text) const {
  log_to(opt_.logger, level, text);
}

void RedisTransport::Impl::warn_expired(std::string_view op, std::string_view queue) const {
  // RDS-9: the gate answered 0, so a sweep or migration already gave the message back; this
  // settlement touched nothing and the message may be delivered again.
  log(LogLevel::Warning, "reservation expired: " + std::string(op) + " on queue " + quoted(queue) +
                             " touched nothing (the message was recovered " +
                             "after retry_after and may be delivered again)");
}

const Handle* RedisTransport::Impl::handle_of(const ReceivedMessage& msg) {
  return std::any_cast<Handle>(&msg.handle);
}

// ------------------------------------------------------------------------------------ publish

Status RedisTransport::Impl::publish(std::string_view queue, std::string body) {
  if (Status st = check_open(queue); !st) return st;
  auto lease = pool_.acquire();
  if (!lease) return lease.error();
  const Keys k = keys(queue);
  std::vector<Call> calls(1);
  if (opt_.layout == Layout::Legacy) {
    calls[0].args = {"RPUSH", k.ready, body};  // RDS-11
  } else {
    calls[0] = {ScriptId::LaravelPush, {k.ready, k.notify}, {body}};  // RDS-42
  }
  auto replies = scripts_.run(**lease, calls);
  if (!replies) return replies.error();
  if ((*replies)[0]->type == REDIS_REPLY_ERROR)
    return detail::server_error("publish", (*replies)[0].get());
  return {};
}

Status RedisTransport::Impl::publish_many(std::string_view queue, std::vector<std::string> bodies) {
  if (Status st = check_open(queue); !st) return st;
  if (bodies.empty()) return {};
  auto lease = pool_.acquire();
  if (!lease) return lease.error();
  const Keys k = keys(queue);
  std::vector<Call> calls;
  for (std::size_t i = 0; i < bodies.size(); i += kPublishChunk) {
    const std::size_t end = std::min(bodies.size(), i + kPublishChunk);
    Call call;
    if (opt_.layout == Layout::Legacy) {
      call.args = {"RPUSH", k.ready};
    } else {
      call.script = ScriptId::LaravelPush;
      call.keys = {k.ready, k.notify};
    }
    call.args.insert(call.args.end(), bodies.begin() + static_cast<std::ptrdiff_t>(i),
                     bodies.begin() + static_cast<std::ptrdiff_t>(end));
    calls.push_back(std::move(call));
  }
  auto replies = scripts_.run(**lease, calls);
  if (!replies) return replies.error();
  for (const auto& r : *replies) {
    if (r->type == REDIS_REPLY_ERROR) return detail::server_error("batch publish", r.get());
  }
  return {};
}

Status RedisTransport::Impl::publish_delayed(std::string_view queue, std::string body,
                                             milliseconds delay) {
  if (Status st = check_open(queue); !st) return st;
  if (opt_.layout == Layout::Legacy) {
    return Error(ErrorCode::DelayUnsupported,
                 "redis: the default layout has no delayed set (RDS-13); use layout=laravel");
  }
  if (delay.count() <= 0) return publish(queue, std::move(body));  // RDS-44
  auto lease = pool_.acquire();
  if (!lease) return lease.error();
  const std::string due = std::to_string(now_seconds() + ceil_seconds(delay));
  auto r = (*lease)->command({"ZADD", keys(queue).schedule, due, body});
  if (!r) return r.error();
  if ((*r)->type == REDIS_REPLY_ERROR) return detail::server_error("delayed publish", r->get());
  return {};
}

// ---------------------------------------------------------------------------------------- pop

std::vector<RedisTransport::Impl::PendingAck> RedisTransport::Impl::take_pending() {
  std::lock_guard lock(mu_);
  std::vector<PendingAck> out;
  out.swap(pending_);
  return out;
}

void RedisTransport::Impl::restore_pending(std::vector<PendingAck>&& acks) {
  // The round trip failed before the server answered: the acks may or may not have run. Sending
  // them again is safe (a gate that answers 0 only warns); dropping them would mean redelivery.
  std::lock_guard lock(mu_);
  acks.insert(acks.end(), std::make_move_iterator(pending_.begin()),
              std::make_move_iterator(pending_.end()));
  pending_ = std::move(acks);
}

void RedisTransport::Impl::append_ack_calls(const std::vector<PendingAck>& acks,
                                            std::vector<Call>& calls,
                                            std::vector<Keys>& key_storage) const {
  // One gated batch script per run of acks for the same queue (the keys differ per queue).
  key_storage.reserve(acks.size());
  for (std::size_t i = 0; i < acks.size();) {
    std::size_t j = i;
    Call call;
    call.script = opt_.layout == Layout::Legacy ? ScriptId::AckGated : ScriptId::LaravelAckGated;
    key_storage.push_back(keys(acks[i].queue));
    const Keys& k = key_storage.back();
    if (opt_.layout == Layout::Legacy) {
      call.keys = {k.schedule, k.in_flight};
    } else {
      call.keys = {k.in_flight};
    }
    for (; j < acks.size() && acks[j].queue == acks[i].queue; ++j) {
      call.args.emplace_back(acks[j].member);
    }
    calls.push_back(std::move(call));
    i = j;
  }
}

void RedisTransport::Impl::settle_ack_replies(const std::vector<PendingAck>& acks,
                                              const std::vector<ReplyPtr>& replies) const {
  std::size_t used = 0;
  for (std::size_t i = 0; i < acks.size();) {
    std::size_t j = i;
    while (j < acks.size() && acks[j].queue == acks[i].queue)
      ++j;
    const redisReply* r = replies[used++].get();
    if (r->type == REDIS_REPLY_ARRAY) {
      for (std::size_t e = 0; e < r->elements; ++e)
        warn_expired("ack", acks[i].queue);
    } else {
      // The script failed (e.g. a key of the wrong type): these reservations stay and are
      // recovered after retry_after.
      log(LogLevel::Error, "redis: ack of " + std::to_string(j - i) + " message(s) on queue " +
                               quoted(acks[i].queue) + " failed: " + std::string(detail::str(r)));
    }
    i = j;
  }
}

ReceivedMessage RedisTransport::Impl::make_message(std::string_view queue, std::string_view stored,
                                                   std::string member, bool flagged) const {
  ReceivedMessage m;
  m.queue = std::string(queue);
  if (opt_.layout == Layout::Legacy) {
    // RDS-15/16: a frame is unwrapped; the handle keeps the stored value (inside the member).
    if (auto unframed = detail::unframe(stored)) {
      m.body = std::move(unframed->body);
      m.headers = std::move(unframed->headers);
    } else {
      m.body = std::string(stored);
    }
  } else {
    m.body = std::string(stored);  // RDS-47: the head, byte for byte
  }
  if (flagged) {
    m.poison = true;  // RDS-46
    m.poison_reason =
        "the reserve script could not decode the head (not JSON, not an object, or attempts "
        "missing or not a number)";
  } else if (auto env = try_decode(m.body); !env) {
    m.poison = true;  // RDS-27, RDS-48
    m.poison_reason = env.error().what();
  }
  m.handle = Handle{std::move(member)};
  return m;
}

Result<std::vector<ReceivedMessage>> RedisTransport::Impl::reserve_round(detail::Connection& c,
                                                                         std::string_view queue,
                                                                         QueueState& st) {
  std::string tokens;
  try {
    tokens = secure_random_hex(kTokenBytes * static_cast<std::size_t>(opt_.prefetch));
  } catch (const Error& e) {
    return e;  // RDS-17: never a weaker source
  }
  const std::string now = std::to_string(now_seconds());
  const std::string limit = std::to_string(opt_.migration_batch_size);
  const std::string score =
      opt_.retry_after ? std::to_string(now_seconds() + opt_.retry_after->count()) : "+inf";

  std::vector<PendingAck> acks = take_pending();
  std::vector<Call> calls;
  std::vector<Keys> ack_keys;
  append_ack_calls(acks, calls, ack_keys);
  const std::size_t first_own = calls.size();
  const Keys& k = st.keys;
  Call reserve;
  if (opt_.layout == Layout::Legacy) {
    calls.push_back({ScriptId::Sweep, {k.schedule, k.in_flight, k.ready}, {now, limit}});
    reserve = {ScriptId::Reserve, {k.ready, k.in_flight, k.schedule}, {score}};
  } else {
    calls.push_back({ScriptId::LaravelMigrate, {k.schedule, k.ready, k.notify}, {now, limit}});
    if (opt_.retry_after) {
      calls.push_back({ScriptId::LaravelMigrate, {k.in_flight, k.ready, k.notify}, {now, limit}});
    }
    reserve = {ScriptId::LaravelPop, {k.ready, k.in_flight, k.notify}, {score}};
  }
  for (std::size_t i = 0; i < tokens.size(); i += kTokenHex) {
    reserve.args.emplace_back(std::string_view(tokens).substr(i, kTokenHex));
  }
  calls.push_back(std::move(reserve));

  auto replies = scripts_.run(c, calls);
  if (!replies) {
    restore_pending(std::move(acks));
    return replies.error();
  }
  settle_ack_replies(acks, *replies);
  for (std::size_t i = first_own; i + 1 < replies->size(); ++i) {
    if ((*replies)[i]->type == REDIS_REPLY_ERROR) {
      return detail::server_error(opt_.layout == Layout::Legacy ? "sweep" : "migrate",
                                  (*replies)[i].get());
    }
  }
  const redisReply* r = replies->back().get();
  if (r->type == REDIS_REPLY_ERROR) return detail::server_error("reserve", r);
  std::vector<ReceivedMessage> out;
  if (r->type != REDIS_REPLY_ARRAY) return out;  // RDS-46: nothing reserved
  if (opt_.layout == Layout::Legacy) {
    out.reserve(r->elements);
    for (std::size_t i = 0; i < r->elements; ++i) {
      const std::string_view stored = detail::str(r->element[i]);
      std::string member;
      member.reserve(kTokenHex + 1 + stored.size());
      member.append(std::string_view(tokens).substr(i * kTokenHex, kTokenHex));
      member.push_back(':');
      member.append(stored);
      out.push_back(make_message(queue, stored, std::move(member), false));
    }
  } else {
    out.reserve(r->elements / 2);
    for (std::size_t i = 0; i + 1 < r->elements; i += 2) {
      const std::string_view head = detail::str(r->element[i]);
      std::string member(detail::str(r->element[i + 1]));
      const bool flagged = member.starts_with(detail::kPoisonMemberPrefix);
      out.push_back(make_message(queue, head, std::move(member), flagged));
    }
  }
  return out;
}

Result<bool> RedisTransport::Impl::wait_for_notify(detail::Connection& c, const QueueState& st,
                                                   steady_clock::time_point deadline) {
  // RDS-53: BLPOP on :notify, at most 1 s, never 0 (which blocks forever) and never below 1 ms
  // (Redis 6.2 truncates that to 0). Rounded up to whole milliseconds.
  const auto left = std::chrono::ceil<milliseconds>(deadline - steady_clock::now());
  if (left < milliseconds(1)) return false;
  const auto slice = std::min(left, kMaxSlice);
  char secs[32];
  std::snprintf(secs, sizeof secs, "%lld.%03lld", static_cast<long long>(slice.count() / 1000),
                static_cast<long long>(slice.count() % 1000));
  auto r = c.command({"BLPOP", st.keys.notify, secs});
  if (!r) return r.error();
  if ((*r)->type == REDIS_REPLY_ERROR) return detail::server_error("BLPOP", r->get());
  return true;
}

Result<std::optional<ReceivedMessage>> RedisTransport::Impl::pop(std::string_view queue,
                                                                 milliseconds timeout) {
  if (Status st = check_open(queue); !st) return st.error();
  QueueState& st = state_for(queue);
  {
    std::lock_guard lock(mu_);
    if (!st.prefetched.empty()) {
      std::optional<ReceivedMessage> m(std::move(st.prefetched.front()));
      st.prefetched.pop_front();
      return m;
    }
  }
  const auto deadline = steady_clock::now() + timeout;
  for (;;) {
    auto lease = pool_.acquire();
    if (!lease) return lease.error();
    auto got = reserve_round(**lease, queue, st);
    if (!got) return got.error();
    if (!got->empty()) {
      st.backoff = kFirstBackoff;
      std::optional<ReceivedMessage> first(std::move(got->front()));
      std::lock_guard lock(mu_);
      for (auto it = got->begin() + 1; it != got->end(); ++it)
        st.prefetched.push_back(std::move(*it));
      return first;
    }
    if (timeout.count() <= 0 || steady_clock::now() >= deadline)
      return std::optional<ReceivedMessage>();
    if (opt_.layout == Layout::Laravel) {
      auto waited = wait_for_notify(**lease, st, deadline);
      if (!waited) return waited.error();
      if (!*waited) return std::optional<ReceivedMessage>();
    } else {
      // RDS-21/22: sleep-poll; the sleep never passes the deadline and close() interrupts it.
      const auto sleep =
          std::min<steady_clock::duration>(st.backoff, deadline - steady_clock::now());
      std::unique_lock lock(mu_);
      wake_.wait_for(lock, sleep, [&] { return closed_.load(std::memory_order_acquire); });
      st.backoff = std::min(2 * st.backoff, kMaxBackoff);
    }
    if (closed_.load(std::memory_order_acquire)) return ClosedError("redis transport is closed");
  }
}

// --------------------------------------------------------------------------------- settlement

Status RedisTransport::Impl::ack(const ReceivedMessage& msg) {
  if (closed_.load(std::memory_order_acquire)) return ClosedError("redis transport is closed");
  const Handle* h = handle_of(msg);
  if (h == nullptr)
    return Error(ErrorCode::Usage, "redis: ack of a message this transport did not deliver");
  if (opt_.pipelined_acks) {
    bool full = false;
    {
      std::lock_guard lock(mu_);
      pending_.push_back({msg.queue, h->member});
      full = pending_.size() >= kMaxPendingAcks;
    }
    return full ? flush() : Status{};
  }
  const Keys k = keys(msg.queue);
  Call call{opt_.layout == Layout::Legacy ? ScriptId::AckGated : ScriptId::LaravelAckGated,
            {},
            {h->member}};
  if (opt_.layout == Layout::Legacy) {
    call.keys = {k.schedule, k.in_flight};
  } else {
    call.keys = {k.in_flight};
  }
  return run_gated("ack", msg.queue, std::move(call));
}

Status RedisTransport::Impl::flush() {
  std::vector<PendingAck> acks = take_pending();
  if (acks.empty()) return {};
  auto lease = pool_.acquire();
  if (!lease) {
    restore_pending(std::move(acks));
    return lease.error();
  }
  std::vector<Call> calls;
  std::vector<Keys> ack_keys;
  append_ack_calls(acks, calls, ack_keys);
  auto replies = scripts_.run(**lease, calls);
  if (!replies) {
    restore_pending(std::move(acks));
    return replies.error();
  }
  settle_ack_replies(acks, *replies);
  return {};
}

Status RedisTransport::Impl::run_gated(std::string_view op, std::string_view queue, Call call) {
  auto lease = pool_.acquire();
  if (!lease) return lease.error();
  auto replies = scripts_.run(**lease, {std::move(call)});
  if (!replies) return replies.error();
  const redisReply* r = (*replies)[0].get();
  if (r->type == REDIS_REPLY_ERROR) return detail::server_error(op, r);
  // The gate answered 0 (or, for a batch ack, listed the member as gone): RDS-9.
  if ((r->type == REDIS_REPLY_INTEGER && r->integer == 0) ||
      (r->type == REDIS_REPLY_ARRAY && r->elements > 0)) {
    warn_expired(op, queue);
  }
  return {};
}

Status RedisTransport::Impl::release(const ReceivedMessage& msg, milliseconds delay) {
  if (closed_.load(std::memory_order_acquire)) return ClosedError("redis transport is closed");
  const Handle* h = handle_of(msg);
  if (h == nullptr)
    return Error(ErrorCode::Usage, "redis: release of a message this transport did not deliver");
  // RDS-25/56: a poison body is never re-queued (it would loop) and never re-encoded.
  if (msg.poison) {
    return Error(ErrorCode::ReleaseUnsupported, "redis: a poison message cannot be released");
  }
  auto next = increment_attempts(msg.body);  // RDS-57: only the attempts lexeme changes
  if (!next) {
    return Error(ErrorCode::ReleaseUnsupported,
                 std::string("redis: cannot raise attempts: ") + next.error().what());
  }
  const Keys k = keys(msg.queue);
  if (opt_.layout == Layout::Legacy) {
    // RDS-25: no delayed set, so `delay` is not honoured; a frame stays a frame.
    std::string value =
        msg.headers.empty() ? std::move(*next) : detail::encode_frame(*next, msg.headers);
    return run_gated("release", msg.queue,
                     {ScriptId::SettleTo, {k.schedule, k.in_flight, k.ready}, {h->member, value}});
  }
  const std::string due = std::to_string(now_seconds() + ceil_seconds(delay));  // RDS-54
  return run_gated("release", msg.queue,
                   {ScriptId::LaravelRelease, {k.schedule, k.in_flight}, {h->member, due, *next}});
}

Status RedisTransport::Impl::dead_letter(const ReceivedMessage& msg, std::string_view dlq,
                                         std::string body) {
  if (Status st = check_open(dlq); !st) return st;
  const Handle* h = handle_of(msg);
  if (h == nullptr)
    return Error(ErrorCode::Usage,
                 "redis: dead-letter of a message this transport did not deliver");
  const Keys k = keys(msg.queue);
  if (opt_.layout == Layout::Legacy) {
    const std::string dlq_key(dlq);  // RDS-10: the DLQ name verbatim
    return run_gated("dead-letter", msg.queue,
                     {ScriptId::SettleTo, {k.schedule, k.in_flight, dlq_key}, {h->member, body}});
  }
  const Keys d = keys(dlq);  // RDS-41: prefix + DLQ name, with its own notify list
  return run_gated(
      "dead-letter", msg.queue,
      {ScriptId::LaravelDeadLetter, {k.in_flight, d.ready, d.notify}, {h->member, body}});
}

// ---------------------------------------------------------------------------- stats and close

Result<QueueStats> RedisTransport::Impl::stats(std::string_view queue, std::string_view dlq) {
  if (Status st = check_open(queue); !st) return st.error();
  const Keys k = keys(queue);
  const std::string dlq_name = dlq.empty() ? default_dead_letter_name(queue) : std::string(dlq);
  const std::string dlq_key = opt_.layout == Layout::Legacy ? dlq_name : keys(dlq_name).ready;
  std::vector<Call> calls(4);
  calls[0].args = {"LLEN", k.ready};
  if (opt_.layout == Layout::Legacy) {
    calls[1].args = {"LLEN", k.in_flight};
    calls[2].args = {"ECHO", "0"};  // no delayed set in this layout
  } else {
    calls[1].args = {"ZCARD", k.in_flight};
    calls[2].args = {"ZCARD", k.schedule};
  }
  calls[3].args = {"LLEN", dlq_key};
  auto lease = pool_.acquire();
  if (!lease) return lease.error();
  auto replies = scripts_.run(**lease, calls);
  if (!replies) return replies.error();
  std::int64_t n[4] = {};
  for (std::size_t i = 0; i < 4; ++i) {
    const redisReply* r = (*replies)[i].get();
    if (r->type == REDIS_REPLY_ERROR) return detail::server_error("stats", r);
    n[i] = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
  }
  QueueStats out;
  out.ready = n[0];
  out.in_flight = n[1];
  if (opt_.layout == Layout::Laravel) out.delayed = n[2];
  out.dead_letter = n[3];
  return out;
}

Result<std::vector<PeekedMessage>> RedisTransport::Impl::peek(std::string_view queue,
                                                              std::size_t max) {
  if (Status st = check_open(queue); !st) return st.error();
  auto lease = pool_.acquire();
  if (!lease) return lease.error();
  const std::string stop = max == 0 ? "-1" : std::to_string(max - 1);
  auto r = (*lease)->command({"LRANGE", keys(queue).ready, "0", stop});
  if (!r) return r.error();
  if ((*r)->type == REDIS_REPLY_ERROR) return detail::server_error("peek", r->get());
  std::vector<PeekedMessage> out;
  out.reserve((*r)->elements);
  for (std::size_t i = 0; i < (*r)->elements; ++i) {
    const std::string_view stored = detail::str((*r)->element[i]);
    PeekedMessage m;
    if (auto unframed = opt_.layout == Layout::Legacy ? detail::unframe(stored) : std::nullopt) {
      m.body = std::move(unframed->body);
      m.headers = std::move(unframed->headers);
    } else {
      m.body = std::string(stored);
    }
    out.push_back(std::move(m));
  }
  return out;
}

Status RedisTransport::Impl::give_back_prefetched() {
  std::map<std::string, std::deque<ReceivedMessage>> back;
  {
    std::lock_guard lock(mu_);
    for (auto& [name, st] : queues_) {
      if (!st.prefetched.empty()) back.emplace(name, std::move(st.prefetched));
    }
  }
  if (back.empty()) return {};
  auto lease = pool_.acquire();
  if (!lease) return lease.error();
  std::vector<Call> calls;
  std::vector<Keys> key_storage;
  key_storage.reserve(back.size());
  for (auto& [name, msgs] : back) {
    key_storage.push_back(keys(name));
    const Keys& k = key_storage.back();
    Call call;
    if (opt_.layout == Layout::Legacy) {
      call = {ScriptId::GiveBack, {k.schedule, k.in_flight, k.ready}, {}};
    } else {
      call = {ScriptId::LaravelGiveBack, {k.in_flight, k.ready, k.notify}, {}};
    }
    // Last first, so LPUSH leaves them at the head in their original order.
    for (auto it = msgs.rbegin(); it != msgs.rend(); ++it) {
      call.args.emplace_back(handle_of(*it)->member);
      if (opt_.layout == Layout::Laravel) call.args.emplace_back(it->body);
    }
    calls.push_back(std::move(call));
  }
  auto replies = scripts_.run(**lease, calls);
  if (!replies) return replies.error();
  for (const auto& r : *replies) {
    if (r->type == REDIS_REPLY_ERROR) return detail::server_error("give back prefetched", r.get());
  }
  return {};
}

void RedisTransport::Impl::close() {
  if (closed_.exchange(true, std::memory_order_acq_rel)) return;
  {
    std::lock_guard lock(mu_);
    wake_.notify_all();
  }
  // Best effort: what cannot be sent now is recovered after retry_after, never lost.
  if (Status st = flush(); !st) {
    log(LogLevel::Warning,
        std::string("redis: pending acks not sent at close (the messages will ") +
            "be redelivered after retry_after): " + st.error().what());
  }
  if (Status st = give_back_prefetched(); !st) {
    log(LogLevel::Warning,
        std::string("redis: prefetched messages not given back at close (they ") +
            "return after retry_after): " + st.error().what());
  }
  pool_.close();
}

// --------------------------------------------------------------------------------- the facade

RedisTransport::RedisTransport(Options options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
RedisTransport::RedisTransport(std::string_view url) : RedisTransport(parse_url(url)) {}
RedisTransport::RedisTransport(redisContext* borrowed, Options options)
    : impl_(std::make_unique<Impl>(borrowed, std::move(options))) {}
RedisTransport::~RedisTransport() {
  impl_->close();
}

Status RedisTransport::publish(std::string_view queue, std::string body) {
  return impl_->publish(queue, std::move(body));
}
Result<std::optional<ReceivedMessage>> RedisTransport::pop(std::string_view queue,
                                                           milliseconds timeout) {
  return impl_->pop(queue, timeout);
}
Status RedisTransport::ack(const ReceivedMessage& msg) {
  return impl_->ack(msg);
}
void RedisTransport::close() {
  impl_->close();
}

Status RedisTransport::publish_with_headers(std::string_view queue, std::string body,
                                            const Headers& headers) {
  if (impl_->opt_.layout == Layout::Laravel)
    return impl_->publish(queue, std::move(body));    // RDS-43
  Headers clean = detail::sanitize_headers(headers);  // RDS-12
  if (clean.empty()) return impl_->publish(queue, std::move(body));
  std::string frame;
  try {
    frame = detail::encode_frame(body, clean);  // RDS-14
  } catch (const EncodeError& e) {
    return e;  // a header that is not valid UTF-8 (RT-2: reported, never thrown)
  }
  return impl_->publish(queue, std::move(frame));
}
Status RedisTransport::release(const ReceivedMessage& msg, milliseconds delay) {
  return impl_->release(msg, delay);
}
Status RedisTransport::dead_letter(const ReceivedMessage& msg, std::string_view dead_letter_queue,
                                   std::string body) {
  return impl_->dead_letter(msg, dead_letter_queue, std::move(body));
}
Status RedisTransport::publish_batch(std::string_view queue, std::vector<std::string> bodies) {
  return impl_->publish_many(queue, std::move(bodies));
}
Status RedisTransport::publish_delayed(std::string_view queue, std::string body,
                                       milliseconds delay) {
  return impl_->publish_delayed(queue, std::move(body), delay);
}
Status RedisTransport::flush() {
  return impl_->flush();
}
Result<QueueStats> RedisTransport::stats(std::string_view queue,
                                         std::string_view dead_letter_queue) {
  return impl_->stats(queue, dead_letter_queue);
}
Result<std::vector<PeekedMessage>> RedisTransport::peek(std::string_view queue, std::size_t max) {
  return impl_->peek(queue, max);
}
Keys RedisTransport::keys(std::string_view queue) const {
  return impl_->keys(queue);
}
const Options& RedisTransport::options() const noexcept {
  return impl_->opt_;
}

}  // namespace babelqueue::redis
