// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// pulsar:// and pulsar+ssl:// URLs (PLS-2, D-10) on the kit's URI parser. Error texts never
// contain the token: the user info is shown as "***".

#include <babelqueue/pulsar/transport.hpp>
#include <babelqueue/spi/text.hpp>
#include <babelqueue/spi/uri.hpp>

#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace babelqueue::pulsar {
namespace {

using spi::quoted;

constexpr std::int64_t kMaxPrefetch = 100'000;
constexpr std::int64_t kMaxAckBatch = 10'000;
constexpr std::int64_t kMaxMilliseconds = std::numeric_limits<std::int32_t>::max();

[[noreturn]] void fail(const std::string& what) {
  throw ConfigError(what);
}

void take_string(spi::QueryOptions& q, std::string_view key, std::string& out) {
  if (auto v = q.take(key)) out = std::move(*v);
}

void take_ms(spi::QueryOptions& q, std::string_view key, std::int64_t min,
             std::chrono::milliseconds& out) {
  if (const auto v = q.take_int(key, min, kMaxMilliseconds)) out = std::chrono::milliseconds(*v);
}

constexpr SubscriptionType kSubscriptionTypes[] = {
    SubscriptionType::Shared, SubscriptionType::Exclusive, SubscriptionType::Failover,
    SubscriptionType::KeyShared};

// The path /<tenant>/<namespace>: both or neither.
void take_path(const std::string& path, Options& o) {
  if (path.empty() || path == "/") return;
  const std::string_view rest = std::string_view(path).substr(1);
  const std::size_t slash = rest.find('/');
  std::string_view tenant = rest.substr(0, slash);
  std::string_view ns =
      slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
  if (!ns.empty() && ns.back() == '/') ns.remove_suffix(1);
  if (tenant.empty() || ns.empty() || ns.find('/') != std::string_view::npos) {
    fail("unexpected path " + quoted(path) +
         " (expected /<tenant>/<namespace>; queues are named per call, not in the URL)");
  }
  o.tenant = std::string(tenant);
  o.namespace_name = std::string(ns);
}

Options parse(std::string_view url, Options o) {
  const std::optional<std::string> scheme = spi::url_scheme(url);
  if (!scheme) fail("expected pulsar://[:token@]host[:port][/tenant/namespace][?options]");
  if (*scheme != "pulsar" && *scheme != "pulsar+ssl") {
    fail("unsupported scheme " + quoted(*scheme) + " (expected pulsar:// or pulsar+ssl://)");
  }
  const spi::Uri uri = spi::parse_uri(url);
  o.tls = *scheme == "pulsar+ssl";
  if (!uri.host.empty()) o.host = uri.host;
  o.port = uri.port ? *uri.port : (o.tls ? 6651 : 6650);
  if (uri.user) {
    if (!uri.user->empty() && *uri.user != "token") {
      fail("the user info names " + quoted(*uri.user) +
           " (only a token is supported: pulsar://token:<token>@host or pulsar://:<token>@host)");
    }
    if (!uri.password || uri.password->empty()) fail("the user info has no token");
    o.token = *uri.password;
  }
  take_path(uri.path, o);
  spi::QueryOptions q(uri, uri.redacted());
  take_string(q, "subscription", o.subscription);
  std::vector<std::string_view> type_names;
  for (const SubscriptionType type : kSubscriptionTypes)
    type_names.push_back(subscription_type_name(type));
  if (const auto v = q.take_choice("subscription_type", type_names)) {
    for (const SubscriptionType type : kSubscriptionTypes) {
      if (*v == subscription_type_name(type)) o.subscription_type = type;
    }
  }
  if (const auto v = q.take_int("prefetch", 1, kMaxPrefetch)) {
    o.prefetch = static_cast<std::uint32_t>(*v);
  }
  if (const auto v = q.take_int("ack_batch", 1, kMaxAckBatch)) {
    o.ack_batch = static_cast<std::uint32_t>(*v);
  }
  take_string(q, "topic_prefix", o.topic_prefix);
  take_string(q, "admin_url", o.admin_url);
  take_string(q, "cafile", o.tls_ca_file);
  if (const auto v = q.take_bool("verify")) o.tls_verify = *v;
  take_ms(q, "timeout", 1, o.timeout);
  take_ms(q, "max_wait", 0, o.max_wait);
  q.finish();
  if (o.subscription.empty()) fail("subscription is empty");
  if (!o.admin_url.empty() && !o.admin_url.starts_with("http://")) {
    fail("admin_url " + quoted(spi::redact_url(o.admin_url)) +
         " is not an http:// URL (https:// is not supported yet)");
  }
  return o;
}

}  // namespace

std::string_view subscription_type_name(SubscriptionType type) noexcept {
  switch (type) {
    case SubscriptionType::Exclusive:
      return "Exclusive";
    case SubscriptionType::Failover:
      return "Failover";
    case SubscriptionType::KeyShared:
      return "Key_Shared";
    case SubscriptionType::Shared:
      break;
  }
  return "Shared";
}

Options parse_url(std::string_view url, Options base) {
  return spi::with_url_context("pulsar", [&] { return parse(url, std::move(base)); });
}

std::string topic_of(const Options& options, std::string_view queue) {
  std::string topic = "persistent://";
  topic += options.tenant;
  topic += '/';
  topic += options.namespace_name;
  topic += '/';
  topic += options.topic_prefix;
  topic += queue;
  return topic;
}

}  // namespace babelqueue::pulsar
