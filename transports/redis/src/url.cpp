// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Connection URLs (RDS-2) and the layout names (RDS-8), on the kit's URI parser. Error messages
// name the offending part and never contain the password: a URL usually comes from
// configuration that also reaches logs.

#include <babelqueue/redis/transport.hpp>
#include <babelqueue/spi/uri.hpp>

#include <charconv>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>

#include <babelqueue/spi/text.hpp>

namespace babelqueue::redis {
namespace {

using spi::quoted;

[[noreturn]] void fail(const std::string& what) {
  throw ConfigError("redis URL: " + what);
}

// A whole decimal integer (optional '-'), or nullopt.
std::optional<std::int64_t> to_int64(std::string_view s) {
  std::int64_t v = 0;
  const char* end = s.data() + s.size();
  const auto r = std::from_chars(s.data(), end, v);
  if (s.empty() || r.ec != std::errc() || r.ptr != end) return std::nullopt;
  return v;
}

// `user:password`, `:password` (AUTH with the password only). A bare `user` with no ':' is
// refused rather than silently connecting without AUTH; an empty userinfo is no credentials.
void apply_userinfo(const spi::Uri& uri, ConnectionOptions& c) {
  if (!uri.user) return;
  if (!uri.password) {
    if (uri.user->empty()) return;
    fail("user without a password: write user:password@ (or :password@ for the password only)");
  }
  c.user = *uri.user;
  c.password = *uri.password;
}

// Returns true when the path set the database index.
bool apply_tcp(const spi::Uri& uri, ConnectionOptions& c) {
  if (uri.host.empty()) fail("empty host");
  c.host = uri.host;
  if (uri.port) c.port = *uri.port;
  c.unix_socket.clear();
  if (uri.path.size() <= 1) return false;  // "" or "/"
  const std::string_view db = std::string_view(uri.path).substr(1);
  const auto v = to_int64(db);
  if (!v || db.front() < '0' || db.front() > '9' || *v > INT_MAX) {
    fail("invalid database index " + quoted(db) + " in the path (expected /0, /1, ...)");
  }
  c.db = static_cast<int>(*v);
  return true;
}

void apply_unix(const spi::Uri& uri, ConnectionOptions& c) {
  if (!uri.host.empty() || uri.port) {
    fail("unix:// takes no host: write unix:///path (or unix://:password@/path)");
  }
  if (uri.path.empty()) fail("unix:// needs an absolute socket path: unix:///path");
  if (uri.path.size() == 1) fail("empty socket path");
  c.unix_socket = uri.path;
}

// Seconds with a fraction; the kit accepts 0, a connection or command timeout must be positive.
void positive_seconds(spi::QueryOptions& q, std::string_view name, std::chrono::milliseconds& out) {
  const auto v = q.take_seconds(name);
  if (!v) return;
  if (v->count() == 0) {
    fail(std::string(name) + " must be a positive number of seconds (e.g. 2 or 0.5), got 0");
  }
  out = *v;
}

void apply_query(spi::QueryOptions& q, bool path_db, Options& o) {
  ConnectionOptions& c = o.connection;
  positive_seconds(q, "connect_timeout", c.connect_timeout);
  positive_seconds(q, "timeout", c.command_timeout);
  if (const auto v = q.take("layout")) o.layout = parse_layout(*v);
  if (auto v = q.take("prefix")) o.laravel_key_prefix = std::move(*v);
  if (auto v = q.take("processing_suffix")) o.processing_suffix = std::move(*v);
  if (const auto v = q.take("retry_after")) {
    if (*v == "none" || *v == "null") {
      o.retry_after = std::nullopt;
    } else {
      // Whole seconds only (spec/03-redis.md §5: sub-second retry_after is a config error).
      const auto n = to_int64(*v);
      if (!n) fail("retry_after must be whole seconds or none, got " + quoted(*v));
      if (*n < 0) fail("retry_after must not be negative (RDS-59), got " + quoted(*v));
      o.retry_after = std::chrono::seconds(*n);
    }
  }
  if (const auto v = q.take("migration_batch_size")) {
    // -1 = all; 0 would move nothing (LIMIT 0 0), so it is refused (RDS-51).
    const auto n = to_int64(*v);
    if (!n || *n == 0 || *n < -1) {
      fail("migration_batch_size must be -1 (all) or a positive integer, got " + quoted(*v));
    }
    o.migration_batch_size = *n;
  }
  if (const auto v = q.take_int("prefetch", 1, INT_MAX)) o.prefetch = static_cast<int>(*v);
  if (const auto v = q.take_int("db", 0, INT_MAX)) {
    if (path_db) fail("the database index is given twice (path and ?db=)");
    c.db = static_cast<int>(*v);
  }
  q.finish();
}

}  // namespace

Layout parse_layout(std::string_view text) {
  if (text == "default" || text == "legacy") return Layout::Default;
  if (text == "laravel" || text == "zset") return Layout::Laravel;
  throw ConfigError("unknown redis layout " + quoted(text) +
                    " (expected default, legacy, laravel or zset)");
}

Options parse_url(std::string_view url, Options base) {
  if (url.find("://") == std::string_view::npos) {
    fail("expected redis://[[user]:password@]host[:port][/db][?options] or unix:///path");
  }
  const spi::Uri uri = spi::parse_uri(url);
  bool path_db = false;
  if (uri.scheme == "redis") {
    path_db = apply_tcp(uri, base.connection);
  } else if (uri.scheme == "unix") {
    apply_unix(uri, base.connection);
  } else if (uri.scheme == "rediss") {
    fail("rediss:// (TLS) is not supported: this build's hiredis (0.14) has no TLS support");
  } else {
    fail("unsupported scheme " + quoted(uri.scheme) + " (expected redis:// or unix://)");
  }
  apply_userinfo(uri, base.connection);
  spi::QueryOptions query(uri, "the redis URL");
  apply_query(query, path_db, base);
  return base;
}

}  // namespace babelqueue::redis
