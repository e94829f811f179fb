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
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

/// @file
/// The RabbitMQ transport (AMQP 0-9-1, spec/04-rabbitmq.md) on rabbitmq-c. This header does not
/// include rabbitmq-c.
///
/// Design (see transports/amqp/README.md): one connection per transport; every rabbitmq-c call
/// is made with one connection mutex held, which is never held while a `pop` waits or a handler
/// runs. A caller's operation (publish, declare, get, inspect) runs on the caller's thread; one
/// I/O thread per transport reads what arrives (pushed deliveries into a per-queue buffer,
/// decision D-8; publisher confirms, decision D-9), writes queued acks and services heartbeats
/// while handlers run and while `pop` waits.

namespace babelqueue::amqp {

/// How `pop` gets messages.
enum class ConsumeMode {
  /// `basic.consume` with `basic.qos(prefetch)`: the broker pushes up to `prefetch` unacked
  /// deliveries ahead (decision D-8, the default).
  Push,
  /// One `basic.get` per message, as the other SDKs do (AMQP-18); re-polled while the queue is
  /// empty (AMQP-19).
  Get,
};

/// What the transport declares for each queue it uses (AMQP-7).
enum class DeclareMode {
  /// `queue.declare(durable)` of a classic queue (the other SDKs' declare).
  Classic,
  /// `queue.declare(durable, x-queue-type=quorum)`.
  Quorum,
  /// `queue.declare(passive)`: declares nothing, only checks that the operator-managed queue
  /// exists (a missing one is a 404 error). The TTL holding queues of delayed publishes and
  /// releases are still declared.
  Passive,
};

/// Parses "classic", "quorum" or "passive" (exact, lower case). @throws ConfigError otherwise.
BABELQUEUE_EXPORT DeclareMode parse_declare_mode(std::string_view text);
/// Parses "push" (or "consume") and "get" (exact, lower case). @throws ConfigError otherwise.
BABELQUEUE_EXPORT ConsumeMode parse_consume_mode(std::string_view text);

/// TLS of an `amqps://` connection. Verification is on by default.
///
/// Thread-safety: a value type.
struct TlsOptions {
  /// True for `amqps://`.
  bool enabled = false;
  /// PEM file of the CA(s) that sign the broker's certificate; empty: none is loaded, and with
  /// `verify_peer` on the handshake fails (rabbitmq-c does not load the system store).
  std::string ca_file;
  /// PEM client certificate and key, for brokers that ask for one; both or neither.
  std::string cert_file;
  std::string key_file;
  /// Check the broker's certificate chain against `ca_file`.
  bool verify_peer = true;
  /// Check that the certificate names `host`.
  bool verify_hostname = true;
};

/// Transport settings. Every member has the default a new transport uses.
///
/// Thread-safety: a value type.
struct Options {
  // --- connection (AMQP-1) ---
  std::string host = "localhost";
  /// 5672, or 5671 for TLS (when left 0).
  int port = 0;
  std::string vhost = "/";
  std::string user = "guest";
  std::string password = "guest";
  /// Heartbeat interval asked for; nullopt = accept the broker's proposal (AMQP-5); 0 disables
  /// heartbeats (not recommended).
  std::optional<std::chrono::seconds> heartbeat = std::nullopt;
  /// TCP connect + AMQP handshake, and the bound of every synchronous broker call (declare,
  /// qos, consume, get).
  std::chrono::milliseconds connect_timeout{30'000};
  TlsOptions tls;

  // --- publishing ---
  /// Publisher confirms (decision D-9): `publish` returns only after the broker confirmed the
  /// message; a nack is an error. When false, `publish` returns once the frames are written.
  bool publisher_confirms = true;
  /// How long a publish waits for its confirm before it fails with a (transient) TimeoutError;
  /// the message may still have been stored.
  std::chrono::milliseconds confirm_timeout{30'000};

  // --- consuming ---
  ConsumeMode consume_mode = ConsumeMode::Push;
  /// `basic.qos` prefetch count of the push consumer: unacked deliveries the broker sends
  /// ahead. 1..65535.
  int prefetch = 100;
  /// Get mode: how often `pop` re-issues basic.get on an empty queue (AMQP-19, at most every
  /// 100 ms).
  std::chrono::milliseconds empty_repoll_interval{100};

  // --- topology ---
  DeclareMode declare = DeclareMode::Classic;
  /// Prefix of the TTL holding queues: `<queue><delay_queue_infix><ms>`.
  std::string delay_queue_infix = ".delay.";

  /// Where the transport logs (reconnects, omitted short strings); default: warnings and errors
  /// to stderr.
  Logger logger;
};

/// Parses `amqp[s]://[user[:password]@]host[:port][/vhost][?option=value&...]` (AMQP-1) on top
/// of `base`: what the URL leaves out keeps its value in `base` (by default port 0, i.e. 5672 or
/// for `amqps://` 5671, user and password `guest`, vhost `/`); the scheme sets `tls.enabled`.
/// User, password and vhost are percent-decoded. The vhost is one path segment: `/%2f` is the
/// vhost `/`, `/prod` is `prod`, `/a%2Fb` is `a/b`, a path of just `/` is `/`; an unescaped `/`
/// after the first (`/a/b`, `//`) is an error, since other clients read it differently. An IPv6
/// host is written in brackets (`[::1]`) and stored without them.
///
/// Query options: `heartbeat` (whole seconds 0..65535, 0 = off), `connect_timeout` and
/// `confirm_timeout` (seconds > 0, fractions allowed), `confirms` (bool: true/false, 1/0,
/// yes/no, on/off), `prefetch` (1..65535), `consume` (push | consume | get; consume is push),
/// `declare` (classic | quorum | passive); TLS, `amqps://` only: `cacertfile`, `certfile` and
/// `keyfile` (paths; certfile and keyfile both or neither), `verify` (verify_peer |
/// verify_none; verify_none also turns off verify_hostname) and `verify_hostname` (bool; true
/// needs verify_peer). Each key at most once; an unknown key is an error naming the known ones.
/// @throws ConfigError starting "amqp URL: " on anything it cannot use, naming it; the text
/// never contains the password.
BABELQUEUE_EXPORT Options parse_url(std::string_view url, Options base = {});

/// A Transport over RabbitMQ (AMQP 0-9-1).
///
/// Capabilities: HeaderPublisher (out-of-band headers as `S` fields beside the contract `x-*`
/// headers, AMQP-14), BatchPublisher (pipelined publishes whose confirms are awaited together),
/// DelayedPublisher and Releaser (through TTL holding queues `<queue>.delay.<ms>` that
/// dead-letter back to the queue; a release writes `attempts` + 1 in the body, publishes it
/// there, or with no delay to the queue itself as the App's retry would (AMQP-25), and acks the
/// original), Flusher
/// (acks are queued and written in batches; `flush` writes them) and Inspector (depth and
/// consumers by passive declare; peek by basic.get on a channel of its own that is then closed,
/// so every message is requeued).
///
/// Errors: a lost connection or channel is a transient TransportError and the next call
/// reconnects (AMQP-3, D-3); a channel exception (403, 404, 405, 406) is a non-transient
/// TransportError carrying the reply code and text, and the next call opens a new channel;
/// refused credentials or vhost are a ConfigError; an ack of a delivery whose channel is gone is
/// ErrorCode::StaleDelivery (AMQP-23); a broker nack of a publish is a transient TransportError.
///
/// Thread-safety: every member function is safe from any thread (the contract of Transport:
/// one `pop` per queue at a time). `close()` is idempotent, wakes a blocked `pop`, writes the
/// pending acks and closes the channels (the broker requeues every unacked and prefetched
/// delivery); afterwards every call fails with ClosedError. Not copyable or movable.
class BABELQUEUE_EXPORT AmqpTransport final : public Transport,
                                              public HeaderPublisher,
                                              public BatchPublisher,
                                              public DelayedPublisher,
                                              public Releaser,
                                              public Flusher,
                                              public Inspector {
 public:
  /// Validates `options` (ConfigError on a bad value); no I/O: the first call connects (AMQP-2).
  explicit AmqpTransport(Options options = {});
  /// `parse_url(url)`. @throws ConfigError.
  explicit AmqpTransport(std::string_view url);
  /// Calls `close()`.
  ~AmqpTransport() override;
  AmqpTransport(const AmqpTransport&) = delete;
  AmqpTransport& operator=(const AmqpTransport&) = delete;
  AmqpTransport(AmqpTransport&&) = delete;
  AmqpTransport& operator=(AmqpTransport&&) = delete;

  // --- Transport ---
  /// Declares `queue` (once per channel) and publishes persistent to the default exchange with
  /// the projection (AMQP-9..15); with confirms, returns after the broker's basic.ack.
  Status publish(std::string_view queue, std::string body) override;
  /// Push mode: starts a consumer on `queue` at the first call and returns the next pushed
  /// delivery. Get mode: basic.get. Headers are the stringified `headers` table (AMQP-21).
  Result<std::optional<ReceivedMessage>> pop(std::string_view queue,
                                             std::chrono::milliseconds timeout) override;
  /// basic.ack on the delivering channel (AMQP-23), queued and written in a batch (see README).
  Status ack(const ReceivedMessage& msg) override;
  void close() override;

  // --- capabilities ---
  Status publish_with_headers(std::string_view queue, std::string body,
                              const Headers& headers) override;
  /// Every body in order, pipelined; with confirms, returns after all are confirmed.
  Status publish_batch(std::string_view queue, std::vector<std::string> bodies) override;
  /// Publishes to the holding queue `<queue>.delay.<ms>` (declared with x-message-ttl = ms and
  /// dead-lettering to `<queue>` through the default exchange); delay <= 0 publishes at once.
  Status publish_delayed(std::string_view queue, std::string body,
                         std::chrono::milliseconds delay) override;
  /// The body with `attempts` + 1 (and the delivery's out-of-band headers that are not `x-`
  /// broker or contract headers) to the holding queue for delay > 0, else to the delivery's
  /// queue, confirmed, then ack. A body whose attempts cannot be counted (poison):
  /// ReleaseUnsupported.
  Status release(const ReceivedMessage& msg, std::chrono::milliseconds delay) override;
  /// Writes every queued ack; the first error of an ack write since the last flush.
  Status flush() override;
  /// Ready and consumer counts of `queue` and the ready count of its dead-letter queue, by
  /// passive declare (0 and a detail line for a queue that does not exist); in-flight and
  /// delayed are not known to AMQP.
  Result<QueueStats> stats(std::string_view queue, std::string_view dead_letter_queue) override;
  /// Up to `max` (0 = all) messages of `queue`, head first, by basic.get on a separate channel
  /// that is closed afterwards: the broker requeues them in their place (marked redelivered).
  Result<std::vector<PeekedMessage>> peek(std::string_view queue, std::size_t max) override;

  // --- RabbitMQ specifics ---
  /// The validated options.
  [[nodiscard]] const Options& options() const noexcept;
  /// The name of the TTL holding queue for `queue` and `delay` (`<queue>.delay.<ms>`).
  [[nodiscard]] std::string delay_queue(std::string_view queue,
                                        std::chrono::milliseconds delay) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace babelqueue::amqp
