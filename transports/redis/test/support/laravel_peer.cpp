// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "laravel_peer.hpp"

#include <cstddef>
#include <ctime>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace babelqueue::redis::test {
namespace {

// KEYS = [ready, notify]   ARGV = [payload]
constexpr std::string_view kPushScript = R"lua(
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('RPUSH', KEYS[2], '1')
return redis.call('LLEN', KEYS[1])
)lua";

// KEYS = [from, ready, notify]   ARGV = [now]
// Moves every member due by now to the ready tail, one notify token each.
constexpr std::string_view kMigrateScript = R"lua(
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if #due > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, #due - 1)
  -- unpack() of a long list would overflow the Lua stack: push in chunks of 100.
  for first = 1, #due, 100 do
    local last = math.min(first + 99, #due)
    redis.call('RPUSH', KEYS[2], unpack(due, first, last))
    for _ = first, last do
      redis.call('RPUSH', KEYS[3], '1')
    end
  end
end
return due
)lua";

// KEYS = [ready, reserved, notify]   ARGV = [reservation score]
// No pcall: a head cjson cannot decode, or without a numeric attempts, raises after the LPOP,
// which is how stock Laravel loses it.
constexpr std::string_view kPopScript = R"lua(
local job = redis.call('LPOP', KEYS[1])
local reserved = false
if job then
  local decoded = cjson.decode(job)
  decoded['attempts'] = decoded['attempts'] + 1
  reserved = cjson.encode(decoded)
  redis.call('ZADD', KEYS[2], ARGV[1], reserved)
  redis.call('LPOP', KEYS[3])
end
return {job, reserved}
)lua";

// KEYS = [delayed, reserved]   ARGV = [reserved member, available at]
constexpr std::string_view kReleaseScript = R"lua(
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
)lua";

// Not a Laravel script: RedisJob::attempts() (the head's attempts + 1) read with the same cjson
// that just decoded the head, instead of a second JSON parser in the tests.
constexpr std::string_view kAttemptsScript = R"lua(
return cjson.decode(ARGV[1])['attempts'] + 1
)lua";

std::string available_at(int delay_seconds) {
  return std::to_string(static_cast<long long>(std::time(nullptr)) + delay_seconds);
}

// json_encode($value, JSON_UNESCAPED_UNICODE): UTF-8 stays raw except U+2028/U+2029 (PHP only
// leaves those with JSON_UNESCAPED_LINE_TERMINATORS), "/" is escaped, control characters use the
// short escapes or lowercase \u00xx, DEL is not escaped.
std::string php_json_string(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    switch (byte) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '/':
        out += "\\/";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (byte < 0x20) {
          out += "\\u00";
          out += kHex[byte >> 4];
          out += kHex[byte & 0x0f];
        } else if (byte == 0xe2 && text.substr(i + 1, 1) == "\x80" &&
                   (text.substr(i + 2, 1) == "\xa8" || text.substr(i + 2, 1) == "\xa9")) {
          out += text[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
          i += 2;
        } else {
          out += text[i];
        }
    }
  }
  return out + "\"";
}

std::mt19937_64& random_engine() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return engine;
}

std::string random_uuid_v4() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::uniform_int_distribution<int> nibble(0, 15);
  std::string uuid;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) uuid += '-';
    int value = nibble(random_engine());
    if (i == 12) value = 4;                // version 4
    if (i == 16) value = 8 | (value & 3);  // RFC 4122 variant
    uuid += kHex[value];
  }
  return uuid;
}

std::string random_alphanumeric(std::size_t length) {
  static constexpr std::string_view kAlphabet =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::uniform_int_distribution<std::size_t> index(0, kAlphabet.size() - 1);
  std::string out;
  for (std::size_t i = 0; i < length; ++i) {
    out += kAlphabet[index(random_engine())];
  }
  return out;
}

}  // namespace

LaravelPeer::LaravelPeer(RawClient& client, std::string prefix, std::optional<int> retry_after)
    : client_(client), prefix_(std::move(prefix)), retry_after_(retry_after) {}

std::string LaravelPeer::ready_key(std::string_view queue) const {
  return prefix_ + std::string(queue);
}

std::string LaravelPeer::delayed_key(std::string_view queue) const {
  return ready_key(queue) + ":delayed";
}

std::string LaravelPeer::reserved_key(std::string_view queue) const {
  return ready_key(queue) + ":reserved";
}

std::string LaravelPeer::notify_key(std::string_view queue) const {
  return ready_key(queue) + ":notify";
}

std::string LaravelPeer::make_payload(const PayloadFields& fields) {
  const std::string& name = fields.display_name;
  const std::string command = fields.command.empty()
                                  ? "O:" + std::to_string(name.size()) + ":\"" + name + "\":0:{}"
                                  : fields.command;
  // createObjectPayload's keys in order, then RedisQueue's id and attempts.
  return "{\"uuid\":" + php_json_string(fields.uuid.empty() ? random_uuid_v4() : fields.uuid) +
         ",\"displayName\":" + php_json_string(name) +
         ",\"job\":" + php_json_string("Illuminate\\Queue\\CallQueuedHandler@call") +
         ",\"maxTries\":null,\"maxExceptions\":null,\"failOnTimeout\":false,\"backoff\":null"
         ",\"timeout\":null,\"retryUntil\":null,\"data\":{\"commandName\":" +
         php_json_string(name) + ",\"command\":" + php_json_string(command) +
         "},\"id\":" + php_json_string(fields.id.empty() ? random_alphanumeric(32) : fields.id) +
         ",\"attempts\":0}";
}

std::string LaravelPeer::make_payload() {
  return make_payload(PayloadFields{});
}

void LaravelPeer::push(std::string_view queue, std::string_view payload) {
  eval(kPushScript, {ready_key(queue), notify_key(queue)}, {std::string(payload)});
}

void LaravelPeer::later(std::string_view queue, int delay_seconds, std::string_view payload) {
  const Reply reply = client_.command(
      {"ZADD", delayed_key(queue), available_at(delay_seconds), std::string(payload)});
  if (reply.is_error()) throw std::runtime_error("LaravelPeer: later: " + reply.str);
}

std::optional<LaravelPeer::Job> LaravelPeer::pop(std::string_view queue) {
  migrate(delayed_key(queue), queue);
  if (retry_after_) migrate(reserved_key(queue), queue);
  // A null retry_after adds nothing: Laravel's availableAt(null) is now.
  const Reply reply = eval(kPopScript, {ready_key(queue), reserved_key(queue), notify_key(queue)},
                           {available_at(retry_after_.value_or(0))});
  if (reply.type != Reply::Array || reply.elements.size() != 2) {
    throw std::runtime_error("LaravelPeer: unexpected pop reply " + reply.debug_string());
  }
  if (reply.elements[0].is_nil()) return std::nullopt;
  Job job{reply.elements[0].as_string(), reply.elements[1].as_string(), 0};
  job.attempts_1based = eval(kAttemptsScript, {}, {job.raw_body}).as_integer();
  return job;
}

void LaravelPeer::remove(std::string_view queue, const Job& job) {
  const Reply reply = client_.command({"ZREM", reserved_key(queue), job.reserved});
  if (reply.is_error()) throw std::runtime_error("LaravelPeer: delete: " + reply.str);
}

void LaravelPeer::release(std::string_view queue, const Job& job, int delay_seconds) {
  eval(kReleaseScript, {delayed_key(queue), reserved_key(queue)},
       {job.reserved, available_at(delay_seconds)});
}

Reply LaravelPeer::eval(std::string_view script, std::vector<std::string> keys,
                        std::vector<std::string> args) {
  std::vector<std::string> argv = {"EVAL", std::string(script), std::to_string(keys.size())};
  argv.insert(argv.end(), std::make_move_iterator(keys.begin()),
              std::make_move_iterator(keys.end()));
  argv.insert(argv.end(), std::make_move_iterator(args.begin()),
              std::make_move_iterator(args.end()));
  Reply reply = client_.command(std::move(argv));
  if (reply.is_error()) throw std::runtime_error("LaravelPeer: script failed: " + reply.str);
  return reply;
}

void LaravelPeer::migrate(const std::string& from, std::string_view queue) {
  eval(kMigrateScript, {from, ready_key(queue), notify_key(queue)},
       {std::to_string(static_cast<long long>(std::time(nullptr)))});
}

}  // namespace babelqueue::redis::test
