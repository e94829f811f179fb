// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The redis:// and unix:// schemes for open_transport and the CLI's Redis flags.

#include <babelqueue/redis/transport.hpp>
#include <babelqueue/spi/registry.hpp>

namespace babelqueue::redis {
namespace {

spi::TransportFactory factory() {
  spi::TransportFactory f;
  f.component = "redis";
  f.schemes = {"redis", "rediss", "unix"};
  f.summary = "Redis >= 6.2: the default reliable-queue layout or the Laravel layout";
  f.flags = {
      {"layout", "layout", "Redis key layout: default (reliable queue) or laravel"},
      {"prefix", "prefix", "Redis Laravel layout: key prefix (default queues:)"},
  };
  f.open = [](std::string_view url, const OpenOptions& options) -> std::shared_ptr<Transport> {
    Options o;
    o.logger = options.logger;
    return std::make_shared<RedisTransport>(parse_url(url, std::move(o)));
  };
  return f;
}

}  // namespace
}  // namespace babelqueue::redis

BABELQUEUE_REGISTER_TRANSPORT(redis, babelqueue::redis::factory());
