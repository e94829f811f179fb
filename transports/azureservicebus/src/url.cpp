// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// sb:// URLs and Service Bus connection strings (ASB-2) on the kit's URI parser, and SAS token
// minting (ASB-3). Error texts never contain a key or a signature.

#include <babelqueue/azureservicebus/transport.hpp>
#include <babelqueue/spi/text.hpp>
#include <babelqueue/spi/uri.hpp>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace babelqueue::azureservicebus {
namespace {

using spi::quoted;

constexpr std::int64_t kMaxPrefetch = 100'000;
constexpr std::int64_t kMaxMilliseconds = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kMaxTokenSeconds = 366LL * 24 * 3600;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0)
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0)
    s.remove_suffix(1);
  return s;
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

// The entity of a path ("/orders" → "orders"; "/" and "" → "").
std::string entity_of(std::string_view path) {
  while (!path.empty() && path.front() == '/')
    path.remove_prefix(1);
  while (!path.empty() && path.back() == '/')
    path.remove_suffix(1);
  return std::string(path);
}

void check(const Options& o) {
  if (o.host.empty()) throw ConfigError("no namespace host");
  if (!o.tls && !is_loopback(o.host)) {
    throw ConfigError("plain TCP (tls off) is only for a local test peer, not for " +
                      quoted(o.host));
  }
  if (o.auth == Auth::SaslPlain && (o.key_name.empty() || o.key.empty()))
    throw ConfigError("auth sasl_plain needs a key name and a key");
}

Options parse_cs(std::string_view cs, Options o) {
  bool emulator = false;
  std::optional<std::string> endpoint;
  while (!cs.empty()) {
    const std::size_t end = cs.find(';');
    const std::string_view part = trim(cs.substr(0, end));
    cs = end == std::string_view::npos ? std::string_view() : cs.substr(end + 1);
    if (part.empty()) continue;
    const std::size_t eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      // Never echoed: the part may be a secret.
      throw ConfigError("a part without a name=value form");
    }
    const std::string key = lower(trim(part.substr(0, eq)));
    const std::string value(trim(part.substr(eq + 1)));
    if (key == "endpoint") {
      endpoint = value;
    } else if (key == "sharedaccesskeyname") {
      o.key_name = value;
    } else if (key == "sharedaccesskey") {
      o.key = value;
    } else if (key == "sharedaccesssignature") {
      o.shared_access_signature = value;
    } else if (key == "entitypath") {
      o.entity = entity_of(value);
    } else if (key == "usedevelopmentemulator") {
      emulator = lower(value) == "true";
    } else {
      // Named only when it looks like a key name (a part of a mangled secret may land here).
      const std::string_view name = trim(part.substr(0, eq));
      const bool word = name.size() <= 32 && std::all_of(name.begin(), name.end(), [](char c) {
                          return std::isalpha(static_cast<unsigned char>(c)) != 0;
                        });
      throw ConfigError((word ? "unknown key " + quoted(name) : std::string("an unknown key")) +
                        " (known: Endpoint, SharedAccessKeyName, SharedAccessKey, "
                        "SharedAccessSignature, EntityPath, UseDevelopmentEmulator)");
    }
  }
  if (!endpoint) throw ConfigError("no Endpoint");
  const spi::Uri uri = spi::parse_uri(*endpoint);
  if (uri.scheme != "sb" && uri.scheme != "amqps" && uri.scheme != "amqp") {
    throw ConfigError("the Endpoint's scheme " + quoted(uri.scheme) + " is not sb://");
  }
  if (uri.user) throw ConfigError("the Endpoint has user info (give the key as SharedAccessKey)");
  o.host = uri.host;
  o.tls = !emulator;
  o.port = uri.port ? *uri.port : (o.tls ? 5671 : 5672);
  if (!o.shared_access_signature.empty() && !o.key.empty())
    throw ConfigError("both SharedAccessKey and SharedAccessSignature");
  if (o.shared_access_signature.empty() && (o.key_name.empty() != o.key.empty()))
    throw ConfigError("SharedAccessKeyName and SharedAccessKey go together");
  return o;
}

[[noreturn]] void rethrow_as(const std::string& prefix, const ConfigError& e) {
  std::string_view what = e.what();
  if (what.starts_with("URL ")) what.remove_prefix(4);
  throw ConfigError(prefix + std::string(what));
}

Options parse(std::string_view url, Options o) {
  const std::optional<std::string> scheme = spi::url_scheme(url);
  if (!scheme) throw ConfigError("expected sb://[KeyName:Key@]namespace[:port][/entity][?options]");
  if (*scheme != "sb")
    throw ConfigError("unsupported scheme " + quoted(*scheme) + " (expected sb://)");
  const spi::Uri uri = spi::parse_uri(url);
  if (uri.host.empty()) {
    const char* env = std::getenv("AZURE_SERVICEBUS_CONNECTION_STRING");
    if (env == nullptr || *env == '\0') {
      throw ConfigError("no namespace host and AZURE_SERVICEBUS_CONNECTION_STRING is not set");
    }
    try {
      o = parse_cs(env, std::move(o));
    } catch (const ConfigError& e) {
      rethrow_as("AZURE_SERVICEBUS_CONNECTION_STRING: ", e);
    }
  } else {
    o.host = uri.host;
    if (uri.user) {
      if (uri.user->empty() || !uri.password || uri.password->empty())
        throw ConfigError("the user info must be KeyName:Key (percent-encoded)");
      o.key_name = *uri.user;
      o.key = *uri.password;
    }
  }
  if (!uri.path.empty() && uri.path != "/") o.entity = entity_of(uri.path);
  spi::QueryOptions q(uri, uri.redacted());
  if (const auto v = q.take_bool("tls")) o.tls = *v;
  if (uri.port) {
    o.port = *uri.port;
  } else if (!uri.host.empty()) {
    o.port = o.tls ? 5671 : 5672;
  }
  if (const auto v = q.take_bool("verify")) o.tls_verify_peer_name = *v;
  if (auto v = q.take("cafile")) o.tls_ca_file = std::move(*v);
  if (auto v = q.take("peer_name")) o.tls_peer_name = std::move(*v);
  if (const auto v = q.take_choice("auth", {"cbs", "sasl_plain"}))
    o.auth = *v == "cbs" ? Auth::Cbs : Auth::SaslPlain;
  if (const auto v = q.take_int("token_lifetime", 10, kMaxTokenSeconds))
    o.token_lifetime = std::chrono::seconds(*v);
  if (const auto v = q.take_int("prefetch", 0, kMaxPrefetch))
    o.prefetch = static_cast<std::uint32_t>(*v);
  if (const auto v = q.take_bool("lock_renewal")) o.lock_renewal = *v;
  if (const auto v = q.take_int("max_lock_renewal", 0, kMaxMilliseconds))
    o.max_lock_renewal = std::chrono::milliseconds(*v);
  if (const auto v = q.take_int("timeout", 1, kMaxMilliseconds))
    o.timeout = std::chrono::milliseconds(*v);
  if (const auto v = q.take_int("max_wait", 0, kMaxMilliseconds))
    o.max_wait = std::chrono::milliseconds(*v);
  if (const auto v = q.take_choice("native_dead_letter", {"abandon", "dead_letter"}))
    o.native_dead_letter =
        *v == "abandon" ? NativeDeadLetter::Abandon : NativeDeadLetter::DeadLetter;
  q.finish();
  check(o);
  return o;
}

std::string base64(const unsigned char* data, std::size_t size) {
  std::string out(4 * ((size + 2) / 3), '\0');
  const int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(size));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

}  // namespace

Options parse_connection_string(std::string_view connection_string, Options base) {
  try {
    Options o = parse_cs(connection_string, std::move(base));
    check(o);
    return o;
  } catch (const ConfigError& e) {
    rethrow_as("azureservicebus connection string: ", e);
  }
}

Options parse_url(std::string_view url, Options base) {
  try {
    return parse(url, std::move(base));
  } catch (const ConfigError& e) {
    rethrow_as("azureservicebus URL: ", e);
  }
}

std::string sas_token(std::string_view resource_uri, std::string_view key_name,
                      std::string_view key, std::int64_t expiry_epoch_seconds) {
  const std::string sr = spi::percent_encode(resource_uri);
  const std::string se = std::to_string(expiry_epoch_seconds);
  const std::string to_sign = sr + "\n" + se;
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int size = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(to_sign.data()), to_sign.size(), mac.data(),
           &size) == nullptr) {
    throw TransportError("azureservicebus: OpenSSL HMAC-SHA256 failed", false);
  }
  return "SharedAccessSignature sr=" + sr +
         "&sig=" + spi::percent_encode(base64(mac.data(), size)) + "&se=" + se +
         "&skn=" + spi::percent_encode(key_name);
}

}  // namespace babelqueue::azureservicebus
