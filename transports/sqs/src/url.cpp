// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// sqs:// URLs (SQS-2) on the kit's URI parser, the option bounds, and the SQS-14 dead-letter
// names. Error texts never contain the secret key: the user info is shown as "***".

#include <babelqueue/spi/text.hpp>
#include <babelqueue/spi/uri.hpp>
#include <babelqueue/sqs/transport.hpp>

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "options.hpp"
#include "sigv4.hpp"

namespace babelqueue::sqs {
namespace {

using spi::quoted;

[[noreturn]] void fail(const std::string& what) {
  throw ConfigError(what);
}

void take_string(spi::QueryOptions& q, std::string_view key, std::string& out) {
  if (auto v = q.take(key)) out = std::move(*v);
}

void take_int(spi::QueryOptions& q, std::string_view key, int min, int max, int& out) {
  if (const auto v = q.take_int(key, min, max)) out = static_cast<int>(*v);
}

void take_ms(spi::QueryOptions& q, std::string_view key, std::int64_t min,
             std::chrono::milliseconds& out) {
  if (const auto v = q.take_int(key, min, detail::kMaxMilliseconds)) {
    out = std::chrono::milliseconds(*v);
  }
}

void take_bool(spi::QueryOptions& q, std::string_view key, bool& out) {
  if (const auto v = q.take_bool(key)) out = *v;
}

Options parse(std::string_view url, Options o) {
  const std::optional<std::string> scheme = spi::url_scheme(url);
  if (!scheme) fail("expected sqs://[key_id:secret@][region][?options]");
  if (*scheme != "sqs") fail("unsupported scheme " + quoted(*scheme) + " (expected sqs://)");
  const spi::Uri uri = spi::parse_uri(url);
  if (uri.port) fail("unexpected port (the authority is the region; use endpoint=...)");
  if (!uri.path.empty() && uri.path != "/") fail("unexpected path " + quoted(uri.path));
  if (!uri.host.empty()) o.region = uri.host;
  if (uri.user) {
    if (uri.user->empty() || !uri.password || uri.password->empty()) {
      fail("the user info must be access_key_id:secret_access_key");
    }
    o.credentials = Credentials{*uri.user, *uri.password, {}};
  }
  spi::QueryOptions q(uri, "sqs://" + std::string(uri.user ? "***@" : "") + uri.host);
  take_string(q, "endpoint", o.endpoint);
  take_string(q, "prefix", o.queue_url_prefix);
  take_string(q, "profile", o.profile);
  take_bool(q, "fifo", o.fifo);
  take_bool(q, "content_dedup", o.content_dedup);
  take_string(q, "group_id", o.message_group_id);
  take_int(q, "wait_time", 0, detail::kMaxWaitSeconds, o.wait_time_seconds);
  take_int(q, "visibility_timeout", 0, detail::kMaxVisibilitySeconds, o.visibility_timeout);
  take_int(q, "prefetch", 1, detail::kMaxBatch, o.prefetch);
  take_int(q, "ack_batch", 1, detail::kMaxBatch, o.ack_batch);
  take_ms(q, "ack_flush_interval", 0, o.ack_flush_interval);
  take_ms(q, "request_timeout", 1, o.request_timeout);
  take_bool(q, "keep_visibility", o.keep_visibility);
  take_bool(q, "verify", o.curl.verify_tls);
  take_string(q, "cafile", o.curl.ca_file);
  q.finish();
  return o;
}

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

void check_http_url(std::string_view what, const std::string& url) {
  try {
    (void)detail::parse_endpoint(url);
  } catch (const ConfigError& e) {
    std::string text = e.what();
    const std::string_view from = "sqs options: endpoint";
    if (text.starts_with(from)) text.replace(0, from.size(), "sqs options: " + std::string(what));
    throw ConfigError(text);
  }
}

template <class Rep, class Period>
void check_non_negative(std::string_view name, std::chrono::duration<Rep, Period> d) {
  if (d.count() < 0) fail("sqs options: " + std::string(name) + " is negative");
}

void check_range(std::string_view name, int value, int min, int max) {
  if (value < min || value > max) {
    fail("sqs options: " + std::string(name) + " must be " + std::to_string(min) + ".." +
         std::to_string(max) + ", got " + std::to_string(value));
  }
}

}  // namespace

namespace detail {

std::string resolve_region(const Options& options) {
  if (!options.region.empty()) return options.region;
  std::string region = env("AWS_REGION");
  if (region.empty()) region = env("AWS_DEFAULT_REGION");
  if (region.empty()) {
    fail(
        "sqs options: no region (none in the options or the sqs:// URL, AWS_REGION and "
        "AWS_DEFAULT_REGION are not set)");
  }
  return region;
}

Options validated(Options o) {
  o.region = resolve_region(o);
  for (const char c : o.region) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    if (!ok) fail("sqs options: region " + quoted(o.region) + " is not a region name");
  }
  if (o.endpoint.empty()) o.endpoint = "https://sqs." + o.region + ".amazonaws.com/";
  check_http_url("endpoint", o.endpoint);
  while (o.queue_url_prefix.ends_with('/'))
    o.queue_url_prefix.pop_back();
  if (!o.queue_url_prefix.empty()) check_http_url("queue_url_prefix", o.queue_url_prefix);
  if (!o.credentials.access_key_id.empty() && o.credentials.secret_access_key.empty()) {
    fail("sqs options: credentials have an access key id but no secret access key");
  }
  check_range("wait_time_seconds", o.wait_time_seconds, 0, kMaxWaitSeconds);
  check_range("visibility_timeout", o.visibility_timeout, 0, kMaxVisibilitySeconds);
  check_range("prefetch", o.prefetch, 1, kMaxBatch);
  check_range("ack_batch", o.ack_batch, 1, kMaxBatch);
  check_non_negative("handout_margin", o.handout_margin);
  check_non_negative("ack_flush_interval", o.ack_flush_interval);
  if (o.request_timeout.count() <= 0) fail("sqs options: request_timeout must be positive");
  check_non_negative("curl.connect_timeout", o.curl.connect_timeout);
  if (o.curl.max_connections == 0) fail("sqs options: curl.max_connections must be at least 1");
  if (o.message_group_id.size() > 128) {
    fail("sqs options: message_group_id is longer than 128 characters");
  }
  return o;
}

bool valid_queue_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > 80) return false;
  std::string_view stem = name;
  if (stem.ends_with(".fifo")) stem.remove_suffix(5);
  if (stem.empty()) return false;
  for (const char c : stem) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace detail

Options parse_url(std::string_view url, Options base) {
  return spi::with_url_context("sqs", [&] { return parse(url, std::move(base)); });
}

std::string dead_letter_name(std::string_view queue,
                             std::optional<std::string_view> explicit_suffix) {
  const bool fifo = queue.ends_with(".fifo");
  std::string_view stem = queue;
  if (fifo) stem.remove_suffix(5);
  std::string name(stem);
  name += explicit_suffix ? *explicit_suffix : std::string_view("-dlq");
  if (fifo) name += ".fifo";
  if (!detail::valid_queue_name(name)) {
    fail("sqs: dead-letter queue name " + quoted(name) + " (of queue " + quoted(queue) +
         ") is not a valid SQS queue name ([A-Za-z0-9_-], at most 80 characters with .fifo)");
  }
  return name;
}

}  // namespace babelqueue::sqs
