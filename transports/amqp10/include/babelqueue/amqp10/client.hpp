// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

#include <babelqueue/binding/amqp10.hpp>
#include <babelqueue/errors.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

/// @file
/// The private AMQP 1.0 layer the Apache ActiveMQ Artemis and Azure Service Bus transports share
/// (issue 12; spec/05-other-brokers.md ASB-13/ASB-14, ART-3/ART-11), on Qpid Proton C++ 0.37.
/// No Proton header is reachable from here: the transports see plain C++ types.
///
/// One `Client` is one AMQP connection driven by one proton container thread of its own; every
/// Proton call runs on that thread (public methods marshal their work onto it and wait). Sender
/// and receiver links are opened per address on first use and cached. Receivers get credit equal
/// to the prefetch window, topped up as messages are handed out, or with prefetch 0 one credit per
/// waiting receive, drained when it times out (ASB-5). A lost connection is reopened
/// with the kit's Backoff (100 ms doubling to 5 s), re-opening the receivers; the deliveries of the
/// dead connection are never settled on the new one (StaleDeliveryError).

namespace proton {
class message;
}

namespace babelqueue::amqp10 {

/// Application-property and annotation values: the core binding's AMQP 1.0 value (null, boolean,
/// the integral types, float, double, string, binary; any other type is `Other`, named by its
/// AMQP type and not sendable).
using Value = binding::amqp10::Value;
using Binary = binding::amqp10::Binary;
using Other = binding::amqp10::Other;

/// How a body travels: one Data section, or an AMQP value section holding a string or a binary.
/// A received body of any other shape is `Unsupported` with its rendered text in `Message::body`.
enum class BodyKind { Data, StringValue, BinaryValue, Unsupported };

/// A message as the transports project it (spec/05 ART-4/ASB-4) and read it back (ART-5/ASB-6).
struct Message {
  std::string body = {};
  BodyKind body_kind = BodyKind::Data;
  /// header.durable.
  bool durable = true;
  /// header.delivery-count (received messages; ignored on send).
  std::uint32_t delivery_count = 0;
  /// properties: message-id, correlation-id (as AMQP strings), content-type, subject,
  /// creation-time.
  std::optional<std::string> message_id = {};
  std::optional<std::string> correlation_id = {};
  /// properties.reply-to (a request's reply address, e.g. Artemis's management replies).
  std::optional<std::string> reply_to = {};
  std::optional<std::string> content_type = {};
  std::optional<std::string> subject = {};
  std::optional<std::int64_t> creation_time_ms = {};
  /// message-annotations (symbol keys) and application-properties.
  std::map<std::string, Value> annotations = {};
  std::map<std::string, Value> properties = {};
  /// Received messages only: the delivery tag's bytes (Service Bus: the lock token in .NET Guid
  /// byte order) and the timestamp-typed message annotations in milliseconds since the epoch
  /// (Service Bus: x-opt-locked-until, x-opt-enqueued-time; `annotations` has them as Other).
  std::string delivery_tag = {};
  std::map<std::string, std::int64_t> annotation_times = {};
};

/// A token for claims-based security (CBS put-token; Azure Service Bus ASB-3).
struct Token {
  /// The token itself (a SAS token "SharedAccessSignature sr=..." or a JWT).
  std::string value;
  /// Its CBS type: "servicebus.windows.net:sastoken" or "jwt".
  std::string type;
  std::chrono::system_clock::time_point expires;
};

/// Claims-based security as Azure Service Bus speaks it (ASB-3): before the first link to an
/// address on each connection, the client sends a put-token for the address's audience on the
/// `$cbs` node and opens the link only after status 200 or 202; it puts a fresh token at
/// `renew_at` of the token's lifetime (a timer of its own, not the container's). A refused token
/// (any other status, or `token` throwing) fails the sends waiting for the address and the next
/// receive of it with ConfigError naming the status and the peer's description (never the token).
struct Cbs {
  /// The audience covering an address, e.g. "sb://ns.servicebus.windows.net/orders" for
  /// "orders" and "orders/$management".
  std::function<std::string(const std::string& address)> audience;
  /// A token for an audience. Called on the client's container thread: it should not block long
  /// (an Entra ID provider should hand out a cached token).
  std::function<Token(const std::string& audience)> token;
  /// The share of a token's lifetime after which it is renewed (0 < renew_at < 1).
  double renew_at = 0.9;
};

/// Connection options. `host` and `port` name the peer; the rest have defaults.
struct Options {
  std::string host = "localhost";
  int port = 5672;
  /// SASL PLAIN with these when `user` is not empty, else SASL ANONYMOUS.
  std::string user = {};
  std::string password = {};
  /// TLS (amqps): the trust store is `tls_ca_file` (PEM; empty: the system's), and the peer's
  /// certificate must name `tls_peer_name` (empty: `host`) unless `tls_verify_peer_name` is off.
  bool tls = false;
  std::string tls_ca_file = {};
  std::string tls_peer_name = {};
  bool tls_verify_peer_name = true;
  /// The receiver's credit (prefetch window): how many messages may be on their way or waiting.
  /// 0: explicit credit (Service Bus ASB-5): no credit while no receive() waits; each receive()
  /// grants one for its wait and, when its timeout passes with nothing, drains the link (waiting
  /// up to `timeout` for the peer's answer), so the peer transfers nothing while nobody waits.
  std::uint32_t prefetch = 100;
  /// Terminus capabilities of every link (Artemis: "queue" makes an address anycast, ART-3).
  std::vector<std::string> capabilities = {};
  /// The longest a send waits for its outcome, a settle for its turn, or close for the peer.
  std::chrono::milliseconds timeout{30'000};
  /// Reconnect backoff (D-3): the first wait and the cap.
  std::chrono::milliseconds reconnect_initial{100};
  std::chrono::milliseconds reconnect_cap{5'000};
  /// The container id (AMQP container-id of the open frame); empty: Proton makes one.
  std::string container_id = {};
  /// Claims-based security before every link (Azure Service Bus); none: links open at once.
  std::optional<Cbs> cbs = {};
  /// Receiver links ask for rcv-settle-mode second (Service Bus PeekLock).
  bool receiver_settle_second = false;
  /// String link properties of every receiver link (Service Bus: com.microsoft:receiver-name).
  std::map<std::string, std::string> receiver_properties = {};
};

class Client;

/// A received message and the right to settle it, once. Settling does not wait: it checks that
/// the delivery's connection is still the open one (else StaleDeliveryError, nothing settled),
/// hands the disposition to the container thread and returns; a settle the connection dies under
/// before Proton sends it is dropped (the peer redelivers the message) and counted by
/// Client::flush(). A Delivery dropped unsettled stays unsettled (the peer redelivers it when the
/// link or connection ends).
///
/// Thread-safety: one Delivery from one thread at a time; different ones from any threads.
class Delivery {
 public:
  Delivery(Delivery&&) noexcept;
  Delivery& operator=(Delivery&&) noexcept;
  Delivery(const Delivery&) = delete;
  Delivery& operator=(const Delivery&) = delete;
  ~Delivery();

  [[nodiscard]] const Message& message() const { return message_; }
  /// The message, for a transport to move what it keeps out of it (settling does not read it).
  [[nodiscard]] Message& message() { return message_; }
  /// The connection it arrived on (1 for the first, +1 per reconnect).
  [[nodiscard]] std::uint64_t connection() const { return connection_; }

  /// accepted (ART-7, ASB complete).
  void accept();
  /// modified{delivery-failed = `failed`, undeliverable-here = `undeliverable_here`}
  /// (ART-8 rewind: failed; ASB abandon: not failed).
  void modify(bool failed, bool undeliverable_here = false);
  /// released.
  void release();
  /// rejected with an error condition (ASB native dead-letter: com.microsoft:dead-letter).
  /// @throws ConfigError (nothing settled) when `info` holds an `Other` value.
  void reject(const std::string& condition, const std::string& description,
              const std::map<std::string, Value>& info = {});

 private:
  friend class Client;
  struct Settler;
  Delivery(std::shared_ptr<Settler> settler, std::uint64_t id, std::uint64_t connection,
           Message&& message);
  void settle(int outcome, bool failed, bool undeliverable_here, const std::string& condition,
              const std::string& description, const std::map<std::string, Value>& info);

  std::shared_ptr<Settler> settler_;
  std::uint64_t id_ = 0;
  std::uint64_t connection_ = 0;
  Message message_;
  bool settled_ = false;
};

/// One AMQP 1.0 connection and its links. Construction does no I/O: the container thread starts
/// and connects on first use (OB-12).
///
/// Thread-safety: every method may be called from any thread at once.
class Client {
 public:
  /// @throws ConfigError when the options cannot work (no host, a bad port, a timeout <= 0).
  explicit Client(Options options);
  /// close().
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  Client(Client&&) = delete;
  Client& operator=(Client&&) = delete;

  /// Sends `message` to `address` and waits for its settled outcome (D-9): accepted returns;
  /// rejected, released, modified or a connection lost first throw TransportError; no outcome
  /// within Options::timeout throws TimeoutError. A send waiting for a connection or credit is
  /// made on the next connection.
  /// @throws ClosedError after close().
  void send(const std::string& address, const Message& message);

  /// Sends every message of `messages` to `address` in order without waiting between them
  /// (pipelined, one hand-over to the container thread) and waits for all their outcomes: as
  /// `send`, with the first failure thrown once every outcome is in (or the timeout passed, which
  /// bounds the whole batch). On failure an unknown subset of the messages was accepted.
  void send_batch(const std::string& address, std::vector<Message> messages);

  /// The next message of `address` (its receiver link is opened on the first call and kept), or
  /// nullopt when none arrived within `timeout`. With Options::prefetch 0 the call grants the
  /// peer one credit while it waits and drains it before returning nullopt; a message transferred
  /// before the drain ends is returned (it may return up to Options::timeout late then), one that
  /// arrives after a drain the peer did not answer in time is kept for the next call.
  /// @throws ClosedError after close() (also to a call blocked in it then); ConfigError when
  /// the last connection attempt was refused for good: the credentials (amqp:unauthorized-access)
  /// or the peer's TLS certificate (it does not verify against the CA or the name); the client
  /// keeps reconnecting, so a later call may succeed.
  std::optional<Delivery> receive(const std::string& address, std::chrono::milliseconds timeout);

  /// A request/response exchange with a node such as `<entity>/$management` (the AMQP
  /// management pattern Service Bus uses): sends `request` (its message-id and reply-to are set
  /// by the client) on a sender to `node`, and returns in `reply` the message whose
  /// correlation-id names it, from a receiver on `node` whose target is the reply-to address.
  /// The links are opened on first use per connection (after CBS when configured) and cached.
  /// @throws TimeoutError without a reply within Options::timeout; TransportError when the
  /// connection or a link is lost first; ConfigError when CBS refused the node's audience;
  /// ClosedError after close().
  void request(const std::string& node, const proton::message& request, proton::message& reply);

  /// Waits until every settle handed over so far was given to Proton (in order before anything
  /// sent later on the connection). @throws StaleDeliveryError when settles were dropped since
  /// the last flush because their connection died (the peer redelivers those messages);
  /// TimeoutError after Options::timeout.
  void flush();

  /// Up to `max` (0: all) messages of `address`, head first, read by a receiver of their own with
  /// distribution-mode `copy` (a browser: the messages stay where they are) and released; the
  /// receiver drains its credit, so the end of the queue is the peer's answer, not a timeout.
  /// @throws TransportError when the link or connection fails; TimeoutError after
  /// Options::timeout; ClosedError after close().
  std::vector<Message> browse(const std::string& address, std::size_t max);

  /// Detaches the links, closes the connection (waiting up to Options::timeout for the peer),
  /// stops the container thread and wakes blocked callers. Idempotent.
  void close();

  /// The current connection's number: 0 before the first, then 1, +1 per reconnect.
  [[nodiscard]] std::uint64_t connection() const;
  /// The credit the receiver of `address` holds at the peer now (messages that may still
  /// arrive), -1 when it has no open receiver. For tests of the prefetch window.
  [[nodiscard]] int receiver_credit(const std::string& address);

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace babelqueue::amqp10
