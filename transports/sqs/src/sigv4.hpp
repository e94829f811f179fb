// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// The transport's own AWS Signature Version 4 signer (SQS-4) on OpenSSL 3's SHA-256 and
// HMAC-SHA256, for the JSON 1.0 requests of SQS-1: `POST <endpoint path>` with no query, signed
// headers content-type;host;x-amz-date;x-amz-target (+ x-amz-security-token).

#include <babelqueue/sqs/transport.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace babelqueue::sqs::detail {

using Sha256 = std::array<unsigned char, 32>;

[[nodiscard]] Sha256 sha256(std::string_view data);
[[nodiscard]] Sha256 hmac_sha256(std::string_view key, std::string_view data);
/// Lowercase hex of `bytes`.
[[nodiscard]] std::string hex(const unsigned char* bytes, std::size_t size);
/// Lowercase hex SHA-256 of `data` (SQS-4 payload hash, SQS-7 deduplication id).
[[nodiscard]] std::string sha256_hex(std::string_view data);

/// Where requests go, split once: the URL as given, `Host` (the port only when it is not the
/// scheme's default) and the canonical URI (the path, "/" when empty).
struct Endpoint {
  std::string url;
  std::string host;
  std::string path;
};

/// @throws ConfigError("sqs options: endpoint ...") for a URL that is not
/// http(s)://host[:port][/path] (no user info, query or fragment).
[[nodiscard]] Endpoint parse_endpoint(std::string_view url);

/// `YYYYMMDDTHHMMSSZ` (UTC) of `t`.
[[nodiscard]] std::string amz_date(std::chrono::system_clock::time_point t);

/// Signs requests for one region and service. The signing key is derived once per
/// date/secret and cached (it changes daily or when the credentials change).
///
/// Thread-safety: `sign` is safe from any thread.
class Signer {
 public:
  Signer(std::string region, std::string service);

  /// Every header of the request in sending order: Content-Type, Host, X-Amz-Date,
  /// X-Amz-Security-Token (when `credentials` has one), X-Amz-Target, Authorization.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> sign(
      const Endpoint& endpoint, std::string_view target, std::string_view body,
      const Credentials& credentials, std::chrono::system_clock::time_point now) const;

 private:
  [[nodiscard]] Sha256 signing_key(std::string_view date, const std::string& secret) const;

  std::string region_;
  std::string service_;
  mutable std::mutex mu_;
  mutable std::string cached_date_;
  mutable std::string cached_secret_;
  mutable Sha256 cached_key_{};
};

}  // namespace babelqueue::sqs::detail
