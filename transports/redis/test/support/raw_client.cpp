// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include "raw_client.hpp"

#include <hiredis/hiredis.h>

#include <sys/time.h>

#include <charconv>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <utility>

namespace babelqueue::redis::test {
namespace {

timeval to_timeval(std::chrono::milliseconds duration) {
  return {static_cast<time_t>(duration.count() / 1000),
          static_cast<suseconds_t>(duration.count() % 1000 * 1000)};
}

Reply convert(const redisReply& raw) {
  Reply reply;
  switch (raw.type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
      reply.type = raw.type == REDIS_REPLY_STRING   ? Reply::String
                   : raw.type == REDIS_REPLY_STATUS ? Reply::Status
                                                    : Reply::Error;
      reply.str.assign(raw.str, static_cast<std::size_t>(raw.len));
      break;
    case REDIS_REPLY_INTEGER:
      reply.type = Reply::Integer;
      reply.integer = raw.integer;
      break;
    case REDIS_REPLY_ARRAY:
      reply.type = Reply::Array;
      reply.elements.reserve(raw.elements);
      for (std::size_t i = 0; i < raw.elements; ++i) {
        reply.elements.push_back(convert(*raw.element[i]));
      }
      break;
    default:
      reply.type = Reply::Nil;
      break;
  }
  return reply;
}

std::string quoted(const std::string& bytes) {
  std::string out = "\"";
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte >= 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0x0f];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

long long parse_integer(std::string_view text, std::string_view what) {
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size()) {
    throw std::runtime_error("RawClient: bad " + std::string(what) + ": " + std::string(text));
  }
  return value;
}

}  // namespace

const std::string& Reply::as_string() const {
  if (type != String && type != Status) {
    throw std::runtime_error("RawClient: expected a string reply, got " + debug_string());
  }
  return str;
}

long long Reply::as_integer() const {
  if (type != Integer) {
    throw std::runtime_error("RawClient: expected an integer reply, got " + debug_string());
  }
  return integer;
}

std::string Reply::debug_string() const {
  switch (type) {
    case Nil:
      return "(nil)";
    case String:
      return quoted(str);
    case Integer:
      return "(integer) " + std::to_string(integer);
    case Status:
      return "(status) " + str;
    case Error:
      return "(error) " + str;
    case Array: {
      std::string out = "[";
      for (std::size_t i = 0; i < elements.size(); ++i) {
        if (i > 0) out += ", ";
        out += elements[i].debug_string();
      }
      return out + "]";
    }
  }
  return "(unknown)";
}

void RawClient::ContextDeleter::operator()(redisContext* context) const {
  redisFree(context);
}

RawClient::RawClient(int port, std::string password, std::chrono::milliseconds io_timeout)
    : port_(port), password_(std::move(password)), io_timeout_(io_timeout) {
  reconnect();
}

RawClient::~RawClient() = default;
RawClient::RawClient(RawClient&&) noexcept = default;
RawClient& RawClient::operator=(RawClient&&) noexcept = default;

void RawClient::reconnect() {
  context_.reset(redisConnectWithTimeout("127.0.0.1", port_, to_timeval(io_timeout_)));
  if (context_ == nullptr) throw std::runtime_error("RawClient: cannot allocate a hiredis context");
  if (context_->err != 0) {
    const std::string reason = context_->errstr;
    context_.reset();
    throw std::runtime_error("RawClient: connect to 127.0.0.1:" + std::to_string(port_) +
                             " failed: " + reason);
  }
  if (redisSetTimeout(context_.get(), to_timeval(io_timeout_)) != REDIS_OK) {
    context_.reset();
    throw std::runtime_error("RawClient: cannot set the socket timeout");
  }
  if (password_.empty()) return;
  try {
    checked({"AUTH", password_});
  } catch (const std::runtime_error&) {
    // Never leave an unauthenticated connection behind for later commands.
    context_.reset();
    throw;
  }
}

Reply RawClient::command(std::vector<std::string> argv) {
  if (argv.empty()) throw std::invalid_argument("RawClient: empty command");
  if (context_ == nullptr || context_->err != 0) {
    throw std::runtime_error("RawClient: connection is broken; reconnect() first");
  }
  std::vector<const char*> args;
  std::vector<std::size_t> lengths;
  args.reserve(argv.size());
  lengths.reserve(argv.size());
  for (const std::string& arg : argv) {
    args.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  auto* raw = static_cast<redisReply*>(
      redisCommandArgv(context_.get(), static_cast<int>(argv.size()), args.data(), lengths.data()));
  if (raw == nullptr) {
    throw std::runtime_error("RawClient: " + argv[0] + " failed: " + context_->errstr);
  }
  Reply reply = convert(*raw);
  freeReplyObject(raw);
  return reply;
}

Reply RawClient::checked(std::vector<std::string> argv) {
  const std::string name = argv.empty() ? std::string() : argv[0];
  Reply reply = command(std::move(argv));
  if (reply.is_error()) throw std::runtime_error("RawClient: " + name + ": " + reply.str);
  return reply;
}

std::vector<std::string> RawClient::lrange(const std::string& key) {
  std::vector<std::string> values;
  for (const Reply& element : checked({"LRANGE", key, "0", "-1"}).elements) {
    values.push_back(element.as_string());
  }
  return values;
}

std::vector<std::pair<std::string, std::string>> RawClient::zrange_withscores(
    const std::string& key) {
  const Reply reply = checked({"ZRANGE", key, "0", "-1", "WITHSCORES"});
  std::vector<std::pair<std::string, std::string>> members;
  for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    members.emplace_back(reply.elements[i].as_string(), reply.elements[i + 1].as_string());
  }
  return members;
}

long long RawClient::llen(const std::string& key) {
  return checked({"LLEN", key}).as_integer();
}

long long RawClient::zcard(const std::string& key) {
  return checked({"ZCARD", key}).as_integer();
}

bool RawClient::exists(const std::string& key) {
  return checked({"EXISTS", key}).as_integer() > 0;
}

int RawClient::client_id() {
  const long long id = checked({"CLIENT", "ID"}).as_integer();
  if (id > std::numeric_limits<int>::max()) {
    throw std::runtime_error("RawClient: CLIENT ID out of int range: " + std::to_string(id));
  }
  return static_cast<int>(id);
}

void RawClient::client_kill_by_id(long long id) {
  const long long killed = checked({"CLIENT", "KILL", "ID", std::to_string(id)}).as_integer();
  if (killed != 1) {
    throw std::runtime_error("RawClient: CLIENT KILL ID " + std::to_string(id) + " killed " +
                             std::to_string(killed) + " clients");
  }
}

std::vector<long long> RawClient::client_ids_except_self() {
  const long long self = client_id();
  const std::string list = checked({"CLIENT", "LIST"}).as_string();
  std::vector<long long> ids;
  // One line per connection, each starting "id=<n> addr=...".
  std::size_t line_start = 0;
  while (line_start < list.size()) {
    std::size_t line_end = list.find('\n', line_start);
    if (line_end == std::string::npos) line_end = list.size();
    const std::string_view line(list.data() + line_start, line_end - line_start);
    if (line.substr(0, 3) == "id=") {  // not starts_with: this target may build as C++17
      const std::size_t value_end = line.find(' ');
      const long long id =
          parse_integer(line.substr(3, value_end == std::string_view::npos ? std::string_view::npos
                                                                           : value_end - 3),
                        "CLIENT LIST id");
      if (id != self) ids.push_back(id);
    }
    line_start = line_end + 1;
  }
  return ids;
}

}  // namespace babelqueue::redis::test
