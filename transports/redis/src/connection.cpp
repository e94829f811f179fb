// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors

#include "connection.hpp"

#include <sys/time.h>

#include <cerrno>
#include <string>
#include <utility>

namespace babelqueue::redis::detail {
namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<decltype(tv.tv_sec)>(ms.count() / 1000);
  tv.tv_usec = static_cast<decltype(tv.tv_usec)>((ms.count() % 1000) * 1000);
  return tv;
}

std::string endpoint(const ConnectionOptions& o) {
  return o.unix_socket.empty() ? o.host + ":" + std::to_string(o.port) : o.unix_socket;
}

}  // namespace

std::string_view str(const redisReply* r) noexcept {
  if (r == nullptr || r->str == nullptr) return {};
  return {r->str, static_cast<std::size_t>(r->len)};
}

bool is_absent(const redisReply* r) noexcept {
  if (r == nullptr || r->type == REDIS_REPLY_NIL) return true;
#ifdef REDIS_REPLY_NULL
  if (r->type == REDIS_REPLY_NULL) return true;
#endif
#ifdef REDIS_REPLY_BOOL
  if (r->type == REDIS_REPLY_BOOL && r->integer == 0) return true;
#endif
  return false;
}

Error server_error(std::string_view what, const redisReply* r) {
  const std::string_view text = str(r);
  const std::string_view code = text.substr(0, text.find(' '));
  const bool transient = code == "LOADING" || code == "BUSY" || code == "TRYAGAIN" ||
                         code == "MASTERDOWN" || code == "CLUSTERDOWN";
  return TransportError("redis: " + std::string(what) + ": " + std::string(text), transient);
}

Result<std::unique_ptr<Connection>> Connection::open(const ConnectionOptions& o) {
  redisContext* ctx =
      o.unix_socket.empty()
          ? redisConnectWithTimeout(o.host.c_str(), o.port, to_timeval(o.connect_timeout))
          : redisConnectUnixWithTimeout(o.unix_socket.c_str(), to_timeval(o.connect_timeout));
  if (ctx == nullptr) return TransportError("redis: cannot allocate a connection context");
  std::unique_ptr<Connection> c(new Connection(ctx, true));
  if (ctx->err != 0) {
    return TransportError("redis: cannot connect to " + endpoint(o) + ": " + ctx->errstr);
  }
  if (redisSetTimeout(ctx, to_timeval(o.command_timeout)) != REDIS_OK ||
      redisEnableKeepAlive(ctx) != REDIS_OK) {
    return c->io_error();
  }
  if (!o.password.empty()) {
    Argv auth{"AUTH"};
    if (!o.user.empty()) auth.emplace_back(o.user);
    auth.emplace_back(o.password);
    auto r = c->command(auth);
    if (!r) return r.error();
    if ((*r)->type == REDIS_REPLY_ERROR) {
      // Wrong credentials will not fix themselves: not transient, so consume gives up (D-3).
      return TransportError(
          "redis: AUTH refused by " + endpoint(o) + ": " + std::string(str(r->get())), false);
    }
  }
  if (o.db != 0) {
    const std::string db = std::to_string(o.db);
    auto r = c->command({"SELECT", db});
    if (!r) return r.error();
    if ((*r)->type == REDIS_REPLY_ERROR) {
      return TransportError("redis: SELECT " + db + " refused: " + std::string(str(r->get())),
                            false);
    }
  }
  return c;
}

Connection::~Connection() {
  if (owned_ && ctx_ != nullptr) redisFree(ctx_);
}

void Connection::append(const Argv& argv) {
  // Small fixed buffers cover every command this transport sends but a batch publish.
  constexpr std::size_t kInline = 16;
  const char* ptrs_inline[kInline];
  std::size_t lens_inline[kInline];
  std::vector<const char*> ptrs_heap;
  std::vector<std::size_t> lens_heap;
  const char** ptrs = ptrs_inline;
  std::size_t* lens = lens_inline;
  if (argv.size() > kInline) {
    ptrs_heap.resize(argv.size());
    lens_heap.resize(argv.size());
    ptrs = ptrs_heap.data();
    lens = lens_heap.data();
  }
  for (std::size_t i = 0; i < argv.size(); ++i) {
    ptrs[i] = argv[i].data();
    lens[i] = argv[i].size();
  }
  // Only fails on out-of-memory, which hiredis records in ctx_->err; `read` reports it.
  redisAppendCommandArgv(ctx_, static_cast<int>(argv.size()), ptrs, lens);
}

Result<ReplyPtr> Connection::read() {
  if (broken()) return io_error();
  void* raw = nullptr;
  if (redisGetReply(ctx_, &raw) != REDIS_OK || raw == nullptr) return io_error();
  return ReplyPtr(static_cast<redisReply*>(raw));
}

Result<ReplyPtr> Connection::command(const Argv& argv) {
  append(argv);
  return read();
}

bool Connection::reconnect() noexcept {
  return redisReconnect(ctx_) == REDIS_OK;
}

Error Connection::io_error() const {
  if (ctx_ == nullptr) return TransportError("redis: no connection");
  const std::string what = ctx_->errstr[0] != '\0' ? ctx_->errstr : "connection lost";
  if (ctx_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    return TimeoutError("redis: command timed out: " + what);
  }
  return TransportError("redis: " + what);
}

Pool::Pool(redisContext* borrowed) : borrowed_mode_(true) {
  idle_.push_back(std::make_unique<Connection>(borrowed));
}

Result<Pool::Lease> Pool::acquire() {
  std::unique_ptr<Connection> c;
  {
    std::unique_lock lock(mu_);
    if (borrowed_mode_) {
      // One caller at a time on the borrowed context (RDS-2).
      borrowed_free_.wait(lock, [&] { return closed_ || !idle_.empty(); });
    }
    if (closed_) return ClosedError("redis transport is closed");
    if (!idle_.empty()) {
      c = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (c && c->broken() && c->borrowed() && !c->reconnect()) {
    Lease lease(this, std::move(c));
    return TransportError("redis: reconnecting the borrowed connection failed");
  }
  if (!c) {
    auto opened = Connection::open(options_);
    if (!opened) return opened.error();
    c = std::move(*opened);
  }
  return Lease(this, std::move(c));
}

void Pool::give_back(std::unique_ptr<Connection> c) {
  std::lock_guard lock(mu_);
  if (borrowed_mode_) {
    idle_.push_back(std::move(c));
    borrowed_free_.notify_one();
    return;
  }
  if (closed_ || c->broken()) return;  // freed here; the next acquire opens a fresh one
  idle_.push_back(std::move(c));
}

void Pool::close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  if (!borrowed_mode_) idle_.clear();
  borrowed_free_.notify_all();
}

}  // namespace babelqueue::redis::detail
