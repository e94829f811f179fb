// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The Laravel-compatible layout (RDS-40..59): `queues:q` list, `:reserved` and `:delayed`
// zsets and the `:notify` list, written the way Laravel's own scripts write them, so C++ and
// Laravel workers and producers share one queue. Headers are not carried (RDS-43).

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <utility>

#include "layout.hpp"

namespace babelqueue::redis::detail {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kMaxSlice{1000};  // RDS-53

/// Marker the pop script puts in front of a flagged (poison) head so identical poison heads stay
/// distinct members of `:reserved` (RDS-58a). A cjson member always starts with `{`.
constexpr std::string_view kPoisonMemberPrefix = "__bq_poison:";

// RDS-42: RPUSH ready + one notify token per job; ARGV = bodies, chunked at 100 (RDS-3).
constexpr std::string_view kLaravelPush = R"lua(
local n = #ARGV
for i = 1, n, 100 do
  local j = math.min(i + 99, n)
  redis.call('RPUSH', KEYS[1], unpack(ARGV, i, j))
  local ones = {}
  for k = i, j do ones[#ones + 1] = '1' end
  redis.call('RPUSH', KEYS[2], unpack(ones))
end
return n
)lua";

// RDS-51: due members of :delayed or :reserved back to the ready tail, one notify token each.
// A flagged poison head reserved under its unique member (RDS-58a) goes back as its own bytes.
constexpr std::string_view kLaravelMigrate = R"lua(
local vals = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local n = #vals
if n == 0 then return 0 end
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - 1)
for i = 1, n do
  local v = vals[i]
  if string.sub(v, 1, 12) == '__bq_poison:' and string.sub(v, 45, 45) == ':' then
    vals[i] = string.sub(v, 46)
  end
end
for i = 1, n, 100 do
  local j = math.min(i + 99, n)
  redis.call('RPUSH', KEYS[2], unpack(vals, i, j))
  local ones = {}
  for k = i, j do ones[#ones + 1] = '1' end
  redis.call('RPUSH', KEYS[3], unpack(ones))
end
return n
)lua";

// RDS-44..46, batched: ARGV = [score, token...]. Per head: the reserved member is the cjson
// re-encode with attempts + 1 (what Laravel writes); a head cjson cannot take is flagged and
// reserved as "__bq_poison:<token>:<head>" (RDS-58a). A stock Laravel worker migrates such a
// member back to ready unchanged, so the marker is stripped from a head that still carries it.
// Returns [head, member, head, member...].
constexpr std::string_view kLaravelPop = R"lua(
local out = {}
for i = 2, #ARGV do
  local job = redis.call('LPOP', KEYS[1])
  if not job then break end
  while string.sub(job, 1, 12) == '__bq_poison:' and string.sub(job, 45, 45) == ':' do
    job = string.sub(job, 46)
  end
  local member = nil
  local ok, t = pcall(cjson.decode, job)
  if ok and type(t) == 'table' and type(t.attempts) == 'number' then
    t.attempts = t.attempts + 1
    local ok2, enc = pcall(cjson.encode, t)
    if ok2 then member = enc end
  end
  if not member then member = '__bq_poison:' .. ARGV[i] .. ':' .. job end
  redis.call('ZADD', KEYS[2], ARGV[1], member)
  redis.call('LPOP', KEYS[3])
  out[#out + 1] = job
  out[#out + 1] = member
end
return out
)lua";

// RDS-53 ack, batched: ARGV = reserved members; returns the positions that were gone.
constexpr std::string_view kLaravelAckGated = R"lua(
local expired = {}
for i = 1, #ARGV do
  if redis.call('ZREM', KEYS[1], ARGV[i]) == 0 then expired[#expired + 1] = i end
end
return expired
)lua";

// RDS-53/55 release, gated: ARGV = [member, available_at, new body].
constexpr std::string_view kLaravelRelease = R"lua(
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
return 1
)lua";

// RDS-53/58 dead-letter, gated: ARGV = [member, record]; the DLQ gets a notify token too.
constexpr std::string_view kLaravelDeadLetter = R"lua(
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('RPUSH', KEYS[3], '1')
return 1
)lua";

// close(): prefetched heads back to the head of ready, with their notify tokens, gated.
// ARGV = [member, head, ...], last message first.
constexpr std::string_view kLaravelGiveBack = R"lua(
local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('ZREM', KEYS[1], ARGV[i]) == 1 then
    redis.call('LPUSH', KEYS[2], ARGV[i + 1])
    redis.call('RPUSH', KEYS[3], '1')
    n = n + 1
  end
end
return n
)lua";

enum Script : std::size_t {
  kPushScript,
  kMigrateScript,
  kPopScript,
  kAckScript,
  kReleaseScript,
  kDeadLetterScript,
  kGiveBackScript,
};

constexpr std::array<std::string_view, 7> kScripts = {
    kLaravelPush,    kLaravelMigrate,    kLaravelPop,      kLaravelAckGated,
    kLaravelRelease, kLaravelDeadLetter, kLaravelGiveBack,
};

class LaravelLayout final : public LayoutStrategy {
 public:
  LaravelLayout(std::string key_prefix, bool recover_reserved)
      : key_prefix_(std::move(key_prefix)), recover_reserved_(recover_reserved) {}

  std::span<const std::string_view> scripts() const override { return kScripts; }

  Keys keys(std::string_view queue) const override {
    Keys k;
    k.ready = key_prefix_ + std::string(queue);  // RDS-40, RDS-41
    k.in_flight = k.ready + ":reserved";
    k.schedule = k.ready + ":delayed";
    k.notify = k.ready + ":notify";
    return k;
  }

  std::string with_headers(std::string body, const Headers&) const override {
    return body;  // RDS-43: a Laravel worker could not unwrap a frame
  }

  bool carries_headers() const noexcept override { return false; }

  void unwrap(std::string_view stored, std::string& body, Headers&) const override {
    body.assign(stored);  // RDS-47: the head, byte for byte
  }

  Call push(const Keys& k) const override { return {kPushScript, {k.ready, k.notify}, {}}; }

  Result<Call> push_delayed(const Keys& k, std::string_view due,
                            std::string_view body) const override {
    return Call{kPlainCommand, {}, {"ZADD", k.schedule, due, body}};  // RDS-44
  }

  void recover(const Keys& k, std::string_view now, std::string_view limit,
               std::vector<Call>& calls) const override {
    calls.push_back({kMigrateScript, {k.schedule, k.ready, k.notify}, {now, limit}});
    if (recover_reserved_) {
      calls.push_back({kMigrateScript, {k.in_flight, k.ready, k.notify}, {now, limit}});
    }
  }
  std::string_view recovery_name() const override { return "migrate"; }

  Call reserve(const Keys& k, std::string_view score) const override {
    return {kPopScript, {k.ready, k.in_flight, k.notify}, {score}};
  }

  std::vector<Reserved> reserved(const redisReply& reply, std::string_view) const override {
    std::vector<Reserved> out;
    out.reserve(reply.elements / 2);
    for (std::size_t i = 0; i + 1 < reply.elements; i += 2) {
      Reserved r;
      r.stored = str(reply.element[i]);
      r.member = std::string(str(reply.element[i + 1]));
      r.flagged = r.member.starts_with(kPoisonMemberPrefix);  // RDS-46
      out.push_back(std::move(r));
    }
    return out;
  }

  Result<bool> wait(Connection& c, EmptyQueueWait& w) const override {
    // RDS-53: BLPOP on :notify, at most 1 s, never 0 (which blocks forever) and never below 1 ms
    // (Redis 6.2 truncates that to 0). Rounded up to whole milliseconds.
    const auto left =
        std::chrono::ceil<milliseconds>(w.deadline - std::chrono::steady_clock::now());
    if (left < milliseconds(1)) return false;
    const auto slice = std::min(left, kMaxSlice);
    char secs[32];
    std::snprintf(secs, sizeof secs, "%lld.%03lld", static_cast<long long>(slice.count() / 1000),
                  static_cast<long long>(slice.count() % 1000));
    auto r = c.command({"BLPOP", w.keys.notify, secs});
    if (!r) return r.error();
    if ((*r)->type == REDIS_REPLY_ERROR) return server_error("BLPOP", r->get());
    return true;
  }

  Call ack(const Keys& k) const override { return {kAckScript, {k.in_flight}, {}}; }

  Call release(const Keys& k, std::string_view member, std::string_view body,
               std::string_view due) const override {
    return {kReleaseScript, {k.schedule, k.in_flight}, {member, due, body}};  // RDS-54
  }

  Call dead_letter(const Keys& k, const Keys& dlq, std::string_view member,
                   std::string_view body) const override {
    // RDS-41: prefix + DLQ name, with its own notify list.
    return {kDeadLetterScript, {k.in_flight, dlq.ready, dlq.notify}, {member, body}};
  }

  Call give_back(const Keys& k) const override {
    return {kGiveBackScript, {k.in_flight, k.ready, k.notify}, {}};
  }
  void give_back_item(Call& call, std::string_view member, std::string_view stored) const override {
    call.args.push_back(member);
    call.args.push_back(stored);
  }

  void counts(const Keys& k, std::vector<Count>& out) const override {
    out.push_back({&QueueStats::in_flight, {kPlainCommand, {}, {"ZCARD", k.in_flight}}});
    out.push_back({&QueueStats::delayed, {kPlainCommand, {}, {"ZCARD", k.schedule}}});
  }

 private:
  std::string key_prefix_;
  bool recover_reserved_;
};

}  // namespace

std::unique_ptr<LayoutStrategy> make_laravel_layout(const Options& options) {
  if (options.connection.command_timeout <= kMaxSlice) {
    throw ConfigError("redis command timeout must exceed the 1 s BLPOP slice (RDS-53)");
  }
  if (options.laravel_key_prefix.empty()) {
    throw ConfigError("redis laravel_key_prefix must not be empty");
  }
  // RDS-51: `:reserved` is migrated before a pop unless retry_after is null.
  return std::make_unique<LaravelLayout>(options.laravel_key_prefix,
                                         options.retry_after.has_value());
}

}  // namespace babelqueue::redis::detail
