// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// kafka:// URLs (KFK-2) on the kit's URI parser. The authority may hold a comma-separated host
// list, which the kit does not parse: it is cut out, each host is parsed on its own, and the rest
// of the URL (userinfo, path, query) goes through parse_uri with a placeholder host. Error texts
// never contain the password.

#include <babelqueue/kafka/transport.hpp>
#include <babelqueue/spi/text.hpp>
#include <babelqueue/spi/uri.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "options.hpp"

namespace babelqueue::kafka {
namespace {

using spi::quoted;

constexpr std::uint16_t kDefaultPort = 9092;

[[noreturn]] void fail(const std::string& what) {
  throw ConfigError(what);
}

std::string parse_hosts(std::string_view list) {
  if (list.empty()) fail("empty host list");
  std::string brokers;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view entry = list.substr(start, comma - start);
    if (entry.empty()) fail("empty host in the host list");
    const spi::Uri one = spi::parse_uri("kafka://" + std::string(entry));
    if (one.host.empty() || !one.path.empty() || !one.query.empty() || one.user) {
      fail("bad host " + quoted(entry) + " in the host list (expected host[:port])");
    }
    if (!brokers.empty()) brokers += ',';
    brokers += one.ipv6_literal ? "[" + one.host + "]" : one.host;
    brokers += ':' + std::to_string(one.port.value_or(kDefaultPort));
    start = comma + 1;
  }
  return brokers;
}

void take_ms(spi::QueryOptions& q, std::string_view key, std::int64_t min,
             std::chrono::milliseconds& out) {
  if (const auto v = q.take_int(key, min, detail::kMaxMilliseconds)) {
    out = std::chrono::milliseconds(*v);
  }
}

void take_string(spi::QueryOptions& q, std::string_view key, std::string& out) {
  if (auto v = q.take(key)) out = std::move(*v);
}

// property.<name>, producer.<name>, consumer.<name>: the kit only takes keys by exact name, so
// the prefixed ones are collected from the URI and taken one by one.
void take_pass_through(const spi::Uri& uri, spi::QueryOptions& q, Options& o) {
  const std::array<std::pair<std::string_view, std::map<std::string, std::string>*>, 3> maps{{
      {"property.", &o.properties},
      {"producer.", &o.producer_properties},
      {"consumer.", &o.consumer_properties},
  }};
  for (const auto& [key, value] : uri.query) {
    for (const auto& [prefix, target] : maps) {
      if (!key.starts_with(prefix)) continue;
      if (key.size() == prefix.size()) fail("option " + quoted(key) + " names no property");
      (*target)[key.substr(prefix.size())] = *q.take(key);
    }
  }
}

void apply_query(const spi::Uri& uri, spi::QueryOptions& q, Options& o) {
  take_string(q, "group_id", o.group_id);
  take_string(q, "client_id", o.client_id);
  take_string(q, "topic_prefix", o.topic_prefix);
  take_ms(q, "publish_timeout", 1, o.publish_timeout);
  take_ms(q, "max_wait", 0, o.max_wait);
  take_ms(q, "revoke_grace", 0, o.revoke_grace);
  take_ms(q, "linger", 0, o.linger);
  if (const auto v = q.take_bool("idempotence")) o.idempotence = *v;
  if (const auto v = q.take("assignor")) o.assignor = parse_assignor(*v);
  if (const auto v = q.take_int("commit_batch", 1, detail::kMaxCommitBatch)) {
    o.commit_batch = static_cast<std::size_t>(*v);
  }
  if (const auto v = q.take_int("partitions", 0, detail::kMaxPartitions)) {
    o.partitions = static_cast<int>(*v);
  }
  if (const auto v = q.take_int("replication_factor", -1, detail::kMaxReplicationFactor)) {
    if (*v == 0) fail("option \"replication_factor\" must be -1 or 1..100, got 0");
    o.replication_factor = static_cast<int>(*v);
  }
  take_string(q, "security_protocol", o.security_protocol);
  take_string(q, "sasl_mechanism", o.sasl_mechanism);
  take_string(q, "sasl_username", o.sasl_username);
  take_string(q, "sasl_password", o.sasl_password);
  take_string(q, "ssl_ca_location", o.ssl_ca_location);
  take_pass_through(uri, q, o);
  q.finish();
}

Options parse(std::string_view url, Options o) {
  const std::optional<std::string> scheme = spi::url_scheme(url);
  if (!scheme) fail("expected kafka://[user[:password]@]host[:port][,host[:port]...][?options]");
  if (*scheme != "kafka") fail("unsupported scheme " + quoted(*scheme) + " (expected kafka://)");
  const std::string_view rest = url.substr(scheme->size() + 3);
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  const std::size_t at = authority.rfind('@');
  const std::string_view userinfo =
      at == std::string_view::npos ? std::string_view{} : authority.substr(0, at + 1);
  const std::string_view hosts =
      at == std::string_view::npos ? authority : authority.substr(at + 1);
  // The placeholder keeps the kit's checks of userinfo, path and query, and its redaction.
  const spi::Uri uri = spi::parse_uri("kafka://" + std::string(userinfo) + "host" +
                                      std::string(rest.substr(authority.size())));
  if (!uri.path.empty() && uri.path != "/") fail("unexpected path " + quoted(uri.path));
  o.brokers = parse_hosts(hosts);
  if (uri.user) {
    o.sasl_username = *uri.user;
    o.sasl_password = uri.password.value_or("");
  }
  spi::QueryOptions query(
      uri, "kafka://" + std::string(userinfo.empty() ? "" : "***@") + std::string(hosts));
  apply_query(uri, query, o);
  if (uri.user) {
    if (o.security_protocol.empty()) o.security_protocol = "sasl_plaintext";
    if (o.sasl_mechanism.empty()) o.sasl_mechanism = "PLAIN";
  }
  return o;
}

}  // namespace

Assignor parse_assignor(std::string_view text) {
  if (text == "range") return Assignor::Range;
  if (text == "roundrobin") return Assignor::RoundRobin;
  if (text == "cooperative-sticky") {
    fail(
        "assignor \"cooperative-sticky\" is refused: librdkafka 2.0.2 aborts when a never-assigned "
        "consumer closes (expected range or roundrobin)");
  }
  fail("unknown kafka assignor " + quoted(text) + " (expected range or roundrobin)");
}

Options parse_url(std::string_view url, Options base) {
  return spi::with_url_context("kafka", [&] { return parse(url, std::move(base)); });
}

}  // namespace babelqueue::kafka
