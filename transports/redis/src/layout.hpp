// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// What a layout decides (RDS-8): its keys, its scripts and the calls that use them, and how its
// replies read. The transport keeps the pool, prefetch, acks, backoff and close, and asks the one
// layout it was made with for everything else; default_layout.cpp and laravel_layout.cpp are
// the two implementations.

#include <babelqueue/redis/transport.hpp>
#include <babelqueue/spi/backoff.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "connection.hpp"
#include "scripts.hpp"

namespace babelqueue::redis::detail {

/// Hex digits of one reservation token (RDS-17: 16 random bytes).
inline constexpr std::size_t kTokenHex = 32;

/// One message a reserve script returned.
struct Reserved {
  /// The stored value, a view into the reply.
  std::string_view stored;
  /// The member that gates every settlement of this reservation (RDS-24, RDS-53).
  std::string member;
  /// The reserve script itself found the value undecodable (RDS-46).
  bool flagged = false;
};

/// One figure of `Inspector::stats`: the call that counts it and where it goes.
struct Count {
  std::optional<std::int64_t> QueueStats::*figure;
  Call call;
};

/// What a pop waits with when a reserve found nothing.
struct EmptyQueueWait {
  const Keys& keys;
  /// The queue's poll interval (RDS-21/22); reset by the transport after a reserve that got one.
  spi::Backoff& poll;
  /// Interrupted by `close()`.
  spi::InterruptibleWait& wake;
  std::chrono::steady_clock::time_point deadline;
};

/// One layout. Calls returned here hold views into the arguments, which must outlive them; the
/// caller appends the per-message arguments where a method says so.
///
/// Thread-safety: immutable after construction; every member is safe from any thread.
class LayoutStrategy {
 public:
  virtual ~LayoutStrategy() = default;

  /// The Lua sources; `Call::script` of the calls below indexes them.
  [[nodiscard]] virtual std::span<const std::string_view> scripts() const = 0;
  [[nodiscard]] virtual Keys keys(std::string_view queue) const = 0;

  /// What a message with out-of-band `headers` is stored as (RDS-12..14, RDS-43).
  /// @throws EncodeError for a header that is not valid UTF-8.
  [[nodiscard]] virtual std::string with_headers(std::string body,
                                                 const Headers& headers) const = 0;
  /// False when `with_headers` drops the headers (RDS-43).
  [[nodiscard]] virtual bool carries_headers() const noexcept = 0;
  /// What a consumer gets of a stored value (RDS-15/16, RDS-47): sets `body` and `headers`.
  virtual void unwrap(std::string_view stored, std::string& body, Headers& headers) const = 0;

  /// Appends to the ready list; the caller appends the bodies (RDS-11, RDS-42).
  [[nodiscard]] virtual Call push(const Keys& k) const = 0;
  /// Makes `body` ready at `due` (epoch seconds), or DelayUnsupported (RDS-13, RDS-44).
  [[nodiscard]] virtual Result<Call> push_delayed(const Keys& k, std::string_view due,
                                                  std::string_view body) const = 0;

  /// The recovery calls that run before every reserve (RDS-19, RDS-51).
  virtual void recover(const Keys& k, std::string_view now, std::string_view limit,
                       std::vector<Call>& calls) const = 0;
  /// Names the recovery step in error texts.
  [[nodiscard]] virtual std::string_view recovery_name() const = 0;
  /// Reserves with deadline `score`; the caller appends one token per message (RDS-17, RDS-44).
  [[nodiscard]] virtual Call reserve(const Keys& k, std::string_view score) const = 0;
  /// The messages of a reserve call's array reply; `tokens` are the tokens it carried.
  [[nodiscard]] virtual std::vector<Reserved> reserved(const redisReply& reply,
                                                       std::string_view tokens) const = 0;
  /// Waits for a message after an empty reserve: false when the deadline leaves no time.
  [[nodiscard]] virtual Result<bool> wait(Connection& c, EmptyQueueWait& w) const = 0;

  /// Gated ack; the caller appends the members. Replies with the positions already gone.
  [[nodiscard]] virtual Call ack(const Keys& k) const = 0;
  /// Gated release of a reservation as `body`, due at `due` (RDS-25, RDS-54).
  [[nodiscard]] virtual Call release(const Keys& k, std::string_view member, std::string_view body,
                                     std::string_view due) const = 0;
  /// Gated move of a reservation to the dead-letter queue with keys `dlq` (RDS-26, RDS-58).
  [[nodiscard]] virtual Call dead_letter(const Keys& k, const Keys& dlq, std::string_view member,
                                         std::string_view body) const = 0;
  /// Gives prefetched reservations back to the head of ready; `give_back_item` adds each one,
  /// the last first.
  [[nodiscard]] virtual Call give_back(const Keys& k) const = 0;
  virtual void give_back_item(Call& call, std::string_view member,
                              std::string_view stored) const = 0;
  /// The in-flight and delayed counts of `stats` (ready and dead-letter are LLENs everywhere).
  virtual void counts(const Keys& k, std::vector<Count>& out) const = 0;
};

/// @throws ConfigError for options this layout cannot use.
std::unique_ptr<LayoutStrategy> make_default_layout(const Options& options);
/// @throws ConfigError for options this layout cannot use.
std::unique_ptr<LayoutStrategy> make_laravel_layout(const Options& options);

/// The strategy `options.layout` names. @throws ConfigError.
inline std::unique_ptr<LayoutStrategy> make_layout(const Options& options) {
  return options.layout == Layout::Laravel ? make_laravel_layout(options)
                                           : make_default_layout(options);
}

}  // namespace babelqueue::redis::detail
