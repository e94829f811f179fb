// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/errors.hpp>
#include <babelqueue/pulsar/transport.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

/// @file
/// The private asynchronous Pulsar client the transport is built on (issue 13, D-10,
/// spec/05-other-brokers.md §4), on Boost.Asio and the protocol codec (frame.hpp). No Asio or
/// protobuf type is reachable from here.
///
/// One `Client` holds a connection per broker address, driven by one I/O thread of its own (an
/// io_context); every socket operation and every piece of connection state lives on that thread,
/// public methods post their work onto it and wait for the answer. Lookups go to the service
/// URL's broker; a Redirect is followed to the broker it names (at most 8), and the producers and
/// consumers of a topic use the connection to the broker that serves it, made on first use.
/// A lost connection (socket error, protocol violation, a peer silent for two keep-alive
/// intervals) fails the requests and sends in flight on it with a transient TransportError, and
/// is remade with the kit's Backoff (100 ms doubling to 5 s) while topics of its broker have
/// producers or consumers: topics are looked up again (they may have moved to another broker),
/// producers and consumers re-created. The deliveries of a dead connection are never acknowledged
/// on another (StaleDeliveryError).
///
/// pulsar+ssl:// (TLS on OpenSSL) speaks TLS to every broker, verifying its certificate against
/// tls_trust_certs_file and its name against the host connected to. A token (ClientOptions::token)
/// goes in CONNECT (auth method "token") and in the answer to a broker's AUTH_CHALLENGE; errors
/// never contain it.

namespace babelqueue::pulsar {

/// Connection options.
struct ClientOptions {
  /// The broker's service URL, pulsar://host:port or pulsar+ssl://host:port (TLS).
  std::string service_url = "pulsar://127.0.0.1:6650";
  /// Token authentication when not empty: CONNECT with auth method `token` and the token as its
  /// data, also the answer to a broker's AUTH_CHALLENGE. A refused token is a ConfigError naming
  /// the broker (never the token).
  std::string token = {};
  /// Our PING interval; a peer silent for two intervals is dead.
  std::chrono::milliseconds keepalive{30'000};
  /// The longest a request (connect, lookup, producer, subscribe, send) waits for its answer.
  std::chrono::milliseconds operation_timeout{30'000};
  /// Reconnect backoff (D-3): the first wait and the cap.
  std::chrono::milliseconds reconnect_initial{100};
  std::chrono::milliseconds reconnect_cap{5'000};
  /// pulsar+ssl://: the PEM file of the CA certificates the brokers' certificates are verified
  /// with; empty: OpenSSL's default paths (the system's CAs). Unreadable: ConfigError.
  std::string tls_trust_certs_file = {};
  /// pulsar+ssl://: check that the broker's certificate names the host connected to (DNS name or
  /// IP address, subjectAltName or common name).
  bool tls_verify_hostname = true;
  /// pulsar+ssl://: accept any certificate, verifying neither its chain nor its name. For tests
  /// only: it gives up the authentication of the broker.
  bool tls_allow_insecure = false;
};

/// A message id as the broker assigns it; batch_index >= 0 for an entry of a batch.
struct MessageId {
  std::uint64_t ledger = 0;
  std::uint64_t entry = 0;
  std::int32_t partition = -1;
  std::int32_t batch_index = -1;
  std::int32_t batch_size = 0;
  friend bool operator==(const MessageId&, const MessageId&) = default;
};

/// A message to send.
struct OutgoingMessage {
  std::string payload = {};
  std::map<std::string, std::string> properties = {};
  std::optional<std::string> key = {};
  /// The metadata's deliver_at_time (Unix milliseconds): a Shared or Key_Shared subscription
  /// dispatches the message from then on.
  std::optional<std::int64_t> deliver_at_ms = {};
};

/// A received message and what acknowledging it needs.
struct Received {
  std::string topic = {};
  MessageId id = {};
  std::uint32_t redelivery_count = 0;
  std::map<std::string, std::string> properties = {};
  std::optional<std::string> key = {};
  std::string payload = {};
  /// The connection it arrived on (Client::connection()'s number of it) and the consumer's
  /// incarnation on it (+1 per re-subscribe): an ack of another is refused (StaleDeliveryError).
  std::uint64_t connection = 0;
  std::uint64_t incarnation = 0;
};

enum class InitialPosition { Latest, Earliest };

/// Wakes a caller that waits on several consumers at once (the partitions of a topic): each
/// consumer given it in ConsumerOptions::doorbell rings it when messages arrive for it and when
/// the client closes.
///
/// Thread-safety: every method may be called from any thread at once.
class Doorbell {
 public:
  /// How often it rang so far.
  [[nodiscard]] std::uint64_t rung() const;
  /// Waits until it rang more than `seen` times, at most `timeout`; whether it did.
  bool wait(std::uint64_t seen, std::chrono::milliseconds timeout);
  void ring();

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t rung_ = 0;
};

struct ConsumerOptions {
  std::string subscription = "babelqueue";
  SubscriptionType type = SubscriptionType::Shared;
  InitialPosition position = InitialPosition::Earliest;
  /// FLOW permits: messages on their way or waiting; re-issued as half of them are handed out.
  std::uint32_t prefetch = 100;
  /// Rung as messages arrive and when the client closes (none: only receive() waits).
  std::shared_ptr<Doorbell> doorbell = {};
};

/// An error as a value: what crosses from the I/O thread to a caller, who throws it
/// (throw_failure) on its own thread. (An exception object shared by two threads through an
/// exception_ptr is reference-counted inside the uninstrumented C++ runtime, which
/// ThreadSanitizer cannot see.)
struct Failure {
  ErrorCode code = ErrorCode::Transport;
  std::string what = {};
  bool transient = true;
};

/// Throws `failure` as its class (core's throw_error: StaleDeliveryError, TransportError,
/// TimeoutError, ConfigError, ClosedError, ...).
[[noreturn]] void throw_failure(const Failure& failure);

/// A send's outcome: the receipt's message id or the failure.
struct SendResult {
  std::optional<MessageId> value = {};
  std::optional<Failure> failure = {};
  /// The id; throws the failure.
  [[nodiscard]] MessageId get() const;
};

struct ClientState;
struct ConsumerState;

/// A producer on one topic (a partition of a partitioned topic is a topic of its own).
///
/// Thread-safety: every method may be called from any thread at once.
class Producer {
 public:
  /// SEND, resolved with the id of its SEND_RECEIPT (D-9); a SEND_ERROR or broker ERROR resolves
  /// it with the mapped error (broker_error()), a connection lost first or a producer not
  /// connected (reconnecting) with a transient TransportError: the caller resends. Many sends
  /// may be in flight; receipts resolve them by sequence id. SendResult::get() throws.
  std::future<SendResult> send_async(OutgoingMessage message);
  /// send_async() and waits up to operation_timeout (TimeoutError).
  MessageId send(OutgoingMessage message);
  [[nodiscard]] const std::string& topic() const { return topic_; }

 private:
  friend class Client;
  Producer(std::shared_ptr<ClientState> client, std::uint64_t id, std::string topic)
      : client_(std::move(client)), id_(id), topic_(std::move(topic)) {}
  std::shared_ptr<ClientState> client_;
  std::uint64_t id_;
  std::string topic_;
};

/// A consumer of one subscription of one topic.
///
/// Thread-safety: every method may be called from any thread at once.
class Consumer {
 public:
  /// The next message, or nullopt when none arrived within `timeout`.
  /// @throws ClosedError after the client's close() (also to a call blocked in it then).
  std::optional<Received> receive(std::chrono::milliseconds timeout);
  /// Individual ACK (a batch entry: the batch is acked when all its entries are).
  /// @throws StaleDeliveryError when `message` came on a connection or consumer incarnation that is
  /// gone (nothing is sent); ClosedError after close().
  void ack(const Received& message);
  /// One ACK frame for every message of `messages` (a batch entry as ack()); the messages of a
  /// connection or consumer incarnation that is gone are left out (the broker redelivers them).
  /// With `confirmed`, waits for the broker's ACK_RESPONSE (protocol 17 and later: the broker
  /// applied them); without, returns once the frame is queued. Returns how many were left out.
  /// @throws ClosedError after close(), a transient TransportError when the connection is lost
  /// before a confirmation.
  std::size_t ack(const std::vector<Received>& messages, bool confirmed);
  /// REDELIVER_UNACKNOWLEDGED_MESSAGES for `message` (a negative ack): the broker redelivers
  /// it with redelivery_count + 1. StaleDeliveryError as ack().
  void negative_ack(const Received& message);
  /// Whether `message` came on this consumer's current connection and incarnation (the
  /// connection up): false once either is gone, when ack() would throw StaleDeliveryError.
  [[nodiscard]] bool current(const Received& message) const;
  /// Messages received and not yet handed out by receive().
  [[nodiscard]] std::size_t buffered() const;
  [[nodiscard]] const std::string& topic() const { return topic_; }

 private:
  friend class Client;
  Consumer(std::shared_ptr<ClientState> client, std::shared_ptr<ConsumerState> state,
           std::uint64_t id, std::string topic)
      : client_(std::move(client)), state_(std::move(state)), id_(id), topic_(std::move(topic)) {}
  void settle(const Received& message, bool positive);
  std::shared_ptr<ClientState> client_;
  std::shared_ptr<ConsumerState> state_;
  std::uint64_t id_;
  std::string topic_;
};

/// LOOKUP's answer after redirects.
struct LookupResult {
  std::string broker_url;
  /// How many redirects were followed.
  int redirects = 0;
};

/// Pulsar connections (one per broker address), their producers and consumers. Construction
/// does no I/O: the I/O thread connects on first use.
///
/// Thread-safety: every method may be called from any thread at once, except from a callback
/// running on the I/O thread (none is exposed).
class Client {
 public:
  /// @throws ConfigError when the service URL is not pulsar://host:port or pulsar+ssl://host:port,
  /// an option is zero, or tls_trust_certs_file cannot be read.
  explicit Client(ClientOptions options);
  /// close().
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// LOOKUP of `topic` on the service URL's broker, following redirects to the brokers they name.
  LookupResult lookup(const std::string& topic);
  /// PARTITIONED_METADATA: the topic's partitions (0: not partitioned); partition N of a
  /// partitioned topic is the topic `<topic>-partition-N`.
  std::uint32_t partitions(const std::string& topic);
  /// LOOKUP and PRODUCER; re-created after a reconnect or a CLOSE_PRODUCER of the broker.
  std::shared_ptr<Producer> create_producer(const std::string& topic);
  /// LOOKUP, SUBSCRIBE and FLOW of the prefetch window; re-subscribed after a reconnect or a
  /// CLOSE_CONSUMER of the broker.
  std::shared_ptr<Consumer> subscribe(const std::string& topic, const ConsumerOptions& options);

  /// Makes sure the durable subscription `subscription` of `topic` exists (SUBSCRIBE from the
  /// earliest message with no permits, then CLOSE_CONSUMER), so that what is published to the
  /// topic is kept for it even before anyone consumes (a topic without subscriptions keeps
  /// nothing beyond its retention). A subscription held by an Exclusive consumer exists already
  /// (ConsumerBusy counts as done).
  void create_subscription(const std::string& topic, const std::string& subscription,
                           SubscriptionType type);

  /// Closes producers, consumers and the connection, stops the I/O thread and wakes blocked
  /// callers (ClosedError). Idempotent.
  void close();

  /// How many connections were established (to any broker): 0 before the first, then 1, +1 per
  /// connection or reconnect. A Received's `connection` is its connection's number.
  [[nodiscard]] std::uint64_t connection() const;
  /// The protocol version both sides speak (the lower of ours and the last CONNECTED's), 0 before.
  [[nodiscard]] int protocol_version() const;

 private:
  std::shared_ptr<ClientState> state_;
};

}  // namespace babelqueue::pulsar
