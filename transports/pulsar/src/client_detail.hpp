// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "frame.hpp"

/// Pieces of the client (client.hpp) that need no connection, kept apart for their unit tests.
namespace babelqueue::pulsar::detail {

namespace pb = ::babelqueue::pulsar::proto;

/// A broker's ERROR, SEND_ERROR or failed LOOKUP as the core's error class, its text naming
/// `context` (the request and its topic), the broker's error name and message: ConfigError for
/// what configuration must fix (authentication, authorization, an invalid topic name, a topic
/// that does not exist and is not auto-created, an unsupported version, a schema or an operation
/// not allowed), a non-transient TransportError for a terminated topic or a fenced producer, and
/// a transient TransportError for the rest (ServiceNotReady, TooManyRequests, a busy producer or
/// consumer, quotas, persistence and metadata failures).
[[nodiscard]] std::exception_ptr broker_error(pb::ServerError code, const std::string& context,
                                              const std::string& message);

/// The sends of one producer on one connection awaiting their receipts, by sequence id.
///
/// Thread-safety: not thread-safe; used by the I/O thread.
class PendingSends {
 public:
  using Callback = std::function<void(const pb::MessageIdData*, std::exception_ptr)>;

  /// The next sequence id (0, 1, ...) with `done` waiting for its outcome.
  std::uint64_t add(Callback done);
  /// SEND_RECEIPT of `sequence`: resolves its send; false when none waits for it (a receipt
  /// for a send already failed, or a duplicate).
  bool receipt(std::uint64_t sequence, const pb::MessageIdData& id);
  /// SEND_ERROR of `sequence`: rejects its send with `error`; false when none waits for it.
  bool fail(std::uint64_t sequence, std::exception_ptr error);
  /// Rejects every send in flight with `error` (a lost connection) in sequence order.
  void fail_all(const std::exception_ptr& error);
  [[nodiscard]] std::size_t size() const noexcept { return pending_.size(); }

 private:
  std::uint64_t next_ = 0;
  std::map<std::uint64_t, Callback> pending_;
};

}  // namespace babelqueue::pulsar::detail
