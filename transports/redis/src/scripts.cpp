// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors

#include "scripts.hpp"

#include <string>

namespace babelqueue::redis::detail {
namespace {

// ---------------------------------------------------------------- legacy layout (RDS-10..28)

// RDS-19: expired deadline members go back to the ready tail, bytes unchanged, attempts
// unchanged (RDS-20). A malformed member or an orphan (raw no longer in processing) is only
// removed from the deadlines set.
constexpr std::string_view kSweep = R"lua(
local ms = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local moved = 0
for _, m in ipairs(ms) do
  redis.call('ZREM', KEYS[1], m)
  if #m >= 33 and string.sub(m, 33, 33) == ':' and
     not string.find(string.sub(m, 1, 32), '[^0-9a-f]') then
    local raw = string.sub(m, 34)
    if redis.call('LREM', KEYS[2], 1, raw) == 1 then
      redis.call('RPUSH', KEYS[3], raw)
      moved = moved + 1
    end
  end
end
return moved
)lua";

// RDS-17/18, batched: ARGV = [score, token...]; one LMOVE and one deadline member per token.
constexpr std::string_view kReserve = R"lua(
local out = {}
for i = 2, #ARGV do
  local v = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')
  if not v then break end
  redis.call('ZADD', KEYS[3], ARGV[1], ARGV[i] .. ':' .. v)
  out[#out + 1] = v
end
return out
)lua";

// RDS-24, batched: ARGV = deadline members; the raw value is the member after "<token>:".
// Returns the 1-based positions whose gate answered 0 (already swept: nothing touched).
constexpr std::string_view kAckGated = R"lua(
local expired = {}
for i = 1, #ARGV do
  if redis.call('ZREM', KEYS[1], ARGV[i]) == 1 then
    redis.call('LREM', KEYS[2], 1, string.sub(ARGV[i], 34))
  else
    expired[#expired + 1] = i
  end
end
return expired
)lua";

// RDS-25 release (KEYS[3] = ready) and RDS-26 dead-letter (KEYS[3] = the DLQ): the same gated
// move. ARGV = [member, value to append].
constexpr std::string_view kSettleTo = R"lua(
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('LREM', KEYS[2], 1, string.sub(ARGV[1], 34))
redis.call('RPUSH', KEYS[3], ARGV[2])
return 1
)lua";

// close(): prefetched messages never handed out go back to the HEAD, unchanged (not an
// attempt). ARGV = members, last first, so the head ends up in the original order.
constexpr std::string_view kGiveBack = R"lua(
local n = 0
for i = 1, #ARGV do
  if redis.call('ZREM', KEYS[1], ARGV[i]) == 1 then
    local raw = string.sub(ARGV[i], 34)
    redis.call('LREM', KEYS[2], 1, raw)
    redis.call('LPUSH', KEYS[3], raw)
    n = n + 1
  end
end
return n
)lua";

// ---------------------------------------------------------------- Laravel layout (RDS-40..59)

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

constexpr std::array<std::string_view, static_cast<std::size_t>(ScriptId::Count)> kSources = {
    kSweep,           kReserve,        kAckGated,          kSettleTo,
    kGiveBack,        kLaravelPush,    kLaravelMigrate,    kLaravelPop,
    kLaravelAckGated, kLaravelRelease, kLaravelDeadLetter, kLaravelGiveBack,
};

bool is_noscript(const redisReply* r) {
  return r->type == REDIS_REPLY_ERROR && str(r).substr(0, 8) == "NOSCRIPT";
}

}  // namespace

Status Scripts::load(Connection& c) {
  std::lock_guard lock(mu_);
  if (loaded_.load(std::memory_order_acquire)) return {};
  for (std::string_view source : kSources)
    c.append({"SCRIPT", "LOAD", source});
  std::array<std::string, static_cast<std::size_t>(ScriptId::Count)> sha;
  for (std::size_t i = 0; i < kSources.size(); ++i) {
    auto r = c.read();
    if (!r) return r.error();
    if ((*r)->type != REDIS_REPLY_STRING) return server_error("SCRIPT LOAD", r->get());
    sha[i] = std::string(str(r->get()));
  }
  sha_ = std::move(sha);
  loaded_.store(true, std::memory_order_release);
  return {};
}

Result<std::vector<ReplyPtr>> Scripts::run(Connection& c, const std::vector<Call>& calls) {
  if (!loaded_.load(std::memory_order_acquire)) {
    const Status st = load(c);
    if (!st) return st.error();
  }
  std::vector<std::string> numkeys(calls.size());
  Argv argv;
  auto append = [&](std::size_t i, bool by_source) {
    const Call& call = calls[i];
    argv.clear();
    if (call.script == ScriptId::Count) {
      argv = call.args;
    } else {
      const auto id = static_cast<std::size_t>(call.script);
      numkeys[i] = std::to_string(call.keys.size());
      argv.push_back(by_source ? "EVAL" : "EVALSHA");
      argv.push_back(by_source ? kSources[id] : std::string_view(sha_[id]));
      argv.push_back(numkeys[i]);
      argv.insert(argv.end(), call.keys.begin(), call.keys.end());
      argv.insert(argv.end(), call.args.begin(), call.args.end());
    }
    c.append(argv);
  };
  for (std::size_t i = 0; i < calls.size(); ++i)
    append(i, false);
  std::vector<ReplyPtr> replies;
  replies.reserve(calls.size());
  std::vector<std::size_t> missing;  // answered NOSCRIPT: the server lost its script cache
  for (std::size_t i = 0; i < calls.size(); ++i) {
    auto r = c.read();
    if (!r) return r.error();
    if (is_noscript(r->get())) missing.push_back(i);
    replies.push_back(std::move(*r));
  }
  // NOSCRIPT means the script did not run, so re-sending with EVAL, in order, keeps the order
  // of effects. EVAL also caches the script again for the next EVALSHA.
  for (std::size_t i : missing)
    append(i, true);
  for (std::size_t i : missing) {
    auto r = c.read();
    if (!r) return r.error();
    replies[i] = std::move(*r);
  }
  return replies;
}

}  // namespace babelqueue::redis::detail
