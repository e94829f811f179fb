// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// artemis:// and artemis+ssl:// URLs (ART-1, ART-2) on the kit's URI parser. Error texts never
// contain the password: the user info is shown as "***".

#include <babelqueue/artemis/transport.hpp>
#include <babelqueue/spi/text.hpp>
#include <babelqueue/spi/uri.hpp>

#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace babelqueue::artemis {
namespace {

using spi::quoted;

constexpr std::int64_t kMaxPrefetch = 100'000;
constexpr std::int64_t kMaxMilliseconds = std::numeric_limits<std::int32_t>::max();

[[noreturn]] void fail(const std::string& what) {
  throw ConfigError(what);
}

void take_string(spi::QueryOptions& q, std::string_view key, std::string& out) {
  if (auto v = q.take(key)) out = std::move(*v);
}

void take_bool(spi::QueryOptions& q, std::string_view key, bool& out) {
  if (const auto v = q.take_bool(key)) out = *v;
}

void take_ms(spi::QueryOptions& q, std::string_view key, std::int64_t min,
             std::chrono::milliseconds& out) {
  if (const auto v = q.take_int(key, min, kMaxMilliseconds)) out = std::chrono::milliseconds(*v);
}

Options parse(std::string_view url, Options o) {
  const std::optional<std::string> scheme = spi::url_scheme(url);
  if (!scheme) fail("expected artemis://[user:password@]host[:port][?options]");
  if (*scheme != "artemis" && *scheme != "artemis+ssl") {
    fail("unsupported scheme " + quoted(*scheme) + " (expected artemis:// or artemis+ssl://)");
  }
  const spi::Uri uri = spi::parse_uri(url);
  if (!uri.path.empty() && uri.path != "/") {
    fail("unexpected path " + quoted(uri.path) + " (queues are named per call, not in the URL)");
  }
  o.tls = *scheme == "artemis+ssl";
  if (!uri.host.empty()) o.host = uri.host;
  o.port = uri.port ? *uri.port : (o.tls ? 5671 : 5672);
  if (uri.user) {
    if (uri.user->empty()) fail("the user info has an empty user name");
    o.user = *uri.user;
    o.password = uri.password.value_or(std::string());
  }
  spi::QueryOptions q(uri, uri.redacted());
  if (const auto v = q.take_int("prefetch", 1, kMaxPrefetch)) {
    o.prefetch = static_cast<std::uint32_t>(*v);
  }
  take_bool(q, "durable", o.durable);
  take_bool(q, "queue_capability", o.queue_capability);
  take_bool(q, "verify", o.tls_verify_peer_name);
  take_string(q, "cafile", o.tls_ca_file);
  take_string(q, "peer_name", o.tls_peer_name);
  take_ms(q, "timeout", 1, o.timeout);
  take_ms(q, "max_wait", 0, o.max_wait);
  q.finish();
  return o;
}

}  // namespace

Options parse_url(std::string_view url, Options base) {
  return spi::with_url_context("artemis", [&] { return parse(url, std::move(base)); });
}

}  // namespace babelqueue::artemis
