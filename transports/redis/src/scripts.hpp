// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <atomic>
#include <cstddef>
#include <limits>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "connection.hpp"

/// The EVALSHA/NOSCRIPT machinery for a layout's Lua scripts (RDS-3: every multi-command step is
/// one script, every key it touches is in KEYS).

namespace babelqueue::redis::detail {

/// `Call::script` of a plain command.
inline constexpr std::size_t kPlainCommand = std::numeric_limits<std::size_t>::max();

/// One script invocation (or a plain command) in a pipeline.
struct Call {
  /// Index into the sources the Scripts were made with, or kPlainCommand.
  std::size_t script = kPlainCommand;
  std::vector<std::string_view> keys;
  /// ARGV, or the whole command for a plain command.
  std::vector<std::string_view> args;
};

/// A layout's script sources and their SHA1s, loaded once per transport.
class Scripts {
 public:
  /// `sources` must outlive this object (a layout's constant table).
  explicit Scripts(std::span<const std::string_view> sources) : sources_(sources) {}

  /// Runs `calls` as one pipeline: EVALSHA for scripts (EVAL for the ones the server answered
  /// NOSCRIPT), plain commands as given. One reply per call, in order. A server error reply is
  /// returned as a reply; an Error means the connection failed.
  Result<std::vector<ReplyPtr>> run(Connection& c, const std::vector<Call>& calls);

 private:
  Status load(Connection& c);

  std::span<const std::string_view> sources_;
  std::mutex mu_;
  std::atomic<bool> loaded_{false};
  std::vector<std::string> sha_;
};

}  // namespace babelqueue::redis::detail
