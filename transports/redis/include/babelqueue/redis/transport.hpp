// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/errors.hpp>
#include <babelqueue/export.hpp>
#include <babelqueue/log.hpp>
#include <babelqueue/transport.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

/// @file
/// The Redis transport (spec/03-redis.md): the default reliable-queue layout with deadline
/// members and crash recovery, and the Laravel-compatible layout. Built on hiredis; this header
/// does not include hiredis.

struct redisContext;

namespace babelqueue::redis {

/// Which keys and scripts a transport uses (RDS-8). The two layouts never meet.
enum class Layout {
  /// The default reliable queue: `q` list, `q:processing` list, `q:processing:deadlines` zset
  /// (RDS-10..28; the spec and the other SDKs call it "legacy").
  Default,
  /// Laravel's `queues:q`, `:delayed`, `:reserved`, `:notify` keys (RDS-40..59).
  Laravel,
};

/// Parses "default" (or "legacy", the other SDKs' word for it) and "laravel" (or "zset").
/// @throws ConfigError otherwise.
BABELQUEUE_EXPORT Layout parse_layout(std::string_view text);

/// Where and how to connect (RDS-2), apart from what the queues mean. Every member has the
/// default a new connection uses.
///
/// Thread-safety: a value type.
struct ConnectionOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  /// Unix socket path; when set, host and port are ignored.
  std::string unix_socket = {};
  /// SELECT index (RDS-2).
  int db = 0;
  /// AUTH user (Redis 6 ACL); empty = AUTH with the password only.
  std::string user = {};
  /// AUTH password; empty = no AUTH.
  std::string password = {};
  /// Connect timeout of each connection.
  std::chrono::milliseconds connect_timeout{2000};
  /// Read/write timeout of each command. In the Laravel layout it must exceed the 1 s BLPOP
  /// slice (RDS-53).
  std::chrono::milliseconds command_timeout{5000};
};

/// Transport settings: the connection and the queue semantics. Every member has the default a
/// new transport uses.
///
/// Thread-safety: a value type.
struct Options {
  /// Server, database, credentials, timeouts.
  ConnectionOptions connection = {};

  // --- layout ---
  Layout layout = Layout::Default;
  /// Laravel layout: prefix of every key (RDS-40). To share a queue with a Laravel app, put the
  /// app's Redis client prefix in front: "laravel_database_queues:".
  std::string laravel_key_prefix = "queues:";
  /// Default layout: processing list = queue + this suffix (RDS-10).
  std::string processing_suffix = ":processing";

  // --- recovery ---
  /// Seconds before an unacknowledged reservation is recovered (RDS-18, RDS-59); nullopt = never
  /// (this consumer's reservations are scored +inf). Negative is a ConfigError.
  std::optional<std::chrono::seconds> retry_after = std::chrono::seconds(90);
  /// Most members one sweep/migrate moves (RDS-51); -1 = all. 0 is a ConfigError.
  std::int64_t migration_batch_size = -1;

  // --- throughput ---
  /// Messages one reserve round trip takes (both layouts); each still gets its own deadline /
  /// reserved member, so a crash loses nothing. The ones not yet handed to the App are given
  /// back to the head of the queue by `close()`. >= 1.
  int prefetch = 16;
  /// When true, `ack` queues the acknowledgement and sends it in the same round trip as the
  /// next reserve (or at `flush()`/`close()`, or once 256 are pending): one round trip settles
  /// many messages. A crash before the send means a redelivery after retry_after, never a loss.
  /// When false every `ack` is its own round trip and its result is known on return.
  bool pipelined_acks = true;

  /// Where the transport logs (the RDS-9 "reservation expired" warnings, reconnects); default:
  /// warnings and errors to stderr.
  Logger logger = {};
};

/// Parses `redis://[[user]:password@]host[:port][/db][?option=value&...]` (also `unix:///path`)
/// on top of `base`: the URL's authority, path, `db`, `connect_timeout` and `timeout` (seconds,
/// fractions allowed) fill `connection`; `layout`, `prefix`, `processing_suffix`,
/// `retry_after` (seconds or `none`), `migration_batch_size` and `prefetch` the rest.
/// Percent-escapes in user and password are decoded. Error texts never contain the password.
/// `rediss://` is a ConfigError here: the hiredis this build uses has no TLS.
/// @throws ConfigError on anything it cannot parse.
BABELQUEUE_EXPORT Options parse_url(std::string_view url, Options base = {});

/// The Redis keys one logical queue maps to (RDS-10, RDS-40).
///
/// Thread-safety: a value type.
struct Keys {
  std::string ready;
  /// Default layout: the processing list. Laravel: `:reserved`.
  std::string in_flight;
  /// Default layout: the deadlines zset. Laravel: `:delayed`.
  std::string schedule;
  /// Laravel: `:notify`; empty in the default layout.
  std::string notify;
};

/// A Transport over Redis >= 6.2.
///
/// Capabilities: HeaderPublisher (default layout: the `__bq_frame`, Laravel: headers dropped),
/// Releaser (attempts + 1 in the stored body), DeadLetterer (reservation-gated), BatchPublisher,
/// DelayedPublisher (Laravel layout only), Flusher (pipelined acks), Inspector (counts and
/// LRANGE peek). In the Laravel layout every queue name the App passes, dead-letter names
/// included, becomes prefix + name (RDS-41).
///
/// Connections: a small pool, opened on demand. A connection that fails is dropped and the
/// operation returns a transient TransportError; the next call opens a new one (decision D-3:
/// the App's consume loop backs off and carries on). Scripts run by EVALSHA with an EVAL fallback
/// on NOSCRIPT, so a restarted server needs nothing special.
///
/// Thread-safety: every member function is safe from any thread. One `pop` loop per queue per
/// transport (RDS-7); concurrent pops of different queues are fine. `close()` is idempotent and
/// interrupts a blocked `pop` within one slice (<= 1 s); afterwards every call fails with
/// ClosedError. Not copyable or movable.
class BABELQUEUE_EXPORT RedisTransport final : public Transport,
                                               public HeaderPublisher,
                                               public Releaser,
                                               public DeadLetterer,
                                               public BatchPublisher,
                                               public DelayedPublisher,
                                               public Flusher,
                                               public Inspector {
 public:
  /// Validates `options` (ConfigError on a bad value); connects lazily.
  explicit RedisTransport(Options options = {});
  /// `parse_url(url)`. @throws ConfigError.
  explicit RedisTransport(std::string_view url);
  /// Uses the caller's connection for every command (RDS-2). It is never freed by the
  /// transport and must outlive it; calls are serialised on it. A dropped connection is
  /// re-established with hiredis' redisReconnect. `options.connection` is ignored.
  RedisTransport(redisContext* borrowed, Options options);
  /// Calls `close()`.
  ~RedisTransport() override;
  RedisTransport(const RedisTransport&) = delete;
  RedisTransport& operator=(const RedisTransport&) = delete;
  RedisTransport(RedisTransport&&) = delete;
  RedisTransport& operator=(RedisTransport&&) = delete;

  // --- Transport ---
  /// Default layout: RPUSH (RDS-11). Laravel: RPUSH + notify token, one script (RDS-42).
  Status publish(std::string_view queue, std::string body) override;
  /// Reserves up to `prefetch` messages per round trip and returns one; sweeps / migrates
  /// before every reserve (RDS-19, RDS-51); polls with backoff (default layout, RDS-21) or
  /// blocks on `:notify` in slices of <= 1 s (Laravel, RDS-53). Sets `decoded` (or `poison`
  /// with its reason) on every message: the App does not decode it again.
  Result<std::optional<ReceivedMessage>> pop(std::string_view queue,
                                             std::chrono::milliseconds timeout) override;
  /// Gated on the deadline / reserved member (RDS-24, RDS-53). See Options::pipelined_acks.
  Status ack(const ReceivedMessage& msg) override;
  /// Sends pending acks, gives back prefetched messages, closes the connections.
  void close() override;

  // --- capabilities ---
  Status publish_with_headers(std::string_view queue, std::string body,
                              const Headers& headers) override;
  /// In place with `attempts` + 1 written by the SDK codec (RDS-25, RDS-57). Default layout: at
  /// once, to the tail (no delayed set). Laravel: into `:delayed` at floor(now) + ceil(delay).
  /// ReleaseUnsupported for a poison body.
  Status release(const ReceivedMessage& msg, std::chrono::milliseconds delay) override;
  /// Writes `body` to the dead-letter list and removes the reservation, gated (RDS-26, RDS-53).
  Status dead_letter(const ReceivedMessage& msg, std::string_view dead_letter_queue,
                     std::string body) override;
  /// All `bodies` in order, in as few round trips as possible (variadic RPUSH, chunked).
  Status publish_batch(std::string_view queue, std::vector<std::string> bodies) override;

  /// Laravel layout: ZADD `:delayed` at floor(now) + ceil(delay) (RDS-44); delay <= 0 publishes
  /// at once. Default layout: DelayUnsupported (RDS-13).
  Status publish_delayed(std::string_view queue, std::string body,
                         std::chrono::milliseconds delay) override;
  /// Sends the pending pipelined acks now; the first error, if any.
  Status flush() override;
  /// Ready, in-flight, delayed (Laravel layout only; nullopt in the default layout, which has no
  /// delayed set) and dead-letter counts of `queue`; the dead-letter queue is `queue` + ".dlq"
  /// unless `dead_letter_queue` is given.
  Result<QueueStats> stats(std::string_view queue, std::string_view dead_letter_queue) override;
  /// Up to `max` (0 = all) values of `queue`'s ready list, head first, without changing
  /// anything (LRANGE); a default-layout frame is unwrapped into body and headers (RDS-15).
  Result<std::vector<PeekedMessage>> peek(std::string_view queue, std::size_t max) override;

  // --- Redis specifics ---
  /// The keys `queue` maps to in this transport's layout.
  [[nodiscard]] Keys keys(std::string_view queue) const;
  /// The validated options.
  [[nodiscard]] const Options& options() const noexcept;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace babelqueue::redis
