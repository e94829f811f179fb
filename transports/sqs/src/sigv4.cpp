// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// SigV4 (SQS-4): canonical request, string to sign, derived key and signature, as the AWS
// Signature Version 4 documentation defines them, for a POST with an empty query string.

#include "sigv4.hpp"

#include <babelqueue/spi/text.hpp>
#include <babelqueue/spi/uri.hpp>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <ctime>
#include <stdexcept>

namespace babelqueue::sqs::detail {
namespace {

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";
constexpr std::string_view kContentType = "application/x-amz-json-1.0";

std::string hex_of(const Sha256& digest) {
  return hex(digest.data(), digest.size());
}

std::string_view as_text(const Sha256& digest) {
  return {reinterpret_cast<const char*>(digest.data()), digest.size()};
}

// RFC 3986 encoding of each path segment, as the canonical URI wants it ('/' kept).
std::string canonical_uri(std::string_view path) {
  return path.empty() ? std::string("/") : spi::percent_encode(path, "/");
}

}  // namespace

Sha256 sha256(std::string_view data) {
  Sha256 out{};
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), out.data(), &size, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("sqs: OpenSSL SHA-256 failed");
  }
  return out;
}

Sha256 hmac_sha256(std::string_view key, std::string_view data) {
  Sha256 out{};
  unsigned int size = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(),
           &size) == nullptr) {
    throw std::runtime_error("sqs: OpenSSL HMAC-SHA256 failed");
  }
  return out;
}

std::string hex(const unsigned char* bytes, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 0x0f]);
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  return hex_of(sha256(data));
}

Endpoint parse_endpoint(std::string_view url) {
  const auto fail = [&](std::string_view why) -> ConfigError {
    return ConfigError("sqs options: endpoint " + spi::quoted(spi::redact_url(url)) + " " +
                       std::string(why));
  };
  spi::Uri uri;
  try {
    uri = spi::parse_uri(url);
  } catch (const ConfigError&) {
    throw fail("is not a URL (expected http(s)://host[:port][/path])");
  }
  if (uri.scheme != "http" && uri.scheme != "https") throw fail("must be http:// or https://");
  if (uri.host.empty()) throw fail("has no host");
  if (uri.user) throw fail("must not hold credentials (use the options or the sqs:// URL)");
  if (!uri.query.empty() || url.find('#') != std::string_view::npos) {
    throw fail("must not have a query or a fragment");
  }
  Endpoint e;
  e.url = std::string(url);
  if (uri.path.empty()) e.url += '/';
  e.host = uri.ipv6_literal ? "[" + uri.host + "]" : uri.host;
  for (char& c : e.host) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  const std::uint16_t default_port = uri.scheme == "https" ? 443 : 80;
  if (uri.port && *uri.port != default_port) e.host += ':' + std::to_string(*uri.port);
  e.path = uri.path.empty() ? "/" : uri.path;
  return e;
}

std::string amz_date(std::chrono::system_clock::time_point t) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[17];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

Signer::Signer(std::string region, std::string service)
    : region_(std::move(region)), service_(std::move(service)) {}

Sha256 Signer::signing_key(std::string_view date, const std::string& secret) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (cached_date_ != date || cached_secret_ != secret) {
    const Sha256 k_date = hmac_sha256("AWS4" + secret, date);
    const Sha256 k_region = hmac_sha256(as_text(k_date), region_);
    const Sha256 k_service = hmac_sha256(as_text(k_region), service_);
    cached_key_ = hmac_sha256(as_text(k_service), "aws4_request");
    cached_date_ = std::string(date);
    cached_secret_ = secret;
  }
  return cached_key_;
}

std::vector<std::pair<std::string, std::string>> Signer::sign(
    const Endpoint& endpoint, std::string_view target, std::string_view body,
    const Credentials& credentials, std::chrono::system_clock::time_point now) const {
  const std::string timestamp = amz_date(now);
  const std::string_view date = std::string_view(timestamp).substr(0, 8);
  const bool token = !credentials.session_token.empty();

  std::string canonical = "POST\n" + canonical_uri(endpoint.path) + "\n\n";
  canonical += "content-type:";
  canonical += kContentType;
  canonical += "\nhost:" + endpoint.host + "\nx-amz-date:" + timestamp + "\n";
  if (token) canonical += "x-amz-security-token:" + credentials.session_token + "\n";
  canonical += "x-amz-target:";
  canonical += target;
  const std::string signed_headers =
      token ? "content-type;host;x-amz-date;x-amz-security-token;x-amz-target"
            : "content-type;host;x-amz-date;x-amz-target";
  canonical += "\n\n" + signed_headers + "\n" + sha256_hex(body);

  const std::string scope = std::string(date) + "/" + region_ + "/" + service_ + "/aws4_request";
  std::string to_sign(kAlgorithm);
  to_sign += "\n" + timestamp + "\n" + scope + "\n" + sha256_hex(canonical);
  const std::string signature =
      hex_of(hmac_sha256(as_text(signing_key(date, credentials.secret_access_key)), to_sign));

  std::vector<std::pair<std::string, std::string>> headers;
  headers.reserve(6);
  headers.emplace_back("Content-Type", kContentType);
  headers.emplace_back("Host", endpoint.host);
  headers.emplace_back("X-Amz-Date", timestamp);
  if (token) headers.emplace_back("X-Amz-Security-Token", credentials.session_token);
  headers.emplace_back("X-Amz-Target", std::string(target));
  std::string authorization(kAlgorithm);
  authorization += " Credential=" + credentials.access_key_id + "/" + scope +
                   ", SignedHeaders=" + signed_headers + ", Signature=" + signature;
  headers.emplace_back("Authorization", std::move(authorization));
  return headers;
}

}  // namespace babelqueue::sqs::detail
