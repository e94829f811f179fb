// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The Redis transport over one layout strategy (layout.hpp): the connection pool, prefetch,
// pipelined acks, the empty-queue wait and close. Every reserve round trip also carries the
// pending acknowledgements and reserves up to `prefetch` messages, each with its own deadline /
// reserved member, so throughput comes from fewer round trips, never from weaker guarantees.

#include <babelqueue/codec.hpp>
#include <babelqueue/redis/transport.hpp>
#include <babelqueue/spi/ack_batcher.hpp>
#include <babelqueue/spi/attempts.hpp>
#include <babelqueue/spi/backoff.hpp>
#include <babelqueue/spi/closed_guard.hpp>
#include <babelqueue/spi/prefetch_buffer.hpp>
#include <babelqueue/spi/secure_random.hpp>

#include <algorithm>
#include <any>
#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <babelqueue/spi/text.hpp>
#include "connection.hpp"
#include "layout.hpp"
#include "scripts.hpp"

namespace babelqueue::redis {

using detail::Call;
using detail::ReplyPtr;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

using spi::quoted;

constexpr std::size_t kTokenBytes = detail::kTokenHex / 2;  // RDS-17
constexpr std::size_t kMaxPendingAcks = 256;                // Options::pipelined_acks
constexpr std::size_t kPublishChunk = 1000;                 // bodies per command in publish_batch
constexpr milliseconds kFirstPoll{100};                     // RDS-22
constexpr milliseconds kMaxPoll{1000};

constexpr std::string_view kFlaggedReason =
    "the reserve script could not decode the head (not JSON, not an object, or attempts "
    "missing or not a number)";

/// The ack handle: the member that gates every settlement (RDS-24, RDS-53).
struct Handle {
  std::string member;
};

struct PendingAck {
  std::string queue;
  std::string member;
};

std::int64_t now_seconds() {
  using namespace std::chrono;
  return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

// floor(now) + ceil(delay) (RDS-44, RDS-54).
std::string due_after(milliseconds delay) {
  return std::to_string(now_seconds() + (std::max<std::int64_t>(delay.count(), 0) + 999) / 1000);
}

const Handle* handle_of(const ReceivedMessage& msg) {
  return std::any_cast<Handle>(&msg.handle);
}

Options validated(Options o) {
  if (o.retry_after && o.retry_after->count() < 0) {
    throw ConfigError("redis retry_after must be >= 0 seconds or none (RDS-59)");
  }
  if (o.migration_batch_size == 0 || o.migration_batch_size < -1) {
    throw ConfigError("redis migration_batch_size must be -1 (all) or >= 1 (RDS-51)");
  }
  if (o.prefetch < 1) throw ConfigError("redis prefetch must be >= 1");
  return o;
}

}  // namespace

class RedisTransport::Impl {
 public:
  explicit Impl(Options options)
      : opt_(validated(std::move(options))),
        layout_(detail::make_layout(opt_)),
        pool_(opt_.connection),
        scripts_(layout_->scripts()) {}
  Impl(redisContext* borrowed, Options options)
      : opt_(validated(std::move(options))),
        layout_(detail::make_layout(opt_)),
        pool_(borrowed),
        scripts_(layout_->scripts()) {}

  Status publish(std::string_view queue, std::string body);
  Status publish_with_headers(std::string_view queue, std::string body, const Headers& headers);
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
  Keys keys(std::string_view queue) const { return layout_->keys(queue); }

  const Options opt_;

 private:
  struct QueueState {
    Keys keys;
    spi::Backoff poll{kFirstPoll, kMaxPoll};  // RDS-22, survives across pops
  };

  Status check_open(std::string_view op, std::string_view queue) const;
  QueueState& state_for(std::string_view queue);
  void log(LogLevel level, const std::string& text) const;
  void warn_expired(std::string_view op, std::string_view queue) const;
  const Handle* delivered(const ReceivedMessage& msg, std::string_view op, Status& st) const;
  Status run_all(std::string_view what, const std::vector<Call>& calls);
  Status run_gated(std::string_view op, std::string_view queue, Call call);

  // One round trip: the pending acks, then the layout's recovery, then a batched reserve.
  Result<std::vector<ReceivedMessage>> reserve_round(detail::Connection& c, std::string_view queue,
                                                     const Keys& k);
  void append_ack_calls(const std::vector<PendingAck>& acks, std::vector<Call>& calls,
                        std::vector<Keys>& key_storage) const;
  // Reads the replies of the ack calls at the front of `replies`.
  void settle_ack_replies(const std::vector<PendingAck>& acks,
                          const std::vector<ReplyPtr>& replies) const;
  void make_message(std::string_view queue, detail::Reserved&& reserved, ReceivedMessage& m) const;
  Status give_back_prefetched();

  std::unique_ptr<detail::LayoutStrategy> layout_;
  detail::Pool pool_;
  detail::Scripts scripts_;
  spi::ClosedGuard closed_{"redis transport"};
  std::atomic<bool> headers_dropped_warned_{false};
  spi::InterruptibleWait wake_;
  spi::AckBatcher<PendingAck> acks_{kMaxPendingAcks};
  spi::PrefetchBuffer<ReceivedMessage> prefetched_;  // reserved, not yet handed to the App
  std::mutex mu_;                                    // guards queues_
  std::map<std::string, QueueState, std::less<>> queues_;
};

Status RedisTransport::Impl::check_open(std::string_view op, std::string_view queue) const {
  if (closed_.closed()) return closed_.error(op);
  if (queue.empty()) return ConfigError("redis: empty queue name");
  return {};
}

RedisTransport::Impl::QueueState& RedisTransport::Impl::state_for(std::string_view queue) {
  std::lock_guard lock(mu_);
  auto it = queues_.find(queue);
  if (it == queues_.end()) {
    it = queues_.emplace(std::string(queue), QueueState{}).first;
    it->second.keys = layout_->keys(queue);
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

// The handle of a message this transport delivered, or nullptr with `st` set.
const Handle* RedisTransport::Impl::delivered(const ReceivedMessage& msg, std::string_view op,
                                              Status& st) const {
  if (closed_.closed()) {
    st = closed_.error(op);
    return nullptr;
  }
  const Handle* h = handle_of(msg);
  if (h == nullptr) {
    st = Error(ErrorCode::Usage,
               "redis: " + std::string(op) + " of a message this transport did not deliver");
  }
  return h;
}

Status RedisTransport::Impl::run_all(std::string_view what, const std::vector<Call>& calls) {
  auto lease = pool_.acquire();
  if (!lease) return lease.error();
  auto replies = scripts_.run(**lease, calls);
  if (!replies) return replies.error();
  for (const auto& r : *replies) {
    if (r->type == REDIS_REPLY_ERROR) return detail::server_error(what, r.get());
  }
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

// ------------------------------------------------------------------------------------ publish

Status RedisTransport::Impl::publish(std::string_view queue, std::string body) {
  if (Status st = check_open("publish", queue); !st) return st;
  const Keys k = layout_->keys(queue);
  std::vector<Call> calls{layout_->push(k)};
  calls[0].args.emplace_back(body);
  return run_all("publish", calls);
}

Status RedisTransport::Impl::publish_with_headers(std::string_view queue, std::string body,
                                                  const Headers& headers) {
  std::string stored;
  try {
    stored = layout_->with_headers(std::move(body), headers);
  } catch (const EncodeError& e) {
    return e;  // a header that is not valid UTF-8 (RT-2: reported, never thrown)
  }
  if (!headers.empty() && !layout_->carries_headers() &&
      !headers_dropped_warned_.exchange(true, std::memory_order_relaxed)) {
    log(LogLevel::Warning,
        "the Laravel layout stores no out-of-band headers (RDS-43: a Laravel worker cannot "
        "unwrap a frame); headers such as traceparent are dropped (said once per transport)");
  }
  return publish(queue, std::move(stored));
}

Status RedisTransport::Impl::publish_many(std::string_view queue, std::vector<std::string> bodies) {
  if (Status st = check_open("publish", queue); !st) return st;
  if (bodies.empty()) return {};
  const Keys k = layout_->keys(queue);
  std::vector<Call> calls;
  for (std::size_t i = 0; i < bodies.size(); i += kPublishChunk) {
    const std::size_t end = std::min(bodies.size(), i + kPublishChunk);
    Call call = layout_->push(k);
    call.args.insert(call.args.end(), bodies.begin() + static_cast<std::ptrdiff_t>(i),
                     bodies.begin() + static_cast<std::ptrdiff_t>(end));
    calls.push_back(std::move(call));
  }
  return run_all("batch publish", calls);
}

Status RedisTransport::Impl::publish_delayed(std::string_view queue, std::string body,
                                             milliseconds delay) {
  if (Status st = check_open("publish", queue); !st) return st;
  const Keys k = layout_->keys(queue);
  const std::string due = due_after(delay);
  auto call = layout_->push_delayed(k, due, body);
  if (!call) return call.error();
  if (delay.count() <= 0) return publish(queue, std::move(body));  // RDS-44
  return run_all("delayed publish", {std::move(*call)});
}

// ---------------------------------------------------------------------------------------- pop

void RedisTransport::Impl::append_ack_calls(const std::vector<PendingAck>& acks,
                                            std::vector<Call>& calls,
                                            std::vector<Keys>& key_storage) const {
  // One gated batch script per run of acks for the same queue (the keys differ per queue).
  key_storage.reserve(acks.size());
  for (std::size_t i = 0; i < acks.size();) {
    key_storage.push_back(layout_->keys(acks[i].queue));
    Call call = layout_->ack(key_storage.back());
    std::size_t j = i;
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

void RedisTransport::Impl::make_message(std::string_view queue, detail::Reserved&& reserved,
                                        ReceivedMessage& m) const {
  m.queue = std::string(queue);
  layout_->unwrap(reserved.stored, m.body, m.headers);
  if (reserved.flagged) {
    m.poison = true;  // RDS-46
    m.poison_reason = kFlaggedReason;
  } else if (auto env = try_decode(m.body); env) {
    m.decoded.emplace(std::move(*env));  // decode once: the App dispatches this envelope
  } else {
    m.poison = true;  // RDS-27, RDS-48
    m.poison_reason = env.error().what();
  }
  m.handle = Handle{std::move(reserved.member)};
}

Result<std::vector<ReceivedMessage>> RedisTransport::Impl::reserve_round(detail::Connection& c,
                                                                         std::string_view queue,
                                                                         const Keys& k) {
  std::string tokens;
  try {
    tokens = spi::secure_random_hex(kTokenBytes * static_cast<std::size_t>(opt_.prefetch));
  } catch (const Error& e) {
    return e;  // RDS-17: never a weaker source
  }
  const std::string now = std::to_string(now_seconds());
  const std::string limit = std::to_string(opt_.migration_batch_size);
  const std::string score =
      opt_.retry_after ? std::to_string(now_seconds() + opt_.retry_after->count()) : "+inf";

  std::vector<PendingAck> acks = acks_.take();
  std::vector<Call> calls;
  std::vector<Keys> ack_keys;
  append_ack_calls(acks, calls, ack_keys);
  const std::size_t first_own = calls.size();
  layout_->recover(k, now, limit, calls);
  Call reserve = layout_->reserve(k, score);
  for (std::size_t i = 0; i < tokens.size(); i += detail::kTokenHex) {
    reserve.args.emplace_back(std::string_view(tokens).substr(i, detail::kTokenHex));
  }
  calls.push_back(std::move(reserve));

  auto replies = scripts_.run(c, calls);
  if (!replies) {
    // The server may or may not have run the acks. Sending them again is safe (a gate that
    // answers 0 only warns); dropping them would mean a redelivery.
    acks_.restore(std::move(acks));
    return replies.error();
  }
  settle_ack_replies(acks, *replies);
  for (std::size_t i = first_own; i + 1 < replies->size(); ++i) {
    if ((*replies)[i]->type == REDIS_REPLY_ERROR) {
      return detail::server_error(layout_->recovery_name(), (*replies)[i].get());
    }
  }
  const redisReply* r = replies->back().get();
  if (r->type == REDIS_REPLY_ERROR) return detail::server_error("reserve", r);
  std::vector<ReceivedMessage> out;
  if (r->type != REDIS_REPLY_ARRAY) return out;  // RDS-46: nothing reserved
  std::vector<detail::Reserved> reserved = layout_->reserved(*r, tokens);
  out.reserve(reserved.size());
  for (detail::Reserved& one : reserved)
    make_message(queue, std::move(one), out.emplace_back());
  return out;
}

Result<std::optional<ReceivedMessage>> RedisTransport::Impl::pop(std::string_view queue,
                                                                 milliseconds timeout) {
  if (Status st = check_open("pop", queue); !st) return st.error();
  if (std::optional<ReceivedMessage> m = prefetched_.take(queue)) return m;
  QueueState& st = state_for(queue);
  const auto deadline = steady_clock::now() + timeout;
  for (;;) {
    auto lease = pool_.acquire();
    if (!lease) return lease.error();
    auto got = reserve_round(**lease, queue, st.keys);
    if (!got) return got.error();
    if (!got->empty()) {
      st.poll.reset();
      prefetched_.put(queue, std::move(*got));
      return prefetched_.take(queue);
    }
    if (timeout.count() <= 0 || steady_clock::now() >= deadline)
      return std::optional<ReceivedMessage>();
    detail::EmptyQueueWait wait{st.keys, st.poll, wake_, deadline};
    auto waited = layout_->wait(**lease, wait);
    if (!waited) return waited.error();
    if (!*waited) return std::optional<ReceivedMessage>();
    if (closed_.closed()) return closed_.error("pop");
  }
}

// --------------------------------------------------------------------------------- settlement

Status RedisTransport::Impl::ack(const ReceivedMessage& msg) {
  Status st;
  const Handle* h = delivered(msg, "ack", st);
  if (h == nullptr) return st;
  if (opt_.pipelined_acks) {
    return acks_.add({msg.queue, h->member}) ? flush() : Status{};
  }
  const Keys k = layout_->keys(msg.queue);
  Call call = layout_->ack(k);
  call.args.emplace_back(h->member);
  return run_gated("ack", msg.queue, std::move(call));
}

Status RedisTransport::Impl::flush() {
  return acks_.flush([this](std::vector<PendingAck>& batch) -> Status {
    auto lease = pool_.acquire();
    if (!lease) return lease.error();
    std::vector<Call> calls;
    std::vector<Keys> ack_keys;
    append_ack_calls(batch, calls, ack_keys);
    auto replies = scripts_.run(**lease, calls);
    if (!replies) return replies.error();
    settle_ack_replies(batch, *replies);
    return {};
  });
}

Status RedisTransport::Impl::release(const ReceivedMessage& msg, milliseconds delay) {
  Status st;
  const Handle* h = delivered(msg, "release", st);
  if (h == nullptr) return st;
  // RDS-25/56: a poison body is never re-queued (it would loop) and never re-encoded.
  if (msg.poison) {
    return Error(ErrorCode::ReleaseUnsupported, "redis: a poison message cannot be released");
  }
  auto next = spi::increment_attempts(msg.body);  // RDS-57: only the attempts lexeme changes
  if (!next) {
    return Error(ErrorCode::ReleaseUnsupported,
                 std::string("redis: cannot raise attempts: ") + next.error().what());
  }
  std::string value;
  try {
    value = layout_->with_headers(std::move(*next), msg.headers);  // a frame stays a frame
  } catch (const EncodeError& e) {
    return e;
  }
  const Keys k = layout_->keys(msg.queue);
  const std::string due = due_after(delay);
  return run_gated("release", msg.queue, layout_->release(k, h->member, value, due));
}

Status RedisTransport::Impl::dead_letter(const ReceivedMessage& msg, std::string_view dlq,
                                         std::string body) {
  if (Status st = check_open("dead-letter", dlq); !st) return st;
  Status st;
  const Handle* h = delivered(msg, "dead-letter", st);
  if (h == nullptr) return st;
  const Keys k = layout_->keys(msg.queue);
  const Keys d = layout_->keys(dlq);
  return run_gated("dead-letter", msg.queue, layout_->dead_letter(k, d, h->member, body));
}

// ------------------------------------------------------------------------ inspection and close

Result<QueueStats> RedisTransport::Impl::stats(std::string_view queue, std::string_view dlq) {
  if (Status st = check_open("stats", queue); !st) return st.error();
  const Keys k = layout_->keys(queue);
  const Keys d = layout_->keys(dlq.empty() ? default_dead_letter_name(queue) : std::string(dlq));
  std::vector<detail::Count> counts;
  counts.push_back({&QueueStats::ready, {detail::kPlainCommand, {}, {"LLEN", k.ready}}});
  layout_->counts(k, counts);
  counts.push_back({&QueueStats::dead_letter, {detail::kPlainCommand, {}, {"LLEN", d.ready}}});
  std::vector<Call> calls;
  calls.reserve(counts.size());
  for (const detail::Count& c : counts)
    calls.push_back(c.call);
  auto lease = pool_.acquire();
  if (!lease) return lease.error();
  auto replies = scripts_.run(**lease, calls);
  if (!replies) return replies.error();
  QueueStats out;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const redisReply* r = (*replies)[i].get();
    if (r->type == REDIS_REPLY_ERROR) return detail::server_error("stats", r);
    out.*counts[i].figure = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
  }
  return out;
}

Result<std::vector<PeekedMessage>> RedisTransport::Impl::peek(std::string_view queue,
                                                              std::size_t max) {
  if (Status st = check_open("peek", queue); !st) return st.error();
  auto lease = pool_.acquire();
  if (!lease) return lease.error();
  const std::string stop = max == 0 ? "-1" : std::to_string(max - 1);
  auto r = (*lease)->command({"LRANGE", layout_->keys(queue).ready, "0", stop});
  if (!r) return r.error();
  if ((*r)->type == REDIS_REPLY_ERROR) return detail::server_error("peek", r->get());
  std::vector<PeekedMessage> out;
  out.reserve((*r)->elements);
  for (std::size_t i = 0; i < (*r)->elements; ++i) {
    PeekedMessage& m = out.emplace_back();
    layout_->unwrap(detail::str((*r)->element[i]), m.body, m.headers);
  }
  return out;
}

Status RedisTransport::Impl::give_back_prefetched() {
  auto back = prefetched_.take_all();
  if (back.empty()) return {};
  std::vector<Call> calls;
  std::vector<Keys> key_storage;
  key_storage.reserve(back.size());
  for (auto& [name, msgs] : back) {
    key_storage.push_back(layout_->keys(name));
    Call call = layout_->give_back(key_storage.back());
    // Last first, so LPUSH leaves them at the head in their original order.
    for (auto it = msgs.rbegin(); it != msgs.rend(); ++it)
      layout_->give_back_item(call, handle_of(*it)->member, it->body);
    calls.push_back(std::move(call));
  }
  return run_all("give back prefetched", calls);
}

void RedisTransport::Impl::close() {
  if (!closed_.close()) return;
  wake_.interrupt();
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
  return impl_->publish_with_headers(queue, std::move(body), headers);
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
