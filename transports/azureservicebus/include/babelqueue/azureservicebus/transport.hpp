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
/// The Azure Service Bus transport (spec/05-other-brokers.md §3, ASB-*): AMQP 1.0 through the
/// private AMQP 1.0 layer on Qpid Proton C++ (transports/amqp10). This header includes no Proton
/// header.

namespace babelqueue::azureservicebus {

/// A token from a token provider (Entra ID): a JWT and when it expires.
///
/// Thread-safety: a value type.
struct Token {
  std::string jwt;
  std::chrono::system_clock::time_point expires;
};

/// Returns a token for an audience ("sb://<namespace>/<entity>"). Called on the transport's
/// AMQP thread before the first link to an entity on each connection and again at 90 % of the
/// token's lifetime: hand out a cached token, do not block long. An exception refuses the entity
/// (ConfigError naming the exception's text).
using TokenProvider = std::function<Token(std::string_view audience)>;

/// How CBS credentials are given (ASB-2 `auth`).
enum class Auth {
  /// put-token on `$cbs` per entity (SAS tokens minted from the key, a fixed
  /// SharedAccessSignature, or the token provider's JWTs).
  Cbs,
  /// The key name and key as SASL PLAIN user and password, no CBS (the Proton `service_bus`
  /// example's way; a fallback).
  SaslPlain,
};

/// What `hand_to_broker` does (ADR-0037, ASB-10).
enum class NativeDeadLetter {
  /// Abandon (modified{delivery-failed}): the entity's MaxDeliveryCount moves it to its DLQ.
  Abandon,
  /// Dead-letter now: rejected with `com.microsoft:dead-letter` and DeadLetterReason/Description.
  DeadLetter,
};

/// Transport settings (ASB-2). Every member has the default a new transport uses.
///
/// Thread-safety: a value type.
struct Options {
  /// The fully-qualified namespace ("contoso.servicebus.windows.net") and its AMQP port.
  std::string host = {};
  int port = 5671;
  /// TLS with peer-name verification against the system CA store (or `tls_ca_file`, PEM; the
  /// name checked is `tls_peer_name`, empty: `host`). Plain TCP (`tls = false`) is only for a local
  /// test peer: it is refused for a host that is not a loopback address.
  bool tls = true;
  std::string tls_ca_file = {};
  std::string tls_peer_name = {};
  bool tls_verify_peer_name = true;
  /// The connection string's EntityPath: the one entity its key covers (tokens are minted for
  /// it; a queue of another name is a ConfigError). Empty: the namespace.
  std::string entity = {};
  /// A shared access key (SharedAccessKeyName/SharedAccessKey): SAS tokens are minted from it.
  std::string key_name = {};
  std::string key = {};
  /// A ready SAS token (SharedAccessSignature=...): sent as is, never renewed; its `se` is its
  /// expiry.
  std::string shared_access_signature = {};
  /// Entra ID: JWTs from this callback (CBS type `jwt`); wins over a key.
  TokenProvider token_provider = {};
  Auth auth = Auth::Cbs;
  /// The lifetime of a minted SAS token; renewed at 90 % of it.
  std::chrono::seconds token_lifetime{3600};
  /// The receiver's credit per entity. 0 (ASB-5): no prefetch: a `pop` grants one credit while
  /// it waits and drains the link when its wait ends with nothing, so no message is locked while
  /// no `pop` waits. N > 0: up to N messages locked on their way to `pop` (faster; lock renewal
  /// covers them once popped, not while they wait).
  std::uint32_t prefetch = 0;
  /// Renew the lock of a message while its handler runs (com.microsoft:renew-lock on
  /// `<entity>/$management`, as the Azure SDKs' auto-lock-renewal), up to `max_lock_renewal`
  /// after `pop`. Beyond the spec's v1 (ASB-5, ASB-15).
  bool lock_renewal = true;
  std::chrono::milliseconds max_lock_renewal{300'000};
  /// ADR-0037 hand-off (ASB-10).
  NativeDeadLetter native_dead_letter = NativeDeadLetter::Abandon;
  /// The longest a publish, settle or management request waits for the service.
  std::chrono::milliseconds timeout{30'000};
  /// Caps the wait of one `pop` (0: no cap, the caller's timeout).
  std::chrono::milliseconds max_wait{0};
  /// OB-6 hook: called once per message whose `bq-schema-version` the typed gate rejects (ASB-9),
  /// with the version's route text and the queue; exceptions from it are caught and logged.
  std::function<void(std::string_view version, std::string_view queue)> on_schema_version_rejected;
  /// Where the transport logs; default: warnings and errors to stderr.
  Logger logger;
};

/// Parses a Service Bus connection string (ASB-2) on top of `base`: `Endpoint=sb://<ns>[:port]/;
/// SharedAccessKeyName=...;SharedAccessKey=...[;EntityPath=...]` or `Endpoint=...;
/// SharedAccessSignature=SharedAccessSignature sr=...` (keys case-insensitive, `;`-separated,
/// values may contain `=`); `UseDevelopmentEmulator=true` turns TLS off (loopback hosts only).
/// @throws ConfigError starting "azureservicebus connection string: " naming what it cannot use;
/// never a key or signature.
BABELQUEUE_EXPORT Options parse_connection_string(std::string_view connection_string,
                                                  Options base = {});

/// Parses `sb://[KeyName:Key@]<namespace>[:port][/<entity>][?option=value&...]` on top of
/// `base` (the userinfo, percent-decoded, is a shared access key; the path sets `entity`). A URL
/// without a host reads the connection string from `AZURE_SERVICEBUS_CONNECTION_STRING`. Query
/// options: `tls`, `verify`, `cafile`, `peer_name`, `auth` (cbs, sasl_plain), `token_lifetime`
/// (seconds), `prefetch` (0..100000), `lock_renewal`, `max_lock_renewal`, `timeout`, `max_wait`
/// (milliseconds), `native_dead_letter` (abandon, dead_letter).
/// @throws ConfigError starting "azureservicebus URL: "; never the key.
BABELQUEUE_EXPORT Options parse_url(std::string_view url, Options base = {});

/// A SAS token for `resource_uri` (ASB-3, Microsoft's algorithm): `SharedAccessSignature
/// sr=<enc uri>&sig=<enc base64 HMAC-SHA256(key, enc uri + "\n" + expiry)>&se=<expiry>&skn=<key
/// name>`, where enc is percent-encoding of all but letters, digits and `-._~`; the key's UTF-8
/// bytes are the HMAC key (not base64-decoded).
BABELQUEUE_EXPORT std::string sas_token(std::string_view resource_uri, std::string_view key_name,
                                        std::string_view key, std::int64_t expiry_epoch_seconds);

/// A Transport over Azure Service Bus (AMQP 1.0 with CBS).
///
/// Publish (ASB-4): `binding::azureservicebus::projection`: message-id = `meta.id`,
/// correlation-id = trace id, subject = URN, content-type `application/json`, application
/// properties `bq-schema-version` and `bq-created-at` as AMQP long, `bq-source-lang` and the
/// riders as strings, the body as one Data section, durable. A publish returns after the
/// service's `accepted`.
///
/// Receive (ASB-5, ASB-6): one PeekLock receiver per entity (rcv-settle-mode second,
/// `com.microsoft:receiver-name`), one credit per waiting `pop`, drained when it ends with
/// nothing (`prefetch` 0, the default), or credit `prefetch`; `delivery_count` = header
/// delivery-count + 1; `headers` = the application properties as text; `route` set when the typed
/// gate on `bq-schema-version` rejects (ASB-9).
///
/// Settlement: ack = complete (`accepted`, ASB-7), rewind = abandon
/// (`modified{delivery-failed}`, ASB-8), hand_to_broker = abandon or native dead-letter
/// (ASB-10). With `lock_renewal` the lock of a popped message is renewed until it is settled.
///
/// Inspector: `peek` through `$management` com.microsoft:peek-message (nothing is locked);
/// `stats` counts what a peek sees (no AMQP operation reports entity counts).
///
/// Restorer (for `redrive`): a delivery of an entity is written back as a copy with its
/// application properties; one of a `$DeadLetterQueue` (which takes no sends) is abandoned in
/// place, unchanged.
///
/// Errors: a refused token, a missing entity or refused access are ConfigError (never the key or
/// token); a lost connection is transient (the transport reconnects with backoff, puts the tokens
/// again and reopens its links); a settle of a delivery whose connection is gone is StaleDelivery
/// (the lock returns the message).
///
/// Thread-safety: every member function is safe from any thread (one `pop` per queue at a time).
/// `close()` is idempotent. Not copyable or movable.
class BABELQUEUE_EXPORT ServiceBusTransport final : public Transport,
                                                    public HeaderPublisher,
                                                    public BatchPublisher,
                                                    public Rewinder,
                                                    public BrokerDeadLetter,
                                                    public Inspector,
                                                    public Restorer {
 public:
  /// Validates `options` (ConfigError on a bad value); no I/O.
  explicit ServiceBusTransport(Options options);
  /// `parse_url(url)`. @throws ConfigError.
  explicit ServiceBusTransport(std::string_view url);
  /// Calls `close()`.
  ~ServiceBusTransport() override;
  ServiceBusTransport(const ServiceBusTransport&) = delete;
  ServiceBusTransport& operator=(const ServiceBusTransport&) = delete;
  ServiceBusTransport(ServiceBusTransport&&) = delete;
  ServiceBusTransport& operator=(ServiceBusTransport&&) = delete;

  [[nodiscard]] const Options& options() const noexcept;

  // --- Transport ---
  Status publish(std::string_view queue, std::string body) override;
  Result<std::optional<ReceivedMessage>> pop(std::string_view queue,
                                             std::chrono::milliseconds timeout) override;
  /// Complete: `accepted` (ASB-7).
  Status ack(const ReceivedMessage& msg) override;
  void close() override;

  // --- capabilities ---
  Status publish_with_headers(std::string_view queue, std::string body,
                              const Headers& headers) override;
  Status publish_batch(std::string_view queue, std::vector<std::string> bodies) override;
  /// Abandon: `modified{delivery-failed=true, undeliverable-here=false}` (ASB-8).
  Status rewind(const ReceivedMessage& msg) override;
  /// ADR-0037 per `native_dead_letter` (ASB-10): DeadLetterReason "unsupported_schema_version"
  /// for a gate reject (`route` set), else "poison"; `why` is the description (cut to 4096).
  Status hand_to_broker(const ReceivedMessage& msg, std::string_view why) override;
  Result<QueueStats> stats(std::string_view queue, std::string_view dead_letter_queue) override;
  Result<std::vector<PeekedMessage>> peek(std::string_view queue, std::size_t max) override;
  /// A copy to `source.queue` with `source.headers`; abandon when it is a `$DeadLetterQueue`.
  Status restore(const ReceivedMessage& source) override;
  /// True for a delivery of a `$DeadLetterQueue` (restore abandons it: settled).
  [[nodiscard]] bool restores_in_place(const ReceivedMessage& source) const override;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace babelqueue::azureservicebus
