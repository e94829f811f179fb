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
#include <utility>
#include <vector>

/// @file
/// The Amazon SQS transport (spec/05-other-brokers.md §2, SQS-*): the AWS JSON 1.0 protocol over
/// libcurl, signed by the transport's own SigV4 signer. This header includes neither libcurl nor
/// OpenSSL.
///
/// Design (see transports/sqs/README.md): SQS bills per request, so the transport batches every
/// call (D-11): `publish_batch` sends SendMessageBatch requests of 10, `pop` is served from up to
/// 10 messages per ReceiveMessage (long polling), acks become DeleteMessageBatch requests of up
/// to 10 (the kit's AckBatcher, flushed when full, on a short timer, on `flush()` and on
/// `close()`). A housekeeping thread per transport flushes the acks and keeps the visibility of
/// held messages (prefetched or in a handler) alive with ChangeMessageVisibilityBatch.

namespace babelqueue::sqs {

/// AWS credentials (SQS-3). `session_token` empty = none.
///
/// Thread-safety: a value type.
struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;
};

/// A user-supplied source of credentials (instance metadata, SSO, web identity, ... SQS-3),
/// called before every request it signs; it may cache and refresh. May throw ConfigError
/// (permanent) or TransportError (transient).
using CredentialsProvider = std::function<Credentials()>;

/// The signing clock (SQS-4); tests inject a fixed one.
using Clock = std::function<std::chrono::system_clock::time_point()>;

/// One signed JSON 1.0 request as the transport hands it to an HttpClient.
struct HttpRequest {
  /// The endpoint URL every request goes to (SQS-5), e.g. "https://sqs.eu-west-1.amazonaws.com/".
  std::string url;
  /// The action, e.g. "SendMessageBatch" (also in the X-Amz-Target header).
  std::string action;
  /// Every header to send, signed ones included (Content-Type, X-Amz-Target, X-Amz-Date,
  /// Authorization, ...), in the order to send them.
  std::vector<std::pair<std::string, std::string>> headers;
  /// The JSON request body.
  std::string body;
  /// Bound on the whole exchange (a long poll's wait + 10 s, SQS-9).
  std::chrono::milliseconds timeout{30'000};
};

/// What came back. Any HTTP status is a response (the transport classifies it, SQS-17).
struct HttpResponse {
  long status = 0;
  std::string body;
  /// Response headers, names lower-cased (x-amzn-requestid, x-amzn-query-error, ...).
  std::vector<std::pair<std::string, std::string>> headers;
};

/// The HTTP seam (SQS-2 `client`): the transport's only way to the network. Tests inject fakes
/// and counting decorators; production uses `make_curl_client`.
///
/// Thread-safety: implementations must accept concurrent `post` calls from any thread.
class BABELQUEUE_EXPORT HttpClient {
 public:
  virtual ~HttpClient() = default;
  /// Performs the request. A network failure (refused, reset, DNS, TLS, timeout) is a transient
  /// TransportError (TimeoutError for a timeout) naming the endpoint host, never a credential.
  virtual Result<HttpResponse> post(const HttpRequest& request) = 0;
  /// Aborts the requests in progress (a long poll) and makes later calls fail with ClosedError;
  /// called by the transport's close(). Idempotent.
  virtual void close() = 0;
};

/// Settings of the built-in libcurl client.
struct CurlOptions {
  /// Verify the server's certificate chain and host name (TLS). Off only for test endpoints.
  bool verify_tls = true;
  /// PEM bundle of trusted CAs; empty = the system store.
  std::string ca_file;
  std::chrono::milliseconds connect_timeout{5'000};
  /// Keep-alive connections kept for reuse (one per concurrent request in flight).
  std::size_t max_connections = 16;
};

/// The built-in client: libcurl easy handles, each keeping its keep-alive HTTP/1.1 connection,
/// reused across calls (a pool of up to `max_connections`), TLS verified by default.
/// @throws ConfigError when libcurl cannot be initialised or a CA file does not exist.
BABELQUEUE_EXPORT std::shared_ptr<HttpClient> make_curl_client(CurlOptions options = {});

/// Transport settings (SQS-2 and D-11). Every member has the default a new transport uses.
///
/// Thread-safety: a value type.
struct Options {
  // --- endpoint and signing ---
  /// Signing region; empty = AWS_REGION, else AWS_DEFAULT_REGION, else ConfigError.
  std::string region;
  /// Every request goes here (SQS-5); empty = https://sqs.<region>.amazonaws.com.
  std::string endpoint;
  /// Non-empty: queue URL = prefix (trailing '/' trimmed) + '/' + name, no GetQueueUrl.
  std::string queue_url_prefix;

  // --- credentials (SQS-3): explicit, else provider, else environment, else shared file ---
  /// Used when its key id is non-empty.
  Credentials credentials;
  /// Used when set and `credentials` is empty.
  CredentialsProvider credentials_provider;
  /// Profile of the shared credentials file; empty = AWS_PROFILE, else "default".
  std::string profile;
  /// The shared credentials file; empty = AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials.
  std::string shared_credentials_file;

  // --- FIFO (SQS-7) ---
  /// Send MessageGroupId (and a deduplication id unless content_dedup).
  bool fifo = false;
  /// FIFO group; empty = the target queue's name.
  std::string message_group_id;
  /// Rely on the queue's content-based deduplication instead of meta.id.
  bool content_dedup = false;

  // --- receiving (SQS-9, D-11) ---
  /// Caps the long poll (0..20 s); 0 = no extra cap.
  int wait_time_seconds = 0;
  /// Reservation window set on receive (seconds, 0..43200); 0 = the queue's default, which the
  /// transport reads once per queue (GetQueueAttributes) to know when to extend.
  int visibility_timeout = 0;
  /// Messages per ReceiveMessage (1..10). Prefetched messages wait in the transport, their
  /// visibility kept alive, and are handed to the next pops.
  int prefetch = 10;
  /// Extend the visibility of held messages (prefetched or in a handler) once less than a
  /// third of the window remains; a prefetched message with less than `handout_margin` (at most
  /// a quarter of the window, so that short windows still hand messages out) left is not handed
  /// out (it reappears when its window lapses).
  bool keep_visibility = true;
  std::chrono::milliseconds handout_margin{2'000};

  // --- acknowledging (D-11) ---
  /// Acks per DeleteMessageBatch (1..10); the batch is sent when full, after
  /// `ack_flush_interval`, on flush() and on close().
  int ack_batch = 10;
  std::chrono::milliseconds ack_flush_interval{50};

  // --- HTTP ---
  /// Bound on one non-polling request.
  std::chrono::milliseconds request_timeout{30'000};
  /// The built-in client's settings (ignored when `client` is set).
  CurlOptions curl;
  /// Injected HTTP seam (SQS-2 `client`); null = make_curl_client(curl).
  std::shared_ptr<HttpClient> client;
  /// Injected signing clock (SQS-4); null = the system clock.
  Clock clock;

  /// OB-6 hook: called once per message whose `bq-schema-version` attribute the gate rejects,
  /// with the version text and the queue; exceptions from it are caught and logged.
  std::function<void(std::string_view version, std::string_view queue)> on_schema_version_rejected;

  /// Where the transport logs (failed batched deletes, missing RedrivePolicy, ...); default:
  /// warnings and errors to stderr.
  Logger logger;
};

/// Parses `sqs://[access_key_id:secret_access_key@][region][/][?option=value&...]` on top of
/// `base`. The user info (percent-decoded) sets `credentials` (never echoed in an error).
///
/// Query options: `endpoint`, `prefix` (queue_url_prefix), `profile`, `fifo` and
/// `content_dedup` (bool), `group_id` (message_group_id), `wait_time` (0..20),
/// `visibility_timeout` (0..43200), `prefetch` (1..10), `ack_batch` (1..10),
/// `ack_flush_interval` and `request_timeout` (milliseconds), `keep_visibility` (bool),
/// `verify` (bool, TLS), `cafile`. Booleans: 1/0, true/false, yes/no, on/off. Each key at most
/// once; an unknown key is an error naming the known ones.
/// @throws ConfigError starting "sqs URL: " naming what it cannot use; never a secret.
BABELQUEUE_EXPORT Options parse_url(std::string_view url, Options base = {});

/// SQS-14: the default dead-letter queue of `queue`: stem (name without a trailing ".fifo") +
/// suffix (`explicit_suffix`, else "-dlq") + ".fifo" when the name was FIFO.
/// @throws ConfigError when the result is not a valid SQS queue name ([A-Za-z0-9_-], at most 80
/// characters including a ".fifo" ending).
BABELQUEUE_EXPORT std::string dead_letter_name(std::string_view queue,
                                               std::optional<std::string_view> explicit_suffix);

/// A Transport over Amazon SQS (or an emulator speaking its JSON protocol).
///
/// Capabilities: HeaderPublisher (riders as String attributes after the contract ones, at most
/// 10 attributes, SQS-6), BatchPublisher (SendMessageBatch of 10; an entry that fails
/// transiently is resent, one that fails permanently makes the call fail naming it: nothing is
/// dropped silently), Releaser (ChangeMessageVisibility, SQS-13), DelayedPublisher
/// (DelaySeconds, at most 900 s, standard queues only), BrokerDeadLetter (leave undeleted for
/// the queue's RedrivePolicy, SQS-15), DeadLetterNaming (`-dlq`, SQS-14), Flusher (sends the
/// pending deletes now) and Inspector (ApproximateNumberOfMessages / ...NotVisible /
/// ...Delayed and the DLQ's depth; peek receives and then releases, so it raises the receive
/// counts of what it shows). Not offered: Rewinder (SQS-16), KeyedRepublisher, Restorer.
///
/// Received messages: `body` = Body, `headers` = every attribute's StringValue (OB-4),
/// `delivery_count` = ApproximateReceiveCount (SQS-10), `route` set when the
/// `bq-schema-version` gate rejects (SQS-11).
///
/// Errors (SQS-17): network failures, HTTP 5xx, throttling: transient TransportError; a missing
/// queue, refused credentials or signature, access denied, invalid parameters: ConfigError
/// naming the queue; an ack or release of an expired receipt handle: ErrorCode::StaleDelivery.
/// No error or log line contains a secret, a session token or a signature.
///
/// Thread-safety: every member function is safe from any thread (the contract of Transport: one
/// `pop` per queue at a time). `close()` is idempotent: it sends the pending deletes, makes the
/// prefetched messages visible again, stops the housekeeping thread, and afterwards every call
/// fails with ClosedError. Not copyable or movable.
class BABELQUEUE_EXPORT SqsTransport final : public Transport,
                                             public HeaderPublisher,
                                             public BatchPublisher,
                                             public Releaser,
                                             public DelayedPublisher,
                                             public BrokerDeadLetter,
                                             public DeadLetterNaming,
                                             public Flusher,
                                             public Inspector {
 public:
  /// Validates `options` (ConfigError on a bad value or when no region can be found); no I/O:
  /// credentials are resolved and queue URLs looked up by the first call that needs them.
  explicit SqsTransport(Options options);
  /// `parse_url(url)`. @throws ConfigError.
  explicit SqsTransport(std::string_view url);
  /// Calls `close()`.
  ~SqsTransport() override;
  SqsTransport(const SqsTransport&) = delete;
  SqsTransport& operator=(const SqsTransport&) = delete;
  SqsTransport(SqsTransport&&) = delete;
  SqsTransport& operator=(SqsTransport&&) = delete;

  [[nodiscard]] const Options& options() const noexcept;

  // --- Transport ---
  /// SendMessage with the SQS-6 attributes (and SQS-7 FIFO ids); returns after HTTP 200.
  Status publish(std::string_view queue, std::string body) override;
  /// A prefetched message of the queue, else one ReceiveMessage of up to `prefetch` messages
  /// (SQS-9, D-11) with WaitTimeSeconds = `timeout` rounded UP to whole seconds, at most 20 and
  /// at most `wait_time_seconds` when that is > 0; 0 only for a timeout of 0 (a short poll).
  /// Rounding up keeps a sub-second timeout from becoming a short poll that returns at once (a
  /// busy loop), so a pop may wait up to 1 s longer than asked.
  Result<std::optional<ReceivedMessage>> pop(std::string_view queue,
                                             std::chrono::milliseconds timeout) override;
  /// Queues the DeleteMessage of the receipt handle for the next DeleteMessageBatch (see
  /// Options::ack_batch); a delete that then fails is logged and reported by flush(), and the
  /// message reappears after its visibility timeout (at-least-once, nothing lost).
  Status ack(const ReceivedMessage& msg) override;
  void close() override;

  // --- capabilities ---
  Status publish_with_headers(std::string_view queue, std::string body,
                              const Headers& headers) override;
  Status publish_batch(std::string_view queue, std::vector<std::string> bodies) override;
  Status release(const ReceivedMessage& msg, std::chrono::milliseconds delay) override;
  Status publish_delayed(std::string_view queue, std::string body,
                         std::chrono::milliseconds delay) override;
  Status hand_to_broker(const ReceivedMessage& msg, std::string_view why) override;
  [[nodiscard]] std::string dead_letter_name(
      std::string_view source_queue,
      std::optional<std::string_view> explicit_suffix) const override;
  /// Sends every pending delete now; the first delete error since the last flush.
  Status flush() override;
  Result<QueueStats> stats(std::string_view queue, std::string_view dead_letter_queue) override;
  Result<std::vector<PeekedMessage>> peek(std::string_view queue, std::size_t max) override;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace babelqueue::sqs
