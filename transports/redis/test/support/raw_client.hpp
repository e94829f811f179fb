// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <chrono>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

struct redisContext;

namespace babelqueue::redis::test {

// One RESP2 reply, converted recursively so it outlives the hiredis reply object.
struct Reply {
  enum Type { Nil, String, Integer, Array, Status, Error };

  Type type = Nil;
  // Bytes of a String, Status or Error reply.
  std::string str;
  long long integer = 0;
  std::vector<Reply> elements;

  bool is_nil() const { return type == Nil; }
  bool is_error() const { return type == Error; }
  // str of a String or Status reply; throws std::runtime_error (naming the reply) otherwise.
  const std::string& as_string() const;
  // integer of an Integer reply; throws std::runtime_error otherwise.
  long long as_integer() const;
  // A readable rendering for assertion messages, e.g. `["a", (integer) 1, (nil)]`.
  std::string debug_string() const;

  friend void PrintTo(const Reply& reply, std::ostream* out) { *out << reply.debug_string(); }
};

// A tiny synchronous hiredis client with which tests inspect and prepare keys the way another SDK
// or Laravel would, independent of the transport under test. Error replies are returned as
// Reply::Error; connection and protocol failures throw std::runtime_error, after which the client
// stays broken until reconnect().
class RawClient {
 public:
  // Connects to 127.0.0.1:port and, when `password` is not empty, AUTHenticates. `io_timeout`
  // bounds the connect and every command, so a test talking to a wedged server fails instead of
  // hanging until the ctest timeout.
  explicit RawClient(int port, std::string password = {},
                     std::chrono::milliseconds io_timeout = std::chrono::seconds(30));
  ~RawClient();

  RawClient(RawClient&&) noexcept;
  RawClient& operator=(RawClient&&) noexcept;
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  // Drops the connection and opens a new one (e.g. after the server was restarted).
  void reconnect();

  // Sends one command; every argument is binary-safe. Throws std::invalid_argument when argv is
  // empty (Redis would silently wait for more).
  Reply command(std::vector<std::string> argv);

  // The convenience calls below throw std::runtime_error on an error reply.
  std::vector<std::string> lrange(const std::string& key);
  // ZRANGE key 0 -1 WITHSCORES as (member, score) pairs, score as Redis prints it ("1700000000").
  std::vector<std::pair<std::string, std::string>> zrange_withscores(const std::string& key);
  long long llen(const std::string& key);
  long long zcard(const std::string& key);
  bool exists(const std::string& key);

  // CLIENT ID of this connection.
  int client_id();
  // CLIENT KILL ID; throws std::runtime_error unless exactly that client was killed.
  void client_kill_by_id(long long id);
  // The ids of every other connection in CLIENT LIST.
  std::vector<long long> client_ids_except_self();

 private:
  struct ContextDeleter {
    void operator()(redisContext* context) const;
  };

  Reply checked(std::vector<std::string> argv);

  int port_;
  std::string password_;
  std::chrono::milliseconds io_timeout_;
  std::unique_ptr<redisContext, ContextDeleter> context_;
};

}  // namespace babelqueue::redis::test
