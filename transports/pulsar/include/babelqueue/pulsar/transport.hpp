// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/errors.hpp>
#include <babelqueue/export.hpp>
#include <babelqueue/log.hpp>
#include <babelqueue/spi/schema_gate.hpp>
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
/// The Apache Pulsar transport (spec/05-other-brokers.md §4, PLS-*) on Pulsar's binary protocol
/// (decision D-10: protobuf frames over TCP, port 6650), through the project's own asynchronous
/// client (Boost.Asio, libprotobuf-lite). This header includes no Asio or protobuf header.

namespace babelqueue::pulsar {

/// A subscription's type (PLS-2): Shared (the default: messages spread over the consumers),
/// Exclusive (one consumer), Failover (one active consumer, the others standing by),
/// Key_Shared (messages of one key to one consumer).
enum class SubscriptionType { Exclusive, Shared, Failover, KeyShared };

/// The protocol's and the URL's name of `type`: "Exclusive", "Shared", "Failover", "Key_Shared".
[[nodiscard]] BABELQUEUE_EXPORT std::string_view subscription_type_name(
    SubscriptionType type) noexcept;

/// Transport settings (PLS-2). Every member has the default a new transport uses.
///
/// Thread-safety: a value type.
struct Options {
  /// The broker's binary-protocol endpoint.
  std::string host = "localhost";
  int port = 6650;
  /// Token authentication (AuthenticationToken: auth method `token`) when not empty.
  std::string token = {};
  /// pulsar+ssl://: TLS (OpenSSL) to every broker, its certificate chain verified against
  /// `tls_ca_file` (empty: the system's CAs; unreadable: ConfigError at construction) and, with
  /// `tls_verify`, its name against the host connected to.
  bool tls = false;
  std::string tls_ca_file = {};
  bool tls_verify = true;
  /// topic = `persistent://<tenant>/<namespace_name>/<topic_prefix><queue>` (PLS-2).
  std::string tenant = "public";
  std::string namespace_name = "default";
  std::string topic_prefix = {};
  /// The subscription every `pop` consumes through (PLS-2).
  std::string subscription = "babelqueue";
  SubscriptionType subscription_type = SubscriptionType::Shared;
  /// FLOW permits per queue (per partition of a partitioned topic): the prefetch window (messages
  /// on their way or buffered).
  std::uint32_t prefetch = 100;
  /// Acks sent in one ACK frame (the kit's AckBatcher): sent once this many are pending, before a
  /// `pop` that has to wait for the broker, on `flush()` and `close()` (these two wait for the
  /// broker's ACK_RESPONSE). 1: every ack at once.
  std::uint32_t ack_batch = 32;
  /// The broker's admin REST API (`http://host:8080`) for `queue stats` (Inspector); empty: no
  /// inspection.
  std::string admin_url = {};
  /// The longest a request (connect, lookup, producer, subscribe, send receipt) waits.
  std::chrono::milliseconds timeout{30'000};
  /// Caps the wait of one `pop` (0: no cap, the caller's timeout).
  std::chrono::milliseconds max_wait{0};
  /// OB-6 hook: called once per message whose `bq-schema-version` the gate rejects (PLS-8), with
  /// the version text and the queue; exceptions from it are caught and logged.
  spi::SchemaVersionRejected on_schema_version_rejected;
  /// Where the transport logs; default: warnings and errors to stderr.
  Logger logger;
};

/// Parses `pulsar://[[token]:<token>@]host[:port][/<tenant>/<namespace>][?option=value&...]`
/// (port default 6650) or `pulsar+ssl://...` (TLS, port default 6651) on top of `base`. The
/// password of the user info (percent-decoded) is the token (user name empty or `token`); it is
/// never echoed in an error.
///
/// Query options: `subscription`, `subscription_type` (Shared, Exclusive, Failover, Key_Shared),
/// `prefetch` (1..100000), `ack_batch` (1..10000), `topic_prefix`, `admin_url`, `cafile`,
/// `verify` (bool), `timeout` and `max_wait` (milliseconds). Booleans: 1/0, true/false, yes/no,
/// on/off. Each key at most once; an unknown key is an error naming the known ones.
/// @throws ConfigError starting "pulsar URL: " naming what it cannot use; never the token.
BABELQUEUE_EXPORT Options parse_url(std::string_view url, Options base = {});

/// The topic of `queue` under `options`: `persistent://<tenant>/<namespace>/<prefix><queue>`.
BABELQUEUE_EXPORT std::string topic_of(const Options& options, std::string_view queue);

/// A Transport over Apache Pulsar (binary protocol).
///
/// Partitioned topics: on the first use of a queue (and again after every reconnect) the
/// transport asks the topic's partitions (PARTITIONED_METADATA); 0 is a topic of its own. Of a
/// topic with N partitions, partition n is the topic `<topic>-partition-<n>`: a message with a
/// key (`republish` and `restore` of a message that had one) goes to partition
/// (Murmur3_32(key) & 0x7fffffff) % N, Pulsar's Murmur3_32Hash routing, the others round robin;
/// `pop` consumes every partition through a consumer each (`prefetch` permits each), in turn.
///
/// Publish (PLS-4, PLS-5): the body bytes verbatim as the payload, the core binding's string
/// properties (`binding::pulsar::properties`: `bq-job`, `bq-trace-id`, `bq-message-id`,
/// `bq-schema-version`, `bq-source-lang`, `bq-attempts`, riders as extra properties); one
/// producer per topic, created on the first publish. A publish returns after the broker's
/// SEND_RECEIPT (D-9); a SEND_ERROR is a TransportError, no receipt within `timeout` a
/// TimeoutError. `publish_batch` pipelines its sends and then awaits every receipt.
///
/// Receive (PLS-6, PLS-7): one consumer per queue on `subscription` (position earliest, so a
/// message published before the first `pop` is kept), FLOW permits `prefetch`; `body` = the
/// payload, `headers` = the properties, `delivery_count` = `redelivery_count` + 1 (the App
/// reconciles it with the body's attempts: attempts = max(body, redelivery_count)); `route` set
/// when the `bq-schema-version` gate rejects (PLS-8). Batched and compressed messages of other
/// clients arrive as their entries.
///
/// Capabilities: HeaderPublisher, BatchPublisher, DelayedPublisher (deliverAt, for Shared and
/// Key_Shared subscriptions), Rewinder (a negative ack: REDELIVER_UNACKNOWLEDGED_MESSAGES, the
/// broker redelivers at once with `redelivery_count` + 1, PLS-10), Flusher (the batched acks),
/// Inspector (through the broker's admin REST API at `admin_url`). Ack (PLS-9) = an individual
/// ACK, batched. Dead letters go to `<prefix><queue>.dlq` through the App's publish-then-ack
/// (PLS-11; Pulsar's DeadLetterPolicy is not used). Not offered: Releaser, BrokerDeadLetter.
///
/// The first publish to a topic creates the transport's subscription on it (from the earliest
/// message) before the producer: a topic without a subscription keeps nothing beyond its
/// retention, so a queue published before its first consumer, and every dead-letter topic, keep
/// their messages.
///
/// Errors (PLS-12): refused authentication or authorization, an invalid topic name and other
/// configuration faults of the broker are ConfigError; a lost connection, a broker not ready,
/// a busy consumer are transient TransportErrors (the client reconnects with the kit's backoff,
/// D-3). An ack or rewind of a message delivered on a connection that is gone is
/// ErrorCode::StaleDelivery (nothing is sent: the broker redelivers it); a batched ack of one is
/// dropped for the same reason.
///
/// Thread-safety: every member function is safe from any thread (the contract of Transport: one
/// `pop` per queue at a time). `close()` is idempotent: it sends the pending acks, closes the
/// producers, consumers and the connection (unacknowledged messages go back to the broker),
/// stops the client's thread and wakes a blocked `pop`; afterwards every call fails with
/// ClosedError. Not copyable or movable.
class BABELQUEUE_EXPORT PulsarTransport final : public Transport,
                                                public HeaderPublisher,
                                                public BatchPublisher,
                                                public DelayedPublisher,
                                                public KeyedRepublisher,
                                                public Restorer,
                                                public Rewinder,
                                                public Flusher,
                                                public Inspector {
 public:
  /// Validates `options` (ConfigError on a bad value); no I/O: the connection is made by the
  /// first call that needs it.
  explicit PulsarTransport(Options options);
  /// `parse_url(url)`. @throws ConfigError.
  explicit PulsarTransport(std::string_view url);
  /// Calls `close()`.
  ~PulsarTransport() override;
  PulsarTransport(const PulsarTransport&) = delete;
  PulsarTransport& operator=(const PulsarTransport&) = delete;
  PulsarTransport(PulsarTransport&&) = delete;
  PulsarTransport& operator=(PulsarTransport&&) = delete;

  [[nodiscard]] const Options& options() const noexcept;

  // --- Transport ---
  Status publish(std::string_view queue, std::string body) override;
  Result<std::optional<ReceivedMessage>> pop(std::string_view queue,
                                             std::chrono::milliseconds timeout) override;
  /// Queues an individual ACK (PLS-9), sent with the batch.
  Status ack(const ReceivedMessage& msg) override;
  void close() override;

  // --- capabilities ---
  Status publish_with_headers(std::string_view queue, std::string body,
                              const Headers& headers) override;
  Status publish_batch(std::string_view queue, std::vector<std::string> bodies) override;
  /// `publish` with the metadata's deliver_at_time = now + `delay` (Pulsar's deliverAt): the
  /// broker dispatches the message to a Shared or Key_Shared subscription from then on, up to
  /// its `delayedDeliveryTickTimeMillis` (default 1 s) early unless the broker sets
  /// `isDelayedDeliveryDeliverAtTimeStrict`. DelayUnsupported when `subscription_type` is
  /// Exclusive or Failover (the broker would dispatch it at once). `delay` <= 0: `publish`.
  Status publish_delayed(std::string_view queue, std::string body,
                         std::chrono::milliseconds delay) override;
  /// `publish` with the message key of `source` (a message of another client's producer that
  /// had one): the key's partition of a partitioned topic, the key of a Key_Shared subscription.
  /// Without a key, as `publish`.
  Status republish(std::string_view queue, std::string body,
                   const ReceivedMessage& source) override;
  /// Writes `source.body` with `source.headers` as its properties verbatim and `source.key` to
  /// `source.queue` (a redrive's write-back).
  Status restore(const ReceivedMessage& source) override;
  /// A negative ack (PLS-10): the broker redelivers the message with redelivery_count + 1.
  Status rewind(const ReceivedMessage& msg) override;
  /// Sends the pending acks now.
  Status flush() override;
  /// From the admin REST API's topic stats (`admin_url`): the subscription's backlog less its
  /// unacknowledged messages (`ready`), its unacknowledged messages (`in_flight`), its consumers,
  /// and the backlog of the dead-letter topic's subscription (`dead_letter`); a topic the broker
  /// does not know counts 0. No `delayed`. Of a partitioned topic: the sums of its
  /// partitioned stats, and a detail line per partition. Without `admin_url` every figure is
  /// nullopt and the details name the option.
  Result<QueueStats> stats(std::string_view queue, std::string_view dead_letter_queue) override;
  /// Up to `max` (0: all) messages of the subscription's backlog from its head, through the
  /// admin REST API's peek (`.../subscription/<name>/position/<n>`), properties as headers; a
  /// batch of another client's producer peeks as its raw batch payload; a partitioned topic
  /// partition after partition. Without `admin_url`: a ConfigError naming the option.
  Result<std::vector<PeekedMessage>> peek(std::string_view queue, std::size_t max) override;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace babelqueue::pulsar
