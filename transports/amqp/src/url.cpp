// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Connection URLs (AMQP-1) on the kit's URI parser, the declare and consume mode names, and the
// bounds of Options. Error messages name the offending part and never contain the password: a
// URL usually comes from configuration that also reaches logs.

#include <babelqueue/amqp/transport.hpp>
#include <babelqueue/spi/text.hpp>
#include <babelqueue/spi/uri.hpp>

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "options.hpp"

namespace babelqueue::amqp {
namespace {

using spi::quoted;

constexpr std::array<std::pair<std::string_view, DeclareMode>, 3> kDeclareModes{{
    {"classic", DeclareMode::Classic},
    {"quorum", DeclareMode::Quorum},
    {"passive", DeclareMode::Passive},
}};
constexpr std::array<std::pair<std::string_view, ConsumeMode>, 3> kConsumeModes{{
    {"push", ConsumeMode::Push},
    {"consume", ConsumeMode::Push},
    {"get", ConsumeMode::Get},
}};

template <class Table>
std::vector<std::string_view> names(const Table& table) {
  std::vector<std::string_view> out;
  out.reserve(table.size());
  for (const auto& entry : table)
    out.push_back(entry.first);
  return out;
}

template <class Table>
auto lookup(const Table& table, std::string_view what, std::string_view text) {
  for (const auto& [name, value] : table) {
    if (name == text) return value;
  }
  std::string list;
  for (const std::string_view name : names(table)) {
    if (!list.empty()) list += ", ";
    list += name;
  }
  throw ConfigError("unknown amqp " + std::string(what) + " mode " + quoted(text) + " (expected " +
                    list + ")");
}

// Thrown without a prefix: parse_url adds "amqp URL: " to every error, the kit's included.
[[noreturn]] void fail(const std::string& what) {
  throw ConfigError(what);
}

[[noreturn]] void invalid(const std::string& what) {
  throw ConfigError("amqp options: " + what);
}

// The RabbitMQ URI spec makes the vhost a single path segment, so a '/' in it must be written
// %2F. spi::Uri::path is decoded, so the raw path is looked at: an unescaped '/' after the first
// is refused rather than guessed at, since the peers read it differently ("/a/b" is "a/b" for
// amqp091-go and "a" for pika; "//", kombu's spelling of "/", is "/" and "" for them).
void apply_vhost(std::string_view url, std::string_view scheme, const spi::Uri& uri, Options& o) {
  if (uri.path.empty()) return;
  // parse_uri accepted `url`: no '#', and no '@' after the first '/', which starts the path.
  std::string_view raw = url.substr(scheme.size() + 3);
  raw = raw.substr(0, raw.find('?'));
  raw = raw.substr(raw.find('/'));
  if (raw.find('/', 1) != std::string_view::npos) {
    fail("unescaped '/' in the vhost path " + quoted(raw) +
         ": the vhost is one path segment, write '/' in it as %2F (the vhost \"/\" is /%2F or no "
         "path)");
  }
  o.vhost = uri.path == "/" ? "/" : uri.path.substr(1);
}

// Seconds with a fraction; the kit accepts 0, these timeouts must be positive.
void positive_seconds(spi::QueryOptions& q, std::string_view name, std::chrono::milliseconds& out) {
  const auto v = q.take_seconds(name);
  if (!v) return;
  if (v->count() == 0) {
    fail("option " + quoted(name) + " must be a positive number of seconds (e.g. 2 or 0.5), got 0");
  }
  out = *v;
}

void apply_tls(spi::QueryOptions& q, Options& o) {
  TlsOptions& tls = o.tls;
  const auto tls_only = [&](std::string_view key) {
    if (!tls.enabled) fail("option " + quoted(key) + " is a TLS option: it needs amqps://");
  };
  for (const auto& [key, member] : {std::pair{"cacertfile", &TlsOptions::ca_file},
                                    std::pair{"certfile", &TlsOptions::cert_file},
                                    std::pair{"keyfile", &TlsOptions::key_file}}) {
    if (auto v = q.take(key)) {
      tls_only(key);
      tls.*member = std::move(*v);
    }
  }
  const auto verify = q.take_choice("verify", {"verify_peer", "verify_none"});
  if (verify) {
    tls_only("verify");
    tls.verify_peer = *verify == "verify_peer";
    if (!tls.verify_peer) tls.verify_hostname = false;
  }
  if (const auto v = q.take_bool("verify_hostname")) {
    tls_only("verify_hostname");
    if (*v && !tls.verify_peer) {
      fail(
          "verify_hostname=true needs verify=verify_peer: the name of an unverified certificate "
          "proves nothing");
    }
    tls.verify_hostname = *v;
  }
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    fail("certfile and keyfile go together: give both or neither");
  }
}

void apply_query(spi::QueryOptions& q, Options& o) {
  if (const auto v = q.take_int("heartbeat", 0, detail::kMaxHeartbeatSeconds)) {
    o.heartbeat = std::chrono::seconds(*v);
  }
  positive_seconds(q, "connect_timeout", o.connect_timeout);
  if (const auto v = q.take_bool("confirms")) o.publisher_confirms = *v;
  positive_seconds(q, "confirm_timeout", o.confirm_timeout);
  if (const auto v = q.take_int("prefetch", 1, detail::kMaxPrefetch)) {
    o.prefetch = static_cast<int>(*v);
  }
  if (const auto v = q.take_choice("consume", names(kConsumeModes))) {
    o.consume_mode = parse_consume_mode(*v);
  }
  if (const auto v = q.take_choice("declare", names(kDeclareModes))) {
    o.declare = parse_declare_mode(*v);
  }
  apply_tls(q, o);
  q.finish();
}

Options parse(std::string_view url, Options o) {
  const std::optional<std::string> scheme = spi::url_scheme(url);
  if (!scheme) fail("expected amqp://[user[:password]@]host[:port][/vhost][?options] or amqps://");
  if (*scheme != "amqp" && *scheme != "amqps") {
    fail("unsupported scheme " + quoted(*scheme) + " (expected amqp:// or amqps://)");
  }
  const spi::Uri uri = spi::parse_uri(url);
  if (uri.host.empty()) fail("empty host");
  o.host = uri.host;
  if (uri.port) o.port = *uri.port;
  o.tls.enabled = *scheme == "amqps";
  if (uri.user) o.user = *uri.user;
  if (uri.password) o.password = *uri.password;
  apply_vhost(url, *scheme, uri, o);
  spi::QueryOptions query(uri, uri.redacted());
  apply_query(query, o);
  return o;
}

}  // namespace

DeclareMode parse_declare_mode(std::string_view text) {
  return lookup(kDeclareModes, "declare", text);
}

ConsumeMode parse_consume_mode(std::string_view text) {
  return lookup(kConsumeModes, "consume", text);
}

Options parse_url(std::string_view url, Options base) {
  return spi::with_url_context("amqp", [&] { return parse(url, std::move(base)); });
}

namespace detail {

int effective_port(const Options& options) noexcept {
  if (options.port != 0) return options.port;
  return options.tls.enabled ? kTlsPort : kPort;
}

void validate(const Options& o) {
  const auto positive = [](std::string_view name, std::chrono::milliseconds value) {
    if (value.count() <= 0) {
      invalid(std::string(name) + " must be positive, got " + std::to_string(value.count()) +
              " ms");
    }
  };
  if (o.host.empty()) invalid("empty host");
  if (o.port < 0 || o.port > 65535) {
    invalid("port must be 1..65535 (or 0 for the default), got " + std::to_string(o.port));
  }
  if (o.heartbeat && (o.heartbeat->count() < 0 || o.heartbeat->count() > kMaxHeartbeatSeconds)) {
    invalid("heartbeat must be 0.." + std::to_string(kMaxHeartbeatSeconds) + " s (0 = off), got " +
            std::to_string(o.heartbeat->count()) + " s");
  }
  positive("connect_timeout", o.connect_timeout);
  if (o.tls.cert_file.empty() != o.tls.key_file.empty()) {
    invalid("tls.cert_file and tls.key_file go together: give both or neither");
  }
  positive("confirm_timeout", o.confirm_timeout);
  if (o.prefetch < 1 || o.prefetch > kMaxPrefetch) {
    invalid("prefetch must be 1.." + std::to_string(kMaxPrefetch) + ", got " +
            std::to_string(o.prefetch));
  }
  positive("empty_repoll_interval", o.empty_repoll_interval);
  if (o.delay_queue_infix.empty()) invalid("empty delay_queue_infix");
}

}  // namespace detail

}  // namespace babelqueue::amqp
