// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/errors.hpp>
#include <babelqueue/export.hpp>
#include <babelqueue/log.hpp>
#include <babelqueue/transport.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

/// @file
/// The Apache ActiveMQ Artemis transport (spec/05-other-brokers.md §5, ART-*): AMQP 1.0 through
/// the private AMQP 1.0 layer on Qpid Proton C++ (transports/amqp10). This header includes no
/// Proton header.

namespace babelqueue::artemis {

/// Transport settings (ART-2). Every member has the default a new transport uses.
///
/// Thread-safety: a value type.
struct Options {
  /// The broker's AMQP acceptor.
  std::string host = "localhost";
  int port = 5672;
  /// SASL PLAIN with these when `user` is not empty (over plain TCP with Proton's consent to an
  /// insecure mechanism and one warning logged at construction, ART-1), else SASL ANONYMOUS.
  std::string user = {};
  std::string password = {};
  /// TLS (artemis+ssl://): trust store `tls_ca_file` (PEM; empty: the system's), the broker's
  /// certificate must name `tls_peer_name` (empty: `host`) unless `tls_verify_peer_name` is off.
  bool tls = false;
  std::string tls_ca_file = {};
  std::string tls_peer_name = {};
  bool tls_verify_peer_name = true;
  /// The receiver's credit per queue (the prefetch window, issue 12: default 100).
  std::uint32_t prefetch = 100;
  /// Put the terminus capability `queue` on every link (ART-3): Artemis then auto-creates an
  /// ANYCAST address and queue, so a message sent before any consumer attached is kept.
  bool queue_capability = true;
  /// header.durable of every publish (ART-4, Q4).
  bool durable = true;
  /// The longest a publish waits for its outcome, a settle for its turn, or close for the broker.
  std::chrono::milliseconds timeout{30'000};
  /// Caps the wait of one `pop` (0: no cap, the caller's timeout).
  std::chrono::milliseconds max_wait{0};
  /// OB-6 hook: called once per message whose `bq_schema_version` the gate rejects (ART-6), with
  /// the version text and the queue; exceptions from it are caught and logged.
  std::function<void(std::string_view version, std::string_view queue)> on_schema_version_rejected;
  /// Where the transport logs; default: warnings and errors to stderr.
  Logger logger;
};

/// Parses `artemis://[user:password@]host[:port][?option=value&...]` (port default 5672) or
/// `artemis+ssl://...` (TLS, port default 5671) on top of `base`. The user info
/// (percent-decoded) sets SASL PLAIN credentials and is never echoed in an error.
///
/// Query options: `prefetch` (1..100000), `durable`, `queue_capability`, `verify` (TLS peer-name
/// verification, bool), `cafile`, `peer_name`, `timeout` and `max_wait` (milliseconds). Booleans:
/// 1/0, true/false, yes/no, on/off. Each key at most once; an unknown key is an error naming the
/// known ones.
/// @throws ConfigError starting "artemis URL: " naming what it cannot use; never the password.
BABELQUEUE_EXPORT Options parse_url(std::string_view url, Options base = {});

/// A Transport over Apache ActiveMQ Artemis (AMQP 1.0).
///
/// Publish (ART-4): the core binding's projection (`binding::artemis::projection`): annotation
/// `x-opt-jms-type` = URN, correlation-id = trace id (an AMQP string), creation-time =
/// `meta.created_at`, string application properties `bq_schema_version`, `bq_source_lang`,
/// `bq_attempts`, `bq_app_id` and the riders; a valid UTF-8 body as an AMQP string value (a JMS
/// TextMessage), any other as one Data section; durable by default. A publish returns after the
/// broker's settled `accepted` (D-9); `rejected`, `released`, a lost link or connection is a
/// TransportError, no outcome within `timeout` a TimeoutError.
///
/// Receive (ART-5): one receiver per queue with credit `prefetch`; `body` = the AMQP string or
/// binary value or the Data sections' bytes (any other body arrives as its rendered text and
/// takes the App's poison path), `headers` = the application properties as text (OB-4),
/// `delivery_count` = header delivery-count + 1; `route` set when the `bq_schema_version` gate
/// rejects (ART-6).
///
/// Capabilities: HeaderPublisher (riders as string application properties), BatchPublisher
/// (the sends of a batch pipelined on the link, then every outcome awaited), Rewinder
/// (`modified{delivery-failed=true}`: Artemis raises the delivery-count and redelivers, ART-8).
/// Ack = `accepted` (ART-7). Dead letters go to `<queue>.dlq` through the App's publish-then-ack
/// (ART-9; no DeadLetterer, no BrokerDeadLetter). Not offered: Releaser, DelayedPublisher,
/// Inspector (not implemented yet: Artemis reports a queue's message count only through its
/// management address).
///
/// Flusher: `ack` and `rewind` do not wait for the layer's thread (they hand the disposition over
/// and return); `flush()` waits until every one handed over went to Proton and reports the
/// settles their connection died under (StaleDelivery: the broker redelivers those messages).
///
/// Errors: a settle of a delivery already settled, or of one whose connection is gone (the broker
/// redelivers it), is ErrorCode::StaleDelivery. Refused credentials are a TransportError naming
/// the broker's SASL outcome, never the password.
///
/// Thread-safety: every member function is safe from any thread (the contract of Transport: one
/// `pop` per queue at a time). `close()` is idempotent: it detaches the links, closes the
/// connection (unsettled deliveries go back to the broker), stops the layer's thread and wakes a
/// blocked `pop`; afterwards every call fails with ClosedError. Not copyable or movable.
class BABELQUEUE_EXPORT ArtemisTransport final : public Transport,
                                                 public HeaderPublisher,
                                                 public BatchPublisher,
                                                 public Rewinder,
                                                 public Flusher,
                                                 public Inspector {
 public:
  /// Validates `options` (ConfigError on a bad value); no I/O: the connection is made by the
  /// first call that needs it.
  explicit ArtemisTransport(Options options);
  /// `parse_url(url)`. @throws ConfigError.
  explicit ArtemisTransport(std::string_view url);
  /// Calls `close()`.
  ~ArtemisTransport() override;
  ArtemisTransport(const ArtemisTransport&) = delete;
  ArtemisTransport& operator=(const ArtemisTransport&) = delete;
  ArtemisTransport(ArtemisTransport&&) = delete;
  ArtemisTransport& operator=(ArtemisTransport&&) = delete;

  [[nodiscard]] const Options& options() const noexcept;

  // --- Transport ---
  Status publish(std::string_view queue, std::string body) override;
  Result<std::optional<ReceivedMessage>> pop(std::string_view queue,
                                             std::chrono::milliseconds timeout) override;
  /// Settles the delivery `accepted` (ART-7).
  Status ack(const ReceivedMessage& msg) override;
  void close() override;

  // --- capabilities ---
  Status publish_with_headers(std::string_view queue, std::string body,
                              const Headers& headers) override;
  Status publish_batch(std::string_view queue, std::vector<std::string> bodies) override;
  /// Settles the delivery `modified{delivery-failed=true, undeliverable-here=false}` (ART-8).
  Status rewind(const ReceivedMessage& msg) override;
  /// Waits until the settles handed over were given to Proton; StaleDelivery when some found
  /// their connection gone since the last flush.
  Status flush() override;
  /// Counts through Artemis's management address (getMessageCount, getDeliveringCount,
  /// getScheduledCount, getConsumerCount of `queue.<name>`; the dead-letter queue's
  /// getMessageCount): ready = messages - delivering - scheduled, in_flight = delivering
  /// (prefetched ones included), delayed = scheduled; a queue Artemis does not have counts 0.
  Result<QueueStats> stats(std::string_view queue, std::string_view dead_letter_queue) override;
  /// A browser (distribution-mode `copy`): the messages stay where they are.
  Result<std::vector<PeekedMessage>> peek(std::string_view queue, std::size_t max) override;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace babelqueue::artemis
