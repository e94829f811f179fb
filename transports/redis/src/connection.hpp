// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/errors.hpp>
#include <babelqueue/redis/transport.hpp>

#include <hiredis/hiredis.h>

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::redis::detail {

struct ReplyDeleter {
  void operator()(redisReply* r) const noexcept { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

/// The arguments of one command, as views into strings that outlive the send.
using Argv = std::vector<std::string_view>;

/// The bytes of a string reply (nil and other types give an empty view).
std::string_view str(const redisReply* r) noexcept;
/// True for a nil bulk or a RESP3 null/false, which RESP2 scripts return as nil (RDS-4).
bool is_absent(const redisReply* r) noexcept;

/// The Error for a server error reply to `what`. Replies that mean "not now" (LOADING after a
/// restart, BUSY script, TRYAGAIN, MASTERDOWN, CLUSTERDOWN) are transient, so the App rides them
/// out (D-3); the others (WRONGTYPE, a script error, unknown LMOVE before Redis 6.2) do not go
/// away by retrying.
Error server_error(std::string_view what, const redisReply* r);

/// One hiredis connection. Not thread-safe: the pool hands it to one thread at a time.
class Connection {
 public:
  /// Connects, sets the timeouts, AUTHs and SELECTs.
  static Result<std::unique_ptr<Connection>> open(const ConnectionOptions& options);
  /// Wraps a caller-owned context; never freed here.
  explicit Connection(redisContext* borrowed) noexcept : ctx_(borrowed), owned_(false) {}
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Queues one command in the output buffer (sent by the next `read`).
  void append(const Argv& argv);
  /// Sends what is queued (first call) and reads the next reply. A server error reply is a
  /// reply, not an Error; an Error means the connection is unusable (`broken()` is then true).
  Result<ReplyPtr> read();
  /// `append` + `read`.
  Result<ReplyPtr> command(const Argv& argv);

  /// True once an I/O or protocol error has happened.
  [[nodiscard]] bool broken() const noexcept { return ctx_ == nullptr || ctx_->err != 0; }
  /// Borrowed contexts are re-established in place (redisReconnect).
  [[nodiscard]] bool borrowed() const noexcept { return !owned_; }
  /// hiredis' redisReconnect on a borrowed context; false when it failed.
  bool reconnect() noexcept;

 private:
  Connection(redisContext* ctx, bool owned) noexcept : ctx_(ctx), owned_(owned) {}
  Error io_error() const;

  redisContext* ctx_;
  bool owned_;
};

/// Connections opened on demand and reused. A borrowed context is the only connection, leased
/// to one caller at a time.
class Pool {
 public:
  explicit Pool(ConnectionOptions options) : options_(std::move(options)) {}
  explicit Pool(redisContext* borrowed);

  class Lease;
  /// An idle connection or a new one. ClosedError after `close()`.
  Result<Lease> acquire();
  /// Frees idle connections; leased ones are freed when returned.
  void close();

 private:
  void give_back(std::unique_ptr<Connection> c);

  ConnectionOptions options_;
  std::mutex mu_;
  std::condition_variable borrowed_free_;
  std::vector<std::unique_ptr<Connection>> idle_;
  bool borrowed_mode_ = false;
  bool closed_ = false;
};

/// Exclusive use of one connection; returns it to the pool on destruction (a broken owned
/// connection is dropped instead).
class Pool::Lease {
 public:
  Lease(Pool* pool, std::unique_ptr<Connection> c) noexcept : pool_(pool), c_(std::move(c)) {}
  Lease(Lease&& o) noexcept = default;
  Lease& operator=(Lease&&) = delete;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease() {
    if (c_) pool_->give_back(std::move(c_));
  }
  Connection* operator->() const noexcept { return c_.get(); }
  Connection& operator*() const noexcept { return *c_; }

 private:
  Pool* pool_;
  std::unique_ptr<Connection> c_;
};

}  // namespace babelqueue::redis::detail
