// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/export.hpp>
#include <babelqueue/idempotency.hpp>
#include <babelqueue/redis/transport.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

/// @file
/// A persistent idempotency store on Redis (HLP-4), shared by every worker that talks to the
/// same server: one key per processed message id.

namespace babelqueue::redis {

/// Settings of a RedisIdempotencyStore.
///
/// Thread-safety: a value type.
struct IdempotencyOptions {
  /// Key of an id = prefix + id (HLP-4).
  std::string key_prefix = "bq:idemp:";
  /// How long an id is remembered; 0 = forever (HLP-4).
  std::chrono::seconds ttl{0};
};

/// `seen` = EXISTS, `remember` = SET key "1" NX [EX ttl], `forget` = DEL, `claim` = the SET NX
/// result (HLP-4). Errors are thrown as TransportError, which `idempotency::run_once` handles
/// as HLP-2 says (a failing `seen` stops the effect; a failing `remember` is reported, not fatal).
///
/// Thread-safety: every member function is thread-safe (a connection pool, one connection per
/// concurrent call). Not copyable or movable.
class BABELQUEUE_EXPORT RedisIdempotencyStore final : public idempotency::Store {
 public:
  /// Connects (lazily) with `connection`, e.g. `parse_url(url).connection`.
  /// @throws ConfigError on a negative ttl or empty prefix.
  explicit RedisIdempotencyStore(const ConnectionOptions& connection,
                                 IdempotencyOptions options = {});
  ~RedisIdempotencyStore() override;
  RedisIdempotencyStore(const RedisIdempotencyStore&) = delete;
  RedisIdempotencyStore& operator=(const RedisIdempotencyStore&) = delete;
  RedisIdempotencyStore(RedisIdempotencyStore&&) = delete;
  RedisIdempotencyStore& operator=(RedisIdempotencyStore&&) = delete;

  [[nodiscard]] bool seen(std::string_view id) override;
  void remember(std::string_view id) override;
  void forget(std::string_view id) override;
  /// Atomically records `id`; true when this call recorded it (nobody had before).
  bool claim(std::string_view id);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace babelqueue::redis
