// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors

#include <babelqueue/redis/idempotency_store.hpp>

#include <string>
#include <utility>

#include "connection.hpp"

namespace babelqueue::redis {

class RedisIdempotencyStore::Impl {
 public:
  Impl(const ConnectionOptions& connection, IdempotencyOptions options)
      : opt_(std::move(options)), pool_(connection), ttl_(std::to_string(opt_.ttl.count())) {
    if (opt_.ttl.count() < 0) throw ConfigError("idempotency ttl must be >= 0 (0 = forever)");
    if (opt_.key_prefix.empty()) throw ConfigError("idempotency key prefix must not be empty");
  }

  // One command; a failed connection or an error reply is thrown (the Store contract).
  detail::ReplyPtr command(const detail::Argv& argv) {
    auto lease = pool_.acquire();
    if (!lease) throw_error(lease.error());
    auto r = (*lease)->command(argv);
    if (!r) throw_error(r.error());
    if ((*r)->type == REDIS_REPLY_ERROR)
      throw_error(detail::server_error("idempotency store", r->get()));
    return std::move(*r);
  }

  bool set_nx(std::string_view id) {
    const std::string key = opt_.key_prefix + std::string(id);
    detail::ReplyPtr r = opt_.ttl.count() == 0 ? command({"SET", key, "1", "NX"})
                                               : command({"SET", key, "1", "NX", "EX", ttl_});
    return !detail::is_absent(r.get());  // nil = the key existed
  }

  IdempotencyOptions opt_;
  detail::Pool pool_;
  std::string ttl_;
};

RedisIdempotencyStore::RedisIdempotencyStore(const ConnectionOptions& connection,
                                             IdempotencyOptions options)
    : impl_(std::make_unique<Impl>(connection, std::move(options))) {}
RedisIdempotencyStore::~RedisIdempotencyStore() = default;

bool RedisIdempotencyStore::seen(std::string_view id) {
  return impl_->command({"EXISTS", impl_->opt_.key_prefix + std::string(id)})->integer > 0;
}
void RedisIdempotencyStore::remember(std::string_view id) {
  impl_->set_nx(id);
}
void RedisIdempotencyStore::forget(std::string_view id) {
  impl_->command({"DEL", impl_->opt_.key_prefix + std::string(id)});
}
bool RedisIdempotencyStore::claim(std::string_view id) {
  return impl_->set_nx(id);
}

}  // namespace babelqueue::redis
