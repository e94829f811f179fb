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
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

/// @file
/// The Apache Kafka transport (spec/05-other-brokers.md §1, KFK-*) on librdkafka. This header
/// does not include librdkafka.
///
/// Design (see transports/kafka/README.md): one idempotent `acks=all` producer per transport,
/// shared by every queue, whose delivery reports complete the publishes waiting for them; one
/// consumer-group member (a KafkaConsumer) per consumed queue, created by the first `pop` of it,
/// with auto-commit off. Acks mark offsets done; the committed position of a partition only
/// moves up to its lowest offset not yet settled (KFK-11), and commits are batched.

namespace babelqueue::kafka {

/// The partition assignment strategy of the consumer group (librdkafka
/// `partition.assignment.strategy`). Only eager strategies: librdkafka 2.0.2's
/// `cooperative-sticky` aborts the process when a never-assigned consumer closes (BROKERS.md).
enum class Assignor {
  /// `range` (librdkafka's and Kafka's default).
  Range,
  /// `roundrobin`.
  RoundRobin,
};

/// Parses "range" or "roundrobin" (exact, lower case). @throws ConfigError otherwise (naming
/// `cooperative-sticky` as refused on this librdkafka).
BABELQUEUE_EXPORT Assignor parse_assignor(std::string_view text);

/// Transport settings (KFK-2). Every member has the default a new transport uses.
///
/// Thread-safety: a value type.
struct Options {
  // --- cluster ---
  /// `bootstrap.servers`: `host:port[,host:port...]`. Required.
  std::string brokers;
  /// `client.id` of both clients.
  std::string client_id = "babelqueue-cpp";
  /// Topic = topic_prefix + queue (KFK-2); the dead-letter topic of `q` is
  /// topic_prefix + q + ".dlq" (KFK-16).
  std::string topic_prefix;

  // --- security (mapped onto librdkafka properties; `properties` wins on a conflict) ---
  /// `security.protocol`: plaintext, ssl, sasl_plaintext or sasl_ssl; empty = librdkafka's
  /// default (plaintext).
  std::string security_protocol;
  /// `sasl.mechanism` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512); empty = not set.
  std::string sasl_mechanism;
  /// `sasl.username` / `sasl.password`. The password never appears in an error or log line.
  std::string sasl_username;
  std::string sasl_password;
  /// `ssl.ca.location`: PEM file of the CA(s) that sign the brokers' certificates.
  std::string ssl_ca_location;

  /// librdkafka pass-through properties applied to both clients, then those of one client
  /// (KFK-2). A name librdkafka does not know, or a value it refuses, is a ConfigError at
  /// construction naming it; nothing is silently ignored. `properties` may override every
  /// default the transport sets (acks, enable.idempotence, linger.ms, ...), except
  /// enable.auto.commit and enable.auto.offset.store (the commit protocol, KFK-6) and
  /// partition.assignment.strategy cooperative-sticky (see Assignor).
  std::map<std::string, std::string> properties;
  std::map<std::string, std::string> producer_properties;
  std::map<std::string, std::string> consumer_properties;

  // --- producing ---
  /// Bound on one synchronous publish (KFK-4), and the producer's `message.timeout.ms`.
  std::chrono::milliseconds publish_timeout{30'000};
  /// `enable.idempotence` (the issue: on, so a retried produce never duplicates or reorders).
  bool idempotence = true;
  /// `linger.ms`; 0 so that a synchronous publish is not held back (a batch is produced at once
  /// and librdkafka batches what queues up while a request is in flight).
  std::chrono::milliseconds linger{0};

  // --- consuming ---
  /// The consumer group (KFK-2).
  std::string group_id = "babelqueue";
  Assignor assignor = Assignor::Range;
  /// Caps one `pop` wait below the App's poll timeout; 0 = no cap (KFK-2).
  std::chrono::milliseconds max_wait{0};
  /// Acks that trigger a commit of the settled prefixes (the kit's AckBatcher threshold).
  /// Acked offsets are also committed when a `pop` finds nothing, on `flush()`, before a
  /// partition is revoked and on `close()`.
  std::size_t commit_batch = 100;
  /// On a rebalance, how long the revoke waits for the records of the revoked partitions that
  /// handlers still hold to be acked, so that they are committed before the partition moves;
  /// what is not acked by then is redelivered to the new owner. 0 = do not wait.
  std::chrono::milliseconds revoke_grace{10'000};

  // --- topics ---
  /// > 0: the transport creates each topic it produces to or consumes from (and its .dlq) once
  /// with this many partitions through the admin API when it does not exist (an existing topic is
  /// left as it is). 0 (default): topics are the broker's business (auto-creation or operators,
  /// KFK-16).
  int partitions = 0;
  /// Replication factor of the topics created when `partitions` > 0; -1 = the broker's default.
  int replication_factor = -1;

  /// OB-6 hook: called once per record whose `bq-schema-version` header the gate rejects, with
  /// the version text and the queue; exceptions from it are caught and logged.
  std::function<void(std::string_view version, std::string_view queue)> on_schema_version_rejected;

  /// Where the transport logs (librdkafka's own warnings and errors, unknown topics, commit
  /// failures); default: warnings and errors to stderr.
  Logger logger;
};

/// Parses `kafka://[user[:password]@]host[:port][,host[:port]...][/][?option=value&...]` on top
/// of `base` (port 9092 when left out): the host list becomes `brokers`; user and password
/// (percent-decoded) become the SASL credentials (sasl_plaintext unless `security_protocol`
/// says otherwise, PLAIN unless `sasl_mechanism` does).
///
/// Query options: `group_id`, `client_id`, `topic_prefix`, `publish_timeout` and `max_wait`
/// (milliseconds >= 0; publish_timeout > 0), `revoke_grace` (milliseconds >= 0), `linger`
/// (milliseconds >= 0), `idempotence` (bool), `assignor` (range | roundrobin), `commit_batch`
/// (1..100000), `partitions` (0..100000), `replication_factor` (-1 or 1..100),
/// `security_protocol`, `sasl_mechanism`, `sasl_username`, `sasl_password`, `ssl_ca_location`,
/// and `property.<name>`, `producer.<name>`, `consumer.<name>` for the librdkafka pass-through
/// maps. Each key at most once; an unknown key is an error naming the known ones.
/// @throws ConfigError starting "kafka URL: " naming what it cannot use; the text never
/// contains a password.
BABELQUEUE_EXPORT Options parse_url(std::string_view url, Options base = {});

/// A Transport over Apache Kafka.
///
/// Capabilities: HeaderPublisher (riders after the `bq-*` headers, OB-3), BatchPublisher (all
/// records produced at once, then every delivery report awaited), KeyedRepublisher (the source
/// record's key kept exactly: null stays null, empty stays empty, KFK-13), Restorer (the original
/// value, header list and key, KFK-15), Rewinder (seek back to the record's offset, KFK-12),
/// Flusher (commits the acked offsets now) and Inspector (per-partition end offsets, the
/// group's committed offsets and the lag; the dead-letter topic's size; peek reads a topic from
/// its start without joining the group or committing). Not offered: Releaser, DelayedPublisher,
/// DeadLetterer, BrokerDeadLetter (Kafka has none of them).
///
/// Received messages: `body` is the value (with `attempts` rewritten to the `bq-attempts`
/// header when they differ, KFK-10), `key` the record key (KFK-8), `headers` the record headers
/// as text (first occurrence of a key wins, null values skipped, OB-4), `route` set when the
/// `bq-schema-version` gate rejects (KFK-9), `delivery_count` 0.
///
/// Errors: retriable librdkafka errors, all brokers down, timeouts: transient TransportError
/// (TimeoutError for a publish without its report within publish_timeout); fatal client errors,
/// authentication and authorization failures, invalid configuration: ConfigError (KFK-19). An
/// ack of a record whose partition was revoked or rewound meanwhile is ErrorCode::StaleDelivery
/// (its new owner, or the rewound consumer, delivers it again).
///
/// Thread-safety: every member function is safe from any thread (the contract of Transport: one
/// `pop` per queue at a time). `close()` is idempotent: it commits what was acked, leaves the
/// groups, flushes the producer (bounded by publish_timeout) and afterwards every call fails
/// with ClosedError. Not copyable or movable.
class BABELQUEUE_EXPORT KafkaTransport final : public Transport,
                                               public DeferredHeadersPop,
                                               public HeaderPublisher,
                                               public BatchPublisher,
                                               public KeyedRepublisher,
                                               public Restorer,
                                               public Rewinder,
                                               public Flusher,
                                               public Inspector {
 public:
  /// Validates `options` and builds the librdkafka configurations (ConfigError on a bad value
  /// or an unknown property); no I/O: the clients are created by the first call (OB-12).
  explicit KafkaTransport(Options options);
  /// `parse_url(url)`. @throws ConfigError.
  explicit KafkaTransport(std::string_view url);
  /// Calls `close()`.
  ~KafkaTransport() override;
  KafkaTransport(const KafkaTransport&) = delete;
  KafkaTransport& operator=(const KafkaTransport&) = delete;
  KafkaTransport(KafkaTransport&&) = delete;
  KafkaTransport& operator=(KafkaTransport&&) = delete;

  [[nodiscard]] const Options& options() const noexcept;
  /// topic_prefix + queue.
  [[nodiscard]] std::string topic(std::string_view queue) const;

  // --- Transport ---
  /// Produces one record (null key, KFK-5 headers and timestamp) and returns after its delivery
  /// report (KFK-4).
  Status publish(std::string_view queue, std::string body) override;
  /// The next record of the queue's topic for this group (KFK-6, KFK-7): none when nothing
  /// arrived within min(timeout, max_wait), at a partition end, or while the topic does not
  /// exist yet (logged once).
  Result<std::optional<ReceivedMessage>> pop(std::string_view queue,
                                             std::chrono::milliseconds timeout) override;
  /// Marks the record's offset done; the commit follows in a batch (KFK-11, see Options).
  Status ack(const ReceivedMessage& msg) override;
  void close() override;

  // --- capabilities ---
  Status publish_with_headers(std::string_view queue, std::string body,
                              const Headers& headers) override;
  Status publish_batch(std::string_view queue, std::vector<std::string> bodies) override;
  Status republish(std::string_view queue, std::string body,
                   const ReceivedMessage& source) override;
  Status restore(const ReceivedMessage& source) override;
  Status rewind(const ReceivedMessage& msg) override;
  /// `pop`, with the OB-4 text headers built on first use (`build_headers()`): the App's pops,
  /// so a handler that never reads them does not pay for them.
  Result<std::optional<ReceivedMessage>> pop_deferring_headers(
      std::string_view queue, std::chrono::milliseconds timeout) override;
  /// Commits every acked offset now (synchronously); the first commit error since the last
  /// flush.
  Status flush() override;
  Result<QueueStats> stats(std::string_view queue, std::string_view dead_letter_queue) override;
  Result<std::vector<PeekedMessage>> peek(std::string_view queue, std::size_t max) override;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace babelqueue::kafka
