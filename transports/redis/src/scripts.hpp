// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "connection.hpp"

/// The Lua scripts of both layouts (RDS-3: every multi-command step is one script, every key it
/// touches is in KEYS) and the EVALSHA/NOSCRIPT machinery.

namespace babelqueue::redis::detail {

enum class ScriptId : std::size_t {
  // legacy layout
  Sweep,     // RDS-19
  Reserve,   // RDS-17/18, batched: one token per message
  AckGated,  // RDS-24, batched: one deadline member per message
  SettleTo,  // RDS-25 release (to ready) and RDS-26 dead-letter (to the DLQ): one gated move
  GiveBack,  // close(): prefetched, never handed out -> head of ready, gated
  // Laravel layout
  LaravelPush,        // RDS-42 (also batched)
  LaravelMigrate,     // RDS-51
  LaravelPop,         // RDS-44..46, 58a, batched
  LaravelAckGated,    // RDS-53 ack, batched
  LaravelRelease,     // RDS-53/54/57
  LaravelDeadLetter,  // RDS-53/58
  LaravelGiveBack,    // close(): prefetched -> head of ready + notify, gated
  Count,
};

/// One script invocation (or a plain command when `script` is Count) in a pipeline.
struct Call {
  ScriptId script = ScriptId::Count;
  std::vector<std::string_view> keys;
  /// ARGV, or the whole command for a plain command.
  std::vector<std::string_view> args;
};

/// Marker the Laravel pop script puts in front of a flagged (poison) head so identical poison
/// heads stay distinct members of `:reserved` (RDS-58a). A cjson member always starts with `{`.
inline constexpr std::string_view kPoisonMemberPrefix = "__bq_poison:";

/// The script sources and their SHA1s, loaded once per transport.
class Scripts {
 public:
  /// Runs `calls` as one pipeline: EVALSHA for scripts (EVAL for the ones the server answered
  /// NOSCRIPT), plain commands as given. One reply per call, in order. A server error reply is
  /// returned as a reply; an Error means the connection failed.
  Result<std::vector<ReplyPtr>> run(Connection& c, const std::vector<Call>& calls);

 private:
  Status load(Connection& c);

  std::mutex mu_;
  std::atomic<bool> loaded_{false};
  std::array<std::string, static_cast<std::size_t>(ScriptId::Count)> sha_;
};

}  // namespace babelqueue::redis::detail
