// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The default layout (RDS-10..28): `q` ready list, `q:processing` list and
// `q:processing:deadlines` zset, whose members "<token>:<stored value>" gate every settlement
// and are swept back to the tail after retry_after. Headers travel in the `__bq_frame`.

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "frame.hpp"
#include "layout.hpp"

namespace babelqueue::redis::detail {
namespace {

using std::chrono::milliseconds;

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

enum Script : std::size_t {
  kSweepScript,
  kReserveScript,
  kAckScript,
  kSettleScript,
  kGiveBackScript
};

constexpr std::array<std::string_view, 5> kScripts = {kSweep, kReserve, kAckGated, kSettleTo,
                                                      kGiveBack};

class DefaultLayout final : public LayoutStrategy {
 public:
  explicit DefaultLayout(std::string processing_suffix)
      : processing_suffix_(std::move(processing_suffix)) {}

  std::span<const std::string_view> scripts() const override { return kScripts; }

  Keys keys(std::string_view queue) const override {
    Keys k;
    k.ready = std::string(queue);  // RDS-10
    k.in_flight = k.ready + processing_suffix_;
    k.schedule = k.in_flight + ":deadlines";
    return k;
  }

  std::string with_headers(std::string body, const Headers& headers) const override {
    const Headers clean = sanitize_headers(headers);  // RDS-12
    if (clean.empty()) return body;
    return encode_frame(body, clean);  // RDS-14
  }

  bool carries_headers() const noexcept override { return true; }

  void unwrap(std::string_view stored, std::string& body, Headers& headers) const override {
    // RDS-15/16: a frame is unwrapped; anything else is delivered as it is.
    if (auto unframed = unframe(stored)) {
      body = std::move(unframed->body);
      headers = std::move(unframed->headers);
    } else {
      body.assign(stored);
    }
  }

  Call push(const Keys& k) const override { return {kPlainCommand, {}, {"RPUSH", k.ready}}; }

  Result<Call> push_delayed(const Keys&, std::string_view, std::string_view) const override {
    return Error(ErrorCode::DelayUnsupported,
                 "redis: the default layout has no delayed set (RDS-13); use layout=laravel");
  }

  void recover(const Keys& k, std::string_view now, std::string_view limit,
               std::vector<Call>& calls) const override {
    calls.push_back({kSweepScript, {k.schedule, k.in_flight, k.ready}, {now, limit}});
  }
  std::string_view recovery_name() const override { return "sweep"; }

  Call reserve(const Keys& k, std::string_view score) const override {
    return {kReserveScript, {k.ready, k.in_flight, k.schedule}, {score}};
  }

  std::vector<Reserved> reserved(const redisReply& reply, std::string_view tokens) const override {
    std::vector<Reserved> out;
    out.reserve(reply.elements);
    for (std::size_t i = 0; i < reply.elements; ++i) {
      Reserved r;
      r.stored = str(reply.element[i]);
      r.member.reserve(kTokenHex + 1 + r.stored.size());
      r.member.append(tokens.substr(i * kTokenHex, kTokenHex));
      r.member.push_back(':');
      r.member.append(r.stored);
      out.push_back(std::move(r));
    }
    return out;
  }

  Result<bool> wait(Connection&, EmptyQueueWait& w) const override {
    // RDS-21/22: sleep-poll; the sleep never passes the deadline and close() interrupts it.
    const auto left =
        std::chrono::ceil<milliseconds>(w.deadline - std::chrono::steady_clock::now());
    w.wake.wait_for(std::min(w.poll.next(), left));
    return true;
  }

  Call ack(const Keys& k) const override { return {kAckScript, {k.schedule, k.in_flight}, {}}; }

  Call release(const Keys& k, std::string_view member, std::string_view body,
               std::string_view) const override {
    // RDS-25: no delayed set, so the delay is not honoured: the message goes to the tail.
    return {kSettleScript, {k.schedule, k.in_flight, k.ready}, {member, body}};
  }

  Call dead_letter(const Keys& k, const Keys& dlq, std::string_view member,
                   std::string_view body) const override {
    // RDS-10: the dead-letter list is the DLQ name verbatim.
    return {kSettleScript, {k.schedule, k.in_flight, dlq.ready}, {member, body}};
  }

  Call give_back(const Keys& k) const override {
    return {kGiveBackScript, {k.schedule, k.in_flight, k.ready}, {}};
  }
  void give_back_item(Call& call, std::string_view member, std::string_view) const override {
    call.args.push_back(member);
  }

  void counts(const Keys& k, std::vector<Count>& out) const override {
    out.push_back({&QueueStats::in_flight, {kPlainCommand, {}, {"LLEN", k.in_flight}}});
  }

 private:
  std::string processing_suffix_;
};

}  // namespace

std::unique_ptr<LayoutStrategy> make_default_layout(const Options& options) {
  if (options.processing_suffix.empty()) {
    throw ConfigError("redis processing_suffix must not be empty");
  }
  return std::make_unique<DefaultLayout>(options.processing_suffix);
}

}  // namespace babelqueue::redis::detail
