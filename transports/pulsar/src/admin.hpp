// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/errors.hpp>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

/// @file
/// The Pulsar admin REST API as the transport's Inspector reads it (issue 13: `queue stats`,
/// `dlq list`): one HTTP/1.1 GET per call on Boost.Beast (header-only, on the Boost.Asio the
/// client already uses), a connection of its own each time. No Beast type is reachable from
/// here.

namespace babelqueue::pulsar {

struct AdminResponse {
  int status = 0;
  /// Header fields as sent (names in their case: a message property's name is part of one).
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

/// GETs of `http://host[:port][/base]` + path, with `Authorization: Bearer <token>` when a token
/// is set.
///
/// Thread-safety: `get` may be called from any thread at once (each call has its own
/// io_context and connection).
class AdminClient {
 public:
  /// @throws ConfigError when `url` is not http://host[:port][/base] (https:// is not supported
  /// yet).
  AdminClient(const std::string& url, std::string token, std::chrono::milliseconds timeout);

  /// The response to GET `path` (any status). A refused or lost connection is a transient
  /// TransportError, no answer within the timeout a TimeoutError; both name the host, never the
  /// token.
  [[nodiscard]] AdminResponse get(const std::string& path) const;

  [[nodiscard]] const std::string& address() const { return address_; }

 private:
  std::string host_;
  std::string port_;
  std::string base_;
  std::string address_;
  std::string token_;
  std::chrono::milliseconds timeout_;
};

}  // namespace babelqueue::pulsar
