// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#pragma once

// One signed AWS JSON 1.0 call (SQS-1) through the HttpClient seam, and the SQS-17
// classification of what comes back.

#include <babelqueue/json.hpp>
#include <babelqueue/sqs/transport.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "credentials.hpp"
#include "sigv4.hpp"

namespace babelqueue::sqs::detail {

/// The AWS error code of a failed response: the text after '#' of the body's `__type` (or the
/// whole `__type`), else the part before ';' of the `x-amzn-query-error` header, else "".
[[nodiscard]] std::string error_code(const HttpResponse& response);

/// True for the codes of an expired or invalid receipt handle (ReceiptHandleIsInvalid,
/// MessageNotInflight, ...): the reservation is gone (ErrorCode::StaleDelivery).
[[nodiscard]] bool is_receipt_handle_code(std::string_view code) noexcept;

/// True for the codes of a queue that does not exist (SQS-5).
[[nodiscard]] bool is_missing_queue_code(std::string_view code) noexcept;

/// True for codes worth retrying: throttling, service unavailable, internal errors, OverLimit.
[[nodiscard]] bool is_transient_code(std::string_view code) noexcept;

/// The SQS-17 error of a non-200 `response` to `action` on `queue` (may be empty): HTTP 5xx,
/// 429 and transient codes -> transient TransportError; a missing queue, refused credentials
/// or signature, access denied, invalid or missing parameters -> ConfigError; receipt-handle
/// codes -> StaleDelivery; any other -> a permanent TransportError. The text names the action,
/// the queue and the code, and contains no value of `secrets`.
[[nodiscard]] Error classify(const HttpResponse& response, std::string_view action,
                             std::string_view queue, const std::vector<std::string>& secrets);

/// `text` with every non-empty value of `secrets` replaced by "***".
[[nodiscard]] std::string scrub(std::string text, const std::vector<std::string>& secrets);

/// Signs, sends and classifies JSON 1.0 calls.
///
/// Thread-safety: `call` is safe from any thread (the HttpClient accepts concurrent posts).
class Api {
 public:
  /// `options` validated (region and endpoint set).
  Api(const Options& options, std::shared_ptr<HttpClient> client);

  /// POSTs `body` as `AmazonSQS.<action>`; on HTTP 200 the parsed response (an object; `{}`
  /// for an empty body), else the classified error, its AWS code in `code` when given.
  /// `queue` names the queue in errors.
  [[nodiscard]] Result<Json> call(std::string_view action, const std::string& body,
                                  std::string_view queue, std::chrono::milliseconds timeout,
                                  std::string* code = nullptr);
  [[nodiscard]] Result<Json> call(std::string_view action, const std::string& body,
                                  std::string_view queue) {
    return call(action, body, queue, request_timeout_);
  }

  [[nodiscard]] HttpClient& client() noexcept { return *client_; }

 private:
  std::shared_ptr<HttpClient> client_;
  Endpoint endpoint_;
  Signer signer_;
  CredentialChain credentials_;
  Clock clock_;
  std::chrono::milliseconds request_timeout_;
};

}  // namespace babelqueue::sqs::detail
